// The lead's closed value lists as GraphQL enums (spec 2.7.1 categories, attachment file types,
// Document Request document types), so graph clients get them typed and checked. Each value's name
// is GraphQL's spelling of the spec's text (NEW_VEHICLE_ENQUIRY) and its internal value is that text,
// which is what resolvers receive and return and what is stored. The REST door keeps the spec's text:
// src/rest/rest-schema.ts serves these enums as String (they carry `restAsText`).
//
// Source and marketing source are not enums: their lists are the deployment's (LEAD_EXTRA_SOURCES,
// LEAD_EXTRA_MARKETING_SOURCES), and a schema cannot change with a setting.
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
