// Spec 6: creating a lead writes its notifications to the outbox in the same transaction; the worker
// delivers them over real SMTP (a local smtp-server) when they are due, claims each message once
// across instances, and retries failures with exponential backoff until it gives up.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/client.ts';
import { createMailer, type Mailer } from '../src/notifications/mailer.ts';
import { CUSTOMER_EMAIL, DEALERSHIP_NOTIFICATION, outboxMessageId } from '../src/notifications/outbox.ts';
import { deliverDueMessages, retryDelayMs, startOutboxWorker, type OutboxDeps } from '../src/notifications/worker.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey, makeUser } from './support/fixtures.ts';
import { samplePayload, startSmtpServer, type TestSmtpServer } from './support/fixtures-leads.ts';

const MINUTE = 60_000;
const silent = pino({ level: 'silent' });

let app: TestApp;
let smtp: TestSmtpServer;
let dealer: { id: number; name: string };
let quiet: { id: number; name: string };
let ann: { id: number; email: string };
let bob: { id: number; email: string };
let writer: { key: string };
let deps: OutboxDeps;
let n = 0;

async function createLead(overrides: Record<string, unknown> = {}, dealershipId = dealer.id): Promise<{ id: number }> {
  n += 1;
  const response = await app.request('/api/v1/leads', {
    method: 'POST',
    key: writer.key,
    json: {
      lead: samplePayload(dealershipId, { email: `buyer.${n}@example.com`, phone: `0415 000 ${String(n).padStart(3, '0')}`, ...overrides }),
    },
  });
  expect(response.status).toBe(201);
  return (await response.json()).lead;
}

function outboxOf(leadId: number) {
  return app.db.outboxMessage.findMany({ where: { lead_id: leadId }, orderBy: { id: 'asc' } });
}

beforeAll(async () => {
  app = await createTestApp();
  smtp = await startSmtpServer();
  dealer = await makeDealership(app.db, { name: 'Harbour Motors' });
  quiet = await makeDealership(app.db);
  ann = await makeUser(app.db, [dealer.id], { name: 'Ann', email: 'ann@harbour.example.com' });
  bob = await makeUser(app.db, [dealer.id], { name: 'Bob', email: 'bob@harbour.example.com' });
  writer = await makeKey(app.db, { permissions: ['create:lead'] });
  deps = {
    db: app.db,
    mailer: createMailer({ smtpUrl: smtp.url, mailFrom: app.config.mailFrom }, silent),
    engine: app.config.engine,
    mailFrom: app.config.mailFrom,
    logger: silent,
    now: app.clock.now,
    policy: { maxAttempts: 3, backoffBaseMs: MINUTE, backoffMaxMs: 10 * MINUTE },
  };
});

afterAll(async () => {
  deps.mailer.close();
  await smtp.close();
});

beforeEach(async () => {
  await app.db.outboxMessage.deleteMany();
  smtp.received.length = 0;
  smtp.arrived.length = 0;
  smtp.rejectWith = null;
});

