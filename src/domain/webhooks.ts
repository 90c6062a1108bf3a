// Outbound webhook subscriptions: a URL of one dealership told of some event types. It remembers the
// key that made it: deliveries carry the record as that key reads it at delivery time.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Actor } from '../auth/api-keys.ts';
import type { Permission } from '../auth/permissions.ts';
import { readPermissionOf } from '../auth/record-access.ts';
import type { Config } from '../config/index.ts';
import type { Prisma } from '../db/client.ts';
import { lockedTransaction, type ScopedDb } from '../db/scoped.ts';
import { conflict, invalidInput, notFound } from '../errors.ts';
import { INT32 } from './input-limits.ts';
import { parseRecord } from './input-records.ts';
import { jsonStrings } from './json-columns.ts';
import { isRecordEventType, NODE_TYPE_OF_SUBJECT, RECORD_EVENT_TYPES, subjectOfEvent, type RecordEventType } from './record-events.ts';
import { openWebhookSecret, sealPreviousWebhookSecret, sealWebhookSecret } from './stored-secrets.ts';
import { allowedAddresses, checkWebhookUrl } from './webhook-address.ts';

/** A dealership's subscriptions at most: each one is a delivery per event. */
const MAX_SUBSCRIPTIONS_PER_DEALERSHIP = 20;

export const tooManyWebhookSubscriptions = () =>
  conflict('too_many_webhook_subscriptions', `A dealership has at most ${MAX_SUBSCRIPTIONS_PER_DEALERSHIP} webhook subscriptions.`);
export const secretRotatedMeanwhile = () =>
  conflict('webhook_secret_rotated_meanwhile', 'The secret was rotated by another request at the same time; try again.');
export const subscriptionDisabled = () =>
  conflict('webhook_subscription_disabled', 'The subscription is disabled: enable it before redelivering.');
const MAX_URL_LENGTH = 2_000;
const MAX_LOGGED_DELIVERIES = 100;

/** The read permission the event's record type declares, read when asked: the schema is built after this module. */
export const readPermissionOfEvent = (type: RecordEventType): Permission => readPermissionOf(NODE_TYPE_OF_SUBJECT[subjectOfEvent(type)]);

/** The event types whose records the key may read: the only ones it may subscribe to or see deliveries of. */
function readableEventTypes(actor: Actor): RecordEventType[] {
  return RECORD_EVENT_TYPES.filter((type) => actor.permissions.has(readPermissionOfEvent(type)));
}

/** A host label: letters, digits and single hyphens inside (no `--`: an `xn--` label must be valid punycode). */
const HOST_LABEL = '[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*';
/** The last label starts with a letter: a host ending in a number is read as an IPv4 address. */
const TOP_LABEL = '[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*';
const PORT = '(?:[0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])';
/** The form of a webhook URL every deployment accepts (the OpenAPI pattern of `url`). */
const WEBHOOK_URL_PATTERN = `^https://(?:${HOST_LABEL}\\.)*${TOP_LABEL}(?::${PORT})?(?:[/?#]\\S*)?$`;

/** The record of create_webhook_subscription, declared once (GraphQL input, OpenAPI body, validation). */
export const webhookSubscriptionInput = z.object({
  url: z
    .string()
    .max(MAX_URL_LENGTH)
    // The OpenAPI contract: every deployment accepts this form; checkWebhookUrl checks where it points.
    .meta({ pattern: WEBHOOK_URL_PATTERN, examples: ['https://crm.example.com/webhooks'] })
    .describe(
      'Where deliveries are POSTed: an https URL (http is accepted only in development mode), without credentials, whose host is not, and does not resolve to, a private, loopback or link-local address (docs/webhooks.md, "Where webhooks may go").',
    ),
  events: z
    .array(
      z
        .string()
        .meta({ enum: [...RECORD_EVENT_TYPES] })
        .refine(isRecordEventType, `must be one of: ${RECORD_EVENT_TYPES.join(', ')}`)
        .transform((type) => type as RecordEventType),
    )
    .min(1)
    .max(RECORD_EVENT_TYPES.length)
    .describe(`The event types to deliver: ${RECORD_EVENT_TYPES.join(', ')}.`),
  dealership_id: z
    .number()
    .int()
    .min(1)
    .max(INT32.max)
    .nullish()
    .meta({ 'x-references': 'a dealership the key reaches (422 naming subscription.dealership_id otherwise)' })
    .describe('The dealership whose events are delivered; may be left out when the key reaches exactly one dealership.'),
});

