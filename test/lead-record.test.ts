// The lead's input record as data (src/domain/leads/input-record.ts) and the rules of spec 2.7 that
// read from it, checked without HTTP or a database: each schema on its own, and validateLead with
// the error it answers (path and reason).
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  FIELDS_BY_CATEGORY,
  NEVER_CLEARED,
  REQUIRED_ON_CREATE,
  chargeBreakdownSchema,
  documentRequestFieldsSchema,
  leadFileInputSchema,
  leadInputSchema,
} from '../src/domain/leads/input-record.ts';
import { validateLead, type ExistingLead, type LeadInputData } from '../src/domain/leads/validation.ts';
import { DOCUMENT_TYPES, leadSourceLists } from '../src/domain/leads/values.ts';

const options = { now: new Date('2026-11-20T00:00:00.000Z'), maxFileBytes: 1024, leadSources: leadSourceLists() };
const valid: LeadInputData = {
  email: 'jane@example.com',
  phone: '0412 345 678',
  dealership_id: 1,
  category: 'General Enquiry',
  source: 'Website',
};
const stored: ExistingLead = {
  dealership_id: 1,
  category: 'General Enquiry',
  fields: {},
  team_member_id: null,
  disable_strict_validation: false,
  has_payment: false,
  file_count: 0,
};

/** The first issue of a failed parse, as [path, message]. */
function firstIssue(schema: z.ZodType, value: unknown): [readonly PropertyKey[], string] | null {
  const result = schema.safeParse(value);
  if (result.success) return null;
  const issue = result.error.issues[0]!;
  return [issue.path, issue.message];
}

/** The field and message validateLead refuses `input` with. */
function refusal(input: LeadInputData, existing?: ExistingLead): { field: unknown; message: string } {
  try {
    validateLead(input, { ...options, existing });
  } catch (error) {
    const { extensions, message } = error as { extensions: { field: unknown }; message: string };
    return { field: extensions.field, message };
  }
  throw new Error('validateLead accepted the input');
}

describe('charge_breakdown (spec 2.7)', () => {
  it.each([
    ['total alone', { total: { amount: 45990 } }],
    ['charges alone', { charges: [{ name: 'Duty', amount: 1 }] }],
    [
      'both, with more keys everywhere',
      { total: { amount: 3, currency: 'AUD' }, charges: [{ name: 'Duty', amount: 1, gst: true }], note: 'x' },
    ],
    ['an empty list of charges', { charges: [] }],
  ])('accepts %s', (_label, value) => {
    expect(chargeBreakdownSchema.safeParse(value).success).toBe(true);
  });

  it.each([
    ['a list', [{ name: 'x', amount: 1 }], [], 'must be an object with "total", "charges" or both'],
    ['neither total nor charges', { subtotal: 1 }, [], 'must contain "total", "charges" or both'],
    ['a total that is a number', { total: 45990 }, ['total'], 'must be an object with a numeric "amount"'],
    ['a total without amount', { total: { currency: 'AUD' } }, ['total', 'amount'], 'is required'],
    ['a total amount in text', { total: { amount: '45990' } }, ['total', 'amount'], 'must be a number, got "45990"'],
    [
      'charges that are an object',
      { charges: { name: 'Duty', amount: 1 } },
      ['charges'],
      'must be an array of objects with "name" and "amount"',
    ],
    ['a charge that is text', { charges: ['Duty'] }, ['charges', 0], 'must be an object with "name" and "amount"'],
    ['a charge without name', { charges: [{ name: 'Duty', amount: 1 }, { amount: 2 }] }, ['charges', 1, 'name'], 'is required'],
    ['a blank charge name', { charges: [{ name: ' ', amount: 2 }] }, ['charges', 0, 'name'], 'must be a non-empty string'],
    ['a charge amount of null', { charges: [{ name: 'Duty', amount: null }] }, ['charges', 0, 'amount'], 'must be a number, got null'],
  ])('refuses %s', (_label, value, path, message) => {
    expect(firstIssue(chargeBreakdownSchema, value)).toEqual([path, message]);
  });

  it('is stored exactly as sent, key order included', () => {
    const sent = { charges: [{ amount: 1, name: 'Duty' }], total: { currency: 'AUD', amount: 1 } };
    const { columns } = validateLead({ ...valid, charge_breakdown: sent }, options);
    expect(JSON.stringify(columns.charge_breakdown)).toBe(JSON.stringify(sent));
  });

  it('names the nested path under lead', () => {
    expect(refusal({ ...valid, charge_breakdown: { charges: [{ name: 'Duty', amount: 1 }, { name: 'Rego' }] } })).toEqual({
      field: 'lead.charge_breakdown.charges[1].amount',
      message: 'lead.charge_breakdown.charges[1].amount: is required',
    });
  });
});

