// The field rules of a lead (spec 2.7), for create (4.9) and update (4.8): everything that can be
// decided without the database. Every error is a 422 naming the field by its path in the body
// (`lead.email`, `lead.charge_breakdown.charges[1].amount`). References to other rows (car, model,
// website …) are checked inside the write's transaction, in references.ts.
//
// Update semantics: a field that is absent keeps its stored value; a field that is present replaces
// it; null clears an optional field; a required field (email, phone, category, source) and the
// flags with a default cannot be cleared.
import type { Prisma } from '../../db/client.ts';
import { invalidInput } from '../../errors.ts';
import { parseDayMonthYear } from '../dates.ts';
import { isPlainObject } from '../json-columns.ts';
import { normalizePhone } from '../phone.ts';
import { decodeLeadFiles, type DecodedLeadFile, type LeadFileInputData } from './files.ts';
import {
  DOCUMENT_REQUEST,
  DOCUMENT_TYPES,
  LEAD_CATEGORIES,
  MAX_NOTIFICATION_DELAY_MINUTES,
  TEAM_MEMBER_ENQUIRY,
  listedValue,
  type LeadSourceLists,
} from './values.ts';

export interface LeadPaymentInputData {
  amount?: number | null;
  car_id?: number | null;
  payment_processor_id?: number | null;
  external_transaction_id?: string | null;
}

export interface LeadAddressInputData {
  street?: string | null;
  city?: string | null;
  state?: string | null;
  state_long?: string | null;
  country?: string | null;
  postcode?: number | null;
}

/** The `lead` object of both operations, as the two doors deliver it. */
export interface LeadInputData {
  name?: string | null;
  last_name?: string | null;
  email?: string | null;
  phone?: string | null;
  message?: string | null;
  dealership_id?: number | null;
  dealership_slug?: string | null;
  category?: string | null;
  source?: string | null;
  marketing_source?: string | null;
  website_id?: number | null;
  website_slug?: string | null;
  page_id?: number | null;
  stocknum?: string | null;
  provider?: string | null;
  provider_id?: string | null;
  certified?: boolean | null;
  golden?: boolean | null;
  location_id?: number | null;
  send_customer_email?: boolean | null;
  car_id?: number | null;
  model_id?: number | null;
  model_variant_id?: number | null;
  colour_id?: number | null;
  team_member_id?: number | null;
  user_email?: string | null;
  lead_state?: string | null;
  sms_verified?: boolean | null;
  tags?: readonly string[] | null;
  opt_in_to_marketing?: boolean | null;
  delay_customer_email_minutes?: number | null;
  delay_dealership_notification_minutes?: number | null;
  disable_strict_validation?: boolean | null;
  time_on_site_seconds?: number | null;
  time_to_submit_seconds?: number | null;
  lead_files_attributes?: readonly LeadFileInputData[] | null;
  payment_attributes?: LeadPaymentInputData | null;
  address_attributes?: LeadAddressInputData | null;
  fields?: unknown;
  charge_breakdown?: unknown;
  customer_address?: string | null;
  dob?: string | null;
}

/** The fields that always have a value once stored: required (email, phone, category, source) or with a default. */
type NeverNull =
  | 'email' | 'phone' | 'category' | 'source' | 'lead_state'
  | 'certified' | 'golden' | 'send_customer_email' | 'sms_verified' | 'opt_in_to_marketing' | 'disable_strict_validation';

/** Lead columns in their stored form; on update only the ones the request changes are present. */
export type LeadColumns = Omit<
  LeadInputData,
  NeverNull | 'dealership_id' | 'lead_files_attributes' | 'payment_attributes' | 'address_attributes' | 'tags' | 'fields' | 'charge_breakdown' | 'dob'
> & { [Name in NeverNull]?: NonNullable<LeadInputData[Name]> } & {
  tags?: string[];
  fields?: Prisma.InputJsonObject;
  charge_breakdown?: Prisma.InputJsonValue | null;
  dob?: Date | null;
};

/** A payment as stored: its amount, once given, is never null. */
export type ValidPayment = Omit<LeadPaymentInputData, 'amount'> & { amount?: number };

export type ValidAddress = LeadAddressInputData;

