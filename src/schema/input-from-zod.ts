// An input record's GraphQL input type, built from its one zod schema in the domain, so the graph, the REST
// door and the OpenAPI request schema cannot drift from the validation. @pothos/plugin-zod validates args
// Pothos declares; it does not declare types from a schema. A field is required when neither optional nor
// nullable; an optional field that refuses null stays nullable (GraphQL has no optional non-null input
// field without a default), and parseRecord refuses the null.
import type { ArgBuilder, EnumRef, InputFieldRef, InputObjectRef, SchemaTypes } from '@pothos/core';
import { z } from 'zod';
import { declaredMeta, innerOf } from '../domain/input-records.ts';

type InputFieldBuilder<Types extends SchemaTypes> = PothosSchemaTypes.InputFieldBuilder<Types, 'InputObject'>;
type AnyInputObjectRef<Types extends SchemaTypes> = InputObjectRef<Types, unknown>;
export type AnyEnumRef<Types extends SchemaTypes> = EnumRef<Types, unknown, unknown>;

/** The graph enums of value lists, by the zod schema that declares the list in the domain. */
type GraphEnums<Types extends SchemaTypes> = ReadonlyMap<z.core.$ZodType, AnyEnumRef<Types>>;

/** By builder and name: a nested record used twice is one type. */
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
      // Without a graph enum named for it, a text enum is String; the schema still refuses other values.
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

/** A field's type and whether it is required, as Pothos' input field options take them. */
function fieldType<Types extends SchemaTypes>(
  builder: PothosSchemaTypes.SchemaBuilder<Types>,
  schema: z.core.$ZodType,
  at: string,
  enums: GraphEnums<Types>,
) {
  const { core, required } = unwrapped(schema, enums);
  if (core._zod.def.type === 'array' && !isFreeJson(core)) {
    const item = unwrapped((core._zod.def as z.core.$ZodArrayDef).element, enums);
    if (item.core._zod.def.type === 'array') throw new Error(`${at}: lists of lists have no GraphQL input type here`);
    return { type: [namedType(builder, item.core, `${at}[]`, enums)], required: { list: required, items: item.required } };
  }
  return { type: namedType(builder, core, at, enums), required };
}

/** The description on the field's wrappers, not that of the `.meta({ id })` input type it holds. */
function fieldDescription(schema: z.core.$ZodType): string | undefined {
  for (let layer: z.core.$ZodType | undefined = schema; layer; layer = innerOf(layer)) {
    if (layer._zod.def.type === 'object' && declaredMeta(layer).id) return undefined;
    const description = z.globalRegistry.get(layer)?.description;
    if (description) return description;
  }
  return undefined;
}

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
    const description = fieldDescription(fieldSchema);
    return [field, { ...fieldType(builder, fieldSchema, `${owner}.${field}`, enums), ...(description ? { description } : {}) }] as const;
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
    // Computed from the schema, so not typed field by field; resolvers see the ref's z.input.
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

/** A root field's arguments, one per field of the schema; parseRecord refuses a null the schema does not allow. */
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
