// The lead keeps its dealership and its contact: a contact is the dealership's record of a person, so
// changing a lead's e-mail or phone does not move it. No notification is sent for an update.
import type { Prisma } from '../../db/client.ts';
import type { ScopedTx } from '../../db/scoped.ts';
import { apiError, invalidInput, notFound } from '../../errors.ts';
// The runtime values (DbNull) are the same objects for both engines' clients: one Prisma runtime.
import { Prisma as PrismaValues } from '../../generated/prisma/sqlite/client.ts';
import { raiseContactFlags } from './contacts.ts';
import { TRANSACTION_OPTIONS, writeLeadParts, type LeadWriteDeps } from './create.ts';
import { removeLeadFiles, settleLeadFiles, storeLeadFiles, type StoredLeadFile } from './files.ts';
import { loadLeadRecord, type LeadRecord } from './record.ts';
import { publishCommitted, recordEvent, type RecordEvent } from '../record-events.ts';
import { resolveLeadReferences } from './references.ts';
import { validateLead, type LeadInputData, type ValidationOptions } from './validation.ts';
import { LEAD_UPDATE_WINDOW_MS, MAX_LEAD_FILES } from './values.ts';

export const leadTooOld = () =>
  apiError('CONFLICT', 'lead_too_old', 'This lead is more than 3 days old and can no longer be updated through the API.');

function isUpdatable(createdAt: Date, now: Date): boolean {
  return now.getTime() - createdAt.getTime() <= LEAD_UPDATE_WINDOW_MS;
}

/** One query at a time, as in a transaction Prisma would run an include's queries concurrently. */
async function readStoredLead(db: ScopedTx, id: number) {
  const lead = await db.lead.findFirst({ where: { id } });
  if (!lead) return null;
  const payments = await db.leadPayment.count({ where: { lead_id: lead.id } });
  const file_count = await db.leadFile.count({ where: { lead_id: lead.id } });
  return { ...lead, has_payment: payments > 0, file_count };
}

export async function updateLead(deps: LeadWriteDeps, id: number, input: LeadInputData): Promise<LeadRecord> {
  const { db, now, storage } = deps;
  const lead = await readStoredLead(db, id);
  if (!lead) throw notFound('lead');
  if (!isUpdatable(lead.created_at, now)) throw leadTooOld();

  const options = { now, maxFileBytes: deps.maxFileBytes, leadSources: deps.leadSources };
  // Checked here so a mistake costs no file write; checked again under the row lock below.
  const valid = validateLead(input, { ...options, existing: lead });
  const files = await storeLeadFiles(db, storage, valid.files, now);
  let committed = false;
  try {
    const { record, event } = await db.$transaction((tx) => writeUpdate(tx, id, input, files, options), TRANSACTION_OPTIONS);
    committed = true;
    publishCommitted(deps.events, [event]);
    return record;
  } finally {
    if (committed) await settleLeadFiles(db, files, deps.logger);
    else await removeLeadFiles(db, storage, files, deps.logger);
  }
}

async function writeUpdate(
  tx: ScopedTx,
  id: number,
  input: LeadInputData,
  files: readonly StoredLeadFile[],
  options: Omit<ValidationOptions, 'existing'>,
): Promise<{ record: LeadRecord; event: RecordEvent }> {
  const { now } = options;
  // Written first to take the row lock, so concurrent updates of one lead queue and each one's rules hold against the row as it is now.
  const touched = await tx.lead.updateMany({ where: { id }, data: { updated_at: now } });
  if (touched.count === 0) throw notFound('lead');
  const current = await readStoredLead(tx, id);
  if (!current) throw notFound('lead');
  if (!isUpdatable(current.created_at, now)) throw leadTooOld();
  // The files are decoded and written already; only their count is checked again.
  const valid = validateLead({ ...input, lead_files_attributes: null }, { ...options, existing: current });
  if (current.file_count + files.length > MAX_LEAD_FILES) {
    throw invalidInput('lead.lead_files_attributes', `a lead has at most ${MAX_LEAD_FILES} files; this one has ${current.file_count}`);
  }

  const dealership = await tx.dealership.findUniqueOrThrow({ where: { id: current.dealership_id }, select: { id: true, slug: true } });
  const { user_id } = await resolveLeadReferences(tx, dealership, valid, current);

  const { charge_breakdown, ...scalar } = valid.columns;
  const data: Prisma.LeadUncheckedUpdateInput = { ...scalar, updated_at: now };
  if (charge_breakdown !== undefined) data.charge_breakdown = charge_breakdown === null ? PrismaValues.DbNull : charge_breakdown;
  if (user_id !== undefined) data.user_id = user_id;
  await tx.lead.update({ where: { id }, data });

  await writeLeadParts(tx, id, valid, files, now);
  if (current.contact_id !== null) await raiseContactFlags(tx, current.contact_id, valid.columns, now);
  const event = await recordEvent(tx, { type: 'lead.updated', dealershipId: current.dealership_id, recordId: id }, now);
  return { record: await loadLeadRecord(tx, id), event };
}