export interface ValidLead {
  /** Create: the dealership named; update: absent (a lead stays with its dealership). */
  dealership_id?: number;
  columns: LeadColumns;
  files: DecodedLeadFile[];
  /** undefined: not sent; null: remove (update). */
  payment?: ValidPayment | null;
  address?: ValidAddress | null;
}

/** What an update is checked against: the stored lead. */
export interface ExistingLead {
  dealership_id: number;
  category: string;
  fields: Prisma.JsonValue;
  team_member_id: number | null;
  disable_strict_validation: boolean;
  has_payment: boolean;
  file_count: number;
}

export interface ValidationOptions {
  now: Date;
  maxFileBytes: number;
  /** The source and marketing_source values this deployment accepts (Config.leadSources). */
  leadSources: LeadSourceLists;
  /** Present for an update. */
  existing?: ExistingLead;
}

/** An address of the usual form local@domain.tld (RFC 5321 lengths), as browsers' type=email checks it. */
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function isEmailAddress(text: string): boolean {
  return text.length <= 254 && EMAIL.test(text);
}

const path = (field: string): string => `lead.${field}`;

/** Trimmed text; blank is null. undefined stays undefined (not sent). */
function optionalText(value: string | null | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  const text = value?.trim();
  return text ? text : null;
}

function oneOf(field: string, value: string, allowed: readonly string[]): string {
  if (!allowed.includes(value)) throw invalidInput(path(field), `must be one of: ${allowed.join('; ')}. Got "${value}"`);
  return value;
}

/** Like oneOf, in any case: sources are channel names that integrations spell as they like. */
function oneOfAnyCase(field: string, value: string, allowed: readonly string[]): string {
  const listed = listedValue(value, allowed);
  if (listed === null) throw invalidInput(path(field), `must be one of: ${allowed.join('; ')}. Got "${value}"`);
  return listed;
}

function wholeNumberInRange(field: string, value: number, max?: number): number {
  if (value < 0) throw invalidInput(path(field), `must be 0 or more, got ${value}`);
  if (max !== undefined && value > max) throw invalidInput(path(field), `must be at most ${max}, got ${value}`);
  return value;
}

/** Spec 2.7: `total`, `charges` or both; total.amount and each charge's name and amount required; more keys allowed. */
export function validateChargeBreakdown(value: unknown, at = path('charge_breakdown')): Prisma.InputJsonObject {
  if (!isPlainObject(value)) throw invalidInput(at, 'must be an object with "total", "charges" or both');
  const hasTotal = Object.hasOwn(value, 'total');
  const hasCharges = Object.hasOwn(value, 'charges');
  if (!hasTotal && !hasCharges) throw invalidInput(at, 'must contain "total", "charges" or both');
  if (hasTotal) {
    const total = value.total;
    if (!isPlainObject(total)) throw invalidInput(`${at}.total`, 'must be an object with a numeric "amount"');
    requireAmount(total, `${at}.total.amount`);
  }
  if (hasCharges) {
    const charges = value.charges;
    if (!Array.isArray(charges)) throw invalidInput(`${at}.charges`, 'must be an array of objects with "name" and "amount"');
    charges.forEach((charge: unknown, index) => {
      const item = `${at}.charges[${index}]`;
      if (!isPlainObject(charge)) throw invalidInput(item, 'must be an object with "name" and "amount"');
      if (!Object.hasOwn(charge, 'name')) throw invalidInput(`${item}.name`, 'is required');
      if (typeof charge.name !== 'string' || charge.name.trim() === '') throw invalidInput(`${item}.name`, 'must be a non-empty string');
      requireAmount(charge, `${item}.amount`);
    });
  }
  return value as Prisma.InputJsonObject;
}

function requireAmount(holder: Record<string, unknown>, at: string): void {
  if (!Object.hasOwn(holder, 'amount')) throw invalidInput(at, 'is required');
  if (typeof holder.amount !== 'number' || !Number.isFinite(holder.amount)) {
    throw invalidInput(at, `must be a number, got ${JSON.stringify(holder.amount)}`);
  }
}

