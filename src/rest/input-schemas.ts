// The JSON Schemas of what the REST door reads, for the OpenAPI document, written from the zod records
// and input limits that check it, so the document says what the server enforces and cannot drift from it.
import { z } from 'zod';
import { INT32, JSON_TEXT_MAX_LENGTH, TEXT_PATTERN, UNLIMITED_TEXT_FIELDS, textMaxLength } from '../domain/input-limits.ts';
import { NON_BLANK, jsonShapeOf } from '../domain/input-records.ts';
import { isPlainObject } from '../lib/json.ts';
import type { LeadSourceLists } from '../domain/leads/values.ts';

export type JsonSchema = Record<string, unknown>;

/** Text with a character that is not white space, as every text must be: NON_BLANK and TEXT_PATTERN in one pattern. */
const NON_BLANK_TEXT_PATTERN = '^[^\\x00]*[^\\x00\\s][^\\x00]*$';

/** Marks free-form JSON, stored as sent: the REST door reads no text there as a number. */
export const FREE_FORM_JSON = 'x-free-form-json';

/** Metadata keys of the declarations that are not JSON Schema: read here, then left out of the document. */
const DECLARATION_ONLY_KEYS = ['asJson', 'valueList', 'id'] as const;

/** The keywords that apply to one JSON type, for moving a wrapper's keyword into the branch it is about. */
const KEYWORDS_BY_TYPE: Readonly<Record<string, readonly string[]>> = {
  string: ['pattern', 'minLength', 'maxLength', 'format', 'contentEncoding', 'contentMediaType', 'enum'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
  array: ['items', 'minItems', 'maxItems', 'uniqueItems'],
};

export interface InputSchemaOptions {
  /** Where records named by `.meta({ id })` go: the document's components.schemas. */
  components: Record<string, JsonSchema>;
  /** The deployment's lists that a field names by `.meta({ valueList })`. */
  valueLists: LeadSourceLists;
}

export const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The schema without the null a declaration allows (nullable type list or `anyOf` branch). */
export function withoutNull(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema.type)) {
    const types = (schema.type as string[]).filter((type) => type !== 'null');
    return { ...schema, type: types.length === 1 ? types[0] : types };
  }
  if (Array.isArray(schema.anyOf)) {
    const branches = (schema.anyOf as JsonSchema[]).filter((branch) => branch.type !== 'null');
    const { anyOf: _anyOf, ...rest } = schema;
    return branches.length === 1 ? { ...rest, ...branches[0] } : { ...rest, anyOf: branches };
  }
  return schema;
}

function zodJsonSchema(schema: z.core.$ZodType, freeJson: boolean): JsonSchema {
  return z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    reused: 'inline',
    override: ({ zodSchema, jsonSchema }) => {
      const json = jsonSchema as JsonSchema;
      const shape = jsonShapeOf(zodSchema);
      if (shape) {
        // A free-form JSON field checked by a rule of its own: the document shows the rule's shape.
        for (const key of Object.keys(json)) if (key !== 'description') delete json[key];
        Object.assign(json, zodJsonSchema(shape, true), { 'x-free-json': true });
        delete json.$schema;
        return;
      }
      // Text read into a value list (`category`, `text.pipe(trim).pipe(enum)`): the list, as the REST door takes it.
      let end: z.core.$ZodType = zodSchema;
      while (end._zod.def.type === 'pipe') end = (end._zod.def as z.core.$ZodPipeDef).out;
      if (end !== zodSchema && end._zod.def.type === 'enum') {
        json.type = 'string';
        json.enum = Object.values((end._zod.def as z.core.$ZodEnumDef).entries);
      }
      if (Array.isArray(json.enum) && json.type === 'number' && json.enum.every((value) => Number.isInteger(value))) json.type = 'integer';
      if (freeJson) json['x-free-json'] = true;
    },
  }) as JsonSchema;
}

/** Each document's records as zod wrote them, by id: a second record under an id must be the same one. */
const writtenRecords = new WeakMap<Record<string, JsonSchema>, Map<string, string>>();

