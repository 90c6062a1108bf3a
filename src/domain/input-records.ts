// An input record (the `car` of update_car, the `lead` of create_lead …) is declared once, as a zod
// schema in src/domain/: each field's kind, nullability, description and rules. Its TypeScript type
// is the schema's `z.input`, its GraphQL input type is built from it (src/schema/input-from-zod.ts,
// and through Sofa the OpenAPI request schema), and `parseRecord` below is its validation. Messages
// that callers rely on are written in the schema (`error`, refine and transform messages); the
// plain ones below only fill in where a schema says nothing.
import { z } from 'zod';
import { invalidInput, isApiError } from '../errors.ts';

declare module 'zod' {
  interface GlobalMeta {
    /**
     * The field is sent as free JSON (the graph's `JSON` scalar) although the schema checks its
     * structure: for values whose GraphQL type predates the schema and must not change.
     */
    asJson?: boolean;
  }
}

type PathSegment = PropertyKey;

/** `car` + ['images', 2] is `car.images[2]`; `lead` + ['charge_breakdown', 'charges', 1, 'amount'] is `lead.charge_breakdown.charges[1].amount`. */
export function fieldPath(at: string, path: readonly PathSegment[]): string {
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

/**
 * The project's words for zod's generic issues (the REST door's and GraphQL's own: "is required",
 * "must be a whole number"), used only where the schema gives no message of its own: zod prefers a
 * schema's `error` to this per-parse map.
 */
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

/**
 * The record parsed by its schema, or the project's 422 (`invalidInput`) for the first issue: the
 * field by its path under `at` (`car.images[2]`; '' for root arguments), the reason the issue's
 * message. A custom issue may name the error clients switch on (where the spec gives one, e.g.
 * `email_required`) in `params: { error }`; any other issue is `invalid_input`.
 */
export function parseRecord<Schema extends z.ZodType>(schema: Schema, value: unknown, at: string): z.output<Schema> {
  const parsed = schema.safeParse(value, { error: plainReasons });
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  const error = issue?.code === 'custom' && typeof issue.params?.error === 'string' ? issue.params.error : undefined;
  throw invalidInput(fieldPath(at, issue?.path ?? []), issue?.message ?? 'is not valid', error);
}

/** Stands for the field while a throwing rule runs inside a schema; the real path is zod's. */
const RULE_FIELD = '\u0000field';

/**
 * A rule written as a function that throws `invalidInput(field, reason)` (parseDayMonthYear in
 * src/domain/dates.ts, the car's httpUrl), as a zod transform: the rule stays
 * the one piece of code for its check, and its reason becomes the issue's message at the field's
 * path. Any other error is not an input issue and is thrown on.
 */
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

/**
 * The metadata (`.describe()`, `.meta({ … })`) declared on a schema and on every wrapper around it
 * (optional, nullable, a transform …): a field may be described before or after it is made
 * optional. Where two layers say the same key, the outer one wins.
 */
export function declaredMeta(schema: z.core.$ZodType): z.core.GlobalMeta {
  const layers: z.core.GlobalMeta[] = [];
  for (let layer: z.core.$ZodType | undefined = schema; layer; layer = innerOf(layer)) {
    const meta = z.globalRegistry.get(layer);
    if (meta) layers.push(meta);
  }
  return Object.assign({}, ...layers.reverse()) as z.core.GlobalMeta;
}

/**
 * The schema a wrapper wraps, on the input side (what a client sends), or undefined for a schema
 * that wraps nothing. A transform's input is its `in`; a preprocess (a transform feeding a schema)
 * is read as the schema it feeds.
 */
export function innerOf(schema: z.core.$ZodType): z.core.$ZodType | undefined {
  const def = schema._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return (def as z.core.$ZodOptionalDef).innerType;
    case 'pipe': {
      const pipe = def as z.core.$ZodPipeDef;
      return pipe.in._zod.def.type === 'transform' ? pipe.out : pipe.in;
    }
    case 'lazy':
      return (def as z.core.$ZodLazyDef).getter();
    default:
      return undefined;
  }
}

/**
 * Text that says something: at least one character that is not white space (what `trim()` removes).
 * Text rules that refuse blank text check this pattern, so the OpenAPI document states it as theirs.
 */
export const NON_BLANK = /\S/;

/**
 * The JSON value that a free-form JSON field (the graph's `JSON` scalar, a `z.unknown()` checked by a
 * rule of its own) must have, by the field's schema: what the OpenAPI document describes the field as.
 */
const jsonShapes = new WeakMap<z.core.$ZodType, z.core.$ZodType>();

/** Declares `shape` as what the free-form JSON `field` takes (filled where the field is declared, read by the document). */
export function jsonTakes<Field extends z.core.$ZodType>(field: Field, shape: z.core.$ZodType): Field {
  jsonShapes.set(field, shape);
  return field;
}

/** The shape declared for a free-form JSON field by jsonTakes, if any. */
export function jsonShapeOf(field: z.core.$ZodType): z.core.$ZodType | undefined {
  return jsonShapes.get(field);
}

/** The schema without the optional, nullable and default layers around it, with the metadata they carried. */
function withoutAbsence(schema: z.core.$ZodType): z.core.$ZodType {
  const { id: _id, ...meta } = declaredMeta(schema);
  let core = schema;
  for (;;) {
    const type = core._zod.def.type;
    if (type === 'optional' || type === 'nullable' || type === 'default' || type === 'prefault') {
      core = (core._zod.def as z.core.$ZodOptionalDef).innerType;
    } else if (type === 'pipe') {
      // `z.string().nullish().transform(…)`: the absence is allowed on the pipe's way in.
      const pipe = core._zod.def as z.core.$ZodPipeDef;
      const into = withoutAbsence(pipe.in);
      if (into === pipe.in) break;
      core = z.pipe(into as z.ZodType, pipe.out as z.ZodType);
      break;
    } else {
      break;
    }
  }
  return core === schema ? schema : (core as z.ZodType).meta(meta);
}

/**
 * The record as a rule of the domain requires it where the graph leaves the fields optional (so that
 * the domain, not GraphQL, names a missing one with its own error): each of `fields` present and
 * not null. The OpenAPI document describes the REST door's input from it; the check stays the rule
 * that reads the same list (REQUIRED_ON_CREATE, …).
 */
export function withRequired<Shape extends z.core.$ZodShape>(
  record: z.ZodObject<Shape>,
  fields: readonly (keyof Shape & string)[],
): z.ZodObject {
  return record.extend(
    Object.fromEntries(fields.map((field) => [field, withoutAbsence(record.shape[field] as z.core.$ZodType)])),
  ) as unknown as z.ZodObject;
}

/** The record with each of `fields` still optional but never null (a rule refuses null for them: NEVER_CLEARED …). */
export function withoutNull<Shape extends z.core.$ZodShape>(
  record: z.ZodObject<Shape>,
  fields: readonly (keyof Shape & string)[],
): z.ZodObject {
  return record.extend(
    Object.fromEntries(
      fields.map((field) => {
        const schema = record.shape[field] as z.core.$ZodType;
        return [field, (withoutAbsence(schema) as z.ZodType).optional().meta(stripId(declaredMeta(schema)))];
      }),
    ),
  ) as unknown as z.ZodObject;
}

const stripId = ({ id: _id, ...meta }: z.core.GlobalMeta): z.core.GlobalMeta => meta;