function validatePayment(input: LeadPaymentInputData, creating: boolean): ValidPayment {
  const payment: ValidPayment = {};
  if (input.amount === undefined || input.amount === null) {
    if (creating) throw invalidInput(path('payment_attributes.amount'), 'is required');
  } else {
    if (!Number.isFinite(input.amount) || input.amount < 0) {
      throw invalidInput(path('payment_attributes.amount'), `must be a number of 0 or more, got ${input.amount}`);
    }
    payment.amount = input.amount;
  }
  if (input.car_id !== undefined) payment.car_id = input.car_id;
  if (input.payment_processor_id !== undefined) payment.payment_processor_id = input.payment_processor_id;
  const transaction = optionalText(input.external_transaction_id);
  if (transaction !== undefined) payment.external_transaction_id = transaction;
  return payment;
}

function validateAddress(input: LeadAddressInputData): ValidAddress {
  const address: ValidAddress = {};
  for (const key of ['street', 'city', 'state', 'state_long', 'country'] as const) {
    const text = optionalText(input[key]);
    if (text !== undefined) address[key] = text;
  }
  if (input.postcode !== undefined) {
    if (input.postcode !== null && input.postcode < 0) {
      throw invalidInput(path('address_attributes.postcode'), `must be 0 or more, got ${input.postcode}`);
    }
    address.postcode = input.postcode;
  }
  return address;
}

