// Rendered from the declarations, so the documentation cannot drift from the settings.
import { SETTING_NAMES, SETTINGS, type SettingDeclaration } from './index.ts';

const README_TABLE_START = '<!-- settings table: generated from SETTINGS in src/config/ by `npm run config:docs`; edit it there -->';
const README_TABLE_END = '<!-- end of the settings table -->';

const code = (text: string): string => (text === '' ? '`""`' : `\`${text}\``);

function defaultInWords(declaration: SettingDeclaration): string {
  if (declaration.defaultInWords !== undefined) return declaration.defaultInWords;
  if (declaration.default === undefined) return 'none';
  const value = code(declaration.default);
  return declaration.developmentDefault === undefined ? value : `${value}; development: ${code(declaration.developmentDefault)}`;
}

function settingsTable(): string {
  const rows = SETTING_NAMES.map((name) => {
    const declaration: SettingDeclaration = SETTINGS[name];
    return `| \`${name}\` | ${defaultInWords(declaration)} | ${declaration.meaning} |`;
  });
  return [README_TABLE_START, '| Variable | Default | Meaning |', '|---|---|---|', ...rows, README_TABLE_END].join('\n');
}

export function withSettingsTable(readme: string): string {
  const start = readme.indexOf(README_TABLE_START);
  const end = readme.indexOf(README_TABLE_END);
  if (start === -1 || end < start)
    throw new Error(`docs/configuration.md has no settings table markers (${README_TABLE_START} … ${README_TABLE_END})`);
  return readme.slice(0, start) + settingsTable() + readme.slice(end + README_TABLE_END.length);
}

const plain = (markdown: string): string => markdown.replace(/`/g, '').replace(/\*\*/g, '');

/** Quoted when it holds spaces or characters a parser could take apart. */
function envValue(value: string): string {
  return /[\s#"'<>\\]/.test(value) ? `"${value}"` : value;
}

export function envExample(): string {
  const header = [
    '# Settings of the dealership gateway, generated from SETTINGS in src/config/ by `npm run config:docs`.',
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
