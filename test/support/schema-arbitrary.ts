// Values that a JSON Schema (OpenAPI 3.1's dialect) allows, as fast-check arbitraries: what a client
// generated from the OpenAPI document may send. Used by test/openapi-properties.test.ts.
//
// Covered: $ref, enum and const, anyOf (with the keywords beside it), a list of types, null,
// booleans, integers and numbers with their bounds, text by its pattern and lengths, lists with their
// sizes and uniqueness (`uniqueItems`, and `x-unique-by` for a key JSON Schema cannot name), objects
// with their required and optional properties, free-form objects, and any JSON value. What is not
// generated here (allOf's if/then) the caller checks with a validator and filters.
//
// Where the document gives an example for a value, the example is one of the candidates: ids and
// slugs of the demo data reach real records, so a request gets past "not found" to the rules after it.
import fc from 'fast-check';

export type JsonSchema = Record<string, unknown>;

const isObject = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Lists are generated short: their length is a rule of its own (maxItems), not a load test. */
const MAX_GENERATED_ITEMS = 3;
/** Below this depth optional properties are left out, so recursive or deep records stay small. */
const MAX_OPTIONAL_DEPTH = 4;

export class SchemaArbitraries {
  constructor(private readonly components: Readonly<Record<string, JsonSchema>>) {}

  /** The schema behind a `$ref`, with what stands beside the ref. */
  resolve(schema: JsonSchema): JsonSchema {
    const ref = typeof schema.$ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1] : undefined;
    if (!ref) return schema;
    const { $ref: _ref, ...beside } = schema;
    return this.resolve({ ...(this.components[ref] ?? {}), ...beside });
  }

  /** Values of `schema`; `example` (the document's, where it has one) is among them. */
  of(schema: JsonSchema, example?: unknown, depth = 0): fc.Arbitrary<unknown> {
    const generated = this.generate(this.resolve(schema), example, depth);
    return example === undefined
      ? generated
      : fc.oneof({ arbitrary: fc.constant(example), weight: 1 }, { arbitrary: generated, weight: 2 });
  }

  private generate(schema: JsonSchema, example: unknown, depth: number): fc.Arbitrary<unknown> {
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.anyOf)) {
      const { anyOf, ...beside } = schema;
      return fc.oneof(...(anyOf as JsonSchema[]).map((branch) => this.generate(merge(beside, this.resolve(branch)), example, depth)));
    }
    if (Array.isArray(schema.type)) {
      return fc.oneof(...(schema.type as string[]).map((type) => this.generate({ ...schema, type }, example, depth)));
    }
    switch (schema.type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer({ min: numberOr(schema.minimum, -2_147_483_648), max: numberOr(schema.maximum, 2_147_483_647) });
      case 'number':
        return fc.double({ min: numberOr(schema.minimum, -1e9), max: numberOr(schema.maximum, 1e9), noNaN: true, noDefaultInfinity: true });
      case 'string':
        return this.text(schema);
      case 'array':
        return this.list(schema, example, depth);
      case 'object':
        return this.record(schema, example, depth);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  private text(schema: JsonSchema): fc.Arbitrary<string> {
    const minLength = numberOr(schema.minLength, 0);
    const maxLength = numberOr(schema.maxLength, Number.POSITIVE_INFINITY);
    const base =
      typeof schema.pattern === 'string'
        ? fc.stringMatching(new RegExp(schema.pattern, 'u'))
        : fc.string({ maxLength: Math.min(maxLength, 40) });
    // Lengths as the service counts them: UTF-16 code units.
    return base.filter((text) => text.length >= minLength && text.length <= maxLength);
  }

  private list(schema: JsonSchema, example: unknown, depth: number): fc.Arbitrary<unknown[]> {
    const items = isObject(schema.items)
      ? this.of(schema.items, Array.isArray(example) ? example[0] : undefined, depth + 1)
      : fc.jsonValue({ maxDepth: 1 });
    const minLength = numberOr(schema.minItems, 0);
    const maxLength = Math.min(numberOr(schema.maxItems, MAX_GENERATED_ITEMS), Math.max(minLength, MAX_GENERATED_ITEMS));
    const uniqueBy = typeof schema['x-unique-by'] === 'string' ? schema['x-unique-by'] : undefined;
    if (uniqueBy)
      return fc.uniqueArray(items, { minLength, maxLength, selector: (item) => JSON.stringify(isObject(item) ? item[uniqueBy] : item) });
    if (schema.uniqueItems === true) return fc.uniqueArray(items, { minLength, maxLength, selector: (item) => JSON.stringify(item) });
    return fc.array(items, { minLength, maxLength });
  }

  private record(schema: JsonSchema, example: unknown, depth: number): fc.Arbitrary<unknown> {
    const properties = isObject(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
    const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
    if (Object.keys(properties).length === 0) {
      // Free-form: a few keys of plain JSON.
      return fc.dictionary(fc.stringMatching(/^[a-z][a-z_]{0,11}$/), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
    }
    const exampleOf = (name: string): unknown => (isObject(example) ? example[name] : undefined);
    const kept = Object.entries(properties).filter(([name]) => required.includes(name) || depth < MAX_OPTIONAL_DEPTH);
    return fc.record(Object.fromEntries(kept.map(([name, property]) => [name, this.of(property, exampleOf(name), depth + 1)])), {
      requiredKeys: kept.map(([name]) => name).filter((name) => required.includes(name)),
    });
  }
}

const numberOr = (value: unknown, fallback: number): number => (typeof value === 'number' ? value : fallback);

/** A branch of anyOf with the keywords beside anyOf: both hold, so required lists and properties add up. */
function merge(beside: JsonSchema, branch: JsonSchema): JsonSchema {
  const required = [...((beside.required as string[] | undefined) ?? []), ...((branch.required as string[] | undefined) ?? [])];
  const properties = { ...((beside.properties as JsonSchema | undefined) ?? {}), ...((branch.properties as JsonSchema | undefined) ?? {}) };
  const merged: JsonSchema = { ...beside, ...branch };
  // A branch that names only what is required keeps the full property schemas beside it.
  if (isObject(beside.properties))
    merged.properties = Object.fromEntries(
      Object.entries(properties).map(([name, value]) => [name, (beside.properties as JsonSchema)[name] ?? value]),
    );
  if (required.length > 0) merged.required = [...new Set(required)];
  return merged;
}
