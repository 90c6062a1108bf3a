// Test data for the lead tests: new-vehicle catalogue rows, stored leads,
// sample payloads and attachments, and a real local SMTP server that records what it receives.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Db, Prisma } from '../../src/db/client.ts';
import { LEAD_CATEGORIES, LEAD_FILE_TYPES } from '../../src/domain/leads/values.ts';
import { graphEnumName } from '../../src/schema/lead-values.ts';
import { makeManufacturer, uniqueNumber } from './fixtures.ts';

export { startSmtpServer, type ReceivedMail, type TestSmtpServer } from './smtp-server.ts';

export async function makeLeadModel(db: Db, manufacturerId: number, data: Partial<Prisma.ModelUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.model.create({
    data: {
      manufacturer_id: manufacturerId,
      name: `Model ${n}`,
      slug: `lead-model-${n}`,
      new_slug: `lead-model-${n}`,
      path: `/models/lead-model-${n}`,
      ...data,
    },
  });
}

export async function makeLeadVariant(db: Db, modelId: number, data: Partial<Prisma.ModelVariantUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.modelVariant.create({
    data: { model_id: modelId, slug: `lead-variant-${n}`, name: `Variant ${n}`, full_name: `Variant ${n} full`, ...data },
  });
}

export async function makeColour(db: Db, modelId: number, data: Partial<Prisma.ColourUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.colour.create({ data: { model_id: modelId, name: `Colour ${n}`, code: `C${n}`, ...data } });
}

type Row = { id: number };

/**
 * A manufacturer's two models, each with a variant and a colour: what the lead rules on model_id,
 * model_variant_id and colour_id are checked against (`other…` belong to the second model).
 */
export async function makeLeadCatalogue(
  db: Db,
): Promise<Record<'model' | 'variant' | 'colour' | 'otherModel' | 'otherVariant' | 'otherColour', Row>> {
  const maker = await makeManufacturer(db);
  const model = await makeLeadModel(db, maker.id);
  const otherModel = await makeLeadModel(db, maker.id);
  const variant = await makeLeadVariant(db, model.id);
  const colour = await makeColour(db, model.id);
  const otherVariant = await makeLeadVariant(db, otherModel.id);
  const otherColour = await makeColour(db, otherModel.id);
  return { model, variant, colour, otherModel, otherVariant, otherColour };
}

/** A lead row written directly (not through the API), e.g. to update or to age. */
export async function makeStoredLead(db: Db, dealershipId: number, data: Partial<Prisma.LeadUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.lead.create({
    data: {
      dealership_id: dealershipId,
      category: 'General Enquiry',
      source: 'Website',
      email: `customer.${n}@example.com`,
      phone: '+61412345678',
      name: `Customer ${n}`,
      ...data,
    },
  });
}

/** The fields of spec 2.7's sample, for one dealership: valid as they are. */
export function samplePayload(dealershipId: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Jane',
    last_name: 'Citizen',
    email: 'Jane.Citizen@example.com',
    phone: '0412 345 678',
    message: 'Is this car still available?',
    dealership_id: dealershipId,
    category: 'Used Vehicle Enquiry',
    source: 'Website',
    ...overrides,
  };
}

/** A listed value by its GraphQL enum name (NEW_VEHICLE_ENQUIRY); anything else as it is, for the enum to refuse. */
function enumName(value: unknown, listed: readonly string[]): unknown {
  return typeof value === 'string' && listed.includes(value) ? graphEnumName(value) : value;
}

type Files = readonly Record<string, unknown>[] | null | undefined;

/**
 * A lead payload as the graph takes it: the REST door's spec text ("Used Vehicle Enquiry") becomes
 * the enum value (USED_VEHICLE_ENQUIRY) for category and file types; a value not listed stays as it is.
 */
export function graphLead(payload: Record<string, unknown>): Record<string, unknown> {
  const files = payload.lead_files_attributes as Files;
  return {
    ...payload,
    ...('category' in payload ? { category: enumName(payload.category, LEAD_CATEGORIES) } : {}),
    ...(Array.isArray(files)
      ? { lead_files_attributes: files.map((file) => ({ ...file, file_type: enumName(file.file_type, LEAD_FILE_TYPES) })) }
      : {}),
  };
}

/** A LeadRecord (the REST body) as the graph answers it: category and file types by their enum names. */
export function graphRecord(record: Record<string, unknown>): Record<string, unknown> {
  const files = record.files as Files;
  return {
    ...record,
    category: enumName(record.category, LEAD_CATEGORIES),
    ...(Array.isArray(files) ? { files: files.map((file) => ({ ...file, file_type: enumName(file.file_type, LEAD_FILE_TYPES) })) } : {}),
  };
}

// Smallest real files of each kind the sniffer recognises.
export const PDF_BYTES = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
export const PNG_BYTES = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
export const EXE_BYTES = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(64, 0x90), Buffer.from([0x00, 0x01, 0xff])]);

/** A fresh directory for the file storage, and what it holds. */
export function tempStorageDir(): { dir: string; files(): string[]; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'lead-files-'));
  const walk = (folder: string): string[] =>
    readdirSync(folder).flatMap((entry) => {
      const full = path.join(folder, entry);
      return statSync(full).isDirectory() ? walk(full) : [path.relative(dir, full).split(path.sep).join('/')];
    });
  return { dir, files: () => walk(dir), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Every field of LeadRecord, for GraphQL selections that must equal the REST body. */
export const LEAD_RECORD_SELECTION = `
  id: databaseId dealership_id contact_id website_id location_id car_id model_id model_variant_id colour_id team_member_id user_id page_id
  name last_name email phone user_email customer_address dob message dealership_slug website_slug category source marketing_source
  stocknum provider provider_id certified golden send_customer_email lead_state lead_status sms_verified tags opt_in_to_marketing
  delay_customer_email_minutes delay_dealership_notification_minutes disable_strict_validation time_on_site_seconds time_to_submit_seconds
  fields charge_breakdown created_at updated_at
  payment { id: databaseId amount car_id payment_processor_id external_transaction_id }
  address { street city state state_long country postcode }
  files { id: databaseId file_type byte_size content_type sha256 created_at }`;

export const CREATE_LEAD = `mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { ${LEAD_RECORD_SELECTION} } } }`;
export const UPDATE_LEAD = `mutation ($id: Int!, $lead: LeadUpdateInput!) { update_lead(id: $id, lead: $lead) { lead { ${LEAD_RECORD_SELECTION} } } }`;

/** A LeadRecord with every optional field empty; tests spread what they expect on top. */
export function emptyRecord(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    contact_id: null,
    website_id: null,
    location_id: null,
    car_id: null,
    model_id: null,
    model_variant_id: null,
    colour_id: null,
    team_member_id: null,
    user_id: null,
    page_id: null,
    name: null,
    last_name: null,
    email: null,
    phone: null,
    user_email: null,
    customer_address: null,
    dob: null,
    message: null,
    dealership_slug: null,
    website_slug: null,
    marketing_source: null,
    stocknum: null,
    provider: null,
    provider_id: null,
    certified: false,
    golden: false,
    send_customer_email: true,
    lead_state: 'new',
    lead_status: 'open',
    sms_verified: false,
    tags: [],
    opt_in_to_marketing: false,
    delay_customer_email_minutes: null,
    delay_dealership_notification_minutes: null,
    disable_strict_validation: false,
    time_on_site_seconds: null,
    time_to_submit_seconds: null,
    fields: {},
    charge_breakdown: null,
    payment: null,
    address: null,
    files: [],
    ...fields,
  };
}
