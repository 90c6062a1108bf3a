// Live subscriptions: one root field per record event type, answering its record's type and so
// needing that type's read permission. Each record is read afresh through the subscriber's scoped
// client; the key is verified again before each event, so a stream follows the key as it is now.
// A client reconnecting with `Last-Event-ID` is first sent the stored events it missed.
import { RequestCache } from '@pothos/plugin-scope-auth';
import type { GraphQLError } from 'graphql';
import { builder, type Types } from './builder.ts';
import type { Context } from '../context.ts';
import type { ScopedDb } from '../db/scoped.ts';
import type { Actor } from '../auth/api-keys.ts';
import type { Permission } from '../auth/permissions.ts';
import { reachesDealership, requireActor } from '../auth/scope.ts';
import { apiError } from '../errors.ts';
import { eventOfRow, type RecordEvent, type RecordEventType } from '../domain/record-events.ts';
import { readPermissionOfEvent } from '../domain/webhooks.ts';

type LiveItem = RecordEvent | { withdrawn: GraphQLError };

/** The most events a reconnecting stream is sent from before it reconnected; further behind, it is refused. */
export const RESUME_LIMIT = 1_000;

/** Refused when the named event is not found or too many came after it. */
async function eventsSince(db: ScopedDb, type: RecordEventType, lastEventId: string): Promise<RecordEvent[]> {
  const last = await db.recordEvent.findFirst({ where: { event_id: lastEventId }, select: { id: true } });
  if (!last) {
    throw apiError(
      'BAD_USER_INPUT',
      'unknown_last_event_id',
      'Last-Event-ID: no event with this id is stored for this API key: subscribe without it, and read what changed meanwhile with a query.',
      { field: 'Last-Event-ID' },
    );
  }
  const rows = await db.recordEvent.findMany({
    where: { id: { gt: last.id }, type },
    orderBy: { id: 'asc' },
    take: RESUME_LIMIT + 1,
    select: { event_id: true, type: true, dealership_id: true, record_id: true, occurred_at: true },
  });
  if (rows.length > RESUME_LIMIT) {
    throw apiError(
      'BAD_USER_INPUT',
      'last_event_id_too_old',
      `Last-Event-ID: more than ${RESUME_LIMIT} events of this subscription came after it: subscribe without it, and read what changed meanwhile with a query.`,
      { field: 'Last-Event-ID', limit: RESUME_LIMIT },
    );
  }
  return rows.flatMap((row) => eventOfRow(row) ?? []);
}

/** Through the verdict cache: a subscription keeps its context, and so its first verdict, while open. */
async function keyNow(context: Context, opened: Actor, permission: Permission): Promise<Actor | GraphQLError> {
  const actor = await context.actorNow();
  if (!actor || actor.apiKeyId !== opened.apiKeyId) {
    return apiError('UNAUTHENTICATED', 'unauthorized', 'This API key is no longer valid (revoked or expired): the subscription has ended.');
  }
  if (!actor.permissions.has(permission)) {
    const message = `This API key no longer has the ${permission} permission this subscription needs: the subscription has ended.`;
    return apiError('FORBIDDEN', 'forbidden', message, { permission });
  }
  return actor;
}

/**
 * Checked at each event, heartbeat and key change, so an idle stream of a key that lost its permission
 * ends at once. Not an async generator: one waiting for its next event cannot be ended before it.
 */
