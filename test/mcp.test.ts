// The MCP door (/mcp, docs/mcp.md), spoken to with the SDK's own client over its Streamable HTTP
// transport, whose fetch is the app's: a key lists exactly the operations of its OpenAPI view as tools,
// and a tool call is the REST request, so its answer, refusals, idempotency, limits and key-call log
// are the REST door's.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allPermissions, type Permission } from '../src/auth/permissions.ts';
import { DEFAULT_RATE_LIMITS } from '../src/config/index.ts';
import type { KeyCallLog } from '../src/domain/api-key-calls.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { createLifecycle } from '../src/gateway/lifecycle.ts';
import { createHttpServer } from '../src/http/server.ts';
import { createLogger } from '../src/logger.ts';
import { createTestApp, instanceDeps, testKeyCallLog, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey, makeWebsite, makeWritersWorld, type WritersWorld } from './support/fixtures.ts';
import { samplePayload } from './support/fixtures-leads.ts';
import { bareEnvironment, projectDir } from './support/processes.ts';

const BODY_LIMIT = 64 * 1024;

let app: TestApp;
let yoga: Yoga;
let keyCalls: KeyCallLog;
const clients: Client[] = [];

async function connect(to: Yoga, key?: string, seen?: (response: Response) => void): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL('http://gateway.test/mcp'), {
    requestInit: key ? { headers: { authorization: `Bearer ${key}` } } : {},
    fetch: async (url, init) => {
      const response = await to.fetch(new Request(url, init));
      seen?.(response);
      return response;
    },
  });
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function keyWith(permissions: readonly Permission[], dealershipIds: readonly number[] = []): Promise<string> {
  return (await makeKey(app.db, { permissions, dealershipIds })).key;
}

/** The operationIds of the key's /openapi.json view. */
async function viewOperations(key: string): Promise<string[]> {
  const response = await app.request('/openapi.json', { key });
  const document = (await response.json()) as { paths: Record<string, Record<string, { operationId: string }>> };
  return Object.values(document.paths)
    .flatMap((item) => Object.values(item).map((operation) => operation.operationId))
    .sort();
}

const names = (tools: readonly Tool[]): string[] => tools.map((tool) => tool.name).sort();

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

beforeAll(async () => {
  app = await createTestApp({ bodyLimitBytes: BODY_LIMIT });
  app.clock.set(new Date(Math.floor(Date.now() / 60_000) * 60_000));
  keyCalls = testKeyCallLog(app);
  yoga = createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { keyCalls }));
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await keyCalls.stop();
});

