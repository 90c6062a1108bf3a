// Only the rules that need nothing but the value live here; those depending on the whole request, the
// stored lead or the deployment are applied by the validation. Every field is optional here and
// required by REQUIRED_ON_CREATE and NEVER_CLEARED, so a missing field is a 422 naming it on both doors.
import { z } from 'zod';
import type { Prisma } from '../../db/client.ts';
import { leadFilePattern } from './files.ts';
import { calendarDatePattern, parseDayMonthYear } from '../dates.ts';
import { PHONE_EXAMPLE_PATTERN } from '../phone.ts';
import { NON_BLANK, declaredMeta, fieldRule, jsonTakes, withRequired, withoutNull } from '../input-records.ts';
import {
  DEFAULT_THIRD_PARTY_MARKETING_SOURCES,
  DEFAULT_THIRD_PARTY_SOURCES,
  DOCUMENT_REQUEST,
  DOCUMENT_TYPES,
  DOCUMENTED_LEAD_SOURCES,
  DOCUMENTED_MARKETING_SOURCES,
  LEAD_CATEGORIES,
  LEAD_FILE_TYPES,
  MAX_LEAD_FILES,
  MAX_NOTIFICATION_DELAY_MINUTES,
  notListedReason,
  type LeadCategory,
} from './values.ts';

const WHOLE_NUMBER = 'must be a whole number';

const optionalText = () => z.string({ error: 'must be text' }).transform((value) => value.trim() || null);

const nonBlankText = (blankReason: string) =>
  z
    .string({ error: 'must be text' })
    .regex(NON_BLANK, blankReason)
    .transform((value) => value.trim());

const rowId = () => z.number({ error: WHOLE_NUMBER }).int({ error: WHOLE_NUMBER });

const reference = (what: string) => rowId().meta({ 'x-references': what });

/** As browsers' type=email checks it, with RFC 5321 lengths. */
export const EMAIL_ADDRESS =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

const flag = () => z.boolean({ error: 'must be true or false' });

function count(max?: number) {
  const atLeastZero = rowId().min(0, { error: (issue) => `must be 0 or more, got ${String(issue.input)}` });
  return max === undefined ? atLeastZero : atLeastZero.max(max, { error: (issue) => `must be at most ${max}, got ${String(issue.input)}` });
}

export const leadCategorySchema = z.enum(LEAD_CATEGORIES, { error: (issue) => notListedReason(LEAD_CATEGORIES, issue.input) });

const FILE_TYPE_REQUIRED = `is required (one of ${LEAD_FILE_TYPES.join(', ')})`;

export const leadFileTypeSchema = z.enum(LEAD_FILE_TYPES, {
  error: (issue) =>
    issue.input === '' ? FILE_TYPE_REQUIRED : `must be one of ${LEAD_FILE_TYPES.join(', ')}, got "${String(issue.input)}"`,
});

export const documentTypeSchema = z.enum(DOCUMENT_TYPES, {
  error: (issue) =>
    issue.input === undefined || issue.input === null
      ? `is required for a ${DOCUMENT_REQUEST} lead: one of ${DOCUMENT_TYPES.join(', ')}`
      : `must be one of ${DOCUMENT_TYPES.join(', ')}, got ${JSON.stringify(issue.input)}`,
});

const amountSchema = z.number({
  error: (issue) => (issue.input === undefined ? 'is required' : `must be a number, got ${JSON.stringify(issue.input)}`),
});

/** Every object may carry more keys. */
export const chargeBreakdownSchema = z
  .looseObject(
    {
      total: z.looseObject({ amount: amountSchema }, { error: 'must be an object with a numeric "amount"' }).optional(),
      charges: z
        .array(
          z.looseObject(
            {
              name: z
                .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a non-empty string') })
                .meta({ pattern: NON_BLANK.source })
                .refine((name) => name.trim() !== '', 'must be a non-empty string'),
              amount: amountSchema,
            },
            { error: 'must be an object with "name" and "amount"' },
          ),
          { error: 'must be an array of objects with "name" and "amount"' },
        )
        .optional(),
    },
    { error: 'must be an object with "total", "charges" or both' },
  )
  .refine(
    (breakdown) => Object.hasOwn(breakdown, 'total') || Object.hasOwn(breakdown, 'charges'),
    'must contain "total", "charges" or both',
  )
  .meta({
    anyOf: [
      { properties: { total: { type: 'object' } }, required: ['total'] },
      { properties: { charges: { type: 'array' } }, required: ['charges'] },
    ],
  });

