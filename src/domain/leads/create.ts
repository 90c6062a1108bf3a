// One transaction, so a failure leaves no row; attachment bytes cannot join it, so they are written first and removed if it does not commit.
import type { Logger } from 'pino';
import type { Actor } from '../../auth/api-keys.ts';
import { reachesDealership } from '../../auth/scope.ts';
import { isUniqueViolation, type Prisma } from '../../db/client.ts';
import { insertRowReturning, insertRows } from '../../db/insert-rows.ts';
import type { ScopedDb, ScopedTx } from '../../db/scoped.ts';
import { notFound } from '../../errors.ts';
import { dealershipWithStaff, enqueueLeadNotifications } from '../../notifications/outbox.ts';
import type { FileStorage } from '../../storage/file-storage.ts';
import { publishCommitted, recordEvent, type RecordEvent, type RecordEventPublisher } from '../record-events.ts';
import { attachContact } from './contacts.ts';
import { removeLeadFiles, settleLeadFiles, storeLeadFiles, type StoredLeadFile } from './files.ts';
import { lookUpKey, recordAnswer, requestHash, type IdempotencyClaim, type KeyLookUp } from './idempotency.ts';
import { loadLeadRecord, newLeadRecord, type LeadRecord } from './record.ts';
import { resolveLeadReferences } from './references.ts';
import { validateLead, type LeadInputData, type ValidLead } from './validation.ts';
import type { LeadSourceLists } from './values.ts';

export interface LeadWriteDeps {
  db: ScopedDb;
  actor: Actor;
  now: Date;
  storage: FileStorage;
  maxFileBytes: number;
  leadSources: LeadSourceLists;
  idempotencyTtlMs: number;
  logger?: Logger;
  events: RecordEventPublisher;
}

/** A unique constraint can also trip on a contact created at the same moment; the retry then finds it. */
const MAX_ATTEMPTS = 3;
export const TRANSACTION_OPTIONS = { maxWait: 15_000, timeout: 30_000 } as const;
const CREATED = 201;

export async function createLead(deps: LeadWriteDeps, input: LeadInputData, idempotencyKey: string | null = null): Promise<LeadRecord> {
  const { db, actor, now, storage } = deps;
  const claim: IdempotencyClaim | null = idempotencyKey
    ? {
        apiKeyId: actor.apiKeyId,
        key: idempotencyKey,
        hash: requestHash('create_lead', input),
        expiredBefore: new Date(now.getTime() - deps.idempotencyTtlMs),
      }
    : null;
  const lookUp = async () => (claim ? await lookUpKey<LeadRecord>(db, claim) : null);
  let key = await lookUp();
  if (key?.answer) return key.answer;

  const valid = validateLead(input, { now, maxFileBytes: deps.maxFileBytes, leadSources: deps.leadSources });
  const dealershipId = valid.dealership_id;
  if (dealershipId === undefined) throw new Error('validateLead lets no new lead through without a dealership');
  // Before any file is written; that the dealership exists is checked inside the transaction.
  if (!reachesDealership(actor, dealershipId)) throw notFound('dealership');

  const files = await storeLeadFiles(db, storage, valid.files, now);
  let committed = false;
  try {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const { record, event } = await db.$transaction((tx) => writeLead(tx, dealershipId, valid, files, key, now), TRANSACTION_OPTIONS);
        committed = true;
        publishCommitted(deps.events, [event]);
        return record;
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= MAX_ATTEMPTS) throw error;
        // A concurrent request committed first: with the same key, answer as it was answered; else join the contact it made.
        key = await lookUp();
        if (key?.answer) return key.answer;
      }
    }
  } finally {
    if (committed) await settleLeadFiles(db, files, deps.logger);
    else await removeLeadFiles(db, storage, files, deps.logger);
  }
}

async function writeLead(
  tx: ScopedTx,
  dealershipId: number,
  valid: ValidLead,
  files: readonly StoredLeadFile[],
  key: KeyLookUp<LeadRecord> | null,
  now: Date,
): Promise<{ record: LeadRecord; event: RecordEvent }> {
  const dealership = await dealershipWithStaff(tx, dealershipId);
  if (!dealership) throw notFound('dealership');
  const columns = { ...valid.columns };
  const { user_id, car } = await resolveLeadReferences(tx, dealership, { ...valid, columns });

  const contactId = await attachContact(
    tx,
    dealership.id,
    { ...columns, phoneNormalized: valid.phoneNormalized, postcode: valid.address?.postcode },
    now,
  );

  const { charge_breakdown, category, source, ...scalar } = columns;
  // validateLead requires these on create; the check keeps the types honest.
  if (category === undefined || source === undefined) throw new Error('validateLead lets no new lead through without category and source');
  // Raw statements, each what Prisma's nested create would have sent; a lead with parts is read back whole below.
  const lead = await insertRowReturning<Prisma.LeadModel>(tx, 'leads', {
    ...scalar,
    charge_breakdown: charge_breakdown ?? undefined,
    category,
    source,
    dealership_id: dealership.id,
    contact_id: contactId,
    user_id: user_id ?? null,
    created_at: now,
    updated_at: now,
  });
  await writeLeadParts(tx, lead.id, valid, files, now);

  await enqueueLeadNotifications(tx, lead, dealership, now, car);
  const event = await recordEvent(tx, { type: 'lead.created', dealershipId: dealership.id, recordId: lead.id }, now);
  const withParts = files.length > 0 || valid.payment?.amount !== undefined || Boolean(valid.address);
  const record = withParts ? await loadLeadRecord(tx, lead.id) : newLeadRecord(lead);
  if (key) await recordAnswer(tx, key, CREATED, record, now);
  return { record, event };
}

/** A part left out stays as it is and null removes it; files sent are added. */
export async function writeLeadParts(tx: ScopedTx, lead_id: number, valid: ValidLead, files: readonly StoredLeadFile[], now: Date) {
  if (valid.payment === null) {
    await tx.leadPayment.deleteMany({ where: { lead_id } });
  } else if (valid.payment) {
    const { amount, ...rest } = valid.payment;
    // amount is absent only when the lead has a payment already (validation requires it otherwise).
    if (amount === undefined) {
      await tx.leadPayment.updateMany({ where: { lead_id }, data: rest });
    } else {
      await tx.leadPayment.upsert({
        where: { lead_id },
        create: { ...rest, amount, lead_id, created_at: now },
        update: { ...rest, amount },
      });
    }
  }
  if (valid.address === null) {
    await tx.leadAddress.deleteMany({ where: { lead_id } });
  } else if (valid.address) {
    await tx.leadAddress.upsert({ where: { lead_id }, create: { ...valid.address, lead_id }, update: valid.address });
  }
  await insertRows(
    tx,
    'lead_files',
    files.map((file) => ({ ...file, lead_id, created_at: now })),
  );
}
