// Plain JSON-ready data, so the idempotency record can hand the first answer back unchanged to a retry.
import type { Prisma } from '../../db/client.ts';
import type { ScopedTx } from '../../db/scoped.ts';
import { jsonObject, jsonStrings } from '../json-columns.ts';

type AsJson<Row> = {
  [Column in keyof Row]: Row[Column] extends Date ? string : Row[Column] extends Date | null ? string | null : Row[Column];
};

export type LeadRecordPayment = Pick<
  Prisma.LeadPaymentModel,
  'id' | 'amount' | 'car_id' | 'payment_processor_id' | 'external_transaction_id'
>;
export type LeadRecordAddress = Pick<Prisma.LeadAddressModel, 'street' | 'city' | 'state' | 'state_long' | 'country' | 'postcode'>;
export type LeadRecordFile = AsJson<
  Pick<Prisma.LeadFileModel, 'id' | 'file_type' | 'byte_size' | 'content_type' | 'sha256' | 'created_at'>
>;

export type LeadRecord = AsJson<Omit<Prisma.LeadModel, 'tags' | 'fields' | 'charge_breakdown' | 'dob'>> & {
  tags: string[];
  fields: Record<string, unknown>;
  charge_breakdown: unknown;
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

export function newLeadRecordWithoutParts(lead: Prisma.LeadModel): LeadRecord {
  return toRecord({ ...lead, payment: null, address: null, files: [] });
}

/** One query at a time: inside a transaction Prisma runs an include's queries concurrently on one connection, which node-postgres deprecates. */
export async function loadLeadRecord(db: ScopedTx, id: number): Promise<LeadRecord> {
  const lead = await db.lead.findUniqueOrThrow({ where: { id } });
  const payment = await db.leadPayment.findUnique({ where: { lead_id: id } });
  const address = await db.leadAddress.findUnique({ where: { lead_id: id } });
  const files = await db.leadFile.findMany({ where: { lead_id: id }, orderBy: { id: 'asc' } });
  return toRecord({ ...lead, payment, address, files });
}
