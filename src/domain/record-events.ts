// Webhooks must not lose an event, so it is recorded in the write's transaction and sent later; live
// subscriptions get it after the commit (a process dying in between drops only the live one). Neither
// trusts the event with the record: each reads it afresh as the subscribing key.
import { randomUUID } from 'node:crypto';
import type { Prisma } from '../db/client.ts';
import type { ScopedTx } from '../db/scoped.ts';
import { Prisma as PrismaValues } from '../generated/prisma/sqlite/client.ts';
import { jsonStrings } from './json-columns.ts';
import { parsedJson } from '../lib/json.ts';
import { insertRowReturning, insertRows } from '../db/insert-rows.ts';

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

/** The record an event is of is the first part of its type's name. */
export type RecordEventSubject = RecordEventType extends `${infer Subject}.${string}` ? Subject : never;

export interface RecordEvent {
  /** Stable across retries and instances: the same change always has the same id. */
  id: string;
  type: RecordEventType;
  dealershipId: number;
  subject: RecordEventSubject;
  recordId: number;
  occurredAt: Date;
}

export type RecordEventPublisher = { publish(event: RecordEvent): void };

export const unheardEvents: RecordEventPublisher = { publish: () => undefined };

export const subjectOfEvent = (type: RecordEventType): RecordEventSubject => type.slice(0, type.indexOf('.')) as RecordEventSubject;

/** A key may be told of an event exactly when it may read that record as this type. */
export const NODE_TYPE_OF_SUBJECT: Readonly<Record<RecordEventSubject, string>> = {
  lead: 'Lead',
  lead_event: 'LeadEvent',
  car: 'Car',
  phone_call: 'PhoneCall',
};

export function isRecordEventType(value: string): value is RecordEventType {
  return (RECORD_EVENT_TYPES as readonly string[]).includes(value);
}

/** The event a stored row records; null for a type this version does not know. */
export function eventOfRow(
  row: Pick<Prisma.RecordEventModel, 'event_id' | 'type' | 'dealership_id' | 'record_id' | 'occurred_at'>,
): RecordEvent | null {
  if (!isRecordEventType(row.type)) return null;
  const { event_id: id, type, dealership_id: dealershipId, record_id: recordId, occurred_at: occurredAt } = row;
  return { id, type, dealershipId, subject: subjectOfEvent(type), recordId, occurredAt };
}

/** The dealership's subscriptions are read whatever the caller's key: they are the dealership's, not the caller's to see. */
export async function recordEvent(
  tx: ScopedTx,
  change: Pick<RecordEvent, 'type' | 'dealershipId' | 'recordId'>,
  now: Date,
): Promise<RecordEvent> {
  const subject = subjectOfEvent(change.type);
  const event_id = `evt_${randomUUID().replaceAll('-', '')}`;
  // The insert also counts enabled subscriptions, so a dealership without any costs one statement, not two.
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
  const subscribed = subscriptions.filter((subscription) => jsonStrings(parsedJson(subscription.events)).includes(change.type));
  await insertRows(
    tx,
    'webhook_deliveries',
    subscribed.map((subscription) => ({
      subscription_id: Number(subscription.id),
      record_event_id: eventRowId,
      record_key: `${subject}:${change.recordId}`,
      message_id: `msg_${randomUUID().replaceAll('-', '')}`,
      due_at: now,
      created_at: now,
    })),
  );
  return { id: event_id, type: change.type, dealershipId: change.dealershipId, subject, recordId: change.recordId, occurredAt: now };
}

export function publishCommitted(publisher: RecordEventPublisher, events: readonly (RecordEvent | null)[]): void {
  for (const event of events) if (event) publisher.publish(event);
}

/** Each open stream counts against its key's and the instance's limits until its reader ends it. */
export interface RecordEventSource {
  open(apiKeyId: number, onKeyChange?: () => void): AsyncIterableIterator<RecordEvent>;
}
