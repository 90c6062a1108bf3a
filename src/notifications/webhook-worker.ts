// A delivery is claimed just before it is sent by a conditional update on `attempts`, so N instances
// never send one attempt twice. Per record in order; one delivery per subscription in turn, so a
// backlog or slow receiver does not hold another back. The payload is the record as the subscribing
// key reads it now. The send ends well inside the lease, so the lease is not renewed while sending.
import { createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import { ACTOR_COLUMNS, actorOfKey, type Actor } from '../auth/api-keys.ts';
import { reachesDealership } from '../auth/scope.ts';
import type { Config } from '../config/index.ts';
import type { Clock } from '../db/clock.ts';
import type { Db, Prisma } from '../db/client.ts';
import { forDealerships } from '../db/scoped.ts';
import { eventOfRow, type RecordEvent } from '../domain/record-events.ts';
import { openPreviousWebhookSecret, openWebhookSecret } from '../domain/stored-secrets.ts';
import { allowedAddresses } from '../domain/webhook-address.ts';
import { readPermissionOfEvent } from '../domain/webhooks.ts';
import { postWebhook, WEBHOOK_TIMEOUT_MS, type WebhookAnswer, type WebhookPost } from './webhook-sender.ts';
import { startDeliveryTask, type BackgroundTask } from '../db/background-task.ts';
import { enqueueWebhookDisabledNotice } from './outbox.ts';
import { claimable, claimUpdate, heldBy, retryDelayMs, type DeliveryPolicy } from './worker.ts';

export type PayloadRenderer = (actor: Actor, event: RecordEvent) => Promise<unknown>;

type WebhookPolicy = Omit<DeliveryPolicy, 'maxAttempts'>;

const defaultPolicy: WebhookPolicy = { batchSize: 20, leaseMs: 60_000, backoffBaseMs: 30_000, backoffMaxMs: 2 * 3_600_000 };

export interface WebhookWorkerDeps {
  db: Db;
  config: Pick<Config, 'mode' | 'secretsKeyring' | 'webhookAllowedAddresses' | 'webhookRetryMs'>;
  logger: Logger;
  now: Clock;
  render: PayloadRenderer;
  policy?: Partial<WebhookPolicy>;
  send?: (post: WebhookPost) => Promise<WebhookAnswer>;
  mayClaim?: () => boolean;
}

type RoundReport = Record<'delivered' | 'retried' | 'failed' | 'skipped', number>;

const MAX_ERROR_LENGTH = 500;

function signWebhook(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

type Claimed = Parameters<typeof heldBy>[0];

const CANDIDATE_PAGE = 50;
const CANDIDATE_PAGES = 4;

/** A record whose first pending delivery waits holds back only its own later ones; the next page leaves it out. */
async function claimNext(deps: WebhookWorkerDeps, leaseMs: number, subscriptionId: number): Promise<Claimed | null> {
  const { db } = deps;
  const now = deps.now();
  const heldBack = new Set<string>();
  for (let page = 0; page < CANDIDATE_PAGES; page += 1) {
    const candidates = await db.webhookDelivery.findMany({
      where: { ...claimable(now), subscription_id: subscriptionId, ...(heldBack.size > 0 ? { record_key: { notIn: [...heldBack] } } : {}) },
      orderBy: [{ due_at: 'asc' }, { id: 'asc' }],
      take: CANDIDATE_PAGE,
      select: { id: true, attempts: true, record_key: true },
    });
    for (const candidate of candidates) {
      if (heldBack.has(candidate.record_key)) continue;
      // Per record, only its earliest pending delivery may go: the candidate, or one before it that is due too.
      const first = await db.webhookDelivery.findFirst({
        where: { subscription_id: subscriptionId, record_key: candidate.record_key, status: 'pending' },
        orderBy: { record_event_id: 'asc' },
        select: { id: true, attempts: true },
      });
      const head = first ?? candidate;
      const claimed = await db.webhookDelivery.updateMany(claimUpdate(head, now, leaseMs));
      if (claimed.count === 1) return { id: head.id, attempts: head.attempts + 1 };
      heldBack.add(candidate.record_key);
    }
    if (candidates.length < CANDIDATE_PAGE) return null;
  }
  return null;
}

type Outcome =
  | { kind: 'skipped'; reason: string }
  | { kind: 'sent'; answer: WebhookAnswer; latencyMs: number }
  | { kind: 'error'; reason: string; latencyMs: number };

const deliverySelect = {
  message_id: true,
  first_attempt_at: true,
  record_event: true,
  subscription: {
    select: {
      id: true,
      url: true,
      enabled: true,
      secret: true,
      previous_secret: true,
      previous_secret_until: true,
      api_key: { select: ACTOR_COLUMNS },
    },
  },
} satisfies Prisma.WebhookDeliverySelect;

type ClaimedDelivery = Prisma.WebhookDeliveryGetPayload<{ select: typeof deliverySelect }>;

async function attempt(deps: WebhookWorkerDeps, delivery: ClaimedDelivery, now: Date): Promise<Outcome> {
  const { subscription } = delivery;
  if (!subscription.enabled) return { kind: 'skipped', reason: 'the subscription is disabled' };
  const actor = actorOfKey(subscription.api_key, now);
  if (!actor) return { kind: 'skipped', reason: 'the subscribing API key is revoked or expired' };
  const event = eventOfRow(delivery.record_event);
  const needed = event ? readPermissionOfEvent(event.type) : undefined;
  if (!event || !reachesDealership(actor, event.dealershipId) || !needed || !actor.permissions.has(needed)) {
    return { kind: 'skipped', reason: `the subscribing API key cannot read this record (it needs ${needed} for its dealership)` };
  }
  const data = await deps.render(actor, event);
  if (data === null || data === undefined) return { kind: 'skipped', reason: 'the record can no longer be read' };

  const body = JSON.stringify({ type: event.type, timestamp: event.occurredAt.toISOString(), data });
  const timestamp = Math.floor(now.getTime() / 1000);
  const secrets = [openWebhookSecret(deps.config.secretsKeyring, subscription.secret)];
  if (subscription.previous_secret && subscription.previous_secret_until && subscription.previous_secret_until > now) {
    secrets.push(openPreviousWebhookSecret(deps.config.secretsKeyring, subscription.previous_secret));
  }
  const post: WebhookPost = {
    url: subscription.url,
    body,
    headers: {
      'webhook-id': delivery.message_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': secrets.map((secret) => signWebhook(secret, delivery.message_id, timestamp, body)).join(' '),
      'user-agent': 'dealership-gateway-webhooks',
    },
  };
  const rules = { mode: deps.config.mode, allowed: allowedAddresses(deps.config.webhookAllowedAddresses), timeoutMs: WEBHOOK_TIMEOUT_MS };
  const send = deps.send ?? ((request: WebhookPost) => postWebhook(request, rules));
  const started = performance.now();
  try {
    const answer = await send(post);
    return { kind: 'sent', answer, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR_LENGTH);
    return { kind: 'error', reason, latencyMs: Math.round(performance.now() - started) };
  }
}

async function settle(deps: WebhookWorkerDeps, policy: WebhookPolicy, claim: Claimed, report: RoundReport): Promise<void> {
  const { db, logger } = deps;
  const delivery = await db.webhookDelivery.findUniqueOrThrow({ where: { id: claim.id }, select: deliverySelect });
  const outcome = await attempt(deps, delivery, deps.now());
  const subscriptionId = delivery.subscription.id;
  const now = deps.now();
  if (outcome.kind === 'skipped') {
    await db.webhookDelivery.updateMany({
      where: heldBy(claim),
      data: { status: 'skipped', locked_until: null, last_error: outcome.reason },
    });
    report.skipped += 1;
    return;
  }
  const status = outcome.kind === 'sent' ? outcome.answer.status : null;
  const ok = status !== null && status >= 200 && status < 300;
  const reason = outcome.kind === 'error' ? outcome.reason : ok ? null : `the receiver answered ${status}`;
  const first = delivery.first_attempt_at ?? now;
  await db.webhookAttempt.create({
    data: { delivery_id: claim.id, attempt: claim.attempts, status, latency_ms: outcome.latencyMs, error: reason, at: now },
  });
  const common = {
    locked_until: null,
    last_status: status,
    last_latency_ms: outcome.latencyMs,
    last_error: reason,
    first_attempt_at: first,
  };
  if (ok) {
    await db.webhookDelivery.updateMany({ where: heldBy(claim), data: { ...common, status: 'delivered', delivered_at: now } });
    report.delivered += 1;
    return;
  }
  if (now.getTime() - first.getTime() >= deps.config.webhookRetryMs) {
    const done = await db.webhookDelivery.updateMany({ where: heldBy(claim), data: { ...common, status: 'failed' } });
    if (done.count === 1) {
      const hours = Math.round(deps.config.webhookRetryMs / 3_600_000);
      const why = `disabled after a delivery failed for ${hours} h (${claim.attempts} attempts; last: ${reason})`;
      const disabled_reason = why.slice(0, MAX_ERROR_LENGTH);
      // The notice to the dealership's users exists exactly when the subscription is disabled.
      await forDealerships(db, null).$transaction(async (tx) => {
        const disabled = await tx.webhookSubscription.updateManyAndReturn({
          where: { id: subscriptionId, enabled: true },
          data: { enabled: false, disabled_at: now, updated_at: now, disabled_reason },
          select: { id: true, dealership_id: true, url: true },
        });
        for (const subscription of disabled) await enqueueWebhookDisabledNotice(tx, { ...subscription, disabled_reason }, now);
      });
      logger.warn(
        { webhook_subscription_id: subscriptionId, delivery_id: claim.id, attempts: claim.attempts, reason },
        'webhook subscription disabled: a delivery failed for good',
      );
    }
    report.failed += 1;
    return;
  }
  const retryAt = new Date(now.getTime() + Math.round(retryDelayMs(claim.attempts, policy) * (0.75 + Math.random() * 0.5)));
  await db.webhookDelivery.updateMany({ where: heldBy(claim), data: { ...common, due_at: retryAt } });
  report.retried += 1;
  logger.info(
    { delivery_id: claim.id, attempts: claim.attempts, retry_at: retryAt.toISOString(), reason },
    'webhook delivery failed; will retry',
  );
}

export async function deliverDueWebhooks(deps: WebhookWorkerDeps): Promise<RoundReport> {
  const policy = { ...defaultPolicy, ...deps.policy };
  const report: RoundReport = { delivered: 0, retried: 0, failed: 0, skipped: 0 };
  let handled = 0;
  while (handled < policy.batchSize) {
    let claimedThisTurn = false;
    const due = await deps.db.webhookDelivery.groupBy({
      by: ['subscription_id'],
      where: claimable(deps.now()),
      _min: { due_at: true },
      orderBy: { _min: { due_at: 'asc' } },
    });
    for (const { subscription_id: subscriptionId } of due) {
      if (handled >= policy.batchSize || (deps.mayClaim && !deps.mayClaim())) return report;
      const claim = await claimNext(deps, policy.leaseMs, subscriptionId);
      if (!claim) continue;
      claimedThisTurn = true;
      handled += 1;
      await settle(deps, policy, claim, report);
    }
    if (!claimedThisTurn) break;
  }
  return report;
}

export function startWebhookWorker(deps: WebhookWorkerDeps & { intervalMs: number }): BackgroundTask {
  return startDeliveryTask('webhook', (mayClaim) => deliverDueWebhooks({ ...deps, mayClaim }), deps.intervalMs, deps.logger);
}
