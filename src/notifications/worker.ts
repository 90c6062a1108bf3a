// At-least-once delivery, once in practice: a message is claimed just before it is sent (FOR UPDATE
// SKIP LOCKED with the database's now() on PostgreSQL; a conditional update on SQLite, one writer),
// its lease renewed while sending, and every write requires the claim's `attempts`, so a sender that
// lost its claim changes nothing. A sender dying after the server accepted sends it again, with the
// same Message-ID: SMTP cannot say whether a message arrived, so exactly-once is impossible.
import type { Logger } from 'pino';
import { settingDefaults, type Config, type Engine } from '../config/index.ts';
import { sqlNow, type Clock } from '../db/clock.ts';
import type { Db, Prisma } from '../db/client.ts';
import { createMailer, type Mailer } from './mailer.ts';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { currentTraceparent, linksTo, tracer } from '../telemetry/tracing.ts';
import { outboxMessageId } from './outbox.ts';
import { startDeliveryTask, type BackgroundTask } from '../db/background-task.ts';
import type { GatewayMetrics } from '../telemetry/metrics.ts';

const OUTBOX_SETTINGS = settingDefaults('OUTBOX_LEASE_MS', 'OUTBOX_POLL_INTERVAL_MS');

const defaultDeliveryPolicy = {
  batchSize: 20,
  /** The sender renews it every third of this while sending, so a slow server never lets it end under a living sender. */
  leaseMs: OUTBOX_SETTINGS.outboxLeaseMs,
  maxAttempts: 6,
  backoffBaseMs: 60_000,
  backoffMaxMs: 60 * 60_000,
};

export type DeliveryPolicy = typeof defaultDeliveryPolicy;

export interface OutboxDeps {
  db: Db;
  engine: Engine;
  mailer: Mailer;
  logger: Logger;
  now: Clock;
  mailFrom: string;
  policy?: Partial<DeliveryPolicy>;
  /** False once stopping, so a shutdown claims nothing it would leave leased for another instance to wait out. */
  mayClaim?: () => boolean;
  metrics?: Pick<GatewayMetrics, 'deliveryFailed'>;
}

export function retryDelayMs(
  attempts: number,
  policy: Pick<DeliveryPolicy, 'backoffBaseMs' | 'backoffMaxMs'> = defaultDeliveryPolicy,
): number {
  return Math.min(policy.backoffBaseMs * 2 ** Math.max(attempts - 1, 0), policy.backoffMaxMs);
}

const MAX_ERROR_LENGTH = 1000;
/** Renewals closer together than this would only load the database. */
const MIN_RENEWAL_MS = 100;

type ClaimedMessage = Pick<
  Prisma.OutboxMessageModel,
  'id' | 'kind' | 'attempts' | 'traceparent' | 'recipient' | 'subject' | 'body' | 'created_at'
>;

/** Every write after a claim requires its `attempts`, so a sender that lost the claim changes nothing. */
export const heldBy = (claim: { id: number; attempts: number }) => ({ id: claim.id, attempts: claim.attempts, status: 'pending' as const });

export const claimable = (now: Date) => ({
  status: 'pending' as const,
  due_at: { lte: now },
  OR: [{ locked_until: null }, { locked_until: { lte: now } }],
});

/** Claims a row as it was read: of several instances claiming it at once, one wins and the others change nothing. */
export const claimUpdate = (row: { id: number; attempts: number }, now: Date, leaseMs: number) => ({
  where: { id: row.id, attempts: row.attempts, ...claimable(now) },
  data: { attempts: { increment: 1 }, locked_until: new Date(now.getTime() + leaseMs) },
});

async function claimNext(deps: OutboxDeps, leaseMs: number): Promise<ClaimedMessage | null> {
  const { db } = deps;
  if (deps.engine === 'postgresql') {
    const now = sqlNow(deps.now);
    const rows = await db.$queryRaw<ClaimedMessage[]>`
      UPDATE outbox_messages AS message
      SET attempts = message.attempts + 1, locked_until = ${now} + ${leaseMs} * interval '1 millisecond'
      FROM (
        SELECT id FROM outbox_messages
        WHERE status = 'pending' AND due_at <= ${now} AND (locked_until IS NULL OR locked_until <= ${now})
        ORDER BY due_at, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
      ) AS next
      WHERE message.id = next.id
      RETURNING message.id, message.kind, message.attempts, message.recipient, message.subject, message.body, message.created_at, message.traceparent`;
    return rows[0] ?? null;
  }
  // SQLite has one writer: the update below runs alone, and matches only the row as it was read.
  for (;;) {
    const now = deps.now();
    const next = await db.outboxMessage.findFirst({
      where: claimable(now),
      orderBy: [{ due_at: 'asc' }, { id: 'asc' }],
      select: { id: true, kind: true, attempts: true, recipient: true, subject: true, body: true, created_at: true, traceparent: true },
    });
    if (!next) return null;
    const claimed = await db.outboxMessage.updateMany(claimUpdate(next, now, leaseMs));
    if (claimed.count === 1) return { ...next, attempts: next.attempts + 1 };
  }
}

async function renewLease(deps: OutboxDeps, message: ClaimedMessage, leaseMs: number): Promise<boolean> {
  if (deps.engine === 'postgresql') {
    const renewed = await deps.db.$executeRaw`
      UPDATE outbox_messages SET locked_until = ${sqlNow(deps.now)} + ${leaseMs} * interval '1 millisecond'
      WHERE id = ${message.id} AND attempts = ${message.attempts} AND status = 'pending'`;
    return renewed === 1;
  }
  const renewed = await deps.db.outboxMessage.updateMany({
    where: heldBy(message),
    data: { locked_until: new Date(deps.now().getTime() + leaseMs) },
  });
  return renewed.count === 1;
}

