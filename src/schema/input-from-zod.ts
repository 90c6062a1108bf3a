// The GraphQL input type of an input record, built from the record's zod schema (declared once in
// src/domain/, see src/domain/input-records.ts), so the graph, the REST door (Sofa reads the graph)
// and the OpenAPI request schema cannot drift from the validation.
//
// Kinds: text (and text enums) is String, unless the caller names the graph enum of that value list
// (`enums`: the zod schema of the list → its Pothos enum, e.g. lead categories), an integer Int,
// another number Float, a boolean Boolean,
// an array a list, a nested object its own input type (named by `.meta({ id })`), and free JSON
// (z.record, z.unknown, z.any, or any schema marked `.meta({ asJson: true })`) the `JSON` scalar.
// A field is required (`!`) when it is neither optional nor nullable; an optional field that refuses
// null is still nullable here (GraphQL has no optional non-null input field without a default), and
// parseRecord refuses the null ("cannot be null"). Descriptions are the
// schema's; a field without one takes the glossary's words (src/schema/glossary.ts).
import type { ArgBuilder, EnumRef, InputFieldRef, InputObjectRef, SchemaTypes } from '@pothos/core';
import { z } from 'zod';
import { declaredMeta, innerOf } from '../domain/input-records.ts';

type InputFieldBuilder<Types extends SchemaTypes> = PothosSchemaTypes.InputFieldBuilder<Types, 'InputObject'>;
type AnyInputObjectRef<Types extends SchemaTypes> = InputObjectRef<Types, unknown>;
export type AnyEnumRef<Types extends SchemaTypes> = EnumRef<Types, unknown, unknown>;

/** The graph enums of value lists, by the zod schema that declares the list in the domain. */
type GraphEnums<Types extends SchemaTypes> = ReadonlyMap<z.core.$ZodType, AnyEnumRef<Types>>;

/** What a GraphQL input field is made of: a named type (scalar or input object) or a list of one. */
type FieldShape<Types extends SchemaTypes> =
  | { kind: 'named'; type: NamedType<Types>; required: boolean }
  | { kind: 'list'; item: { type: NamedType<Types>; required: boolean }; required: boolean };

/** The input object types a builder already has from a schema, by name: a nested record used twice is one type. */
const builtInputs = new WeakMap<object, Map<string, AnyInputObjectRef<SchemaTypes>>>();

/** The graph enum of a value list: the list itself, or text piped into it (trimmed, then listed). */
function enumOf<Types extends SchemaTypes>(schema: z.core.$ZodType, enums: GraphEnums<Types>): AnyEnumRef<Types> | undefined {
  const def = schema._zod.def;
  return enums.get(schema) ?? (def.type === 'pipe' ? enums.get((def as z.core.$ZodPipeDef).out) : undefined);
}

/** The schema under its wrappers (down to a value list with a graph enum), and whether the client must send a non-null value. */
function unwrapped<Types extends SchemaTypes>(
  schema: z.core.$ZodType,
  enums: GraphEnums<Types>,
): { core: z.core.$ZodType; required: boolean } {
  let core = schema;
  let required = true;
  for (let inner = innerOf(core); inner && !enumOf(core, enums); inner = innerOf(core)) {
    const type = core._zod.def.type;
    if (type === 'optional' || type === 'nullable' || type === 'default' || type === 'prefault') required = false;
    core = inner;
  }
  return { core, required };
}

function isFreeJson(schema: z.core.$ZodType): boolean {
  const type = schema._zod.def.type;
  return type === 'record' || type === 'unknown' || type === 'any' || declaredMeta(schema).asJson === true;
}

type NamedType<Types extends SchemaTypes> = 'String' | 'Int' | 'Float' | 'Boolean' | 'JSON' | AnyInputObjectRef<Types> | AnyEnumRef<Types>;

function namedType<Types extends SchemaTypes>(
  builder: PothosSchemaTypes.SchemaBuilder<Types>,
  core: z.core.$ZodType,
  at: string,
  enums: GraphEnums<Types>,
): NamedType<Types> {
  const listed = enumOf(core, enums);
  if (listed) return listed;
  if (isFreeJson(core)) return 'JSON';
  const def = core._zod.def;
  switch (def.type) {
    case 'string':
      return 'String';
    case 'enum':
    case 'literal': {
      // A text enum without a graph enum named for it stays String; the schema still refuses values
      // outside the list.
      const values =
        def.type === 'enum'
          ? Object.values((def as z.core.$ZodEnumDef).entries)
          : (def as z.core.$ZodLiteralDef<z.core.util.Literal>).values;
      if (values.every((value) => typeof value === 'string')) return 'String';
      throw new Error(`${at}: only text enums and literals have a GraphQL type here`);
    }
    case 'number':
      return core instanceof z.ZodNumber && core.isInt ? 'Int' : 'Float';
    case 'boolean':
      return 'Boolean';
    case 'object': {
      const id = declaredMeta(core).id;
      if (!id) throw new Error(`${at}: a nested object needs a GraphQL name, .meta({ id: 'SomethingInput' })`);
      return inputFromZod(builder, id, core as z.ZodObject, { enums }) as unknown as AnyInputObjectRef<Types>;
    }
    default:
      throw new Error(`${at}: a zod ${def.type} has no GraphQL input type here (mark free JSON with .meta({ asJson: true }))`);
  }
}

