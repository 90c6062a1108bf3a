// `npm run outbox`, run as a real process over the messages a lead POST wrote: list (addresses
// masked), retry a failed message (then the worker sends it), refuse a sent or in-flight one, purge.
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMailer } from '../src/notifications/mailer.ts';
import { CUSTOMER_EMAIL, DEALERSHIP_NOTIFICATION } from '../src/notifications/outbox.ts';
import { deliverDueMessages } from '../src/notifications/worker.ts';
import type { OutboxEntry } from '../src/notifications/outbox-admin.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership, makeKey, makeUser } from './support/fixtures.ts';
import { samplePayload } from './support/fixtures-leads.ts';
import { runScript, type Finished } from './support/processes.ts';

const DAY_MS = 86_400_000;
const CUSTOMER = 'jane.citizen@example.com';
const silent = pino({ level: 'silent' });

/** Each command is a process that starts tsx and opens the database: seconds apiece on a busy machine. */
const CLI_TEST_TIMEOUT_MS = 120_000;

let app: TestApp;
let leadId: number;
/** The lead's three messages: the customer's acknowledgement and one notification per dealership user. */
let customerMessage: number;
let annMessage: number;
let bobMessage: number;

function outbox(...args: string[]): Promise<Finished> {
  return runScript('scripts/outbox.ts', args, { DATABASE_URL: app.config.databaseUrl });
}

async function outboxJson<T>(...args: string[]): Promise<T> {
  const result = await outbox(...args, '--json');
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as T;
}

const row = (id: number) => app.db.outboxMessage.findUniqueOrThrow({ where: { id } });

beforeAll(async () => {
  app = await createTestApp();
  // The CLI reads the database's (the real) time; the lead is made now too.
  app.clock.set(new Date());
  const dealership = await makeDealership(app.db, { name: 'Harbour Motors' });
  await makeUser(app.db, [dealership.id], { name: 'Ann', email: 'ann@harbour.example.com' });
  await makeUser(app.db, [dealership.id], { name: 'Bob', email: 'bob@harbour.example.com' });
  const writer = await makeKey(app.db, { permissions: ['create:lead'] });
  const response = await app.request('/api/v1/leads', {
    method: 'POST',
    key: writer.key,
    json: { lead: samplePayload(dealership.id, { email: CUSTOMER }) },
  });
  expect(response.status).toBe(201);
  leadId = ((await response.json()) as { lead: { id: number } }).lead.id;
  const rows = await app.db.outboxMessage.findMany({ where: { lead_id: leadId }, orderBy: { id: 'asc' } });
  expect(rows.map((message) => [message.kind, message.recipient])).toEqual([
    [CUSTOMER_EMAIL, CUSTOMER],
    [DEALERSHIP_NOTIFICATION, 'ann@harbour.example.com'],
    [DEALERSHIP_NOTIFICATION, 'bob@harbour.example.com'],
  ]);
  [customerMessage, annMessage, bobMessage] = rows.map((message) => message.id) as [number, number, number];
  // As the worker leaves them: the customer's message failed for good (the server quoted the
  // address), Ann's was sent 40 days ago, Bob's waits an hour for its third attempt.
  await app.db.outboxMessage.update({
    where: { id: customerMessage },
    data: { status: 'failed', attempts: 6, last_error: `550 5.1.1 <${CUSTOMER}>: Recipient address rejected` },
  });
  await app.db.outboxMessage.update({
    where: { id: annMessage },
    data: { status: 'sent', attempts: 1, sent_at: new Date(Date.now() - 40 * DAY_MS) },
  });
  await app.db.outboxMessage.update({
    where: { id: bobMessage },
    data: { attempts: 2, due_at: new Date(Date.now() + 3_600_000), last_error: '421 4.7.0 Try again later' },
  });
});