describe('the outbox rows written with the lead', () => {
  it('are the customer e-mail and one dealership notification per user, due after their delays', async () => {
    const car = await makeCar(app.db, dealer.id, { stocknum: 'H77', year: 2021, make: 'Mazda', model: 'CX-5' });
    const now = app.clock.now().getTime();
    const lead = await createLead({
      name: 'Jane',
      last_name: 'Citizen',
      stocknum: 'H77',
      delay_customer_email_minutes: 15,
      delay_dealership_notification_minutes: 5,
    });
    const rows = await outboxOf(lead.id);
    expect(rows.map((row) => [row.kind, row.recipient, row.status, row.attempts, row.due_at.getTime()])).toEqual([
      [CUSTOMER_EMAIL, `buyer.${n}@example.com`, 'pending', 0, now + 15 * MINUTE],
      [DEALERSHIP_NOTIFICATION, ann.email, 'pending', 0, now + 5 * MINUTE],
      [DEALERSHIP_NOTIFICATION, bob.email, 'pending', 0, now + 5 * MINUTE],
    ]);
    const [customer, dealership] = rows;
    expect(customer?.subject).toBe('Thank you for your enquiry with Harbour Motors');
    expect(customer?.body).toContain(`Your reference: lead #${lead.id}`);
    expect(customer?.body).toContain(`Vehicle: 2021 Mazda CX-5 (stock number H77)`);
    expect(dealership?.subject).toBe(`New lead #${lead.id}: Used Vehicle Enquiry from Jane Citizen`);
    expect(dealership?.body).toContain('Phone: +61415000');
    expect(dealership?.body).toContain('Message:\nIs this car still available?');
    expect(car.id).toBeGreaterThan(0);
  });

  it('leave out the customer e-mail when send_customer_email is false', async () => {
    const lead = await createLead({ send_customer_email: false });
    expect((await outboxOf(lead.id)).map((row) => row.kind)).toEqual([DEALERSHIP_NOTIFICATION, DEALERSHIP_NOTIFICATION]);
  });

  it('leave out the customer e-mail when the unchecked e-mail is not an address', async () => {
    const lead = await createLead({ email: 'no email given', disable_strict_validation: true });
    expect((await outboxOf(lead.id)).map((row) => row.kind)).toEqual([DEALERSHIP_NOTIFICATION, DEALERSHIP_NOTIFICATION]);
  });

  it('notify only the team member of a Team Member Enquiry, or only the linked user', async () => {
    const forBob = await createLead({ category: 'Team Member Enquiry', team_member_id: bob.id, send_customer_email: false });
    expect((await outboxOf(forBob.id)).map((row) => row.recipient)).toEqual([bob.email]);
    const linked = await createLead({ user_email: 'ANN@harbour.example.com', send_customer_email: false });
    expect((await outboxOf(linked.id)).map((row) => row.recipient)).toEqual([ann.email]);
  });

  it('are only the customer e-mail for a dealership without users', async () => {
    const lead = await createLead({}, quiet.id);
    expect((await outboxOf(lead.id)).map((row) => row.kind)).toEqual([CUSTOMER_EMAIL]);
  });
});

describe('delivery over SMTP', () => {
  it('sends each message when it is due, not before', async () => {
    const lead = await createLead({ name: 'Jane', delay_customer_email_minutes: 10 });
    expect(await deliverDueMessages(deps)).toEqual({ sent: 2, retried: 0, failed: 0 });
    expect(smtp.received.map((mail) => mail.to)).toEqual([[ann.email], [bob.email]]);
    for (const mail of smtp.received) {
      expect(mail.from).toBe('no-reply@dealership.local');
      expect(mail.subject).toBe(`New lead #${lead.id}: Used Vehicle Enquiry from Jane Citizen`);
      expect(mail.text).toContain(`Lead: #${lead.id}`);
    }

    app.clock.advance(10 * MINUTE - 1);
    expect(await deliverDueMessages(deps)).toEqual({ sent: 0, retried: 0, failed: 0 });
    expect(smtp.received).toHaveLength(2);

    app.clock.advance(1);
    expect(await deliverDueMessages(deps)).toEqual({ sent: 1, retried: 0, failed: 0 });
    const customer = smtp.received[2];
    expect(customer?.to).toEqual([`buyer.${n}@example.com`]);
    expect(customer?.subject).toBe('Thank you for your enquiry with Harbour Motors');
    expect(customer?.text).toContain('Hi Jane,');
    expect(customer?.text).toContain(`Your reference: lead #${lead.id}`);

    const rows = await outboxOf(lead.id);
    expect(rows.every((row) => row.status === 'sent' && row.attempts === 1 && row.locked_until === null && row.last_error === null)).toBe(
      true,
    );
    expect(rows[0]?.sent_at?.toISOString()).toBe(app.clock.now().toISOString());
    // Sent messages are not sent again.
    expect(await deliverDueMessages(deps)).toEqual({ sent: 0, retried: 0, failed: 0 });
    expect(smtp.received).toHaveLength(3);
  });

  it('retries a refused message with exponential backoff, then marks it failed', async () => {
    smtp.rejectWith = 'Mailbox unavailable';
    const lead = await createLead({}, quiet.id);
    const start = app.clock.now().getTime();

    expect(await deliverDueMessages(deps)).toEqual({ sent: 0, retried: 1, failed: 0 });
    let [row] = await outboxOf(lead.id);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, locked_until: null });
    expect(row?.last_error).toContain('Mailbox unavailable');
    expect(row?.due_at.getTime()).toBe(start + MINUTE);

    // Not retried before its new due time.
    app.clock.advance(MINUTE - 1);
    expect(await deliverDueMessages(deps)).toEqual({ sent: 0, retried: 0, failed: 0 });
    app.clock.advance(1);
    expect(await deliverDueMessages(deps)).toEqual({ sent: 0, retried: 1, failed: 0 });
    [row] = await outboxOf(lead.id);
    expect(row).toMatchObject({ status: 'pending', attempts: 2 });
    expect(row?.due_at.getTime()).toBe(start + MINUTE + 2 * MINUTE);

    app.clock.advance(2 * MINUTE);
    expect(await deliverDueMessages(deps)).toEqual({ sent: 0, retried: 0, failed: 1 });
    [row] = await outboxOf(lead.id);
    expect(row).toMatchObject({ status: 'failed', attempts: 3, locked_until: null, sent_at: null });
    expect(row?.last_error).toContain('Mailbox unavailable');

    // A failed message stays failed, even once the server accepts mail again.
    smtp.rejectWith = null;
    app.clock.advance(60 * MINUTE);
    expect(await deliverDueMessages(deps)).toEqual({ sent: 0, retried: 0, failed: 0 });
    expect(smtp.received).toHaveLength(0);
  });

  it('delivers a message on the retry after a failure', async () => {
    smtp.rejectWith = 'Try again later';
    const lead = await createLead({}, quiet.id);
    await deliverDueMessages(deps);
    smtp.rejectWith = null;
    app.clock.advance(MINUTE);
    expect(await deliverDueMessages(deps)).toEqual({ sent: 1, retried: 0, failed: 0 });
    const [row] = await outboxOf(lead.id);
    expect(row).toMatchObject({ status: 'sent', attempts: 2, last_error: null });
    expect(smtp.received).toHaveLength(1);
  });

  it('an unreachable server counts as a failed attempt', async () => {
    const closed = await startSmtpServer();
    await closed.close();
    const unreachable: OutboxDeps = { ...deps, mailer: createMailer({ smtpUrl: closed.url, mailFrom: 'x@example.com' }, silent) };
    const lead = await createLead({}, quiet.id);
    expect(await deliverDueMessages(unreachable)).toEqual({ sent: 0, retried: 1, failed: 0 });
    const [row] = await outboxOf(lead.id);
    expect(row?.last_error).toBeTruthy();
    unreachable.mailer.close();
  });
});

