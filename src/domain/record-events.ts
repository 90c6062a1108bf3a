// The changes other systems are told about: a lead created or updated, a lead event, a car updated,
// reserved or released, a phone call. One event is one committed change of one record of one
// dealership, and it has two readers:
// - outbound webhooks, which must not lose one: the write records the event in its own transaction
//   (so it exists exactly when the change does) and the delivery worker sends it later, at least once;
// - live GraphQL subscriptions, which follow what is happening now: after the transaction commits,
//   the write hands the event to the context's `events` publisher, which fans it out to the open
//   subscriptions of every instance. A process that dies between the commit and the hand-over drops
//   that live event; a subscriber that must not miss one uses a webhook.
// Neither reader trusts the event with the record's contents: each reads the record afresh, as the
// subscribing key, so what a key receives is exactly what it could read.
//
// Every write that makes an event calls `recordEvents` inside its transaction and `publishCommitted`
// after it commits: the one pair of calls per write (test/record-events.test.ts walks each type).
import { randomUUID } from 'node:crypto';
import type { ScopedTx } from '../db/scoped.ts';
import { Prisma as PrismaValues } from '../generated/prisma/sqlite/client.ts';
import { jsonColumnValue, jsonStrings } from './json-columns.ts';
import { insertRowReturning, insertRows } from '../db/insert-rows.ts';

/** Every event type, in the order the docs list them. */
export const RECORD_EVENT_TYPES = [
  'lead.created',
  'lead.updated',
  'lead_event.created',
  'car.updated',
  'car.reserved',
  'car.released',
  'phone_call.created',
] as const;

export type RecordEventType = (typeof RECORD_EVENT_TYPES)[number];

/** The record an event type is about. */
export type RecordEventSubject = 'lead' | 'lead_event' | 'car' | 'phone_call';

/** One committed change of one record. */
export interface RecordEvent {
  /** Stable across retries and instances: the same change always has the same id. */
  id: string;
  type: RecordEventType;
  /** The dealership whose record changed: only keys that reach it may learn of the event. */
  dealershipId: number;
  subject: RecordEventSubject;
  /** The changed record's stored id (its `databaseId`). */
  recordId: number;
  occurredAt: Date;
}

/** Where a write hands its committed events for live delivery (in-process, or Redis pub/sub across instances). */
export interface RecordEventPublisher {
  publish(event: RecordEvent): void;
}

/** The publisher of an app that has no live subscribers to tell. */
export const unheardEvents: RecordEventPublisher = { publish: () => undefined };

/** The record each event type is about. */
const SUBJECT_OF_EVENT: Readonly<Record<RecordEventType, RecordEventSubject>> = {
  'lead.created': 'lead',
  'lead.updated': 'lead',
  'lead_event.created': 'lead_event',
  'car.updated': 'car',
  'car.reserved': 'car',
  'car.released': 'car',
  'phone_call.created': 'phone_call',
};

/** The record an event type is about. */
export const subjectOfEvent = (type: RecordEventType): RecordEventSubject => SUBJECT_OF_EVENT[type];

/**
 * The graph's Node type of each event's record: webhook payloads and live subscriptions read the
 * record as it, and a key may be told of an event exactly when it may read that record
 * (READ_PERMISSION_OF_EVENT, src/domain/webhooks.ts).
 */
export const NODE_TYPE_OF_SUBJECT: Readonly<Record<RecordEventSubject, string>> = {
  lead: 'Lead',
  lead_event: 'LeadEvent',
  car: 'Car',
  phone_call: 'PhoneCall',
};

export function isRecordEventType(value: string): value is RecordEventType {
  return (RECORD_EVENT_TYPES as readonly string[]).includes(value);
}

/** A change as the write knows it, before it is recorded. */
interface RecordChange {
  type: RecordEventType;
  dealershipId: number;
  recordId: number;
}

/** Deliveries of one record to one subscription are sent in event order: this names the record. */
const recordKeyOf = (subject: RecordEventSubject, recordId: number): string => `${subject}:${recordId}`;

/**
 * Records the change in the write's own transaction: the event row, and one webhook delivery per
 * enabled subscription of the dealership to its type (so a delivery exists exactly when the change
 * does; src/notifications/webhook-worker.ts sends it). `tx` is the caller's transaction; `change`
 * names the dealership the caller has just written to, whose subscriptions are read whatever the
 * caller's key (they are the dealership's, not the caller's to see).
 */
export async function recordEvent(tx: ScopedTx, change: RecordChange, now: Date): Promise<RecordEvent> {
  const subject = SUBJECT_OF_EVENT[change.type];
  const event_id = `evt_${randomUUID().replaceAll('-', '')}`;
  // Raw statements (src/db/insert-rows.ts), as every write of the service runs them. The insert also
  // counts the dealership's enabled subscriptions, so that a dealership without any (most) costs one
  // statement, not two.
  const inserted = await insertRowReturning<{ id: number | bigint; subscriptions: number | bigint }>(
    tx,
    'record_events',
    { event_id, type: change.type, dealership_id: change.dealershipId, subject, record_id: change.recordId, occurred_at: now },
    PrismaValues.sql`id, (SELECT COUNT(*) FROM webhook_subscriptions WHERE dealership_id = ${change.dealershipId} AND enabled = TRUE) AS subscriptions`,
  );
  const eventRowId = Number(inserted.id);
  const subscriptions =
    Number(inserted.subscriptions) === 0
      ? []
      : await tx.$queryRaw<{ id: number | bigint; events: unknown }[]>`
          SELECT id, events FROM webhook_subscriptions WHERE dealership_id = ${change.dealershipId} AND enabled = TRUE ORDER BY id`;
  const subscribed = subscriptions.filter((subscription) => jsonStrings(jsonColumnValue(subscription.events)).includes(change.type));
  // Status and attempts start at their column defaults (pending, 0).
  await insertRows(
    tx,
    'webhook_deliveries',
    subscribed.map((subscription) => ({
      subscription_id: Number(subscription.id),
      record_event_id: eventRowId,
      record_key: recordKeyOf(subject, change.recordId),
      message_id: `msg_${randomUUID().replaceAll('-', '')}`,
      due_at: now,
      created_at: now,
    })),
  );
  return { id: event_id, type: change.type, dealershipId: change.dealershipId, subject, recordId: change.recordId, occurredAt: now };
}

/** After the write's transaction committed: hands its events to the live publisher, in order. */
export function publishCommitted(publisher: RecordEventPublisher, events: readonly (RecordEvent | null)[]): void {
  for (const event of events) if (event) publisher.publish(event);
}

/**
 * Live delivery's receiving side, which subscriptions read: the events published from now on, on this
 * instance and (through Redis) on the others. Each open stream counts against its key's limit of open
 * subscriptions, and the instance's, until its reader ends it (`return()`); opening one more than a
 * limit, or one while the instance is shutting down, fails with the reason. `onKeyChange` runs when a
 * change of the key is announced while the stream is open, for the reader to check the key again.
 */
export interface RecordEventSource {
  open(apiKeyId: number, onKeyChange?: () => void): AsyncIterableIterator<RecordEvent>;
}
