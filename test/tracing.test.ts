// OpenTelemetry traces (src/telemetry/tracing.ts), with an in-process span exporter installed the way
// the service installs its own: the span tree of one REST call (request ◄ operation ◄ SQL statements)
// under the caller's traceparent, the traceparent of the answer, a notification's e-mail carrying the
// trace of the request that queued it; with traces off, no SDK module is loaded
// (test/module-boundaries.test.ts checks the start-up bundle).
import { createServer, request } from 'node:http';
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
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
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
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
      headers: { authorization: `Bearer ${key}`, traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, 'user-agent': 'tracing-test/1.0' },
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
      'url.scheme': 'http',
      'server.address': 'gateway.test',
      'server.port': 80,
      'user_agent.original': 'tracing-test/1.0',
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
    const response = await traced.fetch('http://gateway.test/api/v1/cars/2000000000/performance.json', {
      headers: { authorization: `Bearer ${key}` },
    });
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
  it('is sent in a PRODUCER span of its own trace, linked to the request span that queued it, and its e-mail carries the send span', async () => {
    exporter.reset();
    const response = await traced.fetch('http://gateway.test/api/v1/leads', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      body: JSON.stringify({ lead: samplePayload(dealershipId, { email: 'traced.buyer@example.com' }) }),
    });
    expect(response.status).toBe(201);
    const requestSpan = exporter.getFinishedSpans().find((span) => span.name === 'POST /api/v1/leads');
    expect(requestSpan).toBeDefined();
    const leadId = ((await response.json()) as { lead: { id: number } }).lead.id;
    const queued = await app.db.outboxMessage.findMany({ where: { lead_id: leadId } });
    expect(queued.length).toBeGreaterThan(0);
    // The request span itself is stored, not the operation or statement span active when the rows were written.
    for (const message of queued) expect(message.traceparent).toBe(`00-${CALLER_TRACE}-${spanId(requestSpan!)}-01`);

    const silent = pino({ level: 'silent' });
    const mailer = createMailer({ smtpUrl: smtp.url, mailFrom: app.config.mailFrom }, silent);
    try {
      const report = await deliverDueMessages({
        db: tracedDb,
        mailer,
        engine: app.config.engine,
        mailFrom: app.config.mailFrom,
        logger: silent,
        now: app.clock.now,
      });
      expect(report.sent).toBe(queued.length);
    } finally {
      mailer.close();
    }
    const sends = exporter.getFinishedSpans().filter((span) => span.name.startsWith('outbox send'));
    expect(sends).toHaveLength(queued.length);
    for (const send of sends) {
      expect(send.kind).toBe(3); // SpanKind.PRODUCER
      expect(parentId(send)).toBeUndefined();
      expect(send.spanContext().traceId).not.toBe(CALLER_TRACE);
      expect(send.links.map((link) => [link.context.traceId, link.context.spanId])).toEqual([[CALLER_TRACE, spanId(requestSpan!)]]);
      expect(send.attributes).toMatchObject({
        'messaging.operation.type': 'send',
        'messaging.message.id': expect.stringMatching(/^<outbox-/),
      });
    }
    const mails = smtp.received.filter((received) => received.raw.includes(`#${leadId}`));
    expect(mails).toHaveLength(queued.length);
    for (const mail of mails) {
      const [, traceId, mailSpan] = /^traceparent:\s*00-([0-9a-f]{32})-([0-9a-f]{16})-01\s*$/im.exec(mail.raw) ?? [];
      const send = sends.find((span) => spanId(span) === mailSpan);
      expect(send, 'the header names the send span').toBeDefined();
      expect(traceId).toBe(send!.spanContext().traceId);
    }
  });
});

/** One span as the OTLP/HTTP JSON exporter posts it. */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  resource: Record<string, unknown>;
}

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
}

/** OTLP's key/value list as a plain object (integers as numbers, however the encoder wrote them). */
function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (list ?? []).map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue)),
    ]),
  );
}

