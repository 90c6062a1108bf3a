// How a setting is declared (SettingDeclaration) and the checks of its environment text, as zod
// schemas, that the concern modules beside this one declare their settings with.
import { z } from 'zod';

export interface SettingDeclaration {
  /** Checks the variable's text and converts it; accepts undefined (unset). */
  readonly schema: z.ZodType;
  /** One line for the operator: what the setting does (Markdown; docs/configuration.md and .env.example). */
  readonly meaning: string;
  /** The text used when the variable is unset or empty, checked by `schema` as if it had been set. */
  readonly default?: string;
  /** Development mode's default, where it differs from `default`. */
  readonly developmentDefault?: string;
  /** Outside development mode the service refuses to start without it; this says how to get a value. */
  readonly required?: string;
  /** The settings table's Default column where the default is not one value (it follows another setting). */
  readonly defaultInWords?: string;
  /** A value worth showing in .env.example where there is no default. */
  readonly example?: string;
  /** A secret, or a URL that can hold a password: never repeated in a message. */
  readonly confidential?: true;
  /** An empty value is a value (an empty list), not "unset". */
  readonly emptyIsAValue?: true;
}

/** Keeps each entry's own type (its schema's output, whether it has a default) for `Settings`. */
export const setting = <const D extends SettingDeclaration>(declaration: D): D => declaration;

// ─── the settings' environment text, as zod schemas ───

/** An empty variable counts as unset, as in most shells' `VAR= command`. */
export const unsetIfEmpty = (value: unknown): unknown => (typeof value === 'string' && value.trim() === '' ? undefined : value);
export const optional = <T extends z.ZodType>(schema: T) => z.preprocess(unsetIfEmpty, schema.optional());

export const wholeNumber = (max = Number.MAX_SAFE_INTEGER) =>
  optional(
    z
      .string()
      .trim()
      .regex(/^\d+$/, `must be a whole number from 0 to ${max}`)
      .transform(Number)
      .refine((value) => value <= max, `must be a whole number from 0 to ${max}`),
  );

/** A whole number of `unit` from 1 to `max` (retention periods). */
export const wholeNumberFrom1 = (max: number, unit: string) =>
  optional(
    z
      .string()
      .trim()
      .regex(/^\d+$/, `must be a whole number of ${unit} from 1 to ${max}`)
      .transform(Number)
      .refine((value) => value >= 1 && value <= max, `must be a whole number of ${unit} from 1 to ${max}`),
  );

export const positiveWholeNumber = optional(
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a whole number greater than 0')
    .transform(Number)
    .refine((value) => value > 0 && value <= Number.MAX_SAFE_INTEGER, 'must be a whole number greater than 0'),
);

const TRUE_WORDS = ['1', 'true', 'yes', 'on'];
const FALSE_WORDS = ['0', 'false', 'no', 'off'];
export const trueOrFalse = optional(
  z
    .string()
    .trim()
    .toLowerCase()
    .refine((value) => TRUE_WORDS.includes(value) || FALSE_WORDS.includes(value), 'must be true or false')
    .transform((value) => TRUE_WORDS.includes(value)),
);

export const httpOrigin = optional(
  z
    .string()
    .trim()
    .refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
      } catch {
        return false;
      }
    }, 'must be an http:// or https:// URL, e.g. https://api.example.com')
    .transform((value) => value.replace(/\/+$/, '')),
);

/** A comma-separated list in which "" is a value (the empty list), not "unset". */
export const commaList = z
  .string()
  .optional()
  .transform((value) =>
    value === undefined
      ? undefined
      : value
          .split(',')
          .map((entry) => entry.trim())
          .filter((entry) => entry !== ''),
  );

/** A setting's value once checked: never undefined when it has a default in every mode. */
type ValueOf<D extends SettingDeclaration> = D extends
  | { readonly default: string }
  | { readonly required: string; readonly developmentDefault: string }
  ? Exclude<z.output<D['schema']>, undefined>
  : z.output<D['schema']>;

/**
 * The checked values of a set of declarations: each concern's reader takes its own (so the concern
 * modules need not import the whole table, src/config/settings.ts, which imports them).
 */
export type ValuesOf<Declarations extends Record<string, SettingDeclaration>> = { [K in keyof Declarations]: ValueOf<Declarations[K]> };