describe('the Message-ID', () => {
  it("is the outbox row's own, the same when the message is sent again after a crash", async () => {
    const lead = await createLead({}, quiet.id);
    const [row] = await outboxOf(lead.id);
    if (!row) throw new Error('no outbox row');
    const expected = outboxMessageId(row, app.config.mailFrom);
    expect(expected).toMatch(new RegExp(`^<outbox-${row.id}-[0-9a-z]+@dealership\\.local>$`));
    expect(await deliverDueMessages(deps)).toEqual({ sent: 1, retried: 0, failed: 0 });
    // The sender died after the server accepted the message and before marking it sent: the row is
    // still pending and its lease ran out; the next claim sends it again, under the same id.
    await app.db.outboxMessage.update({ where: { id: row.id }, data: { status: 'pending', sent_at: null, locked_until: app.clock.now() } });
    expect(await deliverDueMessages(deps)).toEqual({ sent: 1, retried: 0, failed: 0 });
    expect(smtp.received.map((mail) => mail.messageId)).toEqual([expected, expected]);
  });

  it('differs between rows, and between rows of another database that share an id', () => {
    const created_at = new Date('2026-11-21T09:00:00.000Z');
    const ids = new Set([
      outboxMessageId({ id: 1, created_at }, 'Dealers <mail@example.com>'),
      outboxMessageId({ id: 2, created_at }, 'Dealers <mail@example.com>'),
      outboxMessageId({ id: 1, created_at: new Date(created_at.getTime() + 1) }, 'Dealers <mail@example.com>'),
    ]);
    expect(ids.size).toBe(3);
    expect(outboxMessageId({ id: 1, created_at }, 'mail@example.com')).toMatch(/@example\.com>$/);
  });
});