/** A plain node:http OTLP/HTTP receiver: decodes each JSON export into spans with their resource. */
async function startCollector(): Promise<{ url: string; spans: ExportedSpan[]; close(): Promise<void> }> {
  const spans: ExportedSpan[] = [];
  const collector = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      expect(request.url).toBe('/v1/traces');
      expect(request.headers['content-type']).toBe('application/json');
      const payload = JSON.parse(body) as {
        resourceSpans: {
          resource: { attributes: OtlpAttribute[] };
          scopeSpans: {
            spans: (Omit<ExportedSpan, 'attributes' | 'links' | 'resource'> & {
              attributes?: OtlpAttribute[];
              links?: { traceId: string; spanId: string }[];
            })[];
          }[];
        }[];
      };
      for (const resource of payload.resourceSpans) {
        for (const scope of resource.scopeSpans) {
          for (const span of scope.spans) {
            spans.push({
              ...span,
              attributes: attributesOf(span.attributes),
              links: span.links ?? [],
              resource: attributesOf(resource.resource.attributes),
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((resolve) => collector.close(() => resolve())),
  };
}

/** One request on a connection of its own (none is left open, so the stop follows at once). */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const sent = request(
      { host: '127.0.0.1', port, method, path, agent: false, headers: body ? { ...headers, 'content-type': 'application/json' } : headers },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

const OTLP_KIND = { internal: 1, server: 2, client: 3, producer: 4 } as const;

describe('the service process (the production bundle, NODE_ENV=production) with OTEL_EXPORTER_OTLP_ENDPOINT', { timeout: 180_000 }, () => {
  it("posts OTLP/HTTP JSON spans with OpenTelemetry's attributes, writes only JSON lines joined to the traces, and sends the last batch at SIGTERM", async () => {
    const collector = await startCollector();
    // The production bundle, as `npm start` runs it: the SDK is loaded the way the bundle loads it.
    const outdir = path.join(projectDir, `dist-tracing-test-${process.pid}`);
    const esbuild = await import('esbuild');
    await esbuild.build({ ...bundleOptions(path.join(outdir, 'src')), logLevel: 'silent' });
    onFileEnd(() => rm(outdir, { recursive: true, force: true }));
    const port = await freePort();
    const service = await startBundledService(path.join(outdir, 'src', 'index.js'), [], {
      ...testSettings,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      DATABASE_URL: app.config.databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      SMTP_URL: smtp.url,
      OUTBOX_POLL_INTERVAL_MS: '100',
      DEPLOYMENT_ENVIRONMENT: 'staging',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      // Longer than any request here can take on a loaded machine: only the stop can send the batch.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    });
    let leadId = 0;
    try {
      const caller = { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, 'user-agent': 'otlp-test/2.0' };
      const read = await send(port, 'GET', `/api/v1/cars/${carId}/performance.json`, {
        ...caller,
        authorization: `Bearer ${key}`,
        'x-request-id': 'otlp-read-1',
      });
      expect(read.status).toBe(200);
      const graph = await send(
        port,
        'POST',
        '/graphql',
        { authorization: `Bearer ${key}`, 'x-request-id': 'otlp-graph-1' },
        JSON.stringify({ query: `query CarPage { car(id: "${carId}") { id } }` }),
      );
      expect(graph.status).toBe(200);
      const lead = await send(
        port,
        'POST',
        '/api/v1/leads',
        { authorization: `Bearer ${key}`, 'x-request-id': 'otlp-lead-1' },
        JSON.stringify({ lead: samplePayload(dealershipId, { email: 'otlp.buyer@example.com' }) }),
      );
      expect(lead.status).toBe(201);
      leadId = (await app.db.lead.findFirstOrThrow({ where: { email: 'otlp.buyer@example.com' }, orderBy: { id: 'desc' } })).id;
      const queued = await app.db.outboxMessage.count({ where: { lead_id: leadId } });
      // The instance's outbox worker sends them (every 100 ms here).
      for (
        let waited = 0;
        smtp.received.filter((mail) => mail.raw.includes(`#${leadId}`)).length < queued && waited < 30_000;
        waited += 100
      )
        await delay(100);
      // The batch would wait ten minutes; the stop sends it at once.
      expect(collector.spans).toEqual([]);
    } finally {
      expect(await service.stop()).toBe(0);
      await collector.close();
    }
    const spans = collector.spans;
    const names = JSON.stringify(spans.map((span) => span.name));

    // Resource: who made every span.
    for (const span of spans) {
      expect(span.resource).toMatchObject({
        'service.name': 'dealership-gateway',
        'service.version': (JSON.parse(readFileSync(path.join(projectDir, 'package.json'), 'utf8')) as { version: string }).version,
        'service.instance.id': expect.stringMatching(/^[0-9a-f-]{36}$/),
        'deployment.environment.name': 'staging',
      });
    }
    expect(new Set(spans.map((span) => span.resource['service.instance.id'])).size).toBe(1);

    // HTTP server span: the route template, never the raw path, in the name and http.route.
    const readSpan = spans.find((span) => span.name === 'GET /api/v1/cars/{id}/performance.json');
    expect(readSpan, names).toMatchObject({
      traceId: CALLER_TRACE,
      parentSpanId: CALLER_SPAN,
      kind: OTLP_KIND.server,
      attributes: {
        'http.request.method': 'GET',
        'http.route': '/api/v1/cars/{id}/performance.json',
        'url.scheme': 'http',
        'url.path': `/api/v1/cars/${carId}/performance.json`,
        'server.address': '127.0.0.1',
        'server.port': port,
        'user_agent.original': 'otlp-test/2.0',
        'http.response.status_code': 200,
        'request.id': 'otlp-read-1',
      },
    });

    // GraphQL operation span, and the statements below it with the database conventions.
    const graphRequest = spans.find((span) => span.name === 'POST /graphql');
    const operation = spans.find((span) => span.name === 'query CarPage');
    expect(operation, names).toMatchObject({
      parentSpanId: graphRequest!.spanId,
      attributes: { 'graphql.operation.name': 'CarPage', 'graphql.operation.type': 'query' },
    });
    const statements = spans.filter((span) => span.parentSpanId === operation!.spanId);
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      expect(statement.kind).toBe(OTLP_KIND.client);
      expect(statement.attributes).toMatchObject({
        'db.system.name': app.config.engine,
        'db.operation.name': expect.stringMatching(/^(SELECT|WITH)$/),
        'db.query.text': expect.stringMatching(/^\s*(SELECT|WITH)/i),
      });
      if (app.config.engine === 'postgresql')
        expect(statement.attributes).toMatchObject({
          'db.namespace': expect.any(String),
          'server.address': '127.0.0.1',
          'server.port': 5432,
        });
      // Parameterised: the id asked for is a placeholder in the text (`$1` on PostgreSQL, `?` on SQLite).
      expect(String(statement.attributes['db.query.text'])).toMatch(/\$1|\?/);
    }

    // The mails' sends: PRODUCER spans of their own traces, linked to the request that queued them.
    const leadRequest = spans.find((span) => span.name === 'POST /api/v1/leads');
    const sends = spans.filter((span) => span.name.startsWith('outbox send'));
    expect(sends.length, names).toBe(await app.db.outboxMessage.count({ where: { lead_id: leadId } }));
    for (const sent of sends) {
      expect(sent.kind).toBe(OTLP_KIND.producer);
      expect(sent.parentSpanId || undefined).toBeUndefined();
      expect(sent.links).toEqual([expect.objectContaining({ traceId: leadRequest!.traceId, spanId: leadRequest!.spanId })]);
    }

    // Every line the process wrote is JSON; every line written inside a request names the request and its trace.
    expect(service.notJson).toEqual([]);
    const requestLines = service.lines.filter((line) => line.request_id !== undefined);
    expect(requestLines.map((line) => line.request_id)).toEqual(expect.arrayContaining(['otlp-read-1', 'otlp-graph-1', 'otlp-lead-1']));
    for (const line of requestLines)
      expect(line, JSON.stringify(line)).toMatchObject({
        trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
        span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      });
    const readLine = requestLines.find((line) => line.request_id === 'otlp-read-1' && line.msg === 'request');
    expect(readLine).toMatchObject({ trace_id: CALLER_TRACE, span_id: readSpan!.spanId, door: 'GET /api/v1/cars/{id}/performance.json' });
    expect(requestLines.find((line) => line.request_id === 'otlp-graph-1' && line.msg === 'request')).toMatchObject({
      trace_id: graphRequest!.traceId,
      span_id: graphRequest!.spanId,
    });

    // The start-up line tells what production serves: no explorers, no development key hint.
    const listening = String(service.lines.find((line) => String(line.msg).startsWith('listening on'))?.msg);
    expect(listening).not.toMatch(/GraphiQL in a browser|Swagger UI at \/docs|npm run/);
    expect(listening).toMatch(/no GraphiQL, no \/docs: EXPLORERS=on serves them/);
  });
});

describe('with traces off', () => {
  it('startTracing loads nothing and answers null', async () => {
    expect(await startTracing(null)).toBeNull();
  });
});