const leadFieldsSchema = z.record(z.string(), z.unknown(), { error: 'must be an object of key/value pairs' });

export const documentRequestFieldsSchema = z.looseObject({ document_type: documentTypeSchema });

/** Checked against the lead as it will be: this request's category and fields over the stored ones. */
export const FIELDS_BY_CATEGORY: Partial<Record<LeadCategory, z.ZodType>> = {
  [DOCUMENT_REQUEST]: documentRequestFieldsSchema,
};

/** Kept exactly as sent: a parsed copy would reorder keys, and the client gets its own order back. */
function checkedJson<Rule extends z.ZodType>(rule: Rule) {
  const checked = z.unknown().transform((value, context) => {
    const result = rule.safeParse(value);
    if (!result.success) {
      for (const issue of result.error.issues) context.addIssue({ code: 'custom', message: issue.message, path: issue.path });
      return z.NEVER;
    }
    return value as Prisma.InputJsonObject;
  });
  return jsonTakes(checked, rule);
}

/** Its bytes are checked and decoded after every cheaper rule. */
export const leadFileInputSchema = z
  .object({
    file_type: z
      .string({ error: 'must be text' })
      .transform((value) => value.trim())
      .pipe(leadFileTypeSchema)
      .nullish()
      .describe('Required.'),
    file: z
      .string({ error: 'must be text' })
      .nullish()
      .describe(
        'The file content, base64-encoded (a data: URL prefix is allowed and ignored). Required; at most LEAD_FILE_MAX_BYTES decoded.',
      ),
  })
  .superRefine((entry, context) => {
    if (entry.file_type === null || entry.file_type === undefined)
      context.addIssue({ code: 'custom', path: ['file_type'], message: FILE_TYPE_REQUIRED });
  })
  .meta({
    id: 'LeadFileInput',
    description: `An attachment (at most ${MAX_LEAD_FILES} per lead). Only documents and images are accepted; the type is read from the bytes.`,
  });

const leadPaymentInputSchema = z
  .object({
    amount: z
      .number({ error: 'must be a number' })
      .min(0, { error: (issue) => `must be a number of 0 or more, got ${String(issue.input)}` })
      .nullish()
      .describe('0 or more; required unless the lead already has a payment.'),
    car_id: reference('a car of the lead’s dealership').nullish().describe('A car of the lead’s dealership.'),
    payment_processor_id: reference('a payment processor of the lead’s dealership')
      .nullish()
      .describe('A payment processor of the lead’s dealership.'),
    external_transaction_id: optionalText().nullish(),
  })
  .meta({ id: 'LeadPaymentInput', description: 'A payment made with a lead, to store with it.' });

const leadAddressInputSchema = z
  .object({
    street: optionalText().nullish(),
    city: optionalText().nullish(),
    state: optionalText().nullish(),
    state_long: optionalText().nullish(),
    country: optionalText().nullish(),
    postcode: count().nullish().describe('Also becomes the postcode of a new contact (four digits: 800 is 0800).'),
  })
  .meta({ id: 'LeadAddressInput', description: 'The customer’s postal address to store with a lead.' });