describe('the tool list', () => {
  it('is the operations of the key’s OpenAPI view, named by operationId: a restricted key lacks exactly what its view lacks', async () => {
    const full = await keyWith(allPermissions);
    const restricted = await keyWith(['read:car', 'read:contact']);
    const fullTools = names((await (await connect(yoga, full)).listTools()).tools);
    const restrictedTools = names((await (await connect(yoga, restricted)).listTools()).tools);
    expect(fullTools).toEqual(await viewOperations(full));
    expect(restrictedTools).toEqual(await viewOperations(restricted));
    expect(restrictedTools.length).toBeLessThan(fullTools.length);
    expect(restrictedTools).toEqual(expect.arrayContaining(['car_performance', 'contacts', 'contact', 'apikey_details']));
    expect(restrictedTools).not.toContain('create_lead');
  });

  it('gives each tool its operation’s summary and the input schema of its parameters and body', async () => {
    const client = await connect(yoga, await keyWith(allPermissions));
    const { tools } = await client.listTools();
    const performance = tools.find((tool) => tool.name === 'car_performance')!;
    expect(performance.title).toEqual(expect.any(String));
    expect(performance.description).toContain('read:car');
    expect(performance.annotations?.readOnlyHint).toBe(true);
    expect(Object.keys(performance.inputSchema.properties ?? {}).sort()).toEqual(['id', 'lookup_by']);
    expect(performance.inputSchema.required).toEqual(['id']);
    const createLead = tools.find((tool) => tool.name === 'create_lead')!;
    expect(Object.keys(createLead.inputSchema.properties ?? {}).sort()).toEqual(['body', 'idempotency_key']);
    expect(createLead.inputSchema.required).toEqual(['body']);
  });

  it('checks every tool’s arguments against its schema: each refuses an argument it does not take, before anything runs', async () => {
    const client = await connect(yoga, await keyWith(allPermissions));
    const { tools } = await client.listTools();
    for (const tool of tools) {
      const result = await call(client, tool.name, { contract_probe: 1 });
      expect(result.isError, tool.name).toBe(true);
      // The first problem is named: the probe, or an argument the tool requires.
      const { field } = result.structuredContent as { field: string };
      expect([...(tool.inputSchema.required ?? []), 'contract_probe'], tool.name).toContain(field);
      expect(result.structuredContent, tool.name).toMatchObject({ status: 422, error: 'invalid_input' });
    }
  });

  it('refuses each hidden tool with the status and code its REST path answers a key without the permission', async () => {
    const full = names((await (await connect(yoga, await keyWith(allPermissions))).listTools()).tools);
    const restricted = await keyWith(['read:car']);
    const client = await connect(yoga, restricted);
    const seen = names((await client.listTools()).tools);
    const response = await app.request('/openapi.json');
    const document = (await response.json()) as {
      paths: Record<string, Record<string, { operationId: string; 'x-permission-denied-status'?: number }>>;
    };
    const deniedStatus = new Map(
      Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => [op.operationId, op['x-permission-denied-status']])),
    );
    const hidden = full.filter((name) => !seen.includes(name));
    expect(hidden.length).toBeGreaterThan(5);
    for (const name of hidden) {
      const refused = (await client.callTool({ name, arguments: {} }).catch((error: unknown) => error)) as McpError;
      expect(refused, name).toBeInstanceOf(McpError);
      const status = deniedStatus.get(name);
      expect(refused.data, name).toEqual({ status, error: status === 401 ? 'unauthorized' : 'forbidden' });
    }
  });

  it('needs a valid key: without one /mcp answers 401 like every REST path', async () => {
    await expect(connect(yoga)).rejects.toMatchObject({ code: 401 });
    const response = await yoga.fetch('http://gateway.test/mcp', {
      method: 'POST',
      headers: { authorization: 'Bearer dlr_nope', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'unauthorized' });
  });

  it('answers POST only (stateless: no stream, no session), and OPTIONS says so', async () => {
    const response = await yoga.fetch('http://gateway.test/mcp', { method: 'GET' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    const options = await yoga.fetch('http://gateway.test/mcp', { method: 'OPTIONS' });
    expect(options.headers.get('allow')).toBe('POST, OPTIONS');
  });
});

describe('a tool call', () => {
  let dealership: { id: number };
  let car: { id: number };
  let reader: string;

  beforeAll(async () => {
    dealership = await makeDealership(app.db);
    car = await makeCar(app.db, dealership.id);
    reader = await keyWith(['read:car'], [dealership.id]);
  });

  it('answers the REST body as structured content', async () => {
    const client = await connect(yoga, reader);
    const result = await call(client, 'car_performance', { id: String(car.id) });
    const rest = await app.request(`/api/v1/cars/${car.id}/performance.json`, { key: reader });
    expect(rest.status).toBe(200);
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual(await rest.json());
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  });

  it('answers a redirect path with its status and location, as the REST door redirects', async () => {
    const harbour = await makeDealership(app.db, { slug: 'mcp-harbour' });
    const site = await makeWebsite(app.db, harbour.id, { slug: 'mcp-harbour-site', url: 'https://harbour.example.com.au/' });
    await makeCar(app.db, harbour.id, { stocknum: 'MCP1', slug: '2020-toyota-corolla-mcp1' });
    const query = { website_id: String(site.id), stocknum: 'MCP1' };
    const rest = await app.request(`/api/v1/dealerships/mcp-harbour/redirect_service?${new URLSearchParams(query).toString()}`);
    expect(rest.status).toBe(302);
    const result = await call(await connect(yoga, reader), 'car_redirect', { dealership_slug: 'mcp-harbour', ...query });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ status: 302, location: rest.headers.get('location') });
  });

  it('is refused with the REST door’s status and code for a tool the key does not see', async () => {
    const client = await connect(yoga, reader);
    const refused = await client
      .callTool({ name: 'reserve_car', arguments: { id: String(car.id), reserved: true } })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McpError);
    const rest = await app.request(`/api/v1/cars/${car.id}/reserve?reserved=true`, { method: 'PUT', key: reader });
    const restBody = (await rest.json()) as { error: string; message: string };
    expect((refused as McpError).data).toEqual({ status: rest.status, error: restBody.error });
    expect((refused as McpError).message).toContain(restBody.message);
    // create:lead's refusal is 401, as the spec words it.
    const lead = await client.callTool({ name: 'create_lead', arguments: { body: {} } }).catch((error: unknown) => error);
    expect((lead as McpError).data).toEqual({ status: 401, error: 'unauthorized' });
    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} }).catch((error: unknown) => error);
    expect((unknown as McpError).data).toEqual({ status: 404, error: 'not_found' });
  });

  it('checks its arguments against the tool’s schema first, naming the field and reason', async () => {
    const client = await connect(yoga, reader);
    const missing = await call(client, 'car_performance', {});
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toMatchObject({ status: 422, error: 'invalid_input' });
    expect(missing.content).toEqual([{ type: 'text', text: 'id: is required' }]);
    const wrongValue = await call(client, 'car_performance', { id: String(car.id), lookup_by: 'colour' });
    expect(wrongValue.structuredContent).toMatchObject({
      field: 'lookup_by',
      message: 'lookup_by: must be equal to one of the allowed values',
    });
    const extra = await call(client, 'car_performance', { id: String(car.id), colour: 'red' });
    expect(extra.content).toEqual([{ type: 'text', text: 'colour: is not an argument this tool takes' }]);
    // Path parameters are text, as the OpenAPI document declares them.
    const number = await call(client, 'car_performance', { id: car.id });
    expect(number.structuredContent).toMatchObject({ field: 'id', message: 'id: must be string' });
    // A dot segment would be resolved into another path.
    const dots = await call(client, 'car_performance', { id: '..' });
    expect(dots.structuredContent).toMatchObject({ status: 422, field: 'id', message: 'id: must not be . or ..' });
    const nested = await connect(yoga, await keyWith(['create:lead']));
    const lead = await call(nested, 'create_lead', { body: { lead: { name: 'Jane' } } });
    expect(lead.structuredContent).toMatchObject({ status: 422, error: 'invalid_input', field: expect.stringMatching(/^body\.lead\./) });
  });

  it('refuses another dealership’s car as the REST path does', async () => {
    const elsewhere = await makeCar(app.db, (await makeDealership(app.db)).id);
    let requestId: string | null = null;
    const client = await connect(yoga, reader, (response) => (requestId = response.headers.get('request-id')));
    const result = await call(client, 'car_performance', { id: String(elsewhere.id) });
    const rest = await app.request(`/api/v1/cars/${elsewhere.id}/performance.json`, { key: reader });
    expect(rest.status).toBeGreaterThanOrEqual(403);
    const restBody = (await rest.json()) as { error: string; message: string };
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ status: rest.status, error: restBody.error, message: restBody.message });
    expect((result.content[0] as { text: string }).text).toBe(restBody.message);
    // The REST request carried the /mcp request's id: one id to quote for both.
    expect((result.structuredContent as { request_id: string }).request_id).toBe(requestId);
  });
});

