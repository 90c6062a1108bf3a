// Outbound webhooks delivered for real (docs/webhooks.md): a local HTTP receiver verifies every
// delivery with the `standardwebhooks` package; it fails on purpose and the delivery is retried
// under the same webhook-id; rotation signs with both secrets; the payload is the record as the
// subscribing key reads it (personal data masked without read:personal_data: a lead's, a phone
// call's caller); another dealership's events are never sent; the SSRF guard refuses loopback
// addresses unless allowed; a delivery failing past the retry window fails for good and disables
// its subscription; one record's deliveries go out in order; each POST is a CLIENT span whose
// traceparent the receiver gets. The worker runs in rounds here, on a clock the test moves.
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../src/config/index.ts';
import { createPayloadRenderer } from '../src/gateway/webhook-payloads.ts';
import { allowedAddresses } from '../src/domain/webhook-address.ts';
import { postWebhook, type WebhookPost, type WebhookResolver } from '../src/notifications/webhook-sender.ts';
import { deliverDueWebhooks, type WebhookWorkerDeps } from '../src/notifications/webhook-worker.ts';
import { getSchema } from '../src/schema/index.ts';
import { startTracing, tracer, type Tracing } from '../src/telemetry/tracing.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey, makeLocation, makeUser, uniqueNumber } from './support/fixtures.ts';
import { WEBHOOK_DISABLED_NOTICE } from '../src/notifications/outbox.ts';
import { samplePayload } from './support/fixtures-leads.ts';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.ts';

let app: TestApp;
let receiver: WebhookReceiver;
let north: { id: number };
let south: { id: number };
/** Real time plus what the test moves on: the receiver's verify checks the timestamp against real time. */
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);
/** Moves the worker's clock and the app's (which stamps rotations and events) together. */
function advance(ms: number): void {
  offsetMs += ms;
  app.clock.set(clock());
}
let writer: string;
let reader: string;
let personalReader: string;
let southReader: string;

function workerDeps(config: Partial<Config> = {}): WebhookWorkerDeps {
  const workerConfig = { ...app.config, webhookAllowedAddresses: ['127.0.0.1'], ...config };
  const deps = instanceDeps({ config: workerConfig, db: app.db, now: clock });
  return {
    db: app.db,
    config: workerConfig,
    logger: pino({ level: 'silent' }),
    now: clock,
    render: createPayloadRenderer(deps, getSchema()),
  };
}

const round = (config: Partial<Config> = {}) => deliverDueWebhooks(workerDeps(config));

beforeAll(async () => {
  // Development mode: http receivers are allowed (production calls https only); 127.0.0.1 is on the allow-list.
  app = await createTestApp({ mode: 'development', webhookAllowedAddresses: ['127.0.0.1'] });
  app.clock.set(clock());
  receiver = await startWebhookReceiver();
  north = await makeDealership(app.db);
  south = await makeDealership(app.db);
  writer = (await makeKey(app.db, { permissions: ['create:lead', 'update:car', 'reserve:car'], dealershipIds: [north.id] })).key;
  reader = (await makeKey(app.db, { permissions: ['manage:webhook', 'read:lead', 'read:car'], dealershipIds: [north.id] })).key;
  personalReader = (
    await makeKey(app.db, { permissions: ['manage:webhook', 'read:lead', 'read:personal_data'], dealershipIds: [north.id] })
  ).key;
  southReader = (await makeKey(app.db, { permissions: ['manage:webhook', 'read:lead'], dealershipIds: [south.id] })).key;
});

afterAll(async () => {
  await receiver.close();
});

async function subscribe(key: string, events: string[], path: string): Promise<{ id: number; secret: string }> {
  const response = await app.request('/api/v1/webhook_subscriptions', {
    method: 'POST',
    key,
    json: { subscription: { url: receiver.url(path), events } },
  });
  expect(response.status).toBe(201);
  const body = await response.json();
  return { id: body.subscription.id, secret: body.secret };
}

