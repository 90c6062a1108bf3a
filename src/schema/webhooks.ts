// Outbound webhook subscriptions on both doors, with manage:webhook.
import { builder } from './builder.ts';
import { requireActor } from '../auth/scope.ts';
import {
  createWebhookSubscription,
  deleteWebhookSubscription,
  listWebhookSubscriptions,
  redeliverWebhook,
  rotateWebhookSecret,
  setWebhookEnabled,
  webhookDeliveries,
  webhookSubscriptionInput,
  type WebhookDeliveryView,
  type WebhookSubscriptionView,
  type WebhookSubscriptionWithSecret,
} from '../domain/webhooks.ts';
import { inputFromZod } from './input-from-zod.ts';

const WebhookSubscriptionInput = inputFromZod(builder, 'WebhookSubscriptionInput', webhookSubscriptionInput, {
  description: 'A new webhook subscription: where to send, which events, for which dealership.',
});

const WebhookSubscription = builder.objectRef<WebhookSubscriptionView>('WebhookSubscription').implement({
  description: 'An outbound webhook: a URL told of some event types of one dealership, signed per Standard Webhooks.',
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'The subscription id.' }),
    dealership_id: t.exposeInt('dealership_id', { description: 'The dealership whose events are delivered.' }),
    url: t.exposeString('url', { description: 'Where deliveries are POSTed.' }),
    events: t.exposeStringList('events', { description: 'The event types delivered.' }),
    enabled: t.exposeBoolean('enabled', {
      description: 'false: nothing is delivered (disabled by its owner, or after deliveries failed for good).',
    }),
    disabled_reason: t.exposeString('disabled_reason', { nullable: true, description: 'Why the subscription was disabled, when it is.' }),
    disabled_at: t.expose('disabled_at', {
      type: 'DateTime',
      nullable: true,
      description: 'When the subscription was disabled, when it is.',
    }),
    previous_secret_expires_at: t.expose('previous_secret_expires_at', {
      type: 'DateTime',
      nullable: true,
      description: 'After a rotation: until when deliveries are signed with the old secret too.',
    }),
    created_at: t.expose('created_at', { type: 'DateTime', description: 'When the subscription was made.' }),
    updated_at: t.expose('updated_at', { type: 'DateTime', description: 'When the subscription last changed.' }),
  }),
});

const WebhookSubscriptionSecret = builder.objectRef<WebhookSubscriptionWithSecret>('WebhookSubscriptionSecret').implement({
  description: 'A subscription with its signing secret, which is shown only here (once, and to a retry with the same Idempotency-Key).',
  fields: (t) => ({
    subscription: t.expose('subscription', { type: WebhookSubscription, description: 'The subscription.' }),
    secret: t.exposeString('secret', {
      description:
        'The signing secret (`whsec_…`, Standard Webhooks): keep it. It is shown again only to a retry of the same request with its Idempotency-Key.',
    }),
  }),
});

const WebhookAttempt = builder.objectRef<WebhookDeliveryView['attempt_log'][number]>('WebhookAttempt').implement({
  description: 'One attempt of a delivery.',
  fields: (t) => ({
    attempt: t.exposeInt('attempt', { description: 'Its number, from 1.' }),
    status: t.exposeInt('status', { nullable: true, description: "The receiver's HTTP status; null when no answer came." }),
    latency_ms: t.exposeInt('latency_ms', { description: 'How long the attempt took, in milliseconds.' }),
    error: t.exposeString('error', { nullable: true, description: 'What went wrong, when it did.' }),
    at: t.expose('at', { type: 'DateTime', description: 'When the attempt was made.' }),
  }),
});

const WebhookDelivery = builder.objectRef<WebhookDeliveryView>('WebhookDelivery').implement({
  description: 'One event for one subscription, and what became of it.',
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'The delivery id.' }),
    subscription_id: t.exposeInt('subscription_id', { description: 'Its subscription.' }),
    message_id: t.exposeString('message_id', { description: 'The `webhook-id` header it is sent with, the same on every attempt.' }),
    event_id: t.exposeString('event_id', { description: 'The event it delivers.' }),
    event_type: t.exposeString('event_type', { description: 'The event type.' }),
    record_id: t.exposeInt('record_id', { description: 'The id of the record the event is about.' }),
    status: t.exposeString('status', {
      description:
        'pending (not yet delivered, retried), delivered, failed (for good), or skipped (the key could no longer read the record, or the subscription was disabled).',
    }),
    attempts: t.exposeInt('attempts', { description: 'Attempts made so far.' }),
    last_status: t.exposeInt('last_status', { nullable: true, description: "The receiver's last HTTP status." }),
    last_latency_ms: t.exposeInt('last_latency_ms', { nullable: true, description: 'How long the last attempt took, in milliseconds.' }),
    last_error: t.exposeString('last_error', { nullable: true, description: 'What went wrong at the last attempt.' }),
    next_attempt_at: t.expose('next_attempt_at', {
      type: 'DateTime',
      nullable: true,
      description: 'While pending: when it is tried next.',
    }),
    delivered_at: t.expose('delivered_at', { type: 'DateTime', nullable: true, description: 'When the receiver accepted it.' }),
    created_at: t.expose('created_at', { type: 'DateTime', description: 'When the event was enqueued.' }),
    attempt_log: t.expose('attempt_log', { type: [WebhookAttempt], description: 'Every attempt, oldest first.' }),
  }),
});

