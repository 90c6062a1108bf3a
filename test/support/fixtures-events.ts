// Factories for the inbound events (lead events, phone calls), the partner sign-on tests, and the
// webhook subscriptions and deliveries that the write and webhook tests act on.
import { createHash } from 'node:crypto';
import type { Db, Prisma } from '../../src/db/client.ts';
import { subjectOfEvent, type RecordEventType } from '../../src/domain/record-events.ts';
import { sealWebhookSecret } from '../../src/domain/stored-secrets.ts';
import { testKeyring } from './app.ts';
import { makeDealership, uniqueNumber } from './fixtures.ts';

/** A lead with only what the data model requires, so these tests do not depend on lead creation rules. */
export async function makeLead(db: Db, dealershipId: number, data: Partial<Prisma.LeadUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.lead.create({
    data: {
      dealership_id: dealershipId,
      name: `Customer ${n}`,
      email: `customer.${n}@example.com`,
      category: 'Used Vehicle Enquiry',
      source: 'Website',
      ...data,
    },
  });
}

/** A partner token row as createPartnerToken stores it (hash only), for expiry and reuse cases. */
export async function makePartnerToken(
  db: Db,
  userId: number,
  token: string,
  data: Partial<Prisma.PartnerTokenUncheckedCreateInput> & { expires_at: Date },
) {
  return db.partnerToken.create({
    data: { token_hash: createHash('sha256').update(token).digest('hex'), user_id: userId, ...data },
  });
}

/** A webhook subscription of a new dealership of its own (a dealership has at most 20), stored as the service stores one. */
export async function makeWebhookSubscription(
  db: Db,
  { apiKeyId, events, at, enabled }: { apiKeyId: number; events: readonly RecordEventType[]; at: Date; enabled?: boolean },
): Promise<{ id: number; dealership_id: number }> {
  const own = await makeDealership(db);
  return db.webhookSubscription.create({
    data: {
      dealership_id: own.id,
      api_key_id: apiKeyId,
      url: 'https://hooks.example/in',
      events: [...events],
      secret: sealWebhookSecret(testKeyring, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'),
      created_at: at,
      updated_at: at,
      ...(enabled === undefined ? {} : { enabled }),
    },
    select: { id: true, dealership_id: true },
  });
}

/** A delivery of a `type` event of record 1 to the subscription, failed for good, as the worker leaves one after its last attempt. */
export async function makeFailedDelivery(
  db: Db,
  subscription: { id: number; dealership_id: number },
  type: RecordEventType,
  at: Date,
): Promise<{ id: number }> {
  const subject = subjectOfEvent(type);
  const event = await db.recordEvent.create({
    data: { event_id: `evt_${uniqueNumber()}`, type, dealership_id: subscription.dealership_id, subject, record_id: 1, occurred_at: at },
  });
  return db.webhookDelivery.create({
    data: {
      subscription_id: subscription.id,
      record_event_id: event.id,
      record_key: `${subject}:1`,
      message_id: `msg_${uniqueNumber()}`,
      status: 'failed',
      due_at: at,
      created_at: at,
    },
    select: { id: true },
  });
}
