// The outbox CLI, for notifications that are not going out: npm run --silent outbox -- <command> [options].
// See `outbox help`. Addresses are shown masked (src/notifications/outbox-admin.ts).
import { parseArgs } from 'node:util';
import type { Engine } from '../src/config/index.ts';
import { databaseNow } from '../src/db/clock.ts';
import type { Db } from '../src/db/client.ts';
import {
  listOutbox,
  OUTBOX_STATUSES,
  purgeOutbox,
  retryOutboxMessage,
  type OutboxEntry,
  type OutboxStatus,
} from '../src/notifications/outbox-admin.ts';
import { print, runCliCommand, textTable, usageFailure, UsageError, wholeNumber } from './cli-command.ts';

const DEFAULT_LIMIT = 100;
const DEFAULT_PURGE_DAYS = 30;

const usage = `Usage: npm run --silent outbox -- <command> [options]

  list [--status pending|failed|sent|all] [--limit N]
                      the messages not sent (pending and failed) unless --status says; oldest first,
                      at most N (default ${DEFAULT_LIMIT}); recipients masked
  retry ID            a failed message, or a pending one waiting for its next attempt, is due now
                      with its attempts reset (refused for one already sent or being sent)
  purge [--older-than-days N] [--failed] [--yes]
                      deletes messages sent more than N days ago (default ${DEFAULT_PURGE_DAYS}), and with --failed
                      failed messages created more than N days ago; without --yes only counts them

  --json              machine-readable output`;

function parseCommandLine() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        status: { type: 'string' },
        limit: { type: 'string' },
        'older-than-days': { type: 'string' },
        failed: { type: 'boolean' },
        yes: { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    usageFailure(usage, error instanceof Error ? error.message : String(error));
  }
}

const { values, positionals } = parseCommandLine();

function statuses(value: string | undefined): OutboxStatus[] {
  if (value === undefined) return ['pending', 'failed'];
  if (value === 'all') return [...OUTBOX_STATUSES];
  const status = OUTBOX_STATUSES.find((known) => known === value);
  if (!status) throw new UsageError(`--status must be one of ${OUTBOX_STATUSES.join(', ')} or all`);
  return [status];
}

function table(entries: readonly OutboxEntry[]): string {
  const header = ['ID', 'KIND', 'LEAD', 'RECIPIENT', 'STATUS', 'ATTEMPTS', 'DUE', 'LAST ERROR'];
  const cells = entries.map((entry) => [
    String(entry.id),
    entry.kind,
    entry.lead_id === null ? '-' : String(entry.lead_id),
    entry.recipient,
    entry.status === 'sent' ? `sent ${entry.sent_at ?? ''}`.trim() : entry.locked_until ? `${entry.status} (sending)` : entry.status,
    String(entry.attempts),
    entry.due_at,
    // One line per message: a mail server's reply may span several.
    (entry.last_error ?? '').replace(/\s+/g, ' ').slice(0, 120),
  ]);
  return textTable(header, cells);
}

const commands = new Set(['list', 'retry', 'purge']);

async function run(db: Db, engine: Engine): Promise<void> {
  // The database's time, as the worker uses it: a retried message is due when the worker sees it due.
  const now = await databaseNow(db, engine);
  switch (positionals[0]) {
    case 'list': {
      const chosen = statuses(values.status);
      const entries = await listOutbox(db, chosen, values.limit === undefined ? DEFAULT_LIMIT : wholeNumber(values.limit, '--limit'));
      print(values.json, entries, entries.length > 0 ? table(entries) : `no ${chosen.join(' or ')} messages`);
      return;
    }
    case 'retry': {
      const entry = await retryOutboxMessage(db, wholeNumber(positionals[1], 'the message ID'), now);
      print(values.json, entry, `message #${entry.id} is due now; the outbox worker sends it on its next round`);
      return;
    }
    case 'purge': {
      const olderThanDays =
        values['older-than-days'] === undefined ? DEFAULT_PURGE_DAYS : wholeNumber(values['older-than-days'], '--older-than-days');
      const failed = values.failed ?? false;
      const dryRun = !values.yes;
      const counts = await purgeOutbox(db, { olderThanDays, failed, dryRun }, now);
      const what = `${counts.sent} sent message(s) sent more than ${olderThanDays} day(s) ago${failed ? ` and ${counts.failed} failed message(s) created more than ${olderThanDays} day(s) ago` : ''}`;
      print(
        values.json,
        { dry_run: dryRun, older_than_days: olderThanDays, sent: counts.sent, failed: failed ? counts.failed : null },
        dryRun ? `would delete ${what}; nothing deleted: add --yes to delete them` : `deleted ${what}`,
      );
      return;
    }
  }
}

// The refusals of src/notifications/outbox-admin.ts (an unknown message, one sent or being sent) end with exit code 1.
await runCliCommand({ usage, commands, positionals, help: values.help, run: (db, config) => run(db, config.engine) });
