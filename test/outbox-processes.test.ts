// The outbox across real service processes and a real, slow SMTP server:
// - three instances on one PostgreSQL, each reply of the server slower than a whole lease: every
//   message is accepted once (the leases are renewed while sending, claims skip each other's rows);
// - kill -9 of the instance while the server holds a message in flight: nothing is lost, the message
//   is delivered by the next instance once the lease ends, under the same Message-ID.
// The lease is scaled down (OUTBOX_LEASE_MS) so that these take seconds, not minutes.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/client.ts';
import { outboxMessageId } from '../src/notifications/outbox.ts';
import { testSettings } from './support/app.ts';
import { createMigratedDatabase, testEngine, type TestDatabase } from './support/database.ts';
import { startSmtpServer, type TestSmtpServer } from './support/fixtures-leads.ts';
import { freePort, startService, type RunningService } from './support/processes.ts';

const LEASE_MS = 2_000;
const MAIL_FROM = 'Dealership Platform <no-reply@dealership.local>';

let database: TestDatabase;
let db: Db;
let smtp: TestSmtpServer;
const running: RunningService[] = [];

async function startInstance(): Promise<RunningService> {
  const service = await startService([], {
    ...testSettings,
    LOG_LEVEL: 'info',
    DATABASE_URL: database.url,
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    SMTP_URL: smtp.url,
    MAIL_FROM,
    OUTBOX_LEASE_MS: String(LEASE_MS),
    OUTBOX_POLL_INTERVAL_MS: '100',
  });
  running.push(service);
  return service;
}

/** Due messages written straight into the outbox, as lead creation writes them. */
async function enqueue(count: number, tag: string): Promise<{ id: number; created_at: Date }[]> {
  await db.outboxMessage.createMany({
    data: Array.from({ length: count }, (_, i) => ({
      kind: 'lead_customer_email',
      recipient: `${tag}.${i}@example.com`,
      subject: `${tag} ${i}`,
      body: `message ${i}`,
      due_at: new Date('2000-01-01T00:00:00.000Z'),
    })),
  });
  return db.outboxMessage.findMany({
    where: { subject: { startsWith: `${tag} ` } },
    select: { id: true, created_at: true },
    orderBy: { id: 'asc' },
  });
}

async function waitUntil(what: string, condition: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

beforeAll(async () => {
  database = await createMigratedDatabase();
  db = createDb(database.url);
  smtp = await startSmtpServer();
});

beforeEach(() => {
  smtp.received.length = 0;
  smtp.arrived.length = 0;
  smtp.replyDelayMs = 0;
  smtp.holdReplies = null;
  smtp.onArrival = null;
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((service) => service.stop()));
});

afterAll(async () => {
  await smtp.close();
  await db.$disconnect();
  await database.drop();
});

describe.skipIf(testEngine !== 'postgresql')('three instances on one PostgreSQL and a mail server slower than a lease', () => {
  it('send every message once', async () => {
    const rows = await enqueue(15, 'slow');
    // Each reply takes longer than a whole lease: a lease that is not renewed while sending, or one
    // computed once for a whole round, ends under its sender and another instance sends again.
    smtp.replyDelayMs = LEASE_MS + 500;
    await Promise.all([startInstance(), startInstance(), startInstance()]);
    await waitUntil(
      'every message is sent',
      async () => (await db.outboxMessage.count({ where: { id: { in: rows.map((row) => row.id) }, status: 'sent' } })) === rows.length,
    );

    const expected = rows.map((row) => outboxMessageId(row, MAIL_FROM)).sort();
    const accepted = countBy(smtp.received.map((mail) => mail.messageId));
    expect([...accepted.keys()].sort()).toEqual(expected);
    expect([...accepted.values()].filter((count) => count > 1)).toEqual([]);
    // Not even a second attempt reached the server (accepted or not).
    expect(smtp.arrived).toHaveLength(rows.length);
    const stored = await db.outboxMessage.findMany({ where: { id: { in: rows.map((row) => row.id) } } });
    expect(stored.every((row) => row.status === 'sent' && row.attempts === 1 && row.locked_until === null)).toBe(true);
    const senders = running.map((service) =>
      service.lines.filter((line) => line.msg === 'outbox delivery').reduce((sum, line) => sum + Number(line.sent), 0),
    );
    console.info(
      `slow SMTP, 3 instances: ${rows.length} messages, ${smtp.received.length} accepted, sent per instance ${senders.join('/')}`,
    );
  }, 180_000);
});

describe('kill -9 of an instance while a message is in flight', () => {
  it('loses nothing: the next instance delivers it once the lease ends, under the same Message-ID', async () => {
    const rows = await enqueue(3, 'killed');
    let release: () => void = () => undefined;
    smtp.holdReplies = new Promise<void>((resolve) => (release = resolve));
    let arrived: (messageId: string) => void = () => undefined;
    const inFlight = new Promise<string>((resolve) => (arrived = resolve));
    smtp.onArrival = (mail) => arrived(mail.messageId);

    const first = await startInstance();
    const inFlightId = await inFlight;
    await first.kill();
    running.splice(running.indexOf(first), 1);
    // The process has exited; the server learns of its closed connection a moment later. Only then
    // does the reply go out, to a sender that is gone (a reply before that would count as delivered).
    const inFlightMail = smtp.arrived.find((mail) => mail.messageId === inFlightId);
    await waitUntil('the SMTP server sees the killed sender disconnect', () =>
      Promise.resolve(inFlightMail !== undefined && smtp.senderGone(inFlightMail)),
    );
    // The server answers only now, to a sender that is gone: the message was not delivered.
    smtp.holdReplies = null;
    release();
    const held = rows.find((row) => outboxMessageId(row, MAIL_FROM) === inFlightId);
    expect(held).toBeDefined();
    const heldRow = await db.outboxMessage.findUniqueOrThrow({ where: { id: held!.id } });
    expect(heldRow).toMatchObject({ status: 'pending', attempts: 1 });
    expect(heldRow.locked_until).not.toBeNull();

    await startInstance();
    await waitUntil(
      'every message is sent',
      async () => (await db.outboxMessage.count({ where: { id: { in: rows.map((row) => row.id) }, status: 'sent' } })) === rows.length,
    );
    const expected = rows.map((row) => outboxMessageId(row, MAIL_FROM)).sort();
    expect(smtp.received.map((mail) => mail.messageId).sort()).toEqual(expected);
    // The message that was in flight arrived twice (once unanswered), both times with one Message-ID.
    expect(smtp.arrived.filter((mail) => mail.messageId === inFlightId)).toHaveLength(2);
    expect(await db.outboxMessage.findUniqueOrThrow({ where: { id: held!.id } })).toMatchObject({ status: 'sent', attempts: 2 });
  }, 180_000);
});