function hoistDefinitions(json: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  const repointed = JSON.parse(JSON.stringify(json).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;
  const { $defs, $schema: _schema, ...schema } = repointed;
  const written = writtenRecords.get(components) ?? new Map<string, string>();
  writtenRecords.set(components, written);
  for (const [id, definition] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
    const text = JSON.stringify(definition);
    const earlier = written.get(id);
    if (earlier !== undefined && earlier !== text) throw new Error(`two different records are named ${id}`);
    if (earlier !== undefined) continue;
    if (components[id]) throw new Error(`the record ${id} has the name of another schema of the document`);
    written.set(id, text);
    components[id] = definition;
  }
  return schema;
}

/** Applies in place what every input of this name may be, declared or not: length, no NUL, 32-bit integers, value lists. */
export function applyInputLimits(
  schema: JsonSchema,
  name: string,
  owner: string,
  options: InputSchemaOptions,
  seen = new Set<string>(),
  insideFreeJson = false,
): JsonSchema {
  const freeJson = schema['x-free-json'] === true || insideFreeJson;
  delete schema['x-free-json'];
  if (freeJson && !insideFreeJson) schema[FREE_FORM_JSON] = true;
  const list = schema.valueList as keyof LeadSourceLists | undefined;
  if (list) schema.enum = [...options.valueLists[list]];
  for (const key of DECLARATION_ONLY_KEYS) delete schema[key];

  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
  if (Array.isArray(schema.anyOf)) {
    // A keyword beside anyOf (a pattern on a nullable text) belongs to the branch of its type.
    for (const [type, keywords] of Object.entries(KEYWORDS_BY_TYPE)) {
      const branch = (schema.anyOf as JsonSchema[]).find((candidate) => candidate.type === type);
      if (!branch) continue;
      for (const keyword of keywords.filter((name) => name in schema)) {
        branch[keyword] = schema[keyword];
        delete schema[keyword];
      }
    }
  }
  if (Array.isArray(schema.enum)) {
    // A list of values says all there is to say.
    for (const keyword of ['pattern', 'minLength', 'maxLength', 'minimum', 'maximum']) delete schema[keyword];
  } else if (types.includes('string')) {
    const limit = freeJson ? JSON_TEXT_MAX_LENGTH : UNLIMITED_TEXT_FIELDS.has(`${owner}.${name}`) ? undefined : textMaxLength(name);
    if (limit !== undefined) schema.maxLength = Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : limit, limit);
    if (schema.pattern === undefined) schema.pattern = TEXT_PATTERN;
    else if (schema.pattern === NON_BLANK.source) schema.pattern = NON_BLANK_TEXT_PATTERN;
  }
  if (types.includes('integer') && !Array.isArray(schema.enum)) {
    schema.minimum = Math.max(typeof schema.minimum === 'number' ? schema.minimum : INT32.min, INT32.min);
    schema.maximum = Math.min(typeof schema.maximum === 'number' ? schema.maximum : INT32.max, INT32.max);
  }
  const walk = (inner: unknown, innerName: string, innerOwner: string): void => {
    if (isPlainObject(inner)) applyInputLimits(inner, innerName, innerOwner, options, seen, freeJson);
  };
  for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, unknown>)) walk(property, key, owner);
  const branches = (['anyOf', 'oneOf', 'allOf'] as const).flatMap((keyword) => (schema[keyword] ?? []) as unknown[]);
  for (const inner of [schema.additionalProperties, schema.propertyNames, schema.items, ...branches]) walk(inner, name, owner);
  const ref = typeof schema.$ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1] : undefined;
  if (ref && !seen.has(ref)) {
    seen.add(ref);
    const component = options.components[ref];
    if (component) applyInputLimits(component, name, ref, options, seen);
  }
  return schema;
}

/** An operation's parameters and body from its zod record; a nested record with `.meta({ id })` becomes a component. */
export function recordArguments(record: z.ZodObject, owner: string, options: InputSchemaOptions) {
  const json = hoistDefinitions(zodJsonSchema(record, false), options.components);
  applyInputLimits(json, '', owner, options);
  return { properties: (json.properties ?? {}) as Record<string, JsonSchema>, required: (json.required ?? []) as string[] };
}

// Patterns every engine reads alike: validators compile a `pattern` with Go's RE2 or Rust's regex, which
// lack lookaround, backreferences and `\u`, and read `\d`, `\s`, `\w`, `\b` and `.` as other sets. So
// patterns are written into the syntax all share; what has no such spelling is refused at build time.

/** JavaScript's `\s`: its WhiteSpace and LineTerminator characters, spelled as every engine reads a class's members. */
export const PORTABLE_WHITE_SPACE = '\\x09-\\x0D \\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000\uFEFF';
/** What JavaScript's `.` does not match. */
const LINE_TERMINATORS = '\\x0A\\x0D\u2028\u2029';