async function eventsFor(
  context: Context,
  type: RecordEventType,
  countById: (db: ScopedDb, id: number) => Promise<number>,
): Promise<AsyncIterableIterator<LiveItem>> {
  const permission = readPermissionOfEvent(type);
  const opened = requireActor(context);
  const request = context.request;
  const done: IteratorResult<LiveItem> = { value: undefined, done: true };
  let withdrawn: GraphQLError | null = null;
  let finished = false;

  const checkKey = (): void => {
    keyNow(context, opened, permission).then(
      (verdict) => {
        if (verdict instanceof Error) withdraw(verdict);
      },
      // A key that cannot be verified now (the database did not answer) is asked again at the next event or heartbeat.
      () => undefined,
    );
  };
  // Opened before the stored events are read, so that none published meanwhile is missed; those
  // both read and heard are sent once.
  const stream = context.liveEvents.open(opened.apiKeyId, checkKey);
  const withdraw = (error: GraphQLError): void => {
    withdrawn ??= error;
    void stream.return?.();
  };
  const lastEventId = request.headers.get('last-event-id')?.trim() ?? '';
  let missed: RecordEvent[] = [];
  if (lastEventId !== '') {
    try {
      missed = await eventsSince(context.db, type, lastEventId);
    } catch (error) {
      await stream.return?.();
      throw error;
    }
  }
  const resent = new Set(missed.map((event) => event.id));
  const check = setInterval(checkKey, context.config.subscriptionHeartbeatMs);
  check.unref();
  const finish = (): IteratorResult<LiveItem> => {
    clearInterval(check);
    context.answering.eventId = undefined;
    const last = finished ? null : withdrawn;
    finished = true;
    return last ? { value: { withdrawn: last }, done: false } : done;
  };
  /** The next event to check: a stored one the client missed, else the next live one not sent already. */
  const nextEvent = async (): Promise<RecordEvent | null> => {
    const stored = missed.shift();
    if (stored) return stored;
    for (;;) {
      const received = await stream.next();
      if (received.done) return null;
      if (!resent.has(received.value.id)) return received.value;
    }
  };

  const events: AsyncIterableIterator<LiveItem> = {
    async next() {
      for (;;) {
        if (finished || withdrawn) return finish();
        const event = await nextEvent();
        if (!event) return finish();
        if (event.type !== type) continue;
        const verdict = await keyNow(context, opened, permission);
        if (verdict instanceof Error) {
          withdraw(verdict);
          continue;
        }
        // graphql-js resolves every event with the context the subscription opened with: it follows the key.
        if (context.actor !== verdict) {
          context.actAs(verdict);
          RequestCache.clearForContext(context);
        }
        if (finished || withdrawn) return finish();
        if (reachesDealership(verdict, event.dealershipId) && (await countById(context.db, event.recordId)) > 0) {
          context.answering.eventId = event.id;
          return { value: event, done: false };
        }
      }
    },
    return: () => {
      finished = true;
      clearInterval(check);
      return stream.return?.().then(() => done) ?? Promise.resolve(done);
    },
    [Symbol.asyncIterator]: () => events,
  };
  return events;
}

/** The record an event names, read afresh; the error that ends the stream when its key may no longer receive it. */
function afresh<T>(item: LiveItem, read: (event: RecordEvent) => Promise<T>): Promise<T> {
  if ('withdrawn' in item) throw item.withdrawn;
  return read(item);
}

const AFRESH =
  'Each event is the record read afresh when it is sent, as the key would read it with `node(id:)`: null if it was removed meanwhile. Live events are at most once (docs/subscriptions.md).';

type SubscriptionFieldBuilder = PothosSchemaTypes.SubscriptionFieldBuilder<Types, Types['Root']>;

function leadSubscription(t: SubscriptionFieldBuilder, type: RecordEventType, what: string) {
  return t.prismaField({
    type: 'Lead',
    nullable: true,
    description: `${what} ${AFRESH}`,
    subscribe: (_root, _args, context) => eventsFor(context, type, (db, id) => db.lead.count({ where: { id } })),
    resolve: (query, item, _args, context) =>
      afresh(item, (event) => context.db.lead.findUnique({ ...query, where: { id: event.recordId } })),
  });
}

function carSubscription(t: SubscriptionFieldBuilder, type: RecordEventType, what: string) {
  return t.prismaField({
    type: 'Car',
    nullable: true,
    description: `${what} ${AFRESH}`,
    subscribe: (_root, _args, context) => eventsFor(context, type, (db, id) => db.car.count({ where: { id } })),
    resolve: (query, item, _args, context) =>
      afresh(item, (event) => context.db.car.findUnique({ ...query, where: { id: event.recordId } })),
  });
}

builder.subscriptionFields((t) => ({
  leadCreated: leadSubscription(t, 'lead.created', 'Each lead created from now on in a dealership the key reaches.'),
  leadUpdated: leadSubscription(t, 'lead.updated', 'Each lead updated from now on in a dealership the key reaches.'),
  carUpdated: carSubscription(t, 'car.updated', 'Each car updated from now on in a dealership the key reaches.'),
  carReserved: carSubscription(t, 'car.reserved', 'Each car reserved from now on in a dealership the key reaches.'),
  carReleased: carSubscription(t, 'car.released', 'Each car whose reservation is released from now on in a dealership the key reaches.'),
  leadEventCreated: t.prismaField({
    type: 'LeadEvent',
    nullable: true,
    description: `Each messaging event recorded from now on against a lead of a dealership the key reaches. ${AFRESH}`,
    subscribe: (_root, _args, context) => eventsFor(context, 'lead_event.created', (db, id) => db.leadEvent.count({ where: { id } })),
    resolve: (query, item, _args, context) =>
      afresh(item, (event) => context.db.leadEvent.findUnique({ ...query, where: { id: event.recordId } })),
  }),
  phoneCallCreated: t.prismaField({
    type: 'PhoneCall',
    nullable: true,
    description: `Each phone call recorded from now on to a tracking number of a dealership the key reaches (a repeated delivery of a call is not sent again). ${AFRESH}`,
    subscribe: (_root, _args, context) => eventsFor(context, 'phone_call.created', (db, id) => db.phoneCall.count({ where: { id } })),
    resolve: (query, item, _args, context) =>
      afresh(item, (event) => context.db.phoneCall.findUnique({ ...query, where: { id: event.recordId } })),
  }),
}));