/** A subscription as its owners see it: never its secrets. */
export type WebhookSubscriptionView = ReturnType<typeof subscriptionView>;

function subscriptionView(row: Prisma.WebhookSubscriptionModel, now: Date) {
  const stillSigning = row.previous_secret !== null && row.previous_secret_until !== null && row.previous_secret_until > now;
  return {
    id: row.id,
    dealership_id: row.dealership_id,
    url: row.url,
    events: jsonStrings(row.events).filter(isRecordEventType),
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    disabled_at: row.disabled_at,
    previous_secret_expires_at: stillSigning ? row.previous_secret_until : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** A subscription with its signing secret: answered only when the secret is made (create, rotate). */
export type WebhookSubscriptionWithSecret = { subscription: WebhookSubscriptionView; secret: string };

/** Standard Webhooks' secret form: `whsec_` and base64 of 24 random bytes (192 bits). */
function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

async function findSubscription(db: ScopedDb, id: number): Promise<Prisma.WebhookSubscriptionModel> {
  const row = await db.webhookSubscription.findUnique({ where: { id } });
  if (!row) throw notFound('webhook_subscription');
  return row;
}

export async function createWebhookSubscription(
  db: ScopedDb,
  actor: Actor,
  config: Pick<Config, 'mode' | 'webhookAllowedAddresses' | 'secretsKeyring' | 'engine'>,
  input: z.input<typeof webhookSubscriptionInput>,
  now: Date,
): Promise<WebhookSubscriptionWithSecret> {
  const valid = parseRecord(webhookSubscriptionInput, input, 'subscription');
  // The parser's serialisation is stored: what is kept is the URL each delivery calls.
  const checked = checkWebhookUrl(valid.url, { mode: config.mode, allowed: allowedAddresses(config.webhookAllowedAddresses) });
  if (checked.problem !== null) throw invalidInput('subscription.url', checked.problem);
  const url = checked.url.href;
  // A key is told only of records it may read: refused here for what it cannot read now, and asked
  // again at each delivery (its permissions can change), where a delivery it cannot read is skipped.
  for (const [index, type] of valid.events.entries()) {
    const permission = readPermissionOfEvent(type);
    if (!actor.permissions.has(permission)) {
      throw invalidInput(`subscription.events[${index}]`, `${type} needs ${permission}, which this API key does not hold`);
    }
  }
  const events = [...new Set(valid.events)];
  const dealershipId = valid.dealership_id ?? (actor.dealershipIds?.length === 1 ? actor.dealershipIds[0] : undefined);
  if (dealershipId === undefined)
    throw invalidInput('subscription.dealership_id', 'is required when the key reaches more than one dealership');
  // The scoped client answers a dealership the key does not reach like a missing one.
  const dealership = await db.dealership.findUnique({ where: { id: dealershipId }, select: { id: true } });
  if (!dealership) throw invalidInput('subscription.dealership_id', 'is not a dealership this API key can access');
  const secret = newSecret();
  // The count and the insert as one, so that creates at once cannot pass the limit together.
  const row = await lockedTransaction(db, config.engine, { kind: 'dealershipWebhooks', id: dealershipId }, async (tx) => {
    if ((await tx.webhookSubscription.count({ where: { dealership_id: dealershipId } })) >= MAX_SUBSCRIPTIONS_PER_DEALERSHIP) {
      throw tooManyWebhookSubscriptions();
    }
    return tx.webhookSubscription.create({
      data: {
        dealership_id: dealershipId,
        api_key_id: actor.apiKeyId,
        url,
        events,
        secret: sealWebhookSecret(config.secretsKeyring, secret),
        created_at: now,
        updated_at: now,
      },
    });
  });
  return { subscription: subscriptionView(row, now), secret };
}

export async function listWebhookSubscriptions(db: ScopedDb, now: Date): Promise<WebhookSubscriptionView[]> {
  const rows = await db.webhookSubscription.findMany({ orderBy: { id: 'asc' }, take: MAX_SUBSCRIPTIONS_PER_DEALERSHIP * 50 });
  return rows.map((row) => subscriptionView(row, now));
}

/** The current secret keeps signing beside the new one for the grace hours, so receivers can switch. */
export async function rotateWebhookSecret(
  db: ScopedDb,
  config: Pick<Config, 'secretsKeyring' | 'webhookSecretGraceMs'>,
  id: number,
  now: Date,
): Promise<WebhookSubscriptionWithSecret> {
  const row = await findSubscription(db, id);
  const secret = newSecret();
  const previous = openWebhookSecret(config.secretsKeyring, row.secret);
  // Only if no other rotation happened meanwhile: the secret read is the one made previous.
  const { count } = await db.webhookSubscription.updateMany({
    where: { id, secret: row.secret },
    data: {
      secret: sealWebhookSecret(config.secretsKeyring, secret),
      previous_secret: sealPreviousWebhookSecret(config.secretsKeyring, previous),
      previous_secret_until: new Date(now.getTime() + config.webhookSecretGraceMs),
      updated_at: now,
    },
  });
  if (count !== 1) throw secretRotatedMeanwhile();
  return { subscription: subscriptionView(await findSubscription(db, id), now), secret };
}

/** Stops deliveries (pending ones are skipped when their turn comes); `enabled: true` starts them again. */
export async function setWebhookEnabled(db: ScopedDb, id: number, enabled: boolean, now: Date): Promise<WebhookSubscriptionView> {
  await findSubscription(db, id);
  const row = await db.webhookSubscription.update({
    where: { id },
    data: enabled
      ? { enabled: true, disabled_reason: null, disabled_at: null, updated_at: now }
      : { enabled: false, disabled_reason: 'disabled by its owner', disabled_at: now, updated_at: now },
  });
  return subscriptionView(row, now);
}

/** One statement decides: of two deletes at once, the second is told it was not found. */
export async function deleteWebhookSubscription(db: ScopedDb, id: number): Promise<{ id: number; deleted: true }> {
  const { count } = await db.webhookSubscription.deleteMany({ where: { id } });
  if (count === 0) throw notFound('webhook_subscription');
  return { id, deleted: true };
}

const deliverySelect = {
  id: true,
  subscription_id: true,
  message_id: true,
  status: true,
  attempts: true,
  due_at: true,
  last_status: true,
  last_latency_ms: true,
  last_error: true,
  delivered_at: true,
  created_at: true,
  record_event: { select: { event_id: true, type: true, record_id: true } },
  attempt_log: { select: { attempt: true, status: true, latency_ms: true, error: true, at: true }, orderBy: { attempt: 'asc' as const } },
} as const;

/** One delivery in the log: its event, its attempts, and when it is tried next while it is pending. */
export type WebhookDeliveryView = ReturnType<typeof deliveryView>;

function deliveryView({ record_event: event, due_at, ...row }: Prisma.WebhookDeliveryGetPayload<{ select: typeof deliverySelect }>) {
  const next_attempt_at = row.status === 'pending' ? due_at : null;
  return { ...row, event_id: event.event_id, event_type: event.type, record_id: event.record_id, next_attempt_at };
}

/** Only deliveries of records the reading key may read: a delivery tells which record changed and when. */
export async function webhookDeliveries(db: ScopedDb, actor: Actor, subscriptionId: number): Promise<WebhookDeliveryView[]> {
  await findSubscription(db, subscriptionId);
  const rows = await db.webhookDelivery.findMany({
    where: { subscription_id: subscriptionId, record_event: { type: { in: readableEventTypes(actor) } } },
    orderBy: { id: 'desc' },
    take: MAX_LOGGED_DELIVERIES,
    select: deliverySelect,
  });
  return rows.map(deliveryView);
}

/** Sends a delivery again at the worker's next round (same webhook-id, retry window afresh); one the key may not read is not found. */
export async function redeliverWebhook(
  db: ScopedDb,
  actor: Actor,
  subscriptionId: number,
  deliveryId: number,
  now: Date,
): Promise<WebhookDeliveryView> {
  const subscription = await findSubscription(db, subscriptionId);
  if (!subscription.enabled) throw subscriptionDisabled();
  const { count } = await db.webhookDelivery.updateMany({
    where: { id: deliveryId, subscription_id: subscriptionId, record_event: { type: { in: readableEventTypes(actor) } } },
    data: { status: 'pending', due_at: now, locked_until: null, first_attempt_at: null },
  });
  if (count === 0) throw notFound('webhook_delivery');
  return deliveryView(await db.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId }, select: deliverySelect }));
}
