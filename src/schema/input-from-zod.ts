// The GraphQL input type of an input record, built from the record's zod schema (declared once in
// src/domain/, see src/domain/input-records.ts), so the graph, the REST door (Sofa reads the graph)
// and the OpenAPI request schema cannot drift from the validation.
//
// Kinds: text (and text enums) is String, an integer Int, another number Float, a boolean Boolean,
// an array a list, a nested object its own input type (named by `.meta({ id })`), and free JSON
// (z.record, z.unknown, z.any, or any schema marked `.meta({ asJson: true })`) the `JSON` scalar.
// A field is required (`!`) when it is neither optional nor nullable. Descriptions are the
// schema's; a field without one takes the glossary's words (src/schema/glossary.ts).
import type { InputFieldRef, InputObjectRef, SchemaTypes } from '@pothos/core';
import { z } from 'zod';
import { declaredMeta, innerOf } from '../domain/input-records.ts';

type InputFieldBuilder<Types extends SchemaTypes> = PothosSchemaTypes.InputFieldBuilder<Types, 'InputObject'>;
type AnyInputObjectRef<Types extends SchemaTypes> = InputObjectRef<Types, unknown>;

/** What a GraphQL input field is made of: a named type (scalar or input object) or a list of one. */
type FieldShape<Types extends SchemaTypes> =
  | { kind: 'named'; type: 'String' | 'Int' | 'Float' | 'Boolean' | 'JSON' | AnyInputObjectRef<Types>; required: boolean }
  | { kind: 'list'; item: { type: 'String' | 'Int' | 'Float' | 'Boolean' | 'JSON' | AnyInputObjectRef<Types>; required: boolean }; required: boolean };

/** The input object types a builder already has from a schema, by name: a nested record used twice is one type. */
const builtInputs = new WeakMap<object, Map<string, AnyInputObjectRef<SchemaTypes>>>();

/** The schema under its wrappers, and whether the client must send a non-null value. */
function unwrapped(schema: z.core.$ZodType): { core: z.core.$ZodType; required: boolean } {
  let core = schema;
  let required = true;
  for (let inner = innerOf(core); inner; inner = innerOf(core)) {
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

/** A record's input type, built once per builder and name. */
export function inputFromZod<Types extends SchemaTypes, Schema extends z.ZodObject>(
  builder: PothosSchemaTypes.SchemaBuilder<Types>,
  name: string,
  schema: Schema,
  options: { description?: string } = {},
): InputObjectRef<Types, z.input<Schema>> {
  let built = builtInputs.get(builder);
  if (!built) builtInputs.set(builder, (built = new Map()));
  const existing = built.get(name);
  if (existing) return existing as unknown as InputObjectRef<Types, z.input<Schema>>;

  const at = (field: string) => `${name}.${field}`;

  function namedType(core: z.core.$ZodType, field: string): 'String' | 'Int' | 'Float' | 'Boolean' | 'JSON' | AnyInputObjectRef<Types> {
    if (isFreeJson(core)) return 'JSON';
    const def = core._zod.def;
    switch (def.type) {
      case 'string':
        return 'String';
      case 'enum':
      case 'literal': {
        // Text enums stay String on the wire: a GraphQL enum would change what clients send and the
        // REST door reads; the schema still refuses values outside the list.
        const values = def.type === 'enum' ? Object.values((def as z.core.$ZodEnumDef).entries) : (def as z.core.$ZodLiteralDef<z.core.util.Literal>).values;
        if (values.every((value) => typeof value === 'string')) return 'String';
        throw new Error(`${at(field)}: only text enums and literals have a GraphQL type here`);
      }
      case 'number':
        return core instanceof z.ZodNumber && core.isInt ? 'Int' : 'Float';
      case 'boolean':
        return 'Boolean';
      case 'object': {
        const id = declaredMeta(core).id;
        if (!id) throw new Error(`${at(field)}: a nested object needs a GraphQL name, .meta({ id: 'SomethingInput' })`);
        return inputFromZod(builder, id, core as z.ZodObject) as unknown as AnyInputObjectRef<Types>;
      }
      default:
        throw new Error(`${at(field)}: a zod ${def.type} has no GraphQL input type here (mark free JSON with .meta({ asJson: true }))`);
    }
  }

  function fieldShape(schema: z.core.$ZodType, field: string): FieldShape<Types> {
    const { core, required } = unwrapped(schema);
    if (core._zod.def.type === 'array' && !isFreeJson(core)) {
      const item = unwrapped((core._zod.def as z.core.$ZodArrayDef).element);
      if (item.core._zod.def.type === 'array') throw new Error(`${at(field)}: lists of lists have no GraphQL input type here`);
      return { kind: 'list', item: { type: namedType(item.core, `${field}[]`), required: item.required }, required };
    }
    return { kind: 'named', type: namedType(core, field), required };
  }

  const ref = builder.inputRef<z.input<Schema>, false>(name);
  built.set(name, ref as unknown as AnyInputObjectRef<SchemaTypes>);
  const description = options.description ?? declaredMeta(schema).description;
  ref.implement({
    ...(description ? { description } : {}),
    // The fields are computed from the schema, so their static types cannot be spelled field by
    // field; the ref's type (z.input) is what resolvers see.
    fields: ((t: InputFieldBuilder<Types>) => {
      const fields: Record<string, InputFieldRef<Types, unknown>> = {};
      for (const [field, fieldSchema] of Object.entries(schema.shape as Record<string, z.core.$ZodType>)) {
        const shape = fieldShape(fieldSchema, field);
        const fieldDescription = declaredMeta(fieldSchema).description;
        const described = fieldDescription ? { description: fieldDescription } : {};
        const options =
          shape.kind === 'list'
            ? { type: [shape.item.type], required: { list: shape.required, items: shape.item.required }, ...described }
            : { type: shape.type, required: shape.required, ...described };
        fields[field] = t.field(options as Parameters<InputFieldBuilder<Types>['field']>[0]);
      }
      return fields;
    }) as never,
  });
  return ref as unknown as InputObjectRef<Types, z.input<Schema>>;
}
