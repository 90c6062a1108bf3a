// The Request the HTTP server and the REST door build (src/web/fetch-api.ts): whatwg-node's, over Node's
// own Headers, so a header sent with an empty value is still there for the rules that look at it.
import { describe, expect, it } from 'vitest';
import { parsedUrl, requestOver } from '../src/web/fetch-api.ts';

describe('requestOver', () => {
  it('keeps the Headers it is given, so a header with an empty value counts as sent', () => {
    const headers = new Headers({ 'idempotency-key': '', authorization: 'Bearer k' });
    const request = requestOver('http://gateway.test/api/v1/leads', 'POST', headers, '{}');
    expect(request.headers).toBe(headers);
    expect(request.headers.has('idempotency-key')).toBe(true);
    expect(request.headers.get('idempotency-key')).toBe('');
  });

  it('carries the method, the URL and the body bytes as given', async () => {
    const bytes = new TextEncoder().encode('{"lead":{}}');
    const request = requestOver(new URL('http://gateway.test/api/v1/leads?x=1'), 'POST', new Headers(), bytes);
    expect(request.method).toBe('POST');
    expect(request.url).toBe('http://gateway.test/api/v1/leads?x=1');
    expect(await request.text()).toBe('{"lead":{}}');
    expect(requestOver('http://gateway.test/', 'GET', new Headers()).body).toBeNull();
  });
});

describe('parsedUrl', () => {
  it('is the URL a request was built from, parsed once, and a parse of the text for any other request', () => {
    const url = new URL('http://gateway.test/api/v1/cars/1/performance.json?token=t');
    const built = requestOver(url, 'GET', new Headers());
    expect(parsedUrl(built)).toBe(parsedUrl(built));
    expect(parsedUrl(built).href).toBe(url.href);
    const fromText = requestOver('http://gateway.test/graphql?query=x', 'GET', new Headers());
    expect(parsedUrl(fromText)).toBe(parsedUrl(fromText));
    expect(parsedUrl(fromText).searchParams.get('query')).toBe('x');
    // Node's own Request keeps no parsed URL: its text is parsed.
    const native = new globalThis.Request('http://gateway.test/a/b?c=d');
    expect(parsedUrl(native).pathname).toBe('/a/b');
    expect(parsedUrl(native).searchParams.get('c')).toBe('d');
  });
});
