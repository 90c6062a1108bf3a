// Plain JSON-ready data, so the idempotency record can hand the first answer back unchanged to a retry.
import type { Prisma } from '../../db/client.ts';
import type { ScopedTx } from '../../db/scoped.ts';
import { jsonObject, jsonStrings } from '../json-columns.ts';

const paymentFields = {
  id: true,
  amount: true,
  car_id: true,
  payment_processor_id: true,
  external_transaction_id: true,
} satisfies Prisma.LeadPaymentSelect;
const addressFields = {
  street: true,
  city: true,
  state: true,
  state_long: true,
  country: true,
  postcode: true,
} satisfies Prisma.LeadAddressSelect;
const fileFields = {
  id: true,
  file_type: true,
  byte_size: true,
  content_type: true,
  sha256: true,
  created_at: true,
} satisfies Prisma.LeadFileSelect;

export type LeadRecord = ReturnType<typeof newLeadRecord>;
export type LeadRecordPayment = Prisma.LeadPaymentGetPayload<{ select: typeof paymentFields }>;
export type LeadRecordAddress = Prisma.LeadAddressGetPayload<{ select: typeof addressFields }>;
export type LeadRecordFile = LeadRecord['files'][number];

interface LeadParts {
  payment: LeadRecordPayment | null;
  address: LeadRecordAddress | null;
  files: Prisma.LeadFileGetPayload<{ select: typeof fileFields }>[];
}

const NO_PARTS: LeadParts = { payment: null, address: null, files: [] };

export function newLeadRecord(lead: Prisma.LeadModel, parts = NO_PARTS) {
  const { dob, created_at, updated_at, tags, fields, charge_breakdown, ...columns } = lead;
  return {
    ...columns,
    tags: jsonStrings(tags),
    fields: jsonObject(fields),
    charge_breakdown: charge_breakdown ?? null,
    dob: dob ? dob.toISOString().slice(0, 10) : null,
    created_at: created_at.toISOString(),
    updated_at: updated_at.toISOString(),
    ...parts,
    files: parts.files.map((file) => ({ ...file, created_at: file.created_at.toISOString() })),
  };
}

/** One query at a time: inside a transaction Prisma runs an include's queries concurrently on one connection, which node-postgres deprecates. */
export async function loadLeadRecord(db: ScopedTx, id: number): Promise<LeadRecord> {
  const lead = await db.lead.findUniqueOrThrow({ where: { id } });
  const payment = await db.leadPayment.findUnique({ where: { lead_id: id }, select: paymentFields });
  const address = await db.leadAddress.findUnique({ where: { lead_id: id }, select: addressFields });
  const files = await db.leadFile.findMany({ where: { lead_id: id }, orderBy: { id: 'asc' }, select: fileFields });
  return newLeadRecord(lead, { payment, address, files });
}