export const leadInputSchema = z.object({
  name: optionalText().nullish().describe('Customer full name. Personal data.'),
  last_name: optionalText().nullish().describe('Personal data.'),
  email: nonBlankText('must not be empty')
    .meta({ pattern: EMAIL_ADDRESS.source })
    .nullish()
    .describe('Required on create. Checked unless disable_strict_validation. Personal data.'),
  phone: nonBlankText('must not be empty')
    .meta({ pattern: PHONE_EXAMPLE_PATTERN })
    .nullish()
    .describe(
      'Required on create. Australian numbers in their usual forms, stored as E.164 (+61412345678), unless disable_strict_validation (stored as sent). Personal data.',
    ),
  message: optionalText().nullish(),
  dealership_id: rowId()
    .nullish()
    .describe('Required on create: a dealership the key can access (404 dealership_not_found otherwise). Cannot change on update.'),
  dealership_slug: optionalText()
    .meta({ 'x-references': 'the slug of the dealership of dealership_id' })
    .nullish()
    .describe('When sent, the slug of that dealership.'),
  category: nonBlankText('must not be empty').pipe(leadCategorySchema).nullish().describe('Required on create: the kind of enquiry.'),
  // Deployment lists, so not an enum.
  source: nonBlankText('must not be empty')
    .meta({ valueList: 'sources' })
    .nullish()
    .describe(
      `Required on create. One of: ${DOCUMENTED_LEAD_SOURCES.join('; ')}, or a third-party channel (by default: ${DEFAULT_THIRD_PARTY_SOURCES.join(', ')}). Any case; stored in the list's spelling.`,
    ),
  marketing_source: optionalText()
    .meta({ valueList: 'marketingSources' })
    .nullish()
    .describe(
      `One of: ${DOCUMENTED_MARKETING_SOURCES.join('; ')}, or a third-party channel (by default: ${DEFAULT_THIRD_PARTY_MARKETING_SOURCES.join(', ')}). Any case; stored in the list's spelling.`,
    ),
  website_id: reference('a website of the dealership').nullish().describe('A website of the dealership.'),
  website_slug: optionalText()
    .meta({ 'x-references': 'a website of the dealership' })
    .nullish()
    .describe('Slug or custom slug of a website of the dealership; sets website_id when that is not sent.'),
  page_id: rowId().nullish(),
  stocknum: optionalText()
    .nullish()
    .describe('Links the dealership’s car with this stock number, if there is one (car_id wins when both are sent).'),
  provider: optionalText().nullish(),
  provider_id: optionalText().nullish(),
  certified: flag().nullish(),
  golden: flag().nullish().describe('Marks the contact’s lead cluster high priority.'),
  location_id: reference('a location of the dealership').nullish().describe('A location of the dealership.'),
  send_customer_email: flag().nullish().describe('false: no acknowledgement e-mail to the customer (default true).'),
  car_id: reference('a car of the dealership').nullish().describe('A car of the dealership.'),
  model_id: reference('a model').nullish(),
  model_variant_id: reference('a variant of model_id').nullish().describe('A variant of model_id (which is taken from it when not sent).'),
  colour_id: reference('a colour of model_id').nullish().describe('A colour of model_id (which is taken from it when not sent).'),
  team_member_id: reference('a user of the dealership, on a Team Member Enquiry lead')
    .nullish()
    .describe('Team Member Enquiry leads only: a user of the dealership.'),
  user_email: optionalText()
    .nullish()
    .describe('A platform user of the dealership to link (case-insensitive); an unknown address is stored unlinked.'),
  lead_state: nonBlankText('must be a non-empty text').nullish().describe('Free text, 1 to 64 characters (default "new").'),
  sms_verified: flag().nullish().describe('Marks the contact as SMS verified.'),
  tags: z
    .array(z.string({ error: 'must be text' }), { error: 'must be a list of texts' })
    .nullable()
    // Each tag once, trimmed; null and [] both clear the list.
    .transform((tags) => [...new Set((tags ?? []).map((tag) => tag.trim()).filter((tag) => tag !== ''))])
    .optional(),
  opt_in_to_marketing: flag().nullish(),
  delay_customer_email_minutes: count(MAX_NOTIFICATION_DELAY_MINUTES).nullish().describe(`0 to ${MAX_NOTIFICATION_DELAY_MINUTES}.`),
  delay_dealership_notification_minutes: count(MAX_NOTIFICATION_DELAY_MINUTES)
    .nullish()
    .describe(`0 to ${MAX_NOTIFICATION_DELAY_MINUTES}.`),
  disable_strict_validation: flag().nullish().describe('true: email and phone are stored as sent, unchecked.'),
  time_on_site_seconds: count().nullish(),
  time_to_submit_seconds: count().nullish(),
  lead_files_attributes: z.array(leadFileInputSchema, { error: 'must be a list of files' }).nullish(),
  payment_attributes: leadPaymentInputSchema.nullish(),
  address_attributes: leadAddressInputSchema.nullish().describe('Personal data.'),
  fields: checkedJson(leadFieldsSchema)
    .nullable()
    // null clears the pairs: the column always holds an object.
    .transform((fields) => (fields ?? {}) as Prisma.InputJsonObject)
    .optional()
    .describe(`An object of free key/value pairs. A Document Request carries document_type: one of ${DOCUMENT_TYPES.join(', ')}.`),
  charge_breakdown: checkedJson(chargeBreakdownSchema)
    .nullish()
    .describe('An object with `total` ({amount: number, …}), `charges` ([{name: string, amount: number, …}]) or both.'),
  customer_address: optionalText().nullish().describe('Personal data.'),
  // Whether it is in the future depends on the service clock, so it is checked later.
  dob: optionalText()
    .transform(fieldRule((text: string | null, field) => (text === null ? null : parseDayMonthYear(text, field))))
    .nullish()
    .describe('Date of birth, day/month/year ("28/02/1990"; "1990-02-28" too). Personal data.'),
});

