// The lead's GraphQL inputs, derived from its one declaration (src/domain/leads/input-record.ts):
// each zod field becomes an input field of the matching type, nullable (what is required is the
// domain's rule, so a missing field is a 422 naming it on both doors), with the declaration's
// description. The REST door's request body and its OpenAPI schema follow from these types.
import { z } from 'zod';
import { builder } from '../builder.ts';
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

/** The named input types of nested records, filled as they are declared below. */
const objectTypes = new Map<z.ZodType, InputTypeParam>();

/** The GraphQL type of what a field's schema accepts (its input side: a transform's input). */
function graphTypeOf(schema: z.ZodType): InputTypeParam {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault) {
    return graphTypeOf(schema.unwrap() as z.ZodType);
  }
  if (schema instanceof z.ZodPipe) return graphTypeOf((schema.out instanceof z.ZodTransform ? schema.in : schema.out) as z.ZodType);
  if (schema instanceof z.ZodString) return 'String';
  if (schema instanceof z.ZodNumber) return schema.isInt ? 'Int' : 'Float';
  if (schema instanceof z.ZodBoolean) return 'Boolean';
  if (schema instanceof z.ZodArray) return [graphTypeOf(schema.element as z.ZodType)] as InputTypeParam;
  // Free-form JSON, which the declaration checks as a whole (fields, charge_breakdown).
  if (schema instanceof z.ZodUnknown || schema instanceof z.ZodRecord) return 'JSON';
  const named = enumTypes.get(schema) ?? objectTypes.get(schema);
  if (named) return named;
  throw new Error(`no GraphQL input type for a zod ${schema.def.type}: declare its enum or object type first`);
}

/** The input fields of a zod object, one per key. */
function inputFieldsOf(schema: z.ZodObject) {
  return (t: InputFields): FieldMap =>
    Object.fromEntries(
      Object.entries(schema.shape).map(([name, field]) => [
        name,
        t.field({ type: graphTypeOf(field as z.ZodType), required: false, description: (field as z.ZodType).description }),
      ]),
    );
}

/**
 * A named input type for a zod object, every field of which may be left out. Its TypeScript shape is
 * the schema's input: resolvers hand the arguments to the domain, which parses them with the same
 * schema. (TypeScript cannot follow the mapping of keys at run time; it is the schema's by construction.)
 */
function inputTypeOf<Schema extends z.ZodObject>(name: string, schema: Schema, description = schema.description) {
  const ref = builder.inputType(name, { description, fields: inputFieldsOf(schema) });
  if (!objectTypes.has(schema)) objectTypes.set(schema, ref);
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