async function createLead(overrides: Record<string, unknown> = {}): Promise<number> {
  const response = await app.request('/api/v1/leads', {
    method: 'POST',
    key: writer,
    json: { lead: samplePayload(north.id, { name: 'Jane', email: 'jane@example.com', ...overrides }) },
  });
  expect(response.status).toBe(201);
  return (await response.json()).lead.id;
}

const at = (path: string) => receiver.received.filter((received) => received.path === path);

/** Deliveries still pending, for a round to be repeated until none is due. */
async function drain(config: Partial<Config> = {}): Promise<void> {
  for (let i = 0; i < 10; i += 1) {
    const report = await round(config);
    if (report.delivered + report.retried + report.failed + report.skipped === 0) return;
  }
}

describe('a delivery', () => {
  it('fails on purpose, is retried with the same webhook-id after the backoff, and verifies with standardwebhooks', async () => {
    const { id, secret } = await subscribe(reader, ['lead.created'], '/retry');
    receiver.secrets = [secret];
    receiver.failNext = [503];
    const leadId = await createLead();
    expect(await round()).toMatchObject({ retried: 1, delivered: 0 });
    expect(at('/retry')).toHaveLength(1);
    expect(await round(), 'not due again before its backoff').toMatchObject({ retried: 0, delivered: 0 });
    const pending = await app.db.webhookDelivery.findFirstOrThrow({ where: { subscription_id: id } });
    // 30 s ± 25 % after the first attempt.
    expect(pending.due_at.getTime() - clock().getTime()).toBeGreaterThan(20_000);
    expect(pending.due_at.getTime() - clock().getTime()).toBeLessThanOrEqual(37_500);
    advance(40_000);
    expect(await round()).toMatchObject({ delivered: 1 });
    const [first, second] = at('/retry');
    expect(first?.answered).toBe(503);
    expect(second?.answered).toBe(204);
    expect(second?.verifiedWith).toEqual([0]);
    expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
    expect(second?.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    const payload = JSON.parse(second?.body ?? '{}');
    expect(payload).toMatchObject({ type: 'lead.created', timestamp: expect.any(String), data: { id: leadId, dealership_id: north.id } });
    // Without read:personal_data the record's personal data is null, as the graph answers this key.
    expect(payload.data.name).toBeNull();
    expect(payload.data.email).toBeNull();

    const log = await (await app.request(`/api/v1/webhook_subscriptions/${id}/deliveries`, { key: reader })).json();
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      status: 'delivered',
      attempts: 2,
      last_status: 204,
      next_attempt_at: null,
      event_type: 'lead.created',
      record_id: leadId,
      message_id: first?.headers['webhook-id'],
    });
    expect(log[0].attempt_log.map((entry: { status: number }) => entry.status)).toEqual([503, 204]);
    expect(log[0].attempt_log[0].error).toBe('the receiver answered 503');
    await app.request(`/api/v1/webhook_subscriptions/${id}/disable`, { method: 'POST', key: reader });
  });

  it('carries personal data to a key that reads it, and never another dealership’s events', async () => {
    const personal = await subscribe(personalReader, ['lead.created'], '/personal');
    const southern = await subscribe(southReader, ['lead.created'], '/south');
    receiver.secrets = [personal.secret, southern.secret];
    const leadId = await createLead({ name: 'Ada', email: 'ada@example.com' });
    await drain();
    const [delivery] = at('/personal');
    expect(JSON.parse(delivery?.body ?? '{}').data).toMatchObject({ id: leadId, name: 'Ada', email: 'ada@example.com' });
    expect(at('/south')).toEqual([]);
    expect(await app.db.webhookDelivery.count({ where: { subscription_id: southern.id } })).toBe(0);
    await app.request(`/api/v1/webhook_subscriptions/${personal.id}/disable`, { method: 'POST', key: personalReader });
    await app.request(`/api/v1/webhook_subscriptions/${southern.id}/disable`, { method: 'POST', key: southReader });
  });

  it('carries a phone call as the key reads it: the caller’s number null without read:personal_data', async () => {
    const location = await makeLocation(app.db, north.id, { tracking_phone: '+61293745000' });
    const provider = (await makeKey(app.db, { permissions: ['create:phone_call'], dealershipIds: [north.id] })).key;
    const masked = await subscribe(reader, ['phone_call.created'], '/call-masked');
    const personal = await subscribe(personalReader, ['phone_call.created'], '/call-personal');
    receiver.secrets = [masked.secret, personal.secret];
    const reported = await app.request('/api/v1/webhooks/phone_calls_webhooks/generic', {
      method: 'POST',
      key: provider,
      json: { called_number: '+61293745000', caller_number: '0412 555 010', call_id: 'delivered-call' },
    });
    expect(reported.status).toBe(202);
    const callId = ((await reported.json()) as { id: number }).id;
    const call = await app.db.phoneCall.findUniqueOrThrow({ where: { id: callId } });
    await drain();
    // The fields docs/webhooks.md documents for phone_call.created, and no others.
    const data = {
      id: callId,
      dealership_id: north.id,
      location_id: location.id,
      car_id: null,
      called_number: '+61293745000',
      caller_number: null,
      received_at: call.received_at.toISOString(),
    };
    expect(at('/call-masked').map((received) => JSON.parse(received.body))).toEqual([
      { type: 'phone_call.created', timestamp: expect.any(String), data },
    ]);
    expect(JSON.parse(at('/call-personal')[0]?.body ?? '{}').data).toEqual({ ...data, caller_number: '+61412555010' });
    await app.request(`/api/v1/webhook_subscriptions/${masked.id}/disable`, { method: 'POST', key: reader });
    await app.request(`/api/v1/webhook_subscriptions/${personal.id}/disable`, { method: 'POST', key: personalReader });
  });

  it('is signed with the old and the new secret during a rotation, then with the new one alone', async () => {
    const { id, secret: old } = await subscribe(reader, ['lead.created'], '/rotate');
    const rotated = await (await app.request(`/api/v1/webhook_subscriptions/${id}/rotate_secret`, { method: 'POST', key: reader })).json();
    receiver.secrets = [old, rotated.secret];
    await createLead();
    await drain();
    const [during] = at('/rotate');
    expect(during?.headers['webhook-signature']?.toString().split(' ')).toHaveLength(2);
    expect(during?.verifiedWith).toEqual([0, 1]);
    // Past the grace period only the new secret signs (the grace period is ended in the row: the
    // receiver's verify checks timestamps against real time, so the clock is not moved a day on).
    await app.db.webhookSubscription.update({ where: { id }, data: { previous_secret_until: new Date(clock().getTime() - 1_000) } });
    await createLead();
    await drain();
    const after = at('/rotate')[1];
    expect(after?.headers['webhook-signature']?.toString().split(' ')).toHaveLength(1);
    expect(after?.verifiedWith).toEqual([1]);
    await app.request(`/api/v1/webhook_subscriptions/${id}/disable`, { method: 'POST', key: reader });
  });

  it('goes out in event order per record: a later event of the car waits for the earlier one', async () => {
    const { id, secret } = await subscribe(reader, ['car.updated', 'car.reserved'], '/order');
    receiver.secrets = [secret];
    const car = await makeCar(app.db, north.id);
    const update = { stocknum: car.stocknum, dealership_id: north.id, make: 'Toyota', model: 'Corolla', year: 2021 };
    expect((await app.request(`/api/cars/${car.id}`, { method: 'PUT', key: writer, json: { car: update } })).status).toBe(200);
    expect((await app.request(`/api/v1/cars/${car.id}/reserve?reserved=true`, { method: 'PUT', key: writer })).status).toBe(200);
    receiver.failNext = [500];
    await round();
    expect(at('/order').map((received) => JSON.parse(received.body).type)).toEqual(['car.updated']);
    advance(40_000);
    await drain();
    expect(at('/order').map((received) => JSON.parse(received.body).type)).toEqual(['car.updated', 'car.updated', 'car.reserved']);
    expect(JSON.parse(at('/order')[2]?.body ?? '{}').data).toMatchObject({ id: car.id, reserved: true });
    await app.request(`/api/v1/webhook_subscriptions/${id}/disable`, { method: 'POST', key: reader });
  });

  it('is redelivered on request with the same webhook-id', async () => {
    const { id, secret } = await subscribe(reader, ['lead.created'], '/again');
    receiver.secrets = [secret];
    await createLead();
    await drain();
    const [delivery] = await app.db.webhookDelivery.findMany({ where: { subscription_id: id } });
    const response = await app.request(`/api/v1/webhook_subscriptions/${id}/deliveries/${delivery?.id}/redeliver`, {
      method: 'POST',
      key: reader,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'pending' });
    await drain();
    const [first, second] = at('/again');
    expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
    expect(second?.verifiedWith).toEqual([0]);
    await app.request(`/api/v1/webhook_subscriptions/${id}/disable`, { method: 'POST', key: reader });
  });
});

