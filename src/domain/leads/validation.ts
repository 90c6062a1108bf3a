// Everything decidable without the database that depends on the operation, the deployment, the stored
// lead or other fields; each field's own rules are its declaration. Absent keeps, null clears, and
// required fields and flags with a default cannot be cleared.
import type { Prisma } from '../../db/client.ts';
import { invalidInput } from '../../errors.ts';
import { parseRecord } from '../input-records.ts';
import { jsonObject } from '../json-columns.ts';
import { normalizePhone } from '../phone.ts';
import { decodeLeadFiles, type DecodedLeadFile } from './files.ts';
import {
  EMAIL_ADDRESS,
  FIELDS_BY_CATEGORY,
  NEVER_CLEARED,
  REQUIRED_ON_CREATE,
  leadInputSchema,
  type LeadInputData,
  type LeadInputValues,
  type NeverClearedField,
} from './input-record.ts';
import { TEAM_MEMBER_ENQUIRY, listedValue, notListedReason, type LeadSourceLists } from './values.ts';

export type { LeadInputData } from './input-record.ts';

type ColumnField = Exclude<
  keyof LeadInputValues,
  'dealership_id' | 'lead_files_attributes' | 'payment_attributes' | 'address_attributes' | 'dob'
>;

export type LeadColumns = {
  [Field in ColumnField]?: Field extends NeverClearedField ? NonNullable<LeadInputValues[Field]> : LeadInputValues[Field];
} & { dob?: Date | null };

type ValidPayment = Omit<NonNullable<LeadInputValues['payment_attributes']>, 'amount'> & { amount?: number };

export interface ValidLead {
  /** Absent on update: a lead stays with its dealership. */
  dealership_id?: number;
  columns: LeadColumns;
  files: DecodedLeadFile[];
  payment?: ValidPayment | null;
  address?: LeadInputValues['address_attributes'];
  phoneNormalized?: boolean;
}

export type ExistingLead = Pick<
  Prisma.LeadModel,
  'dealership_id' | 'category' | 'fields' | 'team_member_id' | 'disable_strict_validation'
> & { has_payment: boolean; file_count: number };

export type ValidationOptions = { now: Date; maxFileBytes: number; leadSources: LeadSourceLists; existing?: ExistingLead };

export function isEmailAddress(text: string): boolean {
  return text.length <= 254 && EMAIL_ADDRESS.test(text);
}

const path = (field: string): string => `lead.${field}`;

/** Sources are channel names that integrations spell as they like. */
function oneOfAnyCase(field: string, value: string, allowed: readonly string[]): string {
  const listed = listedValue(value, allowed);
  if (listed === null) throw invalidInput(path(field), notListedReason(allowed, value));
  return listed;
}

const isNeverCleared = (field: string): field is NeverClearedField => Object.hasOwn(NEVER_CLEARED, field);

function checkPresence(values: LeadInputValues, existing: ExistingLead | undefined): void {
  if (existing === undefined) {
    for (const field of REQUIRED_ON_CREATE) {
      if (values[field] === undefined || values[field] === null) throw invalidInput(path(field), 'is required');
    }
  } else {
    for (const field of Object.keys(NEVER_CLEARED).filter(isNeverCleared)) {
      if (values[field] === null) throw invalidInput(path(field), NEVER_CLEARED[field]);
    }
    if (values.dealership_id !== undefined && values.dealership_id !== existing.dealership_id) {
      throw invalidInput(path('dealership_id'), 'cannot be changed: a lead stays with the dealership it was created for');
    }
  }
}

function checkContactFields(columns: LeadColumns, options: ValidationOptions): boolean {
  if (columns.source !== undefined) columns.source = oneOfAnyCase('source', columns.source, options.leadSources.sources);
  if (typeof columns.marketing_source === 'string') {
    columns.marketing_source = oneOfAnyCase('marketing_source', columns.marketing_source, options.leadSources.marketingSources);
  }

  // Email and phone are checked unless this request (or, on update, the stored lead) says not to.
  const strict = !(columns.disable_strict_validation ?? options.existing?.disable_strict_validation ?? false);
  if (strict && columns.email !== undefined && !isEmailAddress(columns.email)) {
    throw invalidInput(path('email'), `is not a valid e-mail address, got "${columns.email}"`);
  }
  if (strict && columns.phone !== undefined) {
    const normal = normalizePhone(columns.phone);
    if (!normal) {
      throw invalidInput(
        path('phone'),
        `is not a valid phone number (e.g. 0412 345 678, (03) 9123 4567 or +61 412 345 678), got "${columns.phone}"`,
      );
    }
    columns.phone = normal;
    return true;
  }
  return false;
}

/** On the lead as it will be: this request's values over the stored ones. */
function checkAcrossFields(values: LeadInputValues, columns: LeadColumns, existing: ExistingLead | undefined): void {
  const creating = existing === undefined;
  const finalCategory = columns.category ?? existing?.category;
  if (values.team_member_id !== undefined || values.category !== undefined) {
    const teamMember = columns.team_member_id !== undefined ? columns.team_member_id : existing?.team_member_id;
    if (teamMember !== null && teamMember !== undefined && finalCategory !== TEAM_MEMBER_ENQUIRY) {
      throw invalidInput(
        path('team_member_id'),
        `is only for ${TEAM_MEMBER_ENQUIRY} leads${creating ? '' : ' (send team_member_id: null when changing the category)'}`,
      );
    }
  }
  const fieldsRule = finalCategory === undefined ? undefined : FIELDS_BY_CATEGORY[finalCategory as keyof typeof FIELDS_BY_CATEGORY];
  if (fieldsRule && (creating || columns.category !== undefined || columns.fields !== undefined)) {
    const fields = columns.fields ?? existing?.fields;
    parseRecord(fieldsRule, jsonObject(fields), path('fields'));
  }
}

export function validateLead(input: LeadInputData, options: ValidationOptions): ValidLead {
  const { existing } = options;
  const creating = existing === undefined;
  const values = parseRecord(leadInputSchema, input, 'lead');
  checkPresence(values, existing);

  const { dealership_id, lead_files_attributes, payment_attributes, address_attributes, dob, ...sent } = values;
  const columns: LeadColumns = {};
  for (const [field, value] of Object.entries(sent) as [ColumnField, unknown][]) {
    // On create, null for a field with a default means the default.
    if (value === null && isNeverCleared(field)) continue;
    Object.assign(columns, { [field]: value });
  }
  const valid: ValidLead = { columns, files: [] };
  if (creating && typeof dealership_id === 'number') valid.dealership_id = dealership_id;

  if (checkContactFields(columns, options)) valid.phoneNormalized = true;
  if (dob !== undefined) {
    if (dob && dob.getTime() > options.now.getTime()) throw invalidInput(path('dob'), 'must not be in the future');
    columns.dob = dob;
  }
  checkAcrossFields(values, columns, existing);

  if (payment_attributes === null) valid.payment = null;
  else if (payment_attributes) {
    const { amount, ...rest } = payment_attributes;
    if (amount != null) valid.payment = { ...rest, amount };
    else if (existing?.has_payment) valid.payment = rest;
    else throw invalidInput(path('payment_attributes.amount'), 'is required');
  }
  if (address_attributes !== undefined) valid.address = address_attributes;

  // Files last: decoding is the costly part, and a mistake elsewhere should not pay for it.
  if (lead_files_attributes) {
    valid.files = decodeLeadFiles(lead_files_attributes, { maxBytes: options.maxFileBytes, existingCount: existing?.file_count ?? 0 });
  }
  return valid;
}