const WebhookSubscriptionDeleted = builder.objectRef<{ id: number; deleted: true }>('WebhookSubscriptionDeleted').implement({
  variantOf: {
    record: 'Webhook subscription',
    reason: "A delete's answer: the id of a subscription that no longer exists, which the subscription's own type cannot be read from.",
  },
  description: 'A subscription removed with its deliveries.',
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'The removed subscription.' }),
    deleted: t.exposeBoolean('deleted', { description: 'Always true.' }),
  }),
});

const manage = { permission: 'manage:webhook' } as const;

builder.queryFields((t) => ({
  webhook_subscriptions: t.field({
    type: [WebhookSubscription],
    description: "The webhook subscriptions of the key's dealerships (GET /api/v1/webhook_subscriptions).",
    authScopes: manage,
    resolve: (_root, _args, context) => listWebhookSubscriptions(context.db, context.now()),
  }),
  webhook_deliveries: t.field({
    type: [WebhookDelivery],
    description: "A subscription's delivery log, newest first, at most 100 (GET /api/v1/webhook_subscriptions/{id}/deliveries).",
    authScopes: manage,
    args: { id: t.arg.int({ required: true, description: 'The subscription id.' }) },
    resolve: (_root, args, context) => webhookDeliveries(context.db, requireActor(context), args.id),
  }),
}));

builder.mutationFields((t) => ({
  create_webhook_subscription: t.field({
    type: WebhookSubscriptionSecret,
    description: 'Subscribes a URL to event types of a dealership; answers the signing secret, once (POST /api/v1/webhook_subscriptions).',
    authScopes: manage,
    args: { subscription: t.arg({ type: WebhookSubscriptionInput, required: true, description: 'The subscription.' }) },
    resolve: (_root, args, context) =>
      createWebhookSubscription(context.db, requireActor(context), context.config, args.subscription, context.now()),
  }),
  rotate_webhook_secret: t.field({
    type: WebhookSubscriptionSecret,
    description:
      'A new signing secret, answered once; the old one keeps signing beside it for WEBHOOK_SECRET_GRACE_HOURS (POST /api/v1/webhook_subscriptions/{id}/rotate_secret).',
    authScopes: manage,
    args: { id: t.arg.int({ required: true, description: 'The subscription id.' }) },
    resolve: (_root, args, context) => rotateWebhookSecret(context.db, context.config, args.id, context.now()),
  }),
  disable_webhook_subscription: t.field({
    type: WebhookSubscription,
    description: 'Stops deliveries; pending ones are skipped (POST /api/v1/webhook_subscriptions/{id}/disable).',
    authScopes: manage,
    args: { id: t.arg.int({ required: true, description: 'The subscription id.' }) },
    resolve: (_root, args, context) => setWebhookEnabled(context.db, args.id, false, context.now()),
  }),
  enable_webhook_subscription: t.field({
    type: WebhookSubscription,
    description: 'Starts deliveries again, for events from now on (POST /api/v1/webhook_subscriptions/{id}/enable).',
    authScopes: manage,
    args: { id: t.arg.int({ required: true, description: 'The subscription id.' }) },
    resolve: (_root, args, context) => setWebhookEnabled(context.db, args.id, true, context.now()),
  }),
  delete_webhook_subscription: t.field({
    type: WebhookSubscriptionDeleted,
    description: 'Removes a subscription with its deliveries and their log (DELETE /api/v1/webhook_subscriptions/{id}).',
    authScopes: manage,
    args: { id: t.arg.int({ required: true, description: 'The subscription id.' }) },
    resolve: (_root, args, context) => deleteWebhookSubscription(context.db, args.id),
  }),
  redeliver_webhook: t.field({
    type: WebhookDelivery,
    description:
      'Sends a delivery again at the next round, with the same webhook-id (POST /api/v1/webhook_subscriptions/{id}/deliveries/{delivery_id}/redeliver).',
    authScopes: manage,
    args: {
      id: t.arg.int({ required: true, description: 'The subscription id.' }),
      delivery_id: t.arg.int({ required: true, description: 'The delivery id.' }),
    },
    resolve: (_root, args, context) => redeliverWebhook(context.db, requireActor(context), args.id, args.delivery_id, context.now()),
  }),
}));