describe('fairness between subscriptions', () => {
  async function updateCar(car: { id: number; stocknum: string }, year: number): Promise<void> {
    const update = { stocknum: car.stocknum, dealership_id: north.id, make: 'Toyota', model: 'Corolla', year };
    expect((await app.request(`/api/cars/${car.id}`, { method: 'PUT', key: writer, json: { car: update } })).status).toBe(200);
  }

  async function disable(...ids: number[]): Promise<void> {
    for (const id of ids) await app.request(`/api/v1/webhook_subscriptions/${id}/disable`, { method: 'POST', key: reader });
    await drain();
  }

  it("a subscription's backlog does not delay another's delivery beyond one round: a round takes the subscriptions in turn", async () => {
    await drain();
    const backlog = await subscribe(reader, ['lead.created'], '/backlog');
    const other = await subscribe(reader, ['car.updated'], '/other');
    receiver.secrets = [backlog.secret, other.secret];
    const batchSize = 4;
    // The backlog is older than the other subscription's one delivery, and longer than a round.
    for (let lead = 0; lead < batchSize * 2; lead += 1) await createLead();
    advance(1_000);
    await updateCar(await makeCar(app.db, north.id), 2020);
    const report = await deliverDueWebhooks({ ...workerDeps(), policy: { batchSize } });
    expect(report.delivered).toBe(batchSize);
    expect(at('/other')).toHaveLength(1);
    expect(at('/backlog').length).toBeGreaterThanOrEqual(1);
    await drain();
    expect(at('/backlog')).toHaveLength(batchSize * 2);
    await disable(backlog.id, other.id);
  });

  it("a record's deliveries held back behind its retry hold back neither the subscription's other records nor other subscriptions", async () => {
    await drain();
    const held = await subscribe(reader, ['car.updated'], '/held');
    const other = await subscribe(reader, ['lead.created'], '/not-held');
    receiver.secrets = [held.secret, other.secret];
    const car = await makeCar(app.db, north.id);
    await updateCar(car, 1960);
    receiver.failNext = [500];
    await round();
    expect(at('/held')).toHaveLength(1);
    // More later events of that car than a page of candidates, all due, all waiting for its retry.
    for (let year = 1961; year <= 2015; year += 1) await updateCar(car, year);
    const another = await makeCar(app.db, north.id);
    await updateCar(another, 2020);
    await createLead();
    await round();
    expect(at('/not-held')).toHaveLength(1);
    expect(at('/held').map((received) => JSON.parse(received.body).data.id)).toEqual([car.id, another.id]);
    await disable(held.id, other.id);
  });
});