describe('a write', () => {
  let world: WritersWorld;
  beforeAll(async () => {
    world = await makeWritersWorld(app.db);
  });

  it('with an Idempotency-Key answers a repeated call the same and stores one lead; the key-call log counts each REST call', async () => {
    const client = await connect(yoga, world.key);
    const email = `mcp.${Date.now()}@example.com`;
    const args = { body: { lead: samplePayload(world.dealership.id, { email }) }, idempotency_key: `mcp-${Date.now()}` };
    const first = await call(client, 'create_lead', args);
    const again = await call(client, 'create_lead', args);
    expect(first.isError).toBeUndefined();
    expect((first.structuredContent as { lead: { id: number } }).lead.id).toEqual(expect.any(Number));
    expect(again.structuredContent).toEqual(first.structuredContent);
    expect(await app.db.lead.count({ where: { email: email.toLowerCase() } })).toBe(1);
    await keyCalls.flush();
    const rows = await app.db.apiKeyCall.findMany({ where: { api_key_id: world.apiKeyId, operation: 'create_lead' } });
    expect(rows.map(({ door, status, calls }) => ({ door, status, calls }))).toEqual([{ door: 'rest', status: 201, calls: 2 }]);
  });

  it('is held to the body limit: a /mcp body over it is refused 413 before anything runs', async () => {
    const client = await connect(yoga, world.key);
    const before = await app.db.lead.count();
    const message = 'x'.repeat(BODY_LIMIT);
    const refused = await call(client, 'create_lead', { body: { lead: samplePayload(world.dealership.id, { message }) } }).catch(
      (error: unknown) => error,
    );
    // Sent without Content-Length: the transport's own read stops at the same limit.
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(413);
    expect(String(refused)).toContain(`must not exceed ${BODY_LIMIT} bytes`);
    // With Content-Length: refused before it is read, with the REST door's body.
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', padding: message });
    const declared = await yoga.fetch('http://gateway.test/mcp', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${world.key}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        accept: 'application/json, text/event-stream',
      },
      body,
    });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ error: 'payload_too_large' });
    expect(await app.db.lead.count()).toBe(before);
  });
});