describe('npm run outbox -- list', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('lists the unsent messages with the addresses masked, as JSON', async () => {
    const entries = await outboxJson<OutboxEntry[]>('list');
    expect(
      entries.map(({ id, kind, lead_id, recipient, status, attempts, last_error }) => ({
        id,
        kind,
        lead_id,
        recipient,
        status,
        attempts,
        last_error,
      })),
    ).toEqual([
      {
        id: customerMessage,
        kind: CUSTOMER_EMAIL,
        lead_id: leadId,
        recipient: 'j***@example.com',
        status: 'failed',
        attempts: 6,
        last_error: '550 5.1.1 <j***@example.com>: Recipient address rejected',
      },
      {
        id: bobMessage,
        kind: DEALERSHIP_NOTIFICATION,
        lead_id: leadId,
        recipient: 'b***@harbour.example.com',
        status: 'pending',
        attempts: 2,
        last_error: '421 4.7.0 Try again later',
      },
    ]);
    expect((await outboxJson<OutboxEntry[]>('list', '--status', 'all')).map((entry) => entry.id)).toEqual([
      customerMessage,
      annMessage,
      bobMessage,
    ]);
    expect((await outboxJson<OutboxEntry[]>('list', '--status', 'sent')).map((entry) => entry.id)).toEqual([annMessage]);
  });

  it('prints a table in which no whole address appears', async () => {
    const result = await outbox('list', '--status', 'all');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+KIND\s+LEAD\s+RECIPIENT\s+STATUS\s+ATTEMPTS\s+DUE\s+LAST ERROR$/);
    expect(lines[1]).toMatch(
      new RegExp(`^${customerMessage}\\s+${CUSTOMER_EMAIL}\\s+${leadId}\\s+j\\*\\*\\*@example\\.com\\s+failed\\s+6\\s+`),
    );
    expect(lines).toHaveLength(4);
    expect(result.stdout).not.toMatch(/jane\.citizen@|ann@|bob@/i);
  });

  it('refuses an unknown status (usage, exit 2)', async () => {
    const result = await outbox('list', '--status', 'stuck');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--status must be one of pending, failed, sent or all/);
  });
});

describe('npm run outbox -- retry', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('makes a failed message due now with its attempts reset, and the worker then sends it', async () => {
    const before = Date.now();
    const retried = await outboxJson<OutboxEntry>('retry', String(customerMessage));
    expect(retried).toMatchObject({ id: customerMessage, status: 'pending', attempts: 0, locked_until: null });
    const stored = await row(customerMessage);
    expect(stored).toMatchObject({ status: 'pending', attempts: 0, locked_until: null });
    expect(stored.due_at.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect(stored.due_at.getTime()).toBeLessThanOrEqual(Date.now());

    const mailer = createMailer({ smtpUrl: null, mailFrom: app.config.mailFrom }, silent);
    app.clock.set(new Date());
    await deliverDueMessages({
      db: app.db,
      engine: app.config.engine,
      mailer,
      logger: silent,
      now: app.clock.now,
      mailFrom: app.config.mailFrom,
    });
    expect(await row(customerMessage)).toMatchObject({ status: 'sent', attempts: 1, last_error: null });
    // Bob's message was not retried: it still waits for its turn.
    expect(await row(bobMessage)).toMatchObject({ status: 'pending', attempts: 2 });
  });

  it('refuses a sent message, one being sent, and an unknown one (exit 1), changing nothing', async () => {
    const sent = await row(annMessage);
    const refusedSent = await outbox('retry', String(annMessage));
    expect(refusedSent.code).toBe(1);
    expect(refusedSent.stderr).toMatch(new RegExp(`Outbox message #${annMessage} was sent at `));
    expect(await row(annMessage)).toEqual(sent);

    const lease = new Date(Date.now() + 10 * 60_000);
    await app.db.outboxMessage.update({ where: { id: bobMessage }, data: { attempts: 3, locked_until: lease } });
    const refusedSending = await outbox('retry', String(bobMessage));
    expect(refusedSending.code).toBe(1);
    expect(refusedSending.stderr).toMatch(/is being sent right now/);
    expect(await row(bobMessage)).toMatchObject({ status: 'pending', attempts: 3, locked_until: lease });

    const unknown = await outbox('retry', '999999');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No outbox message #999999/);
  });
});

describe('npm run outbox -- purge', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('only counts without --yes, then deletes old sent messages, and failed ones with --failed', async () => {
    await app.db.outboxMessage.update({ where: { id: bobMessage }, data: { status: 'failed', locked_until: null } });

    const dryRun = await outbox('purge');
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toMatch(/^would delete 1 sent message\(s\) sent more than 30 day\(s\) ago; nothing deleted: add --yes/);
    expect(await app.db.outboxMessage.count({ where: { lead_id: leadId } })).toBe(3);

    // The customer's message was sent just now: too recent. Bob's failed one is kept without --failed.
    expect(await outboxJson('purge', '--yes')).toEqual({ dry_run: false, older_than_days: 30, sent: 1, failed: null });
    expect(
      (await app.db.outboxMessage.findMany({ where: { lead_id: leadId }, orderBy: { id: 'asc' } })).map((message) => message.id),
    ).toEqual([customerMessage, bobMessage]);

    expect(await outboxJson('purge', '--failed', '--older-than-days', '0', '--yes')).toEqual({
      dry_run: false,
      older_than_days: 0,
      sent: 1,
      failed: 1,
    });
    expect(await app.db.outboxMessage.count({ where: { lead_id: leadId } })).toBe(0);
  });
});