describe('failing for good', () => {
  it('after the retry window the delivery fails, the subscription is disabled with the reason, and its dealership’s users are told', async () => {
    const user = await makeUser(app.db, [north.id], { email: `webhooks.${uniqueNumber()}@example.com` });
    const { id, secret } = await subscribe(reader, ['lead.created'], '/down');
    receiver.secrets = [secret];
    receiver.failNext = [500, 500, 500];
    await createLead();
    await round();
    advance(12 * 3_600_000);
    await round();
    advance(13 * 3_600_000);
    await round();
    const delivery = await app.db.webhookDelivery.findFirstOrThrow({ where: { subscription_id: id } });
    expect(delivery).toMatchObject({ status: 'failed', attempts: 3, last_status: 500 });
    const [subscription] = (await (await app.request('/api/v1/webhook_subscriptions', { key: reader })).json()).filter(
      (item: { id: number }) => item.id === id,
    );
    expect(subscription).toMatchObject({
      enabled: false,
      disabled_reason: expect.stringContaining('disabled after a delivery failed for 24 h'),
    });
    // One notice per user of the dealership, by e-mail through the outbox, queued with the disabling.
    const notices = await app.db.outboxMessage.findMany({ where: { kind: WEBHOOK_DISABLED_NOTICE, recipient: user.email } });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ status: 'pending', lead_id: null, subject: `Webhook subscription #${id} was disabled` });
    expect(notices[0]!.body).toContain(`/api/v1/webhook_subscriptions/${id}/enable`);
    expect(notices[0]!.body).toContain('disabled after a delivery failed for 24 h');
    // A disabled subscription is enqueued nothing more, and told of once.
    await createLead();
    await round();
    expect(await app.db.webhookDelivery.count({ where: { subscription_id: id } })).toBe(1);
    expect(await app.db.outboxMessage.count({ where: { kind: WEBHOOK_DISABLED_NOTICE, recipient: user.email } })).toBe(1);
  });
});

