// The worker stays the only sender; a retry only makes a message due again. Addresses are shown masked
// (also inside stored errors, which quote recipients) and subjects and bodies never, so no customer's
// details land in terminals and tickets.
import type { Db, Prisma } from '../db/client.ts';
import { conflict, notFound } from '../errors.ts';

export const OUTBOX_STATUSES = ['pending', 'failed', 'sent'] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

/** A message as the CLI shows it: its recipient masked, its times as text. */
export type OutboxEntry = ReturnType<typeof entryOf>;

const ADDRESS = /([^\s<>()"',;:@]+)@([A-Za-z0-9.-]+\.[A-Za-z]{2,})/g;

function maskEmailAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${address[0]}***${address.slice(at)}`;
}

function maskEmailAddressesIn(text: string): string {
  return text.replace(ADDRESS, (_whole, mailbox: string, domain: string) => `${mailbox[0]}***@${domain}`);
}

function entryOf(row: Prisma.OutboxMessageModel) {
  return {
    id: row.id,
    kind: row.kind,
    lead_id: row.lead_id,
    recipient: maskEmailAddress(row.recipient),
    status: row.status,
    attempts: row.attempts,
    due_at: row.due_at.toISOString(),
    locked_until: row.locked_until?.toISOString() ?? null,
    sent_at: row.sent_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    last_error: row.last_error === null ? null : maskEmailAddressesIn(row.last_error),
  };
}

export async function listOutbox(db: Db, statuses: readonly OutboxStatus[], limit: number): Promise<OutboxEntry[]> {
  const rows = await db.outboxMessage.findMany({ where: { status: { in: [...statuses] } }, orderBy: { id: 'asc' }, take: limit });
  return rows.map(entryOf);
}

/** Refused for a message an instance is sending now: changing it under its sender would send it twice. */
export async function retryOutboxMessage(db: Db, id: number, now: Date): Promise<OutboxEntry> {
  const row = await db.outboxMessage.findUnique({ where: { id } });
  if (!row) throw notFound('outbox_message', `No outbox message #${id}.`);
  if (row.status === 'sent') {
    throw conflict(
      'outbox_message_sent',
      `Outbox message #${id} was sent at ${row.sent_at?.toISOString() ?? 'an unknown time'}; it is not sent again.`,
    );
  }
  if (row.status === 'pending' && row.locked_until && row.locked_until > now) {
    throw conflict(
      'outbox_message_sending',
      `Outbox message #${id} is being sent right now (claimed until ${row.locked_until.toISOString()}); look again after that.`,
    );
  }
  // Only the row as it was read: a worker claiming it meanwhile makes this change nothing.
  const changed = await db.outboxMessage.updateMany({
    where: { id, status: row.status, attempts: row.attempts, OR: [{ locked_until: null }, { locked_until: { lte: now } }] },
    data: { status: 'pending', attempts: 0, due_at: now, locked_until: null },
  });
  if (changed.count !== 1)
    throw conflict('outbox_message_changed', `Outbox message #${id} changed while it was being retried; look at it again.`);
  return entryOf(await db.outboxMessage.findUniqueOrThrow({ where: { id } }));
}

/** Pending messages are never touched. */
export async function purgeOutbox(
  db: Db,
  purge: { olderThanDays: number; failed: boolean; dryRun: boolean },
  now: Date,
): Promise<{ sent: number; failed: number }> {
  const before = new Date(now.getTime() - purge.olderThanDays * 86_400_000);
  const affected = async (where: Prisma.OutboxMessageWhereInput): Promise<number> =>
    purge.dryRun ? db.outboxMessage.count({ where }) : (await db.outboxMessage.deleteMany({ where })).count;
  const sent = await affected({ status: 'sent', sent_at: { lt: before } });
  const failed = purge.failed ? await affected({ status: 'failed', created_at: { lt: before } }) : 0;
  return { sent, failed };
}