export type LeadInputData = z.input<typeof leadInputSchema>;
export type LeadInputValues = z.output<typeof leadInputSchema>;

/** The dealership first: without it nothing else about the lead can be decided. */
export const REQUIRED_ON_CREATE = ['dealership_id', 'email', 'phone', 'category', 'source'] as const;

/** An update may change these but not clear them; on create, null for one with a default means the default. */
export const NEVER_CLEARED = {
  email: 'is required and cannot be removed',
  phone: 'is required and cannot be removed',
  category: 'is required and cannot be removed',
  source: 'is required and cannot be removed',
  lead_state: 'must be a non-empty text',
  certified: 'must be true or false',
  golden: 'must be true or false',
  send_customer_email: 'must be true or false',
  sms_verified: 'must be true or false',
  opt_in_to_marketing: 'must be true or false',
  disable_strict_validation: 'must be true or false',
} as const satisfies Partial<Record<keyof LeadInputData, string>>;

export type NeverClearedField = keyof typeof NEVER_CLEARED;

const FIRST_BIRTH_YEAR = 1900;

/** A payment needs its amount here, since the document cannot know which lead has one; stored-row rules are `x-references`. */
export function leadRequests(now: Date) {
  const payment = withRequired(leadPaymentInputSchema, ['amount']).meta({
    id: 'LeadPaymentInput',
    description: 'A payment: amount is required unless the lead already has a payment.',
  });
  // The record's own rule (a superRefine) requires file_type; the document says so by its shape.
  const file = withRequired(z.object(leadFileInputSchema.shape), ['file_type'])
    .extend({
      file: z
        .string()
        .meta({ pattern: leadFilePattern(), contentEncoding: 'base64' })
        .describe(
          'The file content, base64-encoded (a data: URL prefix is allowed and ignored): a PDF, Word (.doc, .docx), RTF, plain text ' +
            'or image (PNG, JPEG, GIF, WebP) file, at most LEAD_FILE_MAX_BYTES decoded. The pattern covers the kinds known by their first bytes.',
        ),
    })
    .meta({ ...declaredMeta(leadFileInputSchema) });
  const dob = optionalText()
    .meta({ pattern: calendarDatePattern(FIRST_BIRTH_YEAR, now.getUTCFullYear() - 1, { blank: true }) })
    .nullish()
    .describe(`${declaredMeta(leadInputSchema.shape.dob).description ?? ''} Not in the future; blank clears it.`.trim());
  const fieldsByCategory = Object.entries(FIELDS_BY_CATEGORY).map(([category, rule]) => {
    const { $schema: _dialect, ...shape } = z.toJSONSchema(rule, { io: 'input' });
    return {
      if: { properties: { category: { const: category } }, required: ['category'] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keywords, not a thenable.
      then: { properties: { fields: shape }, required: ['fields'] },
    };
  });
  const lead = leadInputSchema.extend({
    payment_attributes: payment.nullish(),
    lead_files_attributes: z.array(file).max(MAX_LEAD_FILES).nullish(),
    dob,
  });
  return {
    create: z.object({
      lead: withRequired(lead, REQUIRED_ON_CREATE).meta({
        id: 'LeadInput',
        description: `A new lead: ${REQUIRED_ON_CREATE.join(', ')} are required.`,
        allOf: fieldsByCategory,
      }),
    }),
    update: z.object({
      id: rowId().describe('The lead id.'),
      // A lead stays with its dealership: on update dealership_id may only repeat it.
      lead: withoutNull(
        lead.extend({ dealership_id: rowId().meta({ 'x-references': 'the dealership of the lead (it cannot change)' }).nullish() }),
        [...(Object.keys(NEVER_CLEARED) as NeverClearedField[]), 'dealership_id'],
      ).meta({
        id: 'LeadUpdateInput',
        description:
          'Changes to a lead: a field left out keeps its value, null clears an optional one; ' +
          `${Object.keys(NEVER_CLEARED).join(', ')} cannot be null. Files sent are added to the lead’s files. ` +
          'A lead whose category needs certain fields (document_type of a Document Request) keeps needing them when its fields change.',
        allOf: fieldsByCategory,
      }),
    }),
  };
}
