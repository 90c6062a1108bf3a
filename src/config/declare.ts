// A schema sees only a set value (or a default): an unset variable is never checked.
import { z } from 'zod';
import { parseUrl } from '../lib/parse-url.ts';

export interface SettingDeclaration {
  readonly schema: z.ZodType<unknown, string>;
  readonly meaning: string;
  /** Unset, it lands as null; without one, only a derived value of the loader reads it. */
  readonly field?: string;
  readonly default?: string;
  readonly developmentDefault?: string;
  readonly required?: string;
  readonly defaultInWords?: string;
  readonly example?: string;
  /** A secret, or a URL that can hold a password: never repeated in a message. */
  readonly confidential?: true;
  readonly emptyIsAValue?: true;
}

export const setting = <const D extends SettingDeclaration>(declaration: D): D => declaration;

type Declarations = Record<string, SettingDeclaration>;
type AlwaysSet = { readonly default: string } | { readonly required: string; readonly developmentDefault: string };

export type ValueOf<D extends SettingDeclaration> = D extends AlwaysSet ? z.output<D['schema']> : z.output<D['schema']> | undefined;
export type ValuesOf<S extends Declarations> = { [K in keyof S]: ValueOf<S[K]> };

type FieldOf<D> = D extends { readonly field: infer F extends string } ? F : never;
type LandedValue<D extends SettingDeclaration> = D extends AlwaysSet ? z.output<D['schema']> : z.output<D['schema']> | null;
type TopLevel<F> = F extends `${string}.${string}` ? never : F;
type RecordOf<F> = F extends `${infer R}.${string}` ? R : never;
type InRecord<F, R extends string> = F extends `${R}.${infer G}` ? G : never;
export type Landed<S extends Declarations> = { [K in keyof S as TopLevel<FieldOf<S[K]>>]: LandedValue<S[K]> } & {
  [R in RecordOf<FieldOf<S[keyof S]>>]: { [K in keyof S as InRecord<FieldOf<S[K]>, R>]: LandedValue<S[K]> };
};

/** An empty variable counts as unset, as in most shells' `VAR= command`. */
export const unsetIfEmpty = (value: string | undefined): string | undefined => (value?.trim() === '' ? undefined : value);

export const text = z.string().trim();

export const wholeNumberIn = (min: number, max: number, message: string) =>
  text
    .regex(/^\d+$/, message)
    .transform(Number)
    .refine((value) => value >= min && value <= max, message);

export const wholeNumber = (max = Number.MAX_SAFE_INTEGER, min = 0) =>
  wholeNumberIn(min, max, `must be a whole number from ${min} to ${max}`);
export const wholeNumberOf = (unit: string, min: number, max: number) =>
  wholeNumberIn(min, max, `must be a whole number of ${unit} from ${min} to ${max}`);
export const positiveWholeNumber = wholeNumberIn(1, Number.MAX_SAFE_INTEGER, 'must be a whole number greater than 0');
export const inMs = (schema: z.ZodType<number, string>, unitMs: number) => schema.transform((value) => value * unitMs);
export const HOUR_MS = 3_600_000;

const TRUE_WORDS = ['1', 'true', 'yes', 'on'];
const FALSE_WORDS = ['0', 'false', 'no', 'off'];
export const trueOrFalse = text
  .toLowerCase()
  .refine((value) => TRUE_WORDS.includes(value) || FALSE_WORDS.includes(value), 'must be true or false')
  .transform((value) => TRUE_WORDS.includes(value));

export const httpOrigin = text
  .refine((value) => {
    const url = parseUrl(value);
    return (url?.protocol === 'http:' || url?.protocol === 'https:') && url.hostname !== '';
  }, 'must be an http:// or https:// URL, e.g. https://api.example.com')
  .transform((value) => value.replace(/\/+$/, ''));

/** A comma-separated list's entries, each trimmed, empty ones left out. */
export const listEntries = (value: string): string[] =>
  value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');

export const commaList = z.string().transform(listEntries);

export const parsedWith = <T>(parse: (value: string) => { value: T } | { problems: readonly string[] }) =>
  z.string().transform((value, context) => {
    const parsed = parse(value);
    if ('value' in parsed) return parsed.value;
    for (const message of parsed.problems) context.addIssue({ code: 'custom', message });
    return z.NEVER;
  });