function fieldShape<Types extends SchemaTypes>(
  builder: PothosSchemaTypes.SchemaBuilder<Types>,
  schema: z.core.$ZodType,
  at: string,
  enums: GraphEnums<Types>,
): FieldShape<Types> {
  const { core, required } = unwrapped(schema, enums);
  if (core._zod.def.type === 'array' && !isFreeJson(core)) {
    const item = unwrapped((core._zod.def as z.core.$ZodArrayDef).element, enums);
    if (item.core._zod.def.type === 'array') throw new Error(`${at}: lists of lists have no GraphQL input type here`);
    return { kind: 'list', item: { type: namedType(builder, item.core, `${at}[]`, enums), required: item.required }, required };
  }
  return { kind: 'named', type: namedType(builder, core, at, enums), required };
}

/**
 * A field's own description: the one declared on the field's wrappers, not that of the nested input
 * type it holds (a `.meta({ id, description })` object describes its type, and says nothing of the
 * field that holds it).
 */
function fieldDescription(schema: z.core.$ZodType): string | undefined {
  const layers: z.core.$ZodType[] = [];
  for (let layer: z.core.$ZodType | undefined = schema; layer; layer = innerOf(layer)) {
    if (layer._zod.def.type === 'object' && declaredMeta(layer).id) break;
    layers.push(layer);
  }
  for (const layer of layers) {
    const description = z.globalRegistry.get(layer)?.description;
    if (description) return description;
  }
  return undefined;
}

/** The options of each field of an object schema, as Pothos takes them for an input field or an argument. */
function fieldOptions<Types extends SchemaTypes>(
  builder: PothosSchemaTypes.SchemaBuilder<Types>,
  owner: string,
  schema: z.core.$ZodType,
  enums: GraphEnums<Types> = new Map(),
) {
  const { core } = unwrapped(schema, enums);
  if (core._zod.def.type !== 'object') throw new Error(`${owner}: an input record is a zod object`);
  const shape = (core._zod.def as z.core.$ZodObjectDef).shape;
  return Object.entries(shape).map(([field, fieldSchema]) => {
    const kind = fieldShape(builder, fieldSchema, `${owner}.${field}`, enums);
    const description = fieldDescription(fieldSchema);
    const described = description ? { description } : {};
    const options =
      kind.kind === 'list'
        ? { type: [kind.item.type], required: { list: kind.required, items: kind.item.required }, ...described }
        : { type: kind.type, required: kind.required, ...described };
    return [field, options] as const;
  });
}

/** A record's input type, built once per builder and name. */
export function inputFromZod<Types extends SchemaTypes, Schema extends z.ZodObject>(
  builder: PothosSchemaTypes.SchemaBuilder<Types>,
  name: string,
  schema: Schema,
  options: { description?: string; enums?: GraphEnums<Types> } = {},
): InputObjectRef<Types, z.input<Schema>> {
  let built = builtInputs.get(builder);
  if (!built) {
    built = new Map();
    builtInputs.set(builder, built);
  }
  const existing = built.get(name);
  if (existing) return existing as unknown as InputObjectRef<Types, z.input<Schema>>;

  const ref = builder.inputRef<z.input<Schema>, false>(name);
  built.set(name, ref as unknown as AnyInputObjectRef<SchemaTypes>);
  const description = options.description ?? declaredMeta(schema).description;
  ref.implement({
    ...(description ? { description } : {}),
    // The fields are computed from the schema, so their static types cannot be spelled field by
    // field; the ref's type (z.input) is what resolvers see.
    fields: ((t: InputFieldBuilder<Types>) =>
      Object.fromEntries(
        fieldOptions(builder, name, schema, options.enums).map(([field, fieldOption]) => [
          field,
          t.field(fieldOption as Parameters<InputFieldBuilder<Types>['field']>[0]),
        ]),
      )) as never,
  });
  return ref as unknown as InputObjectRef<Types, z.input<Schema>>;
}

/**
 * A root field's arguments from a record schema, one argument per field (for operations whose
 * inputs are top-level arguments, not one input object): `args: argsFromZod(builder, t.arg,
 * 'phone_call_webhook', schema)`. Resolvers see the arguments as the schema's `z.input`, with null
 * added where GraphQL allows it (an argument that is not required may be sent as null): the value
 * goes through parseRecord, which refuses a null the schema does not allow.
 */
export function argsFromZod<Types extends SchemaTypes, Schema extends z.ZodType>(
  builder: PothosSchemaTypes.SchemaBuilder<Types>,
  arg: ArgBuilder<Types>,
  owner: string,
  schema: Schema,
): { [Field in keyof z.input<Schema>]-?: InputFieldRef<Types, z.input<Schema>[Field]> } {
  const args = Object.fromEntries(
    fieldOptions(builder, owner, schema).map(([field, fieldOption]) => [field, arg(fieldOption as Parameters<ArgBuilder<Types>>[0])]),
  );
  // As for inputFromZod: the arguments are computed, their type is the schema's.
  return args as unknown as { [Field in keyof z.input<Schema>]-?: InputFieldRef<Types, z.input<Schema>[Field]> };
}
