// Each input record is declared once as a zod schema, from which its type, GraphQL input and OpenAPI
// schema derive; messages callers rely on live in the schemas, the plain ones here only fill gaps.
import { z } from 'zod';
import { invalidInput, isApiError } from '../errors.ts';

declare module 'zod' {
  interface GlobalMeta {
    /** Free JSON on the graph though the schema checks it: its GraphQL type predates the schema and must not change. */
    asJson?: boolean;
  }
}

export function fieldPath(at: string, path: readonly PropertyKey[]): string {
  let text = at;
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? String(segment) : `.${String(segment)}`;
  }
  return text;
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'must be text',
  number: 'must be a number',
  int: 'must be a whole number',
  boolean: 'must be true or false',
  object: 'must be an object',
  array: 'must be a list',
};

/** Used only where the schema gives no message of its own: zod prefers a schema's `error` to a per-parse map. */
const plainReasons: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      if (issue.input === null) return 'cannot be null';
      return TYPE_WORDS[issue.expected] ?? `must be ${issue.expected}`;
    case 'invalid_value':
      return `must be one of: ${issue.values.map((value) => String(value)).join(', ')}`;
    case 'too_small':
      if (issue.origin === 'string')
        return Number(issue.minimum) === 1 ? 'must not be blank' : `must be at least ${issue.minimum} characters`;
      if (issue.origin === 'array') return `must have at least ${issue.minimum} items`;
      return `must be ${issue.minimum} or more`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${issue.maximum} characters`;
      if (issue.origin === 'array') return `must have at most ${issue.maximum} items`;
      return `must be at most ${issue.maximum}`;
    default:
      return undefined;
  }
};

/** A custom issue may name the error clients switch on (`email_required`) in `params: { error }`. */
export function parseRecord<Schema extends z.ZodType>(schema: Schema, value: unknown, at: string): z.output<Schema> {
  const parsed = schema.safeParse(value, { error: plainReasons });
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  const error = issue?.code === 'custom' && typeof issue.params?.error === 'string' ? issue.params.error : undefined;
  throw invalidInput(fieldPath(at, issue?.path ?? []), issue?.message ?? 'is not valid', error);
}

const RULE_FIELD = '\u0000field';

/** Keeps a throwing rule the one piece of code for its check; any other error is thrown on. */
export function fieldRule<In, Out>(rule: (value: In, field: string) => Out): (value: In, context: z.RefinementCtx) => Out {
  return (value, context) => {
    try {
      return rule(value, RULE_FIELD);
    } catch (error) {
      const prefix = `${RULE_FIELD}: `;
      if (!isApiError(error) || error.extensions.field !== RULE_FIELD || !error.message.startsWith(prefix)) throw error;
      context.addIssue({ code: 'custom', message: error.message.slice(prefix.length), input: value });
      return z.NEVER;
    }
  };
}

/** Read through every wrapper, since a field may be described before or after it is made optional; the outer wins. */
export function declaredMeta(schema: z.core.$ZodType): z.core.GlobalMeta {
  const layers: z.core.GlobalMeta[] = [];
  for (let layer: z.core.$ZodType | undefined = schema; layer; layer = innerOf(layer)) {
    const meta = z.globalRegistry.get(layer);
    if (meta) layers.push(meta);
  }
  return Object.assign({}, ...layers.reverse()) as z.core.GlobalMeta;
}

const ABSENCE_WRAPPERS: ReadonlySet<string> = new Set(['optional', 'nullable', 'default', 'prefault']);
const WRAPPERS: ReadonlySet<string> = new Set([...ABSENCE_WRAPPERS, 'nonoptional', 'readonly', 'catch']);

/** A preprocess is read as the schema it feeds. */
export function innerOf(schema: z.core.$ZodType): z.core.$ZodType | undefined {
  const def = schema._zod.def;
  if (WRAPPERS.has(def.type)) return (def as z.core.$ZodOptionalDef).innerType;
  if (def.type === 'lazy') return (def as z.core.$ZodLazyDef).getter();
  if (def.type !== 'pipe') return undefined;
  const pipe = def as z.core.$ZodPipeDef;
  return pipe.in._zod.def.type === 'transform' ? pipe.out : pipe.in;
}

export const NON_BLANK = /\S/;

const jsonShapes = new WeakMap<z.core.$ZodType, z.core.$ZodType>();

export function jsonTakes<Field extends z.core.$ZodType>(field: Field, shape: z.core.$ZodType): Field {
  jsonShapes.set(field, shape);
  return field;
}

export function jsonShapeOf(field: z.core.$ZodType): z.core.$ZodType | undefined {
  return jsonShapes.get(field);
}

const stripId = ({ id: _id, ...meta }: z.core.GlobalMeta): z.core.GlobalMeta => meta;

function withoutAbsence(schema: z.core.$ZodType): z.core.$ZodType {
  let core = schema;
  while (ABSENCE_WRAPPERS.has(core._zod.def.type)) core = (core._zod.def as z.core.$ZodOptionalDef).innerType;
  if (core._zod.def.type === 'pipe') {
    // `z.string().nullish().transform(…)`: the absence is allowed on the pipe's way in.
    const pipe = core._zod.def as z.core.$ZodPipeDef;
    const into = withoutAbsence(pipe.in);
    if (into !== pipe.in) core = z.pipe(into as z.ZodType, pipe.out as z.ZodType);
  }
  return core === schema ? schema : (core as z.ZodType).meta(stripId(declaredMeta(schema)));
}

function withFields<Shape extends z.core.$ZodShape>(
  record: z.ZodObject<Shape>,
  fields: readonly (keyof Shape & string)[],
  change: (schema: z.core.$ZodType) => z.core.$ZodType,
): z.ZodObject {
  return record.extend(
    Object.fromEntries(fields.map((field) => [field, change(record.shape[field] as z.core.$ZodType)])),
  ) as unknown as z.ZodObject;
}

/** So that the domain, not GraphQL, names a missing field with its own error. */
export function withRequired<Shape extends z.core.$ZodShape>(
  record: z.ZodObject<Shape>,
  fields: readonly (keyof Shape & string)[],
): z.ZodObject {
  return withFields(record, fields, withoutAbsence);
}

export function withoutNull<Shape extends z.core.$ZodShape>(
  record: z.ZodObject<Shape>,
  fields: readonly (keyof Shape & string)[],
): z.ZodObject {
  return withFields(record, fields, (schema) => (withoutAbsence(schema) as z.ZodType).optional().meta(stripId(declaredMeta(schema))));
}
