// OpenTelemetry traces (src/telemetry/tracing.ts), with an in-process span exporter installed the way
// the service installs its own: the span tree of one REST call (request ◄ operation ◄ SQL statements)
// under the caller's traceparent, the traceparent of the answer, a notification's e-mail carrying the
// trace of the request that queued it; with traces off, no SDK module is loaded
// (test/module-boundaries.test.ts checks the start-up bundle).
import { createServer, get } from 'node:http';
import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { createDb, type Db } from '../src/db/client.ts';
import { createMailer } from '../src/notifications/mailer.ts';
import { deliverDueMessages } from '../src/notifications/worker.ts';
import { startTracing, type Tracing } from '../src/telemetry/tracing.ts';
import { createApp, type Yoga } from '../src/yoga.ts';
import { createTestApp, instanceDeps, testSettings, type TestApp } from './support/app.ts';
import { freePort, projectDir, startBundledService } from './support/processes.ts';
import { onFileEnd } from './support/cleanup.ts';
import { bundleOptions } from '../scripts/build.mjs';
import { makeCar, makeDealership, makeKey } from './support/fixtures.ts';
import { samplePayload, startSmtpServer, type TestSmtpServer } from './support/fixtures-leads.ts';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const CAR_SLUG = 'traced-car-xq7';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

let app: TestApp;
let exporter: InMemorySpanExporter;
let tracing: Tracing;
let tracedDb: Db;
let traced: Yoga;
let smtp: TestSmtpServer;
let dealershipId: number;
let carId: number;
let key: string;

beforeAll(async () => {
  app = await createTestApp();
  exporter = new InMemorySpanExporter();
  tracing = (await startTracing(null, { exporter }))!;
  tracedDb = createDb(app.config.databaseUrl, { traced: true });
  traced = createApp(instanceDeps({ config: app.config, db: tracedDb, now: app.clock.now }));
  smtp = await startSmtpServer();
  const dealership = await makeDealership(app.db);
  dealershipId = dealership.id;
  carId = (await makeCar(app.db, dealershipId, { slug: CAR_SLUG })).id;
  key = (await makeKey(app.db, { permissions: ['read:car', 'create:lead'] })).key;
});

afterAll(async () => {
  await tracing.shutdown();
  await tracedDb.$disconnect();
  await smtp.close();
});

const spanId = (span: ReadableSpan): string => span.spanContext().spanId;
const parentId = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

describe('the span tree of one REST call', () => {
  it('is request ◄ operation ◄ SQL statements, under the caller’s traceparent, and the answer carries the trace on', async () => {
    exporter.reset();
    const response = await traced.fetch(`http://gateway.test/api/v1/cars/${CAR_SLUG}/performance.json`, {
      headers: { authorization: `Bearer ${key}`, traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    });
    expect(response.status).toBe(200);
    const spans = exporter.getFinishedSpans();

    const request = spans.find((span) => span.name === 'GET /api/v1/cars/{id}/performance.json');
    expect(request, spans.map((span) => span.name).join(', ')).toBeDefined();
    expect(request!.spanContext().traceId).toBe(CALLER_TRACE);
    expect(parentId(request!)).toBe(CALLER_SPAN);
    expect(request!.kind).toBe(1); // SpanKind.SERVER
    expect(request!.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/api/v1/cars/{id}/performance.json',
      'url.path': `/api/v1/cars/${CAR_SLUG}/performance.json`,
      'http.response.status_code': 200,
      'request.id': response.headers.get('request-id'),
    });

    const operation = spans.find((span) => parentId(span) === spanId(request!) && span.attributes['graphql.operation.type'] === 'query');
    expect(operation, 'an operation span under the request span').toBeDefined();
    expect(operation!.attributes['graphql.operation.name']).toMatch(/car_performance/);
    expect(operation!.status.code).not.toBe(2); // not ERROR

    const statements = spans.filter((span) => parentId(span) === spanId(operation!));
    expect(statements.length, 'SQL statement spans under the operation span').toBeGreaterThan(0);
    // Named for the statement and its table, as Prisma quotes it on either engine.
    expect(statements.map((statement) => statement.name)).toContain('SELECT cars');
    for (const statement of statements) {
      expect(statement.attributes['db.system.name']).toBe(app.config.engine);
      expect(String(statement.attributes['db.query.text'])).toMatch(/^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)/i);
      expect(statement.spanContext().traceId).toBe(CALLER_TRACE);
    }
    // Prisma sends placeholders: the slug asked for is in no statement's text.
    expect(statements.map((statement) => String(statement.attributes['db.query.text'])).join(' ')).not.toContain(CAR_SLUG);

    const [, traceId, answerSpan] = TRACEPARENT.exec(response.headers.get('traceparent') ?? '') ?? [];
    expect(traceId).toBe(CALLER_TRACE);
    expect(answerSpan).toBe(spanId(request!));
  });

  it('starts a new trace without a traceparent, and marks an error answer on the operation span', async () => {
    exporter.reset();
    const response = await traced.fetch('http://gateway.test/api/v1/cars/2000000000/performance.json', { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(404);
    const spans = exporter.getFinishedSpans();
    const request = spans.find((span) => span.name === 'GET /api/v1/cars/{id}/performance.json');
    expect(request).toBeDefined();
    expect(parentId(request!)).toBeUndefined();
    expect(request!.attributes['http.response.status_code']).toBe(404);
    const operation = spans.find((span) => parentId(span) === spanId(request!) && span.attributes['graphql.operation.type'] === 'query');
    expect(operation!.status.code).toBe(2); // ERROR
    expect(response.headers.get('traceparent')).toMatch(TRACEPARENT);
  });

  it('names a GraphQL request POST /graphql, and its operation by name', async () => {
    exporter.reset();
    const response = await traced.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: `query CarPage { car(id: "${carId}") { id } }` }),
    });
    expect(response.status).toBe(200);
    const spans = exporter.getFinishedSpans();
    const request = spans.find((span) => span.name === 'POST /graphql');
    const operation = spans.find((span) => span.name === 'query CarPage');
    expect(request).toBeDefined();
    expect(parentId(operation!)).toBe(spanId(request!));
    expect(spans.some((span) => parentId(span) === spanId(operation!) && span.attributes['db.system.name'])).toBe(true);
  });
});

