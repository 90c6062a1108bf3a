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
type RecordEventSubject = 'lead' | 'lead_event' | 'car' | 'phone_call';

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

/**
 * Live delivery's receiving side, which subscriptions read: the events published from now on, on this
 * instance and (through Redis) on the others. Each open stream counts against its key's limit of open
 * subscriptions until its reader ends it (`return()`); opening one more than the limit, or one while
 * the instance is shutting down, fails with the reason.
 */
export interface RecordEventSource {
  open(apiKeyId: number): AsyncIterableIterator<RecordEvent>;
}
