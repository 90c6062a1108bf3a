// The lead's closed value lists as GraphQL enums whose internal values are the spec's text, which resolvers
// see and the REST door answers (`restAsText`). Sources are no enum: a deployment's setting extends them.
import { builder, restAsText } from './builder.ts';
import { DOCUMENT_TYPES, LEAD_CATEGORIES, LEAD_FILE_TYPES } from '../domain/leads/values.ts';

/** GraphQL's spelling of a spec value: "Trade-in Enquiry" is TRADE_IN_ENQUIRY, "car_analysis" CAR_ANALYSIS. */
export function graphEnumName(text: string): string {
  return text
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

function specValues(name: string, description: string, values: readonly string[]) {
  return builder.enumType(name, {
    description: `${description} The REST door reads and answers each value's text instead ("${values[0]}").`,
    ...restAsText,
    values: Object.fromEntries(
      values.map((value): [string, { value: string; description: string }] => [
        graphEnumName(value),
        { value, description: `${value}, as the REST door spells it.` },
      ]),
    ),
  });
}

export const LeadCategoryEnum = specValues('LeadCategory', 'The kind of enquiry a lead is.', LEAD_CATEGORIES);
export const LeadFileTypeEnum = specValues('LeadFileType', 'What a lead’s attachment is.', LEAD_FILE_TYPES);
export const LeadDocumentTypeEnum = specValues(
  'LeadDocumentType',
  'The document a Document Request lead asks for (its fields.document_type).',
  DOCUMENT_TYPES,
);