describe('leases', () => {
  it('are taken per message just before it is sent, from that moment, however long the round has run', async () => {
    for (let i = 0; i < 3; i += 1) await createLead({}, quiet.id);
    const lease = 2 * MINUTE;
    const leaseLeft: number[] = [];
    // A slow server: each message takes a whole lease to be answered. A lease computed once per round
    // would already be over when the later messages are sent, and another instance could claim them.
    const slow: OutboxDeps = {
      ...deps,
      policy: { ...deps.policy, leaseMs: lease },
      mailer: {
        async send(mail) {
          const row = await app.db.outboxMessage.findFirstOrThrow({ where: { recipient: mail.to, status: 'pending' } });
          leaseLeft.push(row.locked_until!.getTime() - app.clock.now().getTime());
          app.clock.advance(lease);
        },
        close() {},
      },
    };
    expect(await deliverDueMessages(slow)).toEqual({ sent: 3, retried: 0, failed: 0 });
    expect(leaseLeft).toEqual([lease, lease, lease]);
  });

  it('are renewed while a slow server answers, so another instance never claims the message in hand', async () => {
    const lead = await createLead({}, quiet.id);
    const leaseMs = 3_000;
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let started: () => void = () => undefined;
    const sending = new Promise<void>((resolve) => (started = resolve));
    const holding: OutboxDeps = {
      ...deps,
      policy: { ...deps.policy, leaseMs },
      mailer: {
        async send() {
          started();
          await released;
        },
        close() {},
      },
    };
    const first = deliverDueMessages(holding);
    await sending;
    const [claimed] = await outboxOf(lead.id);
    // Time passes beyond the lease while the server is still answering; the sender renews.
    app.clock.advance(2 * leaseMs);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const [row] = await outboxOf(lead.id);
      if (row?.locked_until && row.locked_until > app.clock.now()) break;
      if (Date.now() > deadline) throw new Error('the lease was not renewed');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const secondSent: string[] = [];
    const second: OutboxDeps = { ...deps, mailer: { send: async (mail) => void secondSent.push(mail.to), close() {} } };
    expect(await deliverDueMessages(second)).toEqual({ sent: 0, retried: 0, failed: 0 });
    release();
    expect(await first).toEqual({ sent: 1, retried: 0, failed: 0 });
    expect(secondSent).toEqual([]);
    expect((await outboxOf(lead.id))[0]).toMatchObject({ status: 'sent', attempts: claimed?.attempts, locked_until: null });
  });

  it('a sender whose claim was taken over changes nothing when it finishes', async () => {
    const lead = await createLead({}, quiet.id);
    const takenOver: OutboxDeps = {
      ...deps,
      mailer: {
        async send() {
          // Another instance claimed it meanwhile (this sender had lost the database for a whole lease).
          const [row] = await outboxOf(lead.id);
          await app.db.outboxMessage.update({ where: { id: row!.id }, data: { attempts: { increment: 1 } } });
        },
        close() {},
      },
    };
    await deliverDueMessages(takenOver);
    expect((await outboxOf(lead.id))[0]).toMatchObject({ status: 'pending', attempts: 2, sent_at: null });
  });
});

describe('many instances', () => {
  let second: Db;
  beforeAll(() => {
    second = createDb(app.config.databaseUrl);
  });
  afterAll(async () => {
    await second.$disconnect();
  });

  it('never send one message twice', async () => {
    for (let i = 0; i < 5; i += 1) await createLead();
    const due = await app.db.outboxMessage.count({ where: { status: 'pending' } });
    expect(due).toBe(15);
    const other: OutboxDeps = { ...deps, db: second, mailer: createMailer({ smtpUrl: smtp.url, mailFrom: app.config.mailFrom }, silent) };
    const reports = await Promise.all([
      deliverDueMessages(deps),
      deliverDueMessages(other),
      deliverDueMessages(deps),
      deliverDueMessages(other),
    ]);
    other.mailer.close();
    expect(reports.reduce((sum, report) => sum + report.sent, 0)).toBe(15);
    expect(smtp.received).toHaveLength(15);
    const rows = await app.db.outboxMessage.findMany();
    expect(rows.every((row) => row.status === 'sent' && row.attempts === 1)).toBe(true);
  });

  it('leave a message claimed by another instance alone until its lease ends', async () => {
    const lead = await createLead({}, quiet.id);
    const [row] = await outboxOf(lead.id);
    const leaseEnd = new Date(app.clock.now().getTime() + 2 * MINUTE);
    await app.db.outboxMessage.update({ where: { id: row?.id }, data: { locked_until: leaseEnd, attempts: 1 } });
    expect(await deliverDueMessages(deps)).toEqual({ sent: 0, retried: 0, failed: 0 });
    // The other instance died: once the lease ends the message is claimed again.
    app.clock.set(leaseEnd);
    expect(await deliverDueMessages(deps)).toEqual({ sent: 1, retried: 0, failed: 0 });
    expect((await outboxOf(lead.id))[0]).toMatchObject({ status: 'sent', attempts: 2 });
  });
});

