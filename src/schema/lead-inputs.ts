// The lead's GraphQL inputs, derived from its one declaration (src/domain/leads/input-record.ts) by
// src/schema/input-from-zod.ts, with the lead's value lists as their graph enums (LeadCategory,
// LeadFileType, LeadDocumentType). Every field may be left out: what is required is the domain's
// rule, so a missing field is a 422 naming it on both doors. The REST door's request body and its
// OpenAPI schema follow from these types (the REST schema serves the enums as their text).
import { builder } from './builder.ts';
import { documentTypeSchema, leadCategorySchema, leadFileTypeSchema, leadInputSchema } from '../domain/leads/input-record.ts';
import type { z } from 'zod';
import { inputFromZod, type AnyEnumRef } from './input-from-zod.ts';
import { LeadCategoryEnum, LeadDocumentTypeEnum, LeadFileTypeEnum } from './lead-values.ts';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The graph's enum for each of the domain's value lists. */
const enums = new Map<z.core.$ZodType, AnyEnumRef<Types>>([
  [leadCategorySchema, LeadCategoryEnum],
  [leadFileTypeSchema, LeadFileTypeEnum],
  [documentTypeSchema, LeadDocumentTypeEnum],
]);

export const LeadInput = inputFromZod(builder, 'LeadInput', leadInputSchema, {
  enums,
  description: 'A new lead: email, phone, dealership_id, category and source are required.',
});

export const LeadUpdateInput = inputFromZod(builder, 'LeadUpdateInput', leadInputSchema, {
  enums,
  description:
    'Changes to a lead (the names and rules of a new lead): a field left out keeps its value, null clears an optional one ' +
    '(payment_attributes / address_attributes: null removes them); email, phone, category and source cannot be cleared. ' +
    'Files sent are added to the lead’s files.',
});