describe('where webhooks may go', () => {
  it('refuses a loopback receiver, by address, by a name resolving to it, or as localhost, unless WEBHOOK_ALLOWED_ADDRESSES lists it', async () => {
    const loopback = 'a private, loopback, link-local or reserved address (127.0.0.0/8 Loopback, RFC 1122)';
    // A name the test resolves (test/webhook-addresses.test.ts walks every range this way).
    const resolve: WebhookResolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const viaResolver = (post: WebhookPost) => postWebhook(post, { mode: 'development', allowed: allowedAddresses([]), resolve });
    const cases = [
      { path: '/ssrf-address', host: null, send: undefined, error: `refused: the URL must not point at 127.0.0.1, which is ${loopback}` },
      {
        path: '/ssrf-name',
        host: 'receiver.hooks.test',
        send: viaResolver,
        error: `refused: receiver.hooks.test resolves to 127.0.0.1 is ${loopback}`,
      },
      {
        path: '/ssrf-localhost',
        host: 'localhost.',
        send: undefined,
        error: 'refused: the URL must not be a loopback host (localhost or a name under it)',
      },
    ];
    for (const { path, host, send, error } of cases) {
      const { id, secret } = await subscribe(reader, ['lead.created'], path);
      receiver.secrets = [secret];
      if (host) await app.db.webhookSubscription.update({ where: { id }, data: { url: `http://${host}:${receiver.port}${path}` } });
      await createLead();
      await deliverDueWebhooks({ ...workerDeps({ webhookAllowedAddresses: [] }), ...(send ? { send } : {}) });
      expect(at(path)).toEqual([]);
      const delivery = await app.db.webhookDelivery.findFirstOrThrow({ where: { subscription_id: id }, include: { attempt_log: true } });
      expect(delivery.status).toBe('pending');
      expect(delivery.attempt_log[0]?.status).toBeNull();
      expect(delivery.attempt_log[0]?.error, path).toBe(error);
      await app.request(`/api/v1/webhook_subscriptions/${id}/disable`, { method: 'POST', key: reader });
    }
  });

  it('refuses a stored URL holding CR/LF (made before they were refused): the URL called would not be the one stored', async () => {
    const { id, secret } = await subscribe(reader, ['lead.created'], '/crlf');
    receiver.secrets = [secret];
    await app.db.webhookSubscription.update({ where: { id }, data: { url: `${receiver.url('/crlf')}\r\nHost: evil` } });
    await createLead();
    await round();
    expect(at('/crlf')).toEqual([]);
    expect(at('/crlfHost:%20evil')).toEqual([]);
    const delivery = await app.db.webhookDelivery.findFirstOrThrow({ where: { subscription_id: id }, include: { attempt_log: true } });
    expect(delivery.attempt_log[0]?.error).toMatch(/^refused: the URL must not contain control characters \(U\+000D at position \d+\)$/);
    await app.request(`/api/v1/webhook_subscriptions/${id}/disable`, { method: 'POST', key: reader });
  });

  it('calls only https in production mode', async () => {
    const { id, secret } = await subscribe(reader, ['lead.created'], '/production');
    receiver.secrets = [secret];
    await createLead();
    await round({ mode: 'production' });
    expect(at('/production')).toEqual([]);
    const delivery = await app.db.webhookDelivery.findFirstOrThrow({ where: { subscription_id: id }, include: { attempt_log: true } });
    expect(delivery.attempt_log[0]?.error).toBe('refused: the URL must be an https URL');
    await app.request(`/api/v1/webhook_subscriptions/${id}/disable`, { method: 'POST', key: reader });
  });
});

