// Compression of answers worth it (src/gateway/compression.ts) and cacheable explorer assets.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { chooseEncoding, COMPRESSION_THRESHOLD_BYTES } from '../src/gateway/compression.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeKey } from './support/fixtures.ts';

let app: TestApp;

beforeAll(async () => {
  app = await createTestApp();
});

const fetchRaw = (path: string, headers: Record<string, string>): Promise<Response> =>
  Promise.resolve(app.yoga.fetch(`http://gateway.test${path}`, { headers }));

async function rawBytes(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer());
}

describe('choosing an encoding', () => {
  it('prefers brotli, honours q=0 and *, and sends plain bytes when nothing fits', () => {
    expect(chooseEncoding('gzip, deflate, br')).toBe('br');
    expect(chooseEncoding('gzip')).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip;q=0.5')).toBe('gzip');
    expect(chooseEncoding('*')).toBe('br');
    expect(chooseEncoding('identity')).toBeNull();
    expect(chooseEncoding(null)).toBeNull();
  });
});

describe('answers', () => {
  it('compresses the GraphiQL page with brotli or gzip, byte for byte the plain page', async () => {
    const accept = { accept: 'text/html' };
    const plain = await rawBytes(await fetchRaw('/graphql', accept));
    expect(plain.byteLength).toBeGreaterThan(100_000);
    const br = await fetchRaw('/graphql', { ...accept, 'accept-encoding': 'br, gzip' });
    expect(br.headers.get('content-encoding')).toBe('br');
    expect(br.headers.get('vary')).toMatch(/accept-encoding/i);
    const brBytes = await rawBytes(br);
    expect(brBytes.byteLength).toBeLessThan(plain.byteLength / 3);
    expect(brotliDecompressSync(brBytes).equals(plain)).toBe(true);
    const gz = await fetchRaw('/graphql', { ...accept, 'accept-encoding': 'gzip' });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(gunzipSync(await rawBytes(gz)).equals(plain)).toBe(true);
  });

  it('sends a large answer whole and plain to a client that accepts no encoding, saying it varies by Accept-Encoding', async () => {
    for (const acceptEncoding of [undefined, 'identity', 'br;q=0, gzip;q=0']) {
      const answer = await fetchRaw('/openapi.json', acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding });
      expect(answer.status, acceptEncoding).toBe(200);
      expect(answer.headers.get('content-encoding'), acceptEncoding).toBeNull();
      expect(answer.headers.get('vary'), acceptEncoding).toMatch(/accept-encoding/i);
      const bytes = await rawBytes(answer);
      expect(bytes.byteLength).toBeGreaterThan(COMPRESSION_THRESHOLD_BYTES);
      expect((JSON.parse(bytes.toString('utf8')) as { openapi: string }).openapi).toMatch(/^3\.1/);
    }
  });

  it('compresses large JSON, keeps its ETag usable (weak) for 304, and leaves small answers alone', async () => {
    const { key } = await makeKey(app.db, { permissions: ['read:car'] });
    const authorization = `Bearer ${key}`;
    const openapi = await fetchRaw('/openapi.json', { 'accept-encoding': 'gzip' });
    expect(openapi.headers.get('content-encoding')).toBe('gzip');
    const etag = openapi.headers.get('etag');
    expect(etag).toMatch(/^W\/"/);
    const document = JSON.parse(gunzipSync(await rawBytes(openapi)).toString('utf8')) as { openapi: string };
    expect(document.openapi).toMatch(/^3\.1/);
    expect((await fetchRaw('/openapi.json', { 'accept-encoding': 'gzip', 'if-none-match': etag! })).status).toBe(304);
    const small = await fetchRaw('/api/v1/apikeys/apikey_details.json', { authorization, 'accept-encoding': 'br, gzip' });
    expect(small.status).toBe(200);
    expect((await rawBytes(small.clone())).byteLength).toBeLessThan(COMPRESSION_THRESHOLD_BYTES);
    expect(small.headers.get('content-encoding')).toBeNull();
    expect(small.headers.get('vary')).toMatch(/accept-encoding/i);
    expect(((await small.json()) as { permissions: string[] }).permissions).toEqual(['read:car']);
  });

  it("serves Swagger UI's code under versioned URLs that browsers may keep for a year", async () => {
    const page = await (await fetchRaw('/docs', {})).text();
    const bundle = /src="(\/docs\/swagger-ui-bundle\.js\?v=[\d.]+)"/.exec(page)?.[1];
    expect(bundle).toBeDefined();
    const asset = await fetchRaw(bundle!, { 'accept-encoding': 'br' });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-encoding')).toBe('br');
  });
});
