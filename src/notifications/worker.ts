// Delivers due outbox messages. Many gateway instances run this against one database, so a message
// is claimed with a conditional update (still pending, due, unlocked, and the attempt count read) that
// only one instance can win; the claim is a lease (locked_until), so a message whose instance died
// mid-send is picked up again when the lease ends. A failed send is retried with exponential backoff
// and, after the last attempt, marked failed with its last error kept.
//
// Time comes from `now` (tests drive it); deliverDueMessages is one tick, startOutboxWorker repeats it.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import { createMailer, type Mailer } from './mailer.ts';

export interface DeliveryPolicy {
  /** Messages claimed per tick. */
  batchSize: number;
  /** How long a claim lasts; longer than the mailer's own timeouts. */
  leaseMs: number;
  /** Attempts before a message is marked failed. */
  maxAttempts: number;
  /** First retry after this long, doubling each time up to backoffMaxMs. */
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export const defaultDeliveryPolicy: DeliveryPolicy = {
  batchSize: 20,
  leaseMs: 2 * 60_000,
  maxAttempts: 6,
  backoffBaseMs: 60_000,
  backoffMaxMs: 60 * 60_000,
};

export interface OutboxDeps {
  db: Db;
  mailer: Mailer;
  logger: Logger;
  now: () => Date;
  policy?: Partial<DeliveryPolicy>;
  /**
   * Asked before each claim: false once the worker is stopping, so a shutdown finishes the message
   * in hand and leaves the rest of the batch unclaimed (no lease to wait out) for another instance.
   */
  mayClaim?: () => boolean;
}

export interface DeliveryReport {
  sent: number;
  retried: number;
  failed: number;
}

/** The wait before attempt n + 1 after attempt n failed: base, 2·base, 4·base … capped. */
export function retryDelayMs(attempts: number, policy: Pick<DeliveryPolicy, 'backoffBaseMs' | 'backoffMaxMs'> = defaultDeliveryPolicy): number {
  return Math.min(policy.backoffBaseMs * 2 ** Math.max(attempts - 1, 0), policy.backoffMaxMs);
}

const MAX_ERROR_LENGTH = 1000;

/** One tick: claims the due messages and sends each once. */
export async function deliverDueMessages(deps: OutboxDeps): Promise<DeliveryReport> {
  const { db, mailer, logger } = deps;
  const policy = { ...defaultDeliveryPolicy, ...deps.policy };
  const report: DeliveryReport = { sent: 0, retried: 0, failed: 0 };
  const now = deps.now();
  const claimable = { status: 'pending' as const, due_at: { lte: now }, OR: [{ locked_until: null }, { locked_until: { lte: now } }] };

  const candidates = await db.outboxMessage.findMany({
    where: claimable,
    orderBy: [{ due_at: 'asc' }, { id: 'asc' }],
    take: policy.batchSize,
    select: { id: true, attempts: true, recipient: true, subject: true, body: true },
  });

  for (const message of candidates) {
    if (deps.mayClaim && !deps.mayClaim()) break;
    const lease = new Date(now.getTime() + policy.leaseMs);
    // The attempt count in the condition makes the claim exact: if another instance claimed (and
    // perhaps released) the message since it was read, the count differs and this claim matches nothing.
    const claimed = await db.outboxMessage.updateMany({
      where: { id: message.id, attempts: message.attempts, ...claimable },
      data: { locked_until: lease, attempts: { increment: 1 } },
    });
    if (claimed.count !== 1) continue;
    const attempts = message.attempts + 1;
    const ours = { id: message.id, locked_until: lease };

    try {
      await mailer.send({ to: message.recipient, subject: message.subject, text: message.body });
    } catch (error) {
      const reason = (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR_LENGTH);
      const failedAt = deps.now();
      if (attempts >= policy.maxAttempts) {
        await db.outboxMessage.updateMany({ where: ours, data: { status: 'failed', locked_until: null, last_error: reason } });
        report.failed += 1;
        logger.error({ outbox_id: message.id, attempts, err: error }, 'notification failed for good');
      } else {
        const retryAt = new Date(failedAt.getTime() + retryDelayMs(attempts, policy));
        await db.outboxMessage.updateMany({ where: ours, data: { due_at: retryAt, locked_until: null, last_error: reason } });
        report.retried += 1;
        logger.warn({ outbox_id: message.id, attempts, retry_at: retryAt.toISOString(), err: error }, 'notification failed; will retry');
      }
      continue;
    }
    const done = await db.outboxMessage.updateMany({
      where: ours,
      data: { status: 'sent', sent_at: deps.now(), locked_until: null, last_error: null },
    });
    if (done.count !== 1) logger.warn({ outbox_id: message.id }, 'notification sent after its lease ended; it may be sent twice');
    report.sent += 1;
  }
  return report;
}

export interface OutboxWorker {
  stop(): Promise<void>;
}

export interface OutboxWorkerOptions {
  db: Db;
  config: Pick<Config, 'smtpUrl' | 'mailFrom'>;
  logger: Logger;
  now: () => Date;
  /** Pause between ticks. */
  intervalMs?: number;
  mailer?: Mailer;
  policy?: Partial<DeliveryPolicy>;
}

/**
 * Runs deliverDueMessages every intervalMs (default 5 s) until stopped. stop() claims nothing more
 * and resolves once the message being sent (if any) is settled.
 */
export function startOutboxWorker(options: OutboxWorkerOptions): OutboxWorker {
  const { logger, intervalMs = 5_000 } = options;
  const mailer = options.mailer ?? createMailer(options.config, logger);
  let stopped = false;
  const deps: OutboxDeps = { db: options.db, mailer, logger, now: options.now, policy: options.policy, mayClaim: () => !stopped };
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();

  const tick = async (): Promise<void> => {
    try {
      const report = await deliverDueMessages(deps);
      if (report.sent + report.retried + report.failed > 0) logger.info({ ...report }, 'outbox delivery');
    } catch (error) {
      logger.error({ err: error }, 'outbox delivery tick failed');
    } finally {
      if (!stopped) {
        timer = setTimeout(run, intervalMs);
        timer.unref();
      }
    }
  };
  const run = (): void => {
    current = tick();
  };
  run();

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
      mailer.close();
    },
  };
}