describe('a delivery’s trace', () => {
  let exporter: InMemorySpanExporter;
  let tracing: Tracing;

  beforeAll(async () => {
    exporter = new InMemorySpanExporter();
    tracing = (await startTracing(null, { exporter }))!;
  });

  afterAll(async () => {
    await tracing.shutdown();
  });

  it('is a CLIENT span under the active context, sent on as the traceparent, with the HTTP client conventions and no secret in url.full', async () => {
    await drain();
    const { id, secret } = await subscribe(reader, ['lead.created'], '/traced');
    receiver.secrets = [secret];
    await app.db.webhookSubscription.update({
      where: { id },
      data: { url: `${receiver.url('/traced')}?token=s3cret-value&tenant=42#part` },
    });
    await createLead();
    // Answered as told: the clock has moved a day on in this file, past what a receiver's verify accepts.
    receiver.failNext = [503, 204];
    exporter.reset();
    const parent = tracer().startSpan('webhook round');
    await context.with(trace.setSpan(context.active(), parent), () => round());
    advance(40_000);
    await context.with(trace.setSpan(context.active(), parent), () => round());
    parent.end();

    const sent = at('/traced?token=s3cret-value&tenant=42');
    expect(sent.map((received) => received.answered)).toEqual([503, 204]);
    const spans = exporter
      .getFinishedSpans()
      .filter((span) => span.kind === SpanKind.CLIENT && String(span.attributes['url.full']).includes('/traced'));
    expect(spans).toHaveLength(2);
    for (const [index, span] of spans.entries()) {
      expect(span.name).toBe('POST');
      expect(span.spanContext().traceId).toBe(parent.spanContext().traceId);
      expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
      // The receiver's trace continues from the CLIENT span itself.
      expect(sent[index]?.headers.traceparent).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
      expect(JSON.stringify(span.attributes)).not.toContain('s3cret-value');
    }
    const [failed, delivered] = spans;
    expect(delivered?.attributes).toEqual({
      'http.request.method': 'POST',
      'url.full': `http://127.0.0.1:${receiver.port}/traced?token=REDACTED&tenant=REDACTED`,
      'server.address': '127.0.0.1',
      'server.port': receiver.port,
      'network.peer.address': '127.0.0.1',
      'http.response.status_code': 204,
    });
    expect(delivered?.status.code).toBe(SpanStatusCode.UNSET);
    expect(failed?.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503' });
    expect(failed?.status.code).toBe(SpanStatusCode.ERROR);
    await app.request(`/api/v1/webhook_subscriptions/${id}/disable`, { method: 'POST', key: reader });
  });

  it('records a refused attempt as a failed CLIENT span, and sends nothing', async () => {
    exporter.reset();
    await expect(
      postWebhook({ url: 'https://[2002:7f00:1::]/hooks', headers: {}, body: '{}' }, { mode: 'production', allowed: allowedAddresses([]) }),
    ).rejects.toThrow(/^refused: the URL must not point at 2002:7f00:1::/);
    const [span] = exporter.getFinishedSpans().filter((finished) => finished.kind === SpanKind.CLIENT);
    expect(span?.attributes).toMatchObject({ 'server.address': '2002:7f00:1::', 'server.port': 443, 'error.type': 'refused' });
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
  });
});
