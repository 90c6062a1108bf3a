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
      if (issue.origin === 'string') return Number(issue.minimum) === 1 ? 'must not be blank' : `must be at least ${issue.minimum} characters`;
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
 * field by its path under `at` (`car.images[2]`), the reason the issue's message.
 */
export function parseRecord<Schema extends z.ZodType>(schema: Schema, value: unknown, at: string): z.output<Schema> {
  const parsed = schema.safeParse(value, { error: plainReasons });
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  throw invalidInput(fieldPath(at, issue?.path ?? []), issue?.message ?? 'is not valid');
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
