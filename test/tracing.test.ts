// OpenTelemetry traces (src/telemetry/tracing.ts), with an in-process span exporter installed the way
// the service installs its own: the span tree of one REST call (request ◄ operation ◄ SQL statements)
// under the caller's traceparent, the traceparent of the answer, a notification's e-mail carrying the
// trace of the request that queued it; every span's resource (the SDK's `telemetry.sdk.*`, the
// service) and scope (package.json's version); the OTLP exporter of each protocol the settings accept
// (http/protobuf, the default, and http/json) read back by a local receiver, and the production bundle
// exporting with the default; with traces off, no SDK module is loaded (test/module-boundaries.test.ts
// checks the start-up bundle).
import { createServer, request } from 'node:http';
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportResult } from '@opentelemetry/core';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { loadConfig, OTLP_PROTOCOLS, type OtlpProtocol } from '../src/config/index.ts';
import { createDb, type Db } from '../src/db/client.ts';
import { createMailer } from '../src/notifications/mailer.ts';
import { deliverDueMessages } from '../src/notifications/worker.ts';
import { configuredExporter, startTracing, type Tracing } from '../src/telemetry/tracing.ts';
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
const versionOf = (packageJson: string): string =>
  (JSON.parse(readFileSync(path.join(projectDir, packageJson), 'utf8')) as { version: string }).version;
/** The service's version: its resource's `service.version` and its instrumentation scope's version. */
const SERVICE_VERSION = versionOf('package.json');
/** What the SDK's own resource says of itself (the version is @opentelemetry/core's, as the SDK reports it). */
const SDK_RESOURCE = {
  'telemetry.sdk.name': 'opentelemetry',
  'telemetry.sdk.language': 'nodejs',
  'telemetry.sdk.version': versionOf('node_modules/@opentelemetry/core/package.json'),
};

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

  it('ends a deferred request and its operation with the last payload, its deferred statements under the operation', async () => {
    exporter.reset();
    const response = await traced.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'multipart/mixed' },
      body: JSON.stringify({ query: `query Deferred { car(id: "${carId}") { id ... @defer { performance { views } } } }` }),
    });
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    expect(exporter.getFinishedSpans().map((span) => span.name)).not.toContain('POST /graphql');
    expect(await response.text()).toContain('"hasNext":false');
    const spans = exporter.getFinishedSpans();
    const request = spans.find((span) => span.name === 'POST /graphql');
    const operation = spans.find((span) => span.name === 'query Deferred');
    expect(parentId(operation!)).toBe(spanId(request!));
    const statements = spans.filter((span) => parentId(span) === spanId(operation!) && span.attributes['db.system.name']);
    expect(statements.some((span) => String(span.attributes['db.query.text']).includes('car_view_days'))).toBe(true);
  });
});

