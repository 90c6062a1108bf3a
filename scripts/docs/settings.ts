// docs/configuration.md's settings table and .env.example, rendered from the settings' declaration.
import { SETTING_NAMES, SETTINGS, type SettingDeclaration } from '../../src/config/index.ts';

const code = (text: string): string => (text === '' ? '`""`' : `\`${text}\``);

/** The settings table's Default column: the default, development mode's where it differs, or words. */
function defaultInWords(declaration: SettingDeclaration): string {
  if (declaration.defaultInWords !== undefined) return declaration.defaultInWords;
  if (declaration.default === undefined) return 'none';
  const value = code(declaration.default);
  return declaration.developmentDefault === undefined ? value : `${value}; development: ${code(declaration.developmentDefault)}`;
}

export function settingsTable(): string {
  const rows = SETTING_NAMES.map((name) => {
    const declaration: SettingDeclaration = SETTINGS[name];
    return `| \`${name}\` | ${defaultInWords(declaration)} | ${declaration.meaning} |`;
  });
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

/** Markdown to plain text for the comments of .env.example. */
const plain = (markdown: string): string => markdown.replace(/`/g, '').replace(/\*\*/g, '');

/** A value as a .env line writes it: quoted when it holds spaces or characters a parser could take apart. */
function envValue(value: string): string {
  return /[\s#"'<>\\]/.test(value) ? `"${value}"` : value;
}

export function envExample(): string {
  const header = [
    '# Settings of the dealership gateway, generated from SETTINGS in src/config/ by `npm run docs`.',
    '# Copy this file to .env and uncomment what you change: the service reads .env at start when it',
    '# exists (ENV_FILE names another file), and a variable set in the environment wins over the file.',
    '# Each commented line shows the default (or an example where there is none); docs/configuration.md.',
  ];
  const entries = SETTING_NAMES.map((name) => {
    const declaration: SettingDeclaration = SETTINGS[name];
    const lines = [`# ${name}: ${plain(declaration.meaning)}`];
    if (declaration.required !== undefined) lines.push(`# Required outside development mode: ${declaration.required}`);
    lines.push(`# Default: ${plain(defaultInWords(declaration))}`);
    lines.push(`# ${name}=${envValue(declaration.default ?? declaration.example ?? '')}`);
    return lines.join('\n');
  });
  return `${[header.join('\n'), ...entries].join('\n\n')}\n`;
}