describe('fields and the Document Request (spec 2.7)', () => {
  it('a Document Request is the one category with a rule on fields', () => {
    expect(Object.keys(FIELDS_BY_CATEGORY)).toEqual(['Document Request']);
    expect(FIELDS_BY_CATEGORY['Document Request']).toBe(documentRequestFieldsSchema);
  });

  it.each(DOCUMENT_TYPES)('accepts document_type %s, with more keys', (document_type) => {
    expect(documentRequestFieldsSchema.safeParse({ document_type, vin: 'X' }).success).toBe(true);
  });

  it('refuses a missing or unknown document_type', () => {
    expect(firstIssue(documentRequestFieldsSchema, { vin: 'X' })).toEqual([
      ['document_type'],
      'is required for a Document Request lead: one of car_analysis, ppsr, equifax',
    ]);
    expect(firstIssue(documentRequestFieldsSchema, { document_type: 'rego_check' })).toEqual([
      ['document_type'],
      'must be one of car_analysis, ppsr, equifax, got "rego_check"',
    ]);
  });

  it('validateLead applies it to the lead as it will be', () => {
    expect(refusal({ ...valid, category: 'Document Request', fields: { vin: 'X' } }).field).toBe('lead.fields.document_type');
    expect(validateLead({ ...valid, category: 'Document Request', fields: { document_type: 'ppsr' } }, options).columns.category).toBe(
      'Document Request',
    );
    // The stored fields count when only the category changes.
    const request = { ...stored, fields: { document_type: 'equifax' } };
    expect(validateLead({ category: 'Document Request' }, { ...options, existing: request }).columns).toEqual({
      category: 'Document Request',
    });
    expect(refusal({ category: 'Document Request' }, stored).field).toBe('lead.fields.document_type');
    // Another category's fields are free.
    expect(validateLead({ ...valid, fields: { anything: [1, 2] } }, options).columns.fields).toEqual({ anything: [1, 2] });
  });

  it('fields must be an object; null stores none', () => {
    expect(refusal({ ...valid, fields: 'document_type=ppsr' })).toEqual({
      field: 'lead.fields',
      message: 'lead.fields: must be an object of key/value pairs',
    });
    expect(refusal({ ...valid, fields: ['a'] }).field).toBe('lead.fields');
    expect(validateLead({ ...valid, fields: null }, options).columns.fields).toEqual({});
  });
});

describe('required fields, as data', () => {
  it('are the five of spec 4.9, the dealership checked first', () => {
    expect(REQUIRED_ON_CREATE).toEqual(['dealership_id', 'email', 'phone', 'category', 'source']);
    expect(refusal({})).toEqual({ field: 'lead.dealership_id', message: 'lead.dealership_id: is required' });
  });

  it.each(REQUIRED_ON_CREATE)('a new lead without %s is refused, and with null too', (field) => {
    const { [field]: _left, ...rest } = valid;
    expect(refusal(rest)).toEqual({ field: `lead.${field}`, message: `lead.${field}: is required` });
    expect(refusal({ ...valid, [field]: null })).toEqual({ field: `lead.${field}`, message: `lead.${field}: is required` });
  });

  it.each(Object.entries(NEVER_CLEARED))('an update cannot clear %s', (field, reason) => {
    expect(refusal({ [field]: null }, stored)).toEqual({ field: `lead.${field}`, message: `lead.${field}: ${reason}` });
  });

  it('an update leaves out what it does not change; a new lead takes the defaults for null flags', () => {
    expect(validateLead({ message: ' Hi ' }, { ...options, existing: stored }).columns).toEqual({ message: 'Hi' });
    expect(validateLead({ ...valid, golden: null, lead_state: null }, options).columns).not.toHaveProperty('golden');
  });
});