describe("every span's resource and instrumentation scope", () => {
  it("name the SDK (telemetry.sdk.*), the service and its version, and the scope's version is package.json's", async () => {
    exporter.reset();
    const response = await traced.fetch(`http://gateway.test/api/v1/cars/${CAR_SLUG}/performance.json`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(200);
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(2);
    for (const span of spans) {
      expect(span.resource.attributes, span.name).toMatchObject({
        ...SDK_RESOURCE,
        'service.name': 'dealership-gateway',
        'service.version': SERVICE_VERSION,
        'service.instance.id': expect.stringMatching(/^[0-9a-f-]{36}$/),
        'process.runtime.name': 'nodejs',
        'process.runtime.version': process.versions.node,
      });
      expect(span.instrumentationScope, span.name).toMatchObject({ name: 'dealership-gateway', version: SERVICE_VERSION });
    }
  });
});

describe('OTLP export, in each protocol OTEL_EXPORTER_OTLP_PROTOCOL accepts', () => {
  const settingsFor = (otel: Record<string, string>) => ({ ...testSettings, DATABASE_URL: app.config.databaseUrl, ...otel });

  it.each(OTLP_PROTOCOLS)(
    '%s: the exporter the settings choose posts every span, its resource and its scope, in its encoding, to a collector that reads it back',
    async (protocol) => {
      const collector = await startCollector();
      try {
        // The traces' own variable wins over the general one, which names the other protocol here.
        const config = loadConfig(
          settingsFor({
            OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
            OTEL_EXPORTER_OTLP_PROTOCOL: OTLP_PROTOCOLS.find((other) => other !== protocol)!,
            OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol,
          }),
        ).tracing!;
        expect(config.otlpProtocol).toBe(protocol);
        exporter.reset();
        const response = await traced.fetch(`http://gateway.test/api/v1/cars/${CAR_SLUG}/performance.json`, {
          headers: { authorization: `Bearer ${key}`, traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
        });
        expect(response.status).toBe(200);
        const finished = exporter.getFinishedSpans();
        const otlp = await configuredExporter(config);
        const result = await new Promise<ExportResult>((resolve) => otlp.export([...finished], resolve));
        await otlp.shutdown();
        expect(result.code, String(result.error)).toBe(0); // ExportResultCode.SUCCESS
        expect(collector.contentTypes).toEqual([OTLP_ENCODINGS[protocol].contentType]);
        // Every span as the SDK ended it: ids, parent, name, kind (OTLP's enum is the API's + 1), attributes.
        expect(
          collector.spans.map((span) => [span.traceId, span.spanId, span.parentSpanId || undefined, span.name, span.kind, span.attributes]),
        ).toEqual(
          finished.map((span) => [span.spanContext().traceId, spanId(span), parentId(span), span.name, span.kind + 1, span.attributes]),
        );
        for (const span of collector.spans) {
          expect(span.resource).toEqual(finished[0]!.resource.attributes);
          expect(span.resource).toMatchObject({ ...SDK_RESOURCE, 'service.version': SERVICE_VERSION });
          expect(span.scope).toEqual({ name: 'dealership-gateway', version: SERVICE_VERSION });
        }
      } finally {
        await collector.close();
      }
    },
  );

  it("defaults to http/protobuf, OpenTelemetry's default, and refuses a protocol it has no exporter for, naming the setting", () => {
    expect(loadConfig(settingsFor({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).tracing?.otlpProtocol).toBe('http/protobuf');
    for (const name of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'])
      expect(() => loadConfig(settingsFor({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', [name]: 'grpc' }))).toThrow(
        new RegExp(`${name}.*http/protobuf or http/json`),
      );
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

/** One span as an OTLP exporter posts it, in either encoding. */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  resource: Record<string, unknown>;
  scope: { name: string; version?: string };
}

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpAnyValue;
}

/** An OTLP value as a plain one (integers as numbers, however the encoder wrote them). */
function plainValue(value: OtlpAnyValue): unknown {
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plainValue);
  return value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue));
}

/** OTLP's key/value list as a plain object. */
function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plainValue(value)]));
}

/** An OTLP/HTTP JSON export (ExportTraceServiceRequest), as its spans. */
function spansOfJson(body: Buffer): ExportedSpan[] {
  const payload = JSON.parse(body.toString()) as {
    resourceSpans: {
      resource: { attributes: OtlpAttribute[] };
      scopeSpans: {
        scope: { name: string; version?: string };
        spans: (Omit<ExportedSpan, 'attributes' | 'links' | 'resource' | 'scope'> & {
          attributes?: OtlpAttribute[];
          links?: { traceId: string; spanId: string }[];
        })[];
      }[];
    }[];
  };
  return payload.resourceSpans.flatMap((resource) =>
    resource.scopeSpans.flatMap((scope) =>
      scope.spans.map((span) => ({
        ...span,
        attributes: attributesOf(span.attributes),
        links: span.links ?? [],
        resource: attributesOf(resource.resource.attributes),
        scope: scope.scope,
      })),
    ),
  );
}

/**
 * Protobuf's wire format, read without a schema: each field number's values in order (varints and
 * fixed-width numbers as integers, length-delimited fields as their bytes). No protobuf library is a
 * dependency, and the OTLP messages need nothing more.
 */
type WireFields = Map<number, (bigint | Uint8Array)[]>;
function wireFields(bytes: Uint8Array): WireFields {
  const fields: WireFields = new Map();
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = bytes[at++];
      if (byte === undefined) throw new Error('a varint runs past the end of the message');
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  const fixed = (width: number): bigint => {
    if (at + width > bytes.length) throw new Error('a fixed-width field runs past the end of the message');
    let value = 0n;
    for (let index = width - 1; index >= 0; index--) value = (value << 8n) | BigInt(bytes[at + index]!);
    at += width;
    return value;
  };
  while (at < bytes.length) {
    const tag = varint();
    const wireType = Number(tag & 7n);
    let value: bigint | Uint8Array;
    if (wireType === 0) value = varint();
    else if (wireType === 1) value = fixed(8);
    else if (wireType === 5) value = fixed(4);
    else if (wireType === 2) {
      const length = Number(varint());
      if (at + length > bytes.length) throw new Error('a length-delimited field runs past the end of the message');
      value = bytes.subarray(at, at + length);
      at += length;
    } else throw new Error(`wire type ${wireType} is not used by OTLP`);
    const field = Number(tag >> 3n);
    fields.set(field, [...(fields.get(field) ?? []), value]);
  }
  return fields;
}
const bytesOf = (fields: WireFields, field: number): Uint8Array[] =>
  (fields.get(field) ?? []).filter((value): value is Uint8Array => value instanceof Uint8Array);
const messagesOf = (fields: WireFields, field: number): WireFields[] => bytesOf(fields, field).map(wireFields);
const textOf = (fields: WireFields, field: number): string | undefined => {
  const [bytes] = bytesOf(fields, field);
  return bytes && new TextDecoder().decode(bytes);
};
const hexOf = (fields: WireFields, field: number): string | undefined => {
  const [bytes] = bytesOf(fields, field);
  return bytes && Buffer.from(bytes).toString('hex');
};
const integerOf = (fields: WireFields, field: number): bigint | undefined => {
  const [value] = fields.get(field) ?? [];
  return typeof value === 'bigint' ? value : undefined;
};

/** opentelemetry/proto/common/v1 AnyValue: 1 string, 2 bool, 3 int, 4 double, 5 array. */
function anyValueOf(value: WireFields): unknown {
  if (value.has(1)) return textOf(value, 1);
  if (value.has(2)) return integerOf(value, 2) === 1n;
  if (value.has(3)) return Number(BigInt.asIntN(64, integerOf(value, 3)!));
  if (value.has(4)) {
    const view = new DataView(new ArrayBuffer(8));
    view.setBigUint64(0, integerOf(value, 4)!, true);
    return view.getFloat64(0, true);
  }
  if (value.has(5)) return messagesOf(messagesOf(value, 5)[0]!, 1).map(anyValueOf);
  return undefined;
}
/** KeyValue: 1 key, 2 value. */
const keyValuesOf = (fields: WireFields, field: number): Record<string, unknown> =>
  Object.fromEntries(messagesOf(fields, field).map((pair) => [textOf(pair, 1), anyValueOf(messagesOf(pair, 2)[0] ?? new Map())]));

/**
 * An OTLP/HTTP protobuf export (ExportTraceServiceRequest: 1 resource_spans), as its spans.
 * ResourceSpans: 1 resource (1 attributes), 2 scope_spans; ScopeSpans: 1 scope (1 name, 2 version),
 * 2 spans; Span: 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 9 attributes, 13 links
 * (1 trace_id, 2 span_id).
 */
function spansOfProtobuf(body: Buffer): ExportedSpan[] {
  return messagesOf(wireFields(body), 1).flatMap((resourceSpans) => {
    const resource = keyValuesOf(messagesOf(resourceSpans, 1)[0] ?? new Map(), 1);
    return messagesOf(resourceSpans, 2).flatMap((scopeSpans) => {
      const scope = messagesOf(scopeSpans, 1)[0] ?? new Map();
      return messagesOf(scopeSpans, 2).map((span) => ({
        traceId: hexOf(span, 1) ?? '',
        spanId: hexOf(span, 2) ?? '',
        ...(span.has(4) ? { parentSpanId: hexOf(span, 4) } : {}),
        name: textOf(span, 5) ?? '',
        kind: Number(integerOf(span, 6) ?? 0n),
        attributes: keyValuesOf(span, 9),
        links: messagesOf(span, 13).map((link) => ({ traceId: hexOf(link, 1) ?? '', spanId: hexOf(link, 2) ?? '' })),
        resource,
        scope: { name: textOf(scope, 1) ?? '', ...(scope.has(2) ? { version: textOf(scope, 2) } : {}) },
      }));
    });
  });
}

/** What each OTLP protocol sends as its content type, and how its body is read back. */
const OTLP_ENCODINGS: Record<OtlpProtocol, { contentType: string; spansOf: (body: Buffer) => ExportedSpan[] }> = {
  'http/protobuf': { contentType: 'application/x-protobuf', spansOf: spansOfProtobuf },
  'http/json': { contentType: 'application/json', spansOf: spansOfJson },
};

interface Collector {
  url: string;
  spans: ExportedSpan[];
  /** The content type of each export received. */
  contentTypes: string[];
  close(): Promise<void>;
}

/** A plain node:http OTLP/HTTP receiver: decodes each export (protobuf or JSON, by its content type) into spans with their resource and scope. */
async function startCollector(): Promise<Collector> {
  const spans: ExportedSpan[] = [];
  const contentTypes: string[] = [];
  const collector = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      expect(request.url).toBe('/v1/traces');
      const contentType = request.headers['content-type'] ?? '';
      contentTypes.push(contentType);
      const encoding = Object.values(OTLP_ENCODINGS).find((candidate) => candidate.contentType === contentType);
      if (!encoding) return response.writeHead(415).end();
      spans.push(...encoding.spansOf(Buffer.concat(chunks)));
      // An empty ExportTraceServiceResponse, in the encoding of the request.
      response.writeHead(200, { 'content-type': contentType }).end(contentType === 'application/json' ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    spans,
    contentTypes,
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
  it("posts OTLP/HTTP protobuf spans (the default protocol) with OpenTelemetry's attributes, writes only JSON lines joined to the traces, and sends the last batch at SIGTERM", async () => {
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

    // No protocol set: OpenTelemetry's default, protobuf.
    expect(collector.contentTypes.length).toBeGreaterThan(0);
    expect(new Set(collector.contentTypes)).toEqual(new Set(['application/x-protobuf']));
    // Resource: who made every span, the SDK included; the scope: the service at its version.
    for (const span of spans) {
      expect(span.resource).toMatchObject({
        ...SDK_RESOURCE,
        'service.name': 'dealership-gateway',
        'service.version': SERVICE_VERSION,
        'service.instance.id': expect.stringMatching(/^[0-9a-f-]{36}$/),
        'deployment.environment.name': 'staging',
      });
      expect(span.scope).toEqual({ name: 'dealership-gateway', version: SERVICE_VERSION });
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
