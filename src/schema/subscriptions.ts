// Live subscriptions (docs/subscriptions.md): one root field per record event type, so that each has
// the type of its record and the permission that reads it, the one a webhook of that type needs
// (READ_PERMISSION_OF_EVENT). GraphQL only (the REST door's schema has no Subscription type,
// src/rest/rest-schema.ts), sent over Server-Sent Events.
//
// An event says only which record of which dealership changed (src/domain/record-events.ts). A
// subscriber receives it when its key reaches the dealership and its scoped client still finds the
// record; the record is then read afresh through that client with the subscriber's selection, so
// the fields guarded by a permission (personal data, relations) answer as they do in a query.
import { builder } from './builder.ts';
import type { Context } from '../context.ts';
import type { ScopedDb } from '../db/scoped.ts';
import { reachesDealership, requireActor } from '../auth/scope.ts';
import type { RecordEvent, RecordEventType } from '../domain/record-events.ts';
import { READ_PERMISSION_OF_EVENT } from '../domain/webhooks.ts';

/**
 * The events of one type this key may receive, from the moment it subscribes: of the key's
 * dealerships, about a record its scoped client finds. Not an async generator: one of those waiting
 * for the next event cannot be ended before that event comes, and a closed stream must release its
 * key's count at once.
 */
function eventsFor(
  context: Context,
  type: RecordEventType,
  found: (db: ScopedDb, id: number) => Promise<boolean>,
): AsyncIterableIterator<RecordEvent> {
  const actor = requireActor(context);
  const stream = context.liveEvents.open(actor.apiKeyId);
  const events: AsyncIterableIterator<RecordEvent> = {
    async next() {
      for (;;) {
        const received = await stream.next();
        if (received.done) return received;
        const event = received.value;
        if (event.type === type && reachesDealership(actor, event.dealershipId) && (await found(context.db, event.recordId)))
          return received;
      }
    },
    return: () => stream.return?.() ?? Promise.resolve({ value: undefined, done: true }),
    [Symbol.asyncIterator]: () => events,
  };
  return events;
}

const leadFound = async (db: ScopedDb, id: number) => (await db.lead.count({ where: { id } })) > 0;
const carFound = async (db: ScopedDb, id: number) => (await db.car.count({ where: { id } })) > 0;
const leadEventFound = async (db: ScopedDb, id: number) => (await db.leadEvent.count({ where: { id } })) > 0;
const phoneCallFound = async (db: ScopedDb, id: number) => (await db.phoneCall.count({ where: { id } })) > 0;

const AFRESH =
  'Each event is the record read afresh when it is sent, as the key would read it with `node(id:)`: null if it was removed meanwhile. Live events are at most once (docs/subscriptions.md).';

function leadSubscription(name: string, type: RecordEventType, what: string): void {
  builder.subscriptionField(name, (t) =>
    t.prismaField({
      type: 'Lead',
      nullable: true,
      description: `${what} ${AFRESH}`,
      authScopes: { permission: READ_PERMISSION_OF_EVENT[type] },
      subscribe: (_root, _args, context) => eventsFor(context, type, leadFound),
      resolve: (query, event, _args, context) => context.db.lead.findUnique({ ...query, where: { id: event.recordId } }),
    }),
  );
}

function carSubscription(name: string, type: RecordEventType, what: string): void {
  builder.subscriptionField(name, (t) =>
    t.prismaField({
      type: 'Car',
      nullable: true,
      description: `${what} ${AFRESH}`,
      authScopes: { permission: READ_PERMISSION_OF_EVENT[type] },
      subscribe: (_root, _args, context) => eventsFor(context, type, carFound),
      resolve: (query, event, _args, context) => context.db.car.findUnique({ ...query, where: { id: event.recordId } }),
    }),
  );
}

leadSubscription('leadCreated', 'lead.created', 'Each lead created from now on in a dealership the key reaches.');
leadSubscription('leadUpdated', 'lead.updated', 'Each lead updated from now on in a dealership the key reaches.');
carSubscription('carUpdated', 'car.updated', 'Each car updated from now on in a dealership the key reaches.');
carSubscription('carReserved', 'car.reserved', 'Each car reserved from now on in a dealership the key reaches.');
carSubscription('carReleased', 'car.released', 'Each car whose reservation is released from now on in a dealership the key reaches.');

builder.subscriptionField('leadEventCreated', (t) =>
  t.prismaField({
    type: 'LeadEvent',
    nullable: true,
    description: `Each messaging event recorded from now on against a lead of a dealership the key reaches. ${AFRESH}`,
    authScopes: { permission: READ_PERMISSION_OF_EVENT['lead_event.created'] },
    subscribe: (_root, _args, context) => eventsFor(context, 'lead_event.created', leadEventFound),
    resolve: (query, event, _args, context) => context.db.leadEvent.findUnique({ ...query, where: { id: event.recordId } }),
  }),
);

builder.subscriptionField('phoneCallCreated', (t) =>
  t.prismaField({
    type: 'PhoneCall',
    nullable: true,
    description: `Each phone call recorded from now on to a tracking number of a dealership the key reaches (a repeated delivery of a call is not sent again). ${AFRESH}`,
    authScopes: { permission: READ_PERMISSION_OF_EVENT['phone_call.created'] },
    subscribe: (_root, _args, context) => eventsFor(context, 'phone_call.created', phoneCallFound),
    resolve: (query, event, _args, context) => context.db.phoneCall.findUnique({ ...query, where: { id: event.recordId } }),
  }),
);