describe('a notification', () => {
  it('stores the trace of the request that queued it, and its e-mail carries it in a traceparent header', async () => {
    exporter.reset();
    const response = await traced.fetch('http://gateway.test/api/v1/leads', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      body: JSON.stringify({ lead: samplePayload(dealershipId, { email: 'traced.buyer@example.com' }) }),
    });
    expect(response.status).toBe(201);
    const leadId = ((await response.json()) as { lead: { id: number } }).lead.id;
    const queued = await app.db.outboxMessage.findMany({ where: { lead_id: leadId } });
    expect(queued.length).toBeGreaterThan(0);
    for (const message of queued) expect(message.traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));

    const silent = pino({ level: 'silent' });
    const mailer = createMailer({ smtpUrl: smtp.url, mailFrom: app.config.mailFrom }, silent);
    try {
      const report = await deliverDueMessages({ db: tracedDb, mailer, engine: app.config.engine, mailFrom: app.config.mailFrom, logger: silent, now: app.clock.now });
      expect(report.sent).toBe(queued.length);
    } finally {
      mailer.close();
    }
    const sends = exporter.getFinishedSpans().filter((span) => span.name.startsWith('outbox send'));
    expect(sends).toHaveLength(queued.length);
    for (const mail of smtp.received.filter((received) => received.raw.includes(`#${leadId}`))) {
      const [, traceId, mailSpan] = /^traceparent:\s*00-([0-9a-f]{32})-([0-9a-f]{16})-01\s*$/im.exec(mail.raw) ?? [];
      expect(traceId, 'the e-mail continues the request’s trace').toBe(CALLER_TRACE);
      const send = sends.find((span) => spanId(span) === mailSpan);
      expect(send, 'the header names the send span').toBeDefined();
      // The send span is a child of the span stored with the message.
      expect(queued.map((message) => message.traceparent!.split('-')[2])).toContain(parentId(send!));
    }
  });
});

describe('the service process (the production bundle) with OTEL_EXPORTER_OTLP_ENDPOINT', { timeout: 120_000 }, () => {
  it('posts its spans to the collector as OTLP/HTTP JSON, and SIGTERM sends the last batch before the exit', async () => {
    const received: { name: string; traceId: string; parentSpanId?: string }[] = [];
    const collector = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        expect(request.url).toBe('/v1/traces');
        const payload = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: { name: string; traceId: string; parentSpanId?: string }[] }[] }[] };
        for (const resource of payload.resourceSpans) for (const scope of resource.scopeSpans) received.push(...scope.spans);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const collectorPort = (collector.address() as AddressInfo).port;
    // The production bundle, as `npm start` runs it: the SDK is loaded the way the bundle loads it.
    const outdir = path.join(projectDir, `dist-tracing-test-${process.pid}`);
    const esbuild = await import('esbuild');
    await esbuild.build({ ...bundleOptions(path.join(outdir, 'src')), logLevel: 'silent' });
    onFileEnd(() => rm(outdir, { recursive: true, force: true }));
    const port = await freePort();
    const service = await startBundledService(path.join(outdir, 'src', 'index.js'), [], {
      ...testSettings,
      LOG_LEVEL: 'info',
      DATABASE_URL: app.config.databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collectorPort}`,
      // Longer than any request here can take on a loaded machine: only the stop can send the batch.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    });
    try {
      // No keep-alive connection is left open, so the stop follows at once.
      const status = await new Promise<number | undefined>((resolve, reject) => {
        get(
          `http://127.0.0.1:${port}/api/v1/cars/${carId}/performance.json`,
          { agent: false, headers: { authorization: `Bearer ${key}`, traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode));
          },
        ).on('error', reject);
      });
      expect(status).toBe(200);
      // The batch would wait ten minutes; the stop sends it at once.
      expect(received).toEqual([]);
    } finally {
      expect(await service.stop()).toBe(0);
      await new Promise<void>((resolve) => collector.close(() => resolve()));
    }
    const request = received.find((span) => span.name === 'GET /api/v1/cars/{id}/performance.json');
    expect(request, JSON.stringify(received.map((span) => span.name))).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN });
    expect(received.some((span) => span.name.startsWith('SELECT'))).toBe(true);
  });
});

describe('with traces off', () => {
  it('startTracing loads nothing and answers null', async () => {
    expect(await startTracing(null)).toBeNull();
  });
});
