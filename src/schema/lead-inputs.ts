// The lead's inputs, from its one zod declaration. Every field may be left out: what is required is the
// domain's rule, so a missing field is a 422 naming it on both doors.
import { builder } from './builder.ts';
import { documentTypeSchema, leadCategorySchema, leadFileTypeSchema, leadInputSchema } from '../domain/leads/input-record.ts';
import type { z } from 'zod';
import { inputFromZod, type AnyEnumRef } from './input-from-zod.ts';
import type { Types } from './builder.ts';
import { LeadCategoryEnum, LeadDocumentTypeEnum, LeadFileTypeEnum } from './lead-values.ts';

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
