// The lead's GraphQL inputs, derived from its one declaration (src/domain/leads/input-record.ts):
// each zod field becomes an input field of the matching type, nullable (what is required is the
// domain's rule, so a missing field is a 422 naming it on both doors), with the declaration's
// description. The REST door's request body and its OpenAPI schema follow from these types.
//
// This is src/schema/input-from-zod.ts's derivation (the same unwrapping and metadata, from
// src/domain/input-records.ts) plus one thing it does not do: a value list becomes its GraphQL enum
// (LeadCategory, LeadFileType), where inputFromZod keeps every text enum String.
import { z } from 'zod';
import { builder } from '../builder.ts';
import { declaredMeta, innerOf } from '../domain/input-records.ts';
import {
  documentTypeSchema,
  leadAddressInputSchema,
  leadCategorySchema,
  leadFileInputSchema,
  leadFileTypeSchema,
  leadInputSchema,
  leadPaymentInputSchema,
} from '../domain/leads/input-record.ts';
import { LeadCategoryEnum, LeadDocumentTypeEnum, LeadFileTypeEnum } from './lead-values.ts';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
type InputFields = PothosSchemaTypes.InputFieldBuilder<Types, 'InputObject'>;
type InputTypeParam = PothosSchemaTypes.InputFieldOptions<Types>['type'];
type FieldMap = Record<string, PothosSchemaTypes.InputFieldRef<Types, unknown>>;

/** The graph's enum for each of the domain's value lists. */
const enumTypes = new Map<z.ZodType, InputTypeParam>([
  [leadCategorySchema, LeadCategoryEnum],
  [leadFileTypeSchema, LeadFileTypeEnum],
  [documentTypeSchema, LeadDocumentTypeEnum],
]);

/** The named input types of nested records, by their `.meta({ id })`, filled as they are declared below. */
const objectTypes = new Map<string, InputTypeParam>();

/** The GraphQL type of what a field's schema accepts (its input side, under optional, nullable and transforms). */
function graphTypeOf(schema: z.core.$ZodType): InputTypeParam {
  // A value list is looked up before unwrapping further: the category is trimmed text piped into its enum.
  const listed = enumTypes.get(schema as z.ZodType);
  if (listed) return listed;
  if (schema._zod.def.type === 'pipe') {
    const out = (schema._zod.def as z.core.$ZodPipeDef).out;
    const enumType = enumTypes.get(out as z.ZodType);
    if (enumType) return enumType;
  }
  const inner = innerOf(schema);
  if (inner) return graphTypeOf(inner);
  if (schema instanceof z.ZodString) return 'String';
  if (schema instanceof z.ZodNumber) return schema.isInt ? 'Int' : 'Float';
  if (schema instanceof z.ZodBoolean) return 'Boolean';
  if (schema instanceof z.ZodArray) return [graphTypeOf(schema.element as z.core.$ZodType)] as InputTypeParam;
  // Free-form JSON, which the declaration checks as a whole (fields, charge_breakdown).
  if (schema instanceof z.ZodUnknown || schema instanceof z.ZodRecord) return 'JSON';
  const named = objectTypes.get(declaredMeta(schema).id ?? '');
  if (named) return named;
  throw new Error(`no GraphQL input type for a zod ${schema._zod.def.type}: declare its enum or its object type (.meta({ id })) first`);
}

/** The input fields of a zod object, one per key. */
function inputFieldsOf(schema: z.ZodObject) {
  return (t: InputFields): FieldMap =>
    Object.fromEntries(
      Object.entries(schema.shape).map(([name, field]) => [
        name,
        t.field({ type: graphTypeOf(field as z.core.$ZodType), required: false, description: declaredMeta(field as z.core.$ZodType).description }),
      ]),
    );
}

/**
 * A named input type for a zod object, every field of which may be left out. Its TypeScript shape is
 * the schema's input: resolvers hand the arguments to the domain, which parses them with the same
 * schema. (TypeScript cannot follow the mapping of keys at run time; it is the schema's by construction.)
 */
function inputTypeOf<Schema extends z.ZodObject>(name: string, schema: Schema, description = declaredMeta(schema).description) {
  const ref = builder.inputType(name, { description, fields: inputFieldsOf(schema) });
  objectTypes.set(name, ref);
  return ref as unknown as PothosSchemaTypes.InputObjectRef<Types, z.input<Schema>>;
}

export const LeadFileInput = inputTypeOf('LeadFileInput', leadFileInputSchema);
export const LeadPaymentInput = inputTypeOf('LeadPaymentInput', leadPaymentInputSchema);
export const LeadAddressInput = inputTypeOf('LeadAddressInput', leadAddressInputSchema);

export const LeadInput = inputTypeOf('LeadInput', leadInputSchema, 'A new lead: email, phone, dealership_id, category and source are required.');

export const LeadUpdateInput = inputTypeOf(
  'LeadUpdateInput',
  leadInputSchema,
  'Changes to a lead (the names and rules of a new lead): a field left out keeps its value, null clears an optional one ' +
    '(payment_attributes / address_attributes: null removes them); email, phone, category and source cannot be cleared. ' +
    'Files sent are added to the lead’s files.',
);
