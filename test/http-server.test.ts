// The Node server around the app, on a loopback port: bodies are capped even without a length.
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../src/http-server.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeKey } from './support/fixtures.ts';

const LIMIT = 4096;
let app: TestApp;
let server: ReturnType<typeof createHttpServer>;
let port: number;
let key: string;

beforeAll(async () => {
  app = await createTestApp();
  key = (await makeKey(app.db, { permissions: ['read:car'] })).key;
  server = createHttpServer(app.yoga, LIMIT, pino({ level: 'silent' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function send(chunks: string[], headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/graphql', method: 'POST', headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe('the HTTP server', () => {
  it('serves a request end to end', async () => {
    const result = await send([JSON.stringify({ query: '{ apikey_details { id } }' })], {
      'content-type': 'application/json',
      authorization: `Bearer ${key}`,
    });
    expect(result.status).toBe(200);
    expect(JSON.parse(result.body).data.apikey_details.id).toEqual(expect.any(Number));
  });

  it('refuses a chunked body over the limit with 413', async () => {
    const chunk = 'x'.repeat(1024);
    const result = await send([`{"query":"{ apikey_details { id } }","pad":"`, ...Array(8).fill(chunk), '"}'], {
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body).error).toBe('payload_too_large');
  });
});
