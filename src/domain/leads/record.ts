// The lead as create (4.9) and update (4.8) answer it: every stored field of 2.7 (phones in E.164),
// the ids the lead was linked to, its state and timestamps, and its payment, address and files. It is
// plain JSON-ready data (dates as ISO text), so the idempotency record can keep the first answer and
// hand it back unchanged to a retry.
import type { Prisma } from '../../db/client.ts';
import type { ScopedDb } from '../../db/scoped.ts';
import { jsonObject, jsonStrings } from '../json-columns.ts';

export interface LeadRecordPayment {
  id: number;
  amount: number;
  car_id: number | null;
  payment_processor_id: number | null;
  external_transaction_id: string | null;
}

export interface LeadRecordAddress {
  street: string | null;
  city: string | null;
  state: string | null;
  state_long: string | null;
  country: string | null;
  postcode: number | null;
}

export interface LeadRecordFile {
  id: number;
  file_type: string;
  byte_size: number;
  content_type: string | null;
  sha256: string;
  created_at: string;
}

export interface LeadRecord {
  id: number;
  dealership_id: number;
  contact_id: number | null;
  website_id: number | null;
  location_id: number | null;
  car_id: number | null;
  model_id: number | null;
  model_variant_id: number | null;
  colour_id: number | null;
  team_member_id: number | null;
  user_id: number | null;
  name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  message: string | null;
  dealership_slug: string | null;
  website_slug: string | null;
  category: string;
  source: string;
  marketing_source: string | null;
  page_id: number | null;
  stocknum: string | null;
  provider: string | null;
  provider_id: string | null;
  certified: boolean;
  golden: boolean;
  send_customer_email: boolean;
  user_email: string | null;
  lead_state: string;
  lead_status: string;
  sms_verified: boolean;
  tags: string[];
  opt_in_to_marketing: boolean;
  delay_customer_email_minutes: number | null;
  delay_dealership_notification_minutes: number | null;
  disable_strict_validation: boolean;
  time_on_site_seconds: number | null;
  time_to_submit_seconds: number | null;
  fields: Record<string, unknown>;
  charge_breakdown: unknown;
  customer_address: string | null;
  /** Year-month-day. */
  dob: string | null;
  created_at: string;
  updated_at: string;
  payment: LeadRecordPayment | null;
  address: LeadRecordAddress | null;
  files: LeadRecordFile[];
}

interface LeadWithParts extends Prisma.LeadModel {
  payment: Prisma.LeadPaymentModel | null;
  address: Prisma.LeadAddressModel | null;
  files: Prisma.LeadFileModel[];
}

function toRecord(lead: LeadWithParts): LeadRecord {
  const { payment, address, files, dob, created_at, updated_at, tags, fields, charge_breakdown, ...columns } = lead;
  return {
    ...columns,
    tags: jsonStrings(tags),
    fields: jsonObject(fields),
    charge_breakdown: charge_breakdown ?? null,
    dob: dob ? dob.toISOString().slice(0, 10) : null,
    created_at: created_at.toISOString(),
    updated_at: updated_at.toISOString(),
    payment: payment
      ? {
          id: payment.id,
          amount: payment.amount,
          car_id: payment.car_id,
          payment_processor_id: payment.payment_processor_id,
          external_transaction_id: payment.external_transaction_id,
        }
      : null,
    address: address
      ? { street: address.street, city: address.city, state: address.state, state_long: address.state_long, country: address.country, postcode: address.postcode }
      : null,
    files: files.map((file) => ({
      id: file.id,
      file_type: file.file_type,
      byte_size: file.byte_size,
      content_type: file.content_type,
      sha256: file.sha256,
      created_at: file.created_at.toISOString(),
    })),
  };
}

/**
 * The record of a lead just created without parts (no payment, address or files): what its insert
 * returned is all of it, so nothing is read again.
 */
export function newLeadRecordWithoutParts(lead: Prisma.LeadModel): LeadRecord {
  return toRecord({ ...lead, payment: null, address: null, files: [] });
}

/**
 * One query at a time: inside an interactive transaction Prisma runs an include's queries
 * concurrently on the transaction's one connection, which node-postgres deprecates.
 */
export async function loadLeadRecord(db: ScopedDb | Prisma.TransactionClient, id: number): Promise<LeadRecord> {
  const lead = await db.lead.findUniqueOrThrow({ where: { id } });
  const payment = await db.leadPayment.findUnique({ where: { lead_id: id } });
  const address = await db.leadAddress.findUnique({ where: { lead_id: id } });
  const files = await db.leadFile.findMany({ where: { lead_id: id }, orderBy: { id: 'asc' } });
  return toRecord({ ...lead, payment, address, files });
}