async function sendWhileHolding(deps: OutboxDeps, message: ClaimedMessage, leaseMs: number, send: () => Promise<void>): Promise<void> {
  let lost = false;
  let renewing: Promise<void> = Promise.resolve();
  const renew = async (): Promise<void> => {
    try {
      if (!(await renewLease(deps, message, leaseMs)) && !lost) {
        lost = true;
        deps.logger.warn(
          { outbox_id: message.id, attempts: message.attempts },
          'lost the claim on a notification while sending it; it may be sent twice (same Message-ID)',
        );
      }
    } catch (error) {
      deps.logger.warn({ err: error, outbox_id: message.id }, 'renewing the lease on a notification failed; retrying at the next renewal');
    }
  };
  const timer = setInterval(() => (renewing = renewing.then(renew)), Math.max(Math.floor(leaseMs / 3), MIN_RENEWAL_MS));
  timer.unref();
  try {
    await send();
  } finally {
    clearInterval(timer);
    await renewing;
  }
}

/** A trace of its own, linked to the queuing request's span (OpenTelemetry's convention for queued work). */
function sendTraced(deps: OutboxDeps, message: ClaimedMessage, messageId: string, leaseMs: number): Promise<void> {
  const attributes = {
    'messaging.system': 'smtp',
    'messaging.operation.type': 'send',
    'messaging.operation.name': 'send',
    'messaging.message.id': messageId,
    'outbox.id': message.id,
    'outbox.attempt': message.attempts,
  };
  const options = { kind: SpanKind.PRODUCER, links: linksTo(message.traceparent), attributes };
  return tracer().startActiveSpan(`outbox send ${message.kind}`, options, ROOT_CONTEXT, async (span) => {
    try {
      await sendWhileHolding(deps, message, leaseMs, () =>
        deps.mailer.send({
          to: message.recipient,
          subject: message.subject,
          text: message.body,
          messageId,
          traceparent: currentTraceparent(),
        }),
      );
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'the mail server refused or could not be reached' });
      throw error;
    } finally {
      span.end();
    }
  });
}

export async function deliverDueMessages(deps: OutboxDeps): Promise<{ sent: number; retried: number; failed: number }> {
  const { db, logger } = deps;
  const policy = { ...defaultDeliveryPolicy, ...deps.policy };
  const report = { sent: 0, retried: 0, failed: 0 };

  for (let handled = 0; handled < policy.batchSize; handled += 1) {
    if (deps.mayClaim && !deps.mayClaim()) break;
    const message = await claimNext(deps, policy.leaseMs);
    if (!message) break;
    const messageId = outboxMessageId(message, deps.mailFrom);
    const logged = { outbox_id: message.id, attempts: message.attempts };
    try {
      await sendTraced(deps, message, messageId, policy.leaseMs);
    } catch (error) {
      const last_error = (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR_LENGTH);
      if (message.attempts >= policy.maxAttempts) {
        await db.outboxMessage.updateMany({ where: heldBy(message), data: { status: 'failed', locked_until: null, last_error } });
        report.failed += 1;
        deps.metrics?.deliveryFailed('failed');
        logger.error({ ...logged, err: error }, 'notification failed for good');
      } else {
        const retryAt = new Date(deps.now().getTime() + retryDelayMs(message.attempts, policy));
        await db.outboxMessage.updateMany({ where: heldBy(message), data: { due_at: retryAt, locked_until: null, last_error } });
        report.retried += 1;
        deps.metrics?.deliveryFailed('retry');
        logger.warn({ ...logged, retry_at: retryAt.toISOString(), err: error }, 'notification failed; will retry');
      }
      continue;
    }
    // Marked sent even if the lease ran out, as long as no one claimed it since: that keeps it from going twice.
    const done = await db.outboxMessage.updateMany({
      where: heldBy(message),
      data: { status: 'sent', sent_at: deps.now(), locked_until: null, last_error: null },
    });
    if (done.count !== 1) {
      logger.warn(
        { outbox_id: message.id, message_id: messageId },
        'notification sent after another instance claimed it; it may be sent twice (same Message-ID)',
      );
    }
    report.sent += 1;
  }
  return report;
}

interface OutboxWorkerOptions extends Pick<OutboxDeps, 'db' | 'logger' | 'now' | 'policy' | 'metrics'> {
  config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'engine'> & Partial<Pick<Config, 'outboxLeaseMs' | 'outboxPollIntervalMs'>>;
  intervalMs?: number;
  mailer?: Mailer;
}

export function startOutboxWorker(options: OutboxWorkerOptions): BackgroundTask {
  const { logger, config } = options;
  const mailer = options.mailer ?? createMailer(config, logger);
  const deps: OutboxDeps = {
    ...options,
    engine: config.engine,
    mailer,
    mailFrom: config.mailFrom,
    policy: { ...(config.outboxLeaseMs !== undefined ? { leaseMs: config.outboxLeaseMs } : {}), ...options.policy },
  };
  const task = startDeliveryTask(
    'outbox',
    (mayClaim) => deliverDueMessages({ ...deps, mayClaim }),
    options.intervalMs ?? config.outboxPollIntervalMs ?? OUTBOX_SETTINGS.outboxPollIntervalMs,
    logger,
  );
  return {
    async stop() {
      await task.stop();
      mailer.close();
    },
  };
}