describe('the worker', () => {
  it('polls, delivers over SMTP_URL, and stops cleanly', async () => {
    const lead = await createLead({}, quiet.id);
    const worker = startOutboxWorker({
      db: app.db,
      config: { smtpUrl: smtp.url, mailFrom: app.config.mailFrom, engine: app.config.engine },
      logger: silent,
      now: app.clock.now,
      intervalMs: 20,
    });
    const deadline = Date.now() + 5_000;
    while (smtp.received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await worker.stop();
    expect(smtp.received.map((mail) => mail.to)).toEqual([[`buyer.${n}@example.com`]]);
    expect((await outboxOf(lead.id))[0]?.status).toBe('sent');
    // Stopped: a new due message is left for the next worker.
    const later = await createLead({}, quiet.id);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await outboxOf(later.id))[0]?.status).toBe('pending');
  });

  it('on stop() finishes the message it is sending and claims no more of its batch', async () => {
    for (let i = 0; i < 3; i += 1) await createLead({}, quiet.id);
    const due = await app.db.outboxMessage.findMany({
      where: { status: 'pending', due_at: { lte: app.clock.now() } },
      orderBy: { id: 'asc' },
    });
    expect(due.length).toBeGreaterThanOrEqual(3);
    // A mailer that holds the first message until the test lets it go: stop() is called mid-send.
    const sentTo: string[] = [];
    let sending: () => void = () => undefined;
    const firstSendStarted = new Promise<void>((resolve) => (sending = resolve));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const mailer: Mailer = {
      async send(mail) {
        sentTo.push(mail.to);
        sending();
        await released;
      },
      close() {},
    };
    const worker = startOutboxWorker({
      db: app.db,
      config: { smtpUrl: null, mailFrom: app.config.mailFrom, engine: app.config.engine },
      logger: silent,
      now: app.clock.now,
      mailer,
      intervalMs: 20,
    });
    await firstSendStarted;
    const stopped = worker.stop();
    release();
    await stopped;

    expect(sentTo).toHaveLength(1);
    const after = await app.db.outboxMessage.findMany({ where: { id: { in: due.map((row) => row.id) } }, orderBy: { id: 'asc' } });
    const [held, ...rest] = after;
    // The message in hand is finished (sent, lease released); the rest of the batch was never claimed.
    expect(held).toMatchObject({ id: due[0]?.id, status: 'sent', locked_until: null, recipient: sentTo[0] });
    expect(rest).toEqual(due.slice(1));
  });

  it('without SMTP_URL writes each message to the log and counts it sent', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write: (chunk, _encoding, done) => {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const lead = await createLead({}, quiet.id);
    const report = await deliverDueMessages({
      ...deps,
      logger,
      mailer: createMailer({ smtpUrl: null, mailFrom: 'from@example.com' }, logger),
    });
    expect(report).toEqual({ sent: 1, retried: 0, failed: 0 });
    const logged = lines.map((line) => JSON.parse(line)).find((entry) => entry.mail);
    expect(logged.mail).toMatchObject({
      from: 'from@example.com',
      to: `buyer.${n}@example.com`,
      subject: `Thank you for your enquiry with ${quiet.name}`,
    });
    expect(logged.mail.text).toContain(`lead #${lead.id}`);
    expect((await outboxOf(lead.id))[0]?.status).toBe('sent');
  });

  it('waits 1, 2, 4 … minutes between attempts, capped at an hour', () => {
    expect([1, 2, 3, 4, 6, 7, 10].map((attempts) => retryDelayMs(attempts) / MINUTE)).toEqual([1, 2, 4, 8, 32, 60, 60]);
  });
});
