// The lead as create (4.9) and update (4.8) answer it: every stored field of 2.7 (phones in E.164),
// the ids the lead was linked to, its state and timestamps, and its payment, address and files. It is
// plain JSON-ready data (dates as ISO text), so the idempotency record can keep the first answer and
// hand it back unchanged to a retry.
import type { Prisma } from '../../db/client.ts';
import type { ScopedTx } from '../../db/scoped.ts';
import { jsonObject, jsonStrings } from '../json-columns.ts';

/** A row as JSON carries it: its instants as ISO text (what the idempotency record keeps). */
type AsJson<Row> = {
  [Column in keyof Row]: Row[Column] extends Date ? string : Row[Column] extends Date | null ? string | null : Row[Column];
};

// The record's parts are the stored rows' columns (Prisma's generated models), the ones the spec answers.
export type LeadRecordPayment = Pick<
  Prisma.LeadPaymentModel,
  'id' | 'amount' | 'car_id' | 'payment_processor_id' | 'external_transaction_id'
>;
export type LeadRecordAddress = Pick<Prisma.LeadAddressModel, 'street' | 'city' | 'state' | 'state_long' | 'country' | 'postcode'>;
export type LeadRecordFile = AsJson<
  Pick<Prisma.LeadFileModel, 'id' | 'file_type' | 'byte_size' | 'content_type' | 'sha256' | 'created_at'>
>;

/** The stored lead's columns, with the JSON columns read and `dob` as year-month-day, and its parts. */
export type LeadRecord = AsJson<Omit<Prisma.LeadModel, 'tags' | 'fields' | 'charge_breakdown' | 'dob'>> & {
  tags: string[];
  fields: Record<string, unknown>;
  charge_breakdown: unknown;
  /** Year-month-day. */
  dob: string | null;
  payment: LeadRecordPayment | null;
  address: LeadRecordAddress | null;
  files: LeadRecordFile[];
};

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
      ? {
          street: address.street,
          city: address.city,
          state: address.state,
          state_long: address.state_long,
          country: address.country,
          postcode: address.postcode,
        }
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
export async function loadLeadRecord(db: ScopedTx, id: number): Promise<LeadRecord> {
  const lead = await db.lead.findUniqueOrThrow({ where: { id } });
  const payment = await db.leadPayment.findUnique({ where: { lead_id: id } });
  const address = await db.leadAddress.findUnique({ where: { lead_id: id } });
  const files = await db.leadFile.findMany({ where: { lead_id: id }, orderBy: { id: 'asc' } });
  return toRecord({ ...lead, payment, address, files });
}