describe('each field by its declaration', () => {
  it('puts values in their stored form', () => {
    const parsed = leadInputSchema.parse({ name: '  Jane ', message: '   ', tags: [' hot ', 'hot', '', 'vip'], marketing_source: ' ' });
    expect(parsed).toEqual({ name: 'Jane', message: null, tags: ['hot', 'vip'], marketing_source: null });
    expect(leadInputSchema.parse({ tags: null })).toEqual({ tags: [] });
  });

  it.each([
    [{ category: 'used vehicle enquiry' }, ['category'], /^must be one of: New Vehicle Enquiry; .*\. Got "used vehicle enquiry"$/],
    [{ category: '  ' }, ['category'], /^must not be empty$/],
    [{ delay_customer_email_minutes: -5 }, ['delay_customer_email_minutes'], /^must be 0 or more, got -5$/],
    [{ delay_dealership_notification_minutes: 10_081 }, ['delay_dealership_notification_minutes'], /^must be at most 10080, got 10081$/],
    [{ dealership_id: 1.5 }, ['dealership_id'], /^must be a whole number$/],
    [{ golden: 'yes' }, ['golden'], /^must be true or false$/],
    [{ lead_state: ' ' }, ['lead_state'], /^must be a non-empty text$/],
    [{ payment_attributes: { amount: -1 } }, ['payment_attributes', 'amount'], /^must be a number of 0 or more, got -1$/],
    [{ address_attributes: { postcode: -800 } }, ['address_attributes', 'postcode'], /^must be 0 or more, got -800$/],
  ])('refuses %j', (input, path, message) => {
    const issue = firstIssue(leadInputSchema, input);
    expect(issue?.[0]).toEqual(path);
    expect(issue?.[1]).toMatch(message);
  });

  it('category is the spec’s spelling, trimmed', () => {
    expect(leadInputSchema.parse({ category: ' Trade-in Enquiry ' })).toEqual({ category: 'Trade-in Enquiry' });
  });

  it('an attachment needs a known file_type', () => {
    expect(leadFileInputSchema.parse({ file_type: ' resume ', file: 'JVBE' })).toEqual({ file_type: 'resume', file: 'JVBE' });
    expect(firstIssue(leadFileInputSchema, { file: 'JVBE' })).toEqual([['file_type'], 'is required (one of resume, cover_letter, other)']);
    expect(firstIssue(leadFileInputSchema, { file_type: ' ', file: 'JVBE' })).toEqual([
      ['file_type'],
      'is required (one of resume, cover_letter, other)',
    ]);
    expect(firstIssue(leadFileInputSchema, { file_type: 'photo' })).toEqual([
      ['file_type'],
      'must be one of resume, cover_letter, other, got "photo"',
    ]);
    expect(refusal({ ...valid, lead_files_attributes: [{ file_type: 'resume', file: 'JVBERi0=' }, { file_type: 'photo' }] }).field).toBe(
      'lead.lead_files_attributes[1].file_type',
    );
  });

  it('a new payment needs its amount; a stored one keeps it', () => {
    expect(refusal({ ...valid, payment_attributes: { car_id: 3 } }).field).toBe('lead.payment_attributes.amount');
    expect(validateLead({ payment_attributes: { car_id: 3 } }, { ...options, existing: { ...stored, has_payment: true } }).payment).toEqual(
      { car_id: 3 },
    );
  });
});