describe('rate limits', () => {
  it('apply to each tool call as to the REST request it is: past the key’s budget the call is an error with rate_limited', async () => {
    const limited = createApp(
      instanceDeps(
        { config: { ...app.config, rateLimits: { ...DEFAULT_RATE_LIMITS, keyRequests: 2 } }, db: app.db, now: app.clock.now },
        {},
      ),
    );
    const client = await connect(limited, await keyWith([]));
    for (let n = 0; n < 2; n += 1) expect((await call(client, 'apikey_details', {})).isError).toBeUndefined();
    const refused = await call(client, 'apikey_details', {});
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ status: 429, error: 'rate_limited', retry_after: expect.any(Number) });
  });
});

describe('the per-address limits', () => {
  it('count a refused key on /mcp as on any path: past the limit the address is refused 429 before the key is looked at', async () => {
    const config = { ...app.config, rateLimits: { ...DEFAULT_RATE_LIMITS, authFailures: 2 }, trustProxyHops: 1 };
    const limited = createApp(instanceDeps({ config, db: app.db, now: app.clock.now }));
    const post = async () =>
      (
        await limited.fetch('http://gateway.test/mcp', {
          method: 'POST',
          headers: { authorization: 'Bearer dlr_wrong', 'x-forwarded-for': '198.51.100.77', 'content-type': 'application/json' },
          body: '{}',
        })
      ).status;
    expect([await post(), await post(), await post()]).toEqual([401, 401, 429]);
  });
});

describe('stateless', () => {
  it('answers each request on any instance: initialised on one, listed and called on another', async () => {
    const instances = [yoga, createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }))];
    let turn = 0;
    const key = await keyWith(['read:car']);
    const transport = new StreamableHTTPClientTransport(new URL('http://gateway.test/mcp'), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: async (url, init) => {
        turn += 1;
        const response = await instances[turn % 2]!.fetch(new Request(url, init));
        expect(response.headers.get('mcp-session-id')).toBeNull();
        return response;
      },
    });
    const client = new Client({ name: 'mcp-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    expect(names((await client.listTools()).tools)).toEqual(await viewOperations(key));
    expect((await call(client, 'apikey_details', {})).isError).toBeUndefined();
    expect(turn).toBeGreaterThanOrEqual(4);
  });
});

describe('the client of docs/mcp.md', () => {
  it('runs as written against the HTTP server: it prints the key’s tools and the car’s performance', async () => {
    const text = readFileSync(path.join(projectDir, 'docs', 'mcp.md'), 'utf8');
    const source = /## A client in Node[\s\S]*?```js\n([\s\S]*?)```/.exec(text)?.[1];
    expect(source, 'docs/mcp.md has its js block').toBeDefined();
    const dealership = await makeDealership(app.db);
    const car = await makeCar(app.db, dealership.id);
    const key = await keyWith(['read:car'], [dealership.id]);
    const server = createHttpServer(yoga, app.config, createLogger('silent'), createLifecycle());
    const { port } = await server.listen(0, '127.0.0.1');
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '--eval', source!], {
        cwd: projectDir,
        env: bareEnvironment({ GATEWAY_URL: `http://127.0.0.1:${port}`, API_KEY: key, CAR_ID: String(car.id) }),
        timeout: 30_000,
      });
      const [tools, answer] = stdout.trim().split('\n');
      expect(tools!.split(' ').sort()).toEqual(await viewOperations(key));
      const rest = await app.request(`/api/v1/cars/${car.id}/performance.json`, { key });
      expect(JSON.parse(answer!)).toEqual(await rest.json());
    } finally {
      await server.drain(0);
    }
  });
});