/** The shorthand classes: their members inside a class, or the class they stand for (null: no spelling inside a class). */
const SHORTHAND_CLASSES: Readonly<Record<string, { inside: string | null; outside: string }>> = {
  d: { inside: '0-9', outside: '[0-9]' },
  D: { inside: null, outside: '[^0-9]' },
  s: { inside: PORTABLE_WHITE_SPACE, outside: `[${PORTABLE_WHITE_SPACE}]` },
  S: { inside: null, outside: `[^${PORTABLE_WHITE_SPACE}]` },
  w: { inside: 'A-Za-z0-9_', outside: '[A-Za-z0-9_]' },
  W: { inside: null, outside: '[^A-Za-z0-9_]' },
};

const ESCAPED_EVERYWHERE = new Set([...'^$\\.*+?()[]{}|']);

/** The same pattern in the syntax RE2, Rust's regex and ECMA-262 share; throws for what it cannot say. */
export function portablePattern(source: string): string {
  let written = '';
  let inClass = false;
  const refuse = (what: string): never => {
    throw new Error(`the pattern ${source} uses ${what}, which Go's and Rust's regular expressions do not read as JavaScript does`);
  };
  for (let index = 0; index < source.length; index += 1) {
    const char = source[index] as string;
    if (char === '\\') {
      const next = source[index + 1] ?? refuse('a trailing backslash');
      index += 1;
      const shorthand = SHORTHAND_CLASSES[next];
      if (shorthand) {
        written += (inClass ? shorthand.inside : shorthand.outside) ?? refuse(`\\${next} inside a class`);
      } else if (next === 'x' || next === 'u') {
        const braced = next === 'u' && source[index + 1] === '{';
        const digits = braced
          ? /^\{([0-9A-Fa-f]{1,6})\}/.exec(source.slice(index + 1))
          : new RegExp(`^([0-9A-Fa-f]{${next === 'x' ? 2 : 4}})`).exec(source.slice(index + 1));
        if (!digits?.[1]) return refuse(`a malformed \\${next} escape`);
        index += digits[0].length;
        const codePoint = Number.parseInt(digits[1], 16);
        if (codePoint >= 0xd800 && codePoint <= 0xdfff) {
          throw new Error(`the pattern ${source} names a surrogate, which Go's and Rust's regular expressions refuse`);
        }
        written += codePoint <= 0xff ? `\\x${codePoint.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCodePoint(codePoint);
      } else if (next === '0' && !/[0-9]/.test(source[index + 1] ?? '')) {
        written += '\\x00';
      } else if ('tnrfv'.includes(next) || ESCAPED_EVERYWHERE.has(next) || (next === '-' && inClass)) {
        written += `\\${next}`;
      } else if (next === '-' || next === '/') {
        written += next;
      } else {
        refuse(`\\${next}`);
      }
      continue;
    }
    if (inClass) {
      if (char === ']') inClass = false;
      // A bare `[` in a class begins a POSIX class (`[[:alpha:]]`) in RE2.
      written += char === '[' ? '\\[' : char;
      continue;
    }
    if (char === '[') {
      inClass = true;
      written += char;
      if (source[index + 1] === '^') {
        written += '^';
        index += 1;
      }
      if (source[index + 1] === ']') refuse('a class that begins with ]');
      continue;
    }
    if (char === '(' && source[index + 1] === '?' && source[index + 2] !== ':') refuse('a lookaround or a named group');
    written += char === '.' ? `[^${LINE_TERMINATORS}]` : char;
  }
  if (inClass) refuse('an unclosed class');
  return written;
}

/** Respells every `pattern` and `patternProperties` name but not examples; the contract check passes its own `respell`. */
export function withPortablePatterns<T>(value: T, respell: (pattern: string) => string = portablePattern): T {
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!isPlainObject(node)) return node;
    return Object.fromEntries(
      Object.entries(node).map(([key, inner]) => {
        if (key === 'example' || key === 'examples') return [key, inner];
        if (key === 'pattern' && typeof inner === 'string') return [key, respell(inner)];
        if (key === 'patternProperties' && isPlainObject(inner)) {
          return [key, Object.fromEntries(Object.entries(inner).map(([pattern, schema]) => [respell(pattern), rewrite(schema)]))];
        }
        return [key, rewrite(inner)];
      }),
    );
  };
  return rewrite(value) as T;
}