/** Checks the `lead` object and puts its values in their stored form. */
export function validateLead(input: LeadInputData, options: ValidationOptions): ValidLead {
  const { existing } = options;
  const creating = existing === undefined;
  const columns: LeadColumns = {};
  const valid: ValidLead = { columns, files: [] };

  if (creating) {
    if (input.dealership_id === undefined || input.dealership_id === null) throw invalidInput(path('dealership_id'), 'is required');
    valid.dealership_id = input.dealership_id;
  } else if (input.dealership_id !== undefined && input.dealership_id !== existing.dealership_id) {
    throw invalidInput(path('dealership_id'), 'cannot be changed: a lead stays with the dealership it was created for');
  }

  const required = (field: 'email' | 'phone' | 'category' | 'source'): string | undefined => {
    const value = input[field];
    if (value === undefined && !creating) return undefined;
    const text = value?.trim();
    if (text) return text;
    if (value === undefined || value === null) {
      throw invalidInput(path(field), creating ? 'is required' : 'is required and cannot be removed');
    }
    throw invalidInput(path(field), 'must not be empty');
  };

  const category = required('category');
  if (category !== undefined) columns.category = oneOf('category', category, LEAD_CATEGORIES);
  const source = required('source');
  if (source !== undefined) columns.source = oneOfAnyCase('source', source, options.leadSources.sources);
  const marketingSource = optionalText(input.marketing_source);
  if (marketingSource !== undefined) {
    columns.marketing_source = marketingSource === null ? null : oneOfAnyCase('marketing_source', marketingSource, options.leadSources.marketingSources);
  }

  // Email and phone are checked unless this request (or, on update, the stored lead) says not to.
  const strict = !(input.disable_strict_validation ?? existing?.disable_strict_validation ?? false);
  const email = required('email');
  if (email !== undefined) {
    if (strict && !isEmailAddress(email)) throw invalidInput(path('email'), `is not a valid e-mail address, got "${email}"`);
    columns.email = email;
  }
  const phone = required('phone');
  if (phone !== undefined) {
    if (strict) {
      const normal = normalizePhone(phone);
      if (!normal) {
        throw invalidInput(path('phone'), `is not a valid phone number (e.g. 0412 345 678, (03) 9123 4567 or +61 412 345 678), got "${phone}"`);
      }
      columns.phone = normal;
    } else {
      columns.phone = phone;
    }
  }

  for (const field of [
    'name', 'last_name', 'message', 'dealership_slug', 'website_slug', 'stocknum', 'provider', 'provider_id', 'user_email', 'customer_address',
  ] as const) {
    const text = optionalText(input[field]);
    if (text !== undefined) columns[field] = text;
  }

  for (const field of ['website_id', 'page_id', 'location_id', 'car_id', 'model_id', 'model_variant_id', 'colour_id', 'team_member_id'] as const) {
    if (input[field] !== undefined) columns[field] = input[field];
  }

  for (const field of ['certified', 'golden', 'send_customer_email', 'sms_verified', 'opt_in_to_marketing', 'disable_strict_validation'] as const) {
    const value = input[field];
    if (value === undefined || (value === null && creating)) continue;
    if (value === null) throw invalidInput(path(field), 'must be true or false');
    columns[field] = value;
  }

  for (const field of ['delay_customer_email_minutes', 'delay_dealership_notification_minutes'] as const) {
    const value = input[field];
    if (value !== undefined) columns[field] = value === null ? null : wholeNumberInRange(field, value, MAX_NOTIFICATION_DELAY_MINUTES);
  }
  for (const field of ['time_on_site_seconds', 'time_to_submit_seconds'] as const) {
    const value = input[field];
    if (value !== undefined) columns[field] = value === null ? null : wholeNumberInRange(field, value);
  }

  if (input.lead_state !== undefined && !(input.lead_state === null && creating)) {
    const state = input.lead_state?.trim();
    if (!state) throw invalidInput(path('lead_state'), 'must be a non-empty text');
    columns.lead_state = state;
  }

  if (input.tags !== undefined) {
    columns.tags = [...new Set((input.tags ?? []).map((tag) => tag.trim()).filter((tag) => tag !== ''))];
  }

  if (input.fields !== undefined) {
    if (input.fields !== null && !isPlainObject(input.fields)) throw invalidInput(path('fields'), 'must be an object of key/value pairs');
    columns.fields = (input.fields ?? {}) as Prisma.InputJsonObject;
  }
  if (input.charge_breakdown !== undefined) {
    columns.charge_breakdown = input.charge_breakdown === null ? null : validateChargeBreakdown(input.charge_breakdown);
  }

  if (input.dob !== undefined) {
    const text = optionalText(input.dob);
    if (text === null || text === undefined) {
      columns.dob = null;
    } else {
      const dob = parseDayMonthYear(text, path('dob'));
      if (dob.getTime() > options.now.getTime()) throw invalidInput(path('dob'), 'must not be in the future');
      columns.dob = dob;
    }
  }

  // Rules across fields look at the lead as it will be: this request's values over the stored ones.
  const finalCategory = columns.category ?? existing?.category;
  if (input.team_member_id !== undefined || input.category !== undefined) {
    const teamMember = columns.team_member_id !== undefined ? columns.team_member_id : existing?.team_member_id;
    if (teamMember !== null && teamMember !== undefined && finalCategory !== TEAM_MEMBER_ENQUIRY) {
      throw invalidInput(
        path('team_member_id'),
        `is only for ${TEAM_MEMBER_ENQUIRY} leads${creating ? '' : ' (send team_member_id: null when changing the category)'}`,
      );
    }
  }
  if (finalCategory === DOCUMENT_REQUEST && (creating || columns.category !== undefined || columns.fields !== undefined)) {
    const fields = columns.fields ?? existing?.fields;
    const documentType = isPlainObject(fields) ? fields.document_type : undefined;
    if (documentType === undefined || documentType === null) {
      throw invalidInput(path('fields.document_type'), `is required for a ${DOCUMENT_REQUEST} lead: one of ${DOCUMENT_TYPES.join(', ')}`);
    }
    if (typeof documentType !== 'string' || !(DOCUMENT_TYPES as readonly string[]).includes(documentType)) {
      throw invalidInput(path('fields.document_type'), `must be one of ${DOCUMENT_TYPES.join(', ')}, got ${JSON.stringify(documentType)}`);
    }
  }

  if (input.payment_attributes !== undefined) {
    valid.payment = input.payment_attributes === null ? null : validatePayment(input.payment_attributes, !existing?.has_payment);
  }
  if (input.address_attributes !== undefined) {
    valid.address = input.address_attributes === null ? null : validateAddress(input.address_attributes);
  }

  // Files last: decoding is the costly part, and a mistake elsewhere should not pay for it.
  if (input.lead_files_attributes) {
    valid.files = decodeLeadFiles(input.lead_files_attributes, { maxBytes: options.maxFileBytes, existingCount: existing?.file_count ?? 0 });
  }
  return valid;
}
