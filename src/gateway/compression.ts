// Compresses answers worth it; bodies with an ETag are kept compressed, so an explorer page is compressed once.
// Not @whatwg-node/server's useContentEncoding: it compresses streams and small bodies, ignores q-values, sends no Vary.
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Plugin } from 'graphql-yoga';
import { boundedCache, type CacheBounds } from '../lib/bounded-cache.ts';
import { hasBody, readBody, responseFromBytes, withHeaders } from '../web/bodies.ts';
import { isStreamedAnswer } from './incremental.ts';

/** Smaller bodies gain nothing worth a compressor's time. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;
const COMPRESSIBLE = /^(application\/(json|graphql-response\+json|javascript)|text\/)/i;
export const COMPRESSION_MEMO_BOUNDS: CacheBounds = { maxEntries: 20_000, maxBytes: 16 * 1024 * 1024 };

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

type Encoding = 'br' | 'gzip';

export function chooseEncoding(acceptEncoding: string | null): Encoding | null {
  if (!acceptEncoding) return null;
  const accepted = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((param) => /^\s*q=([\d.]+)\s*$/.exec(param)?.[1]).find((value) => value !== undefined);
    if (name) accepted.set(name, q === undefined ? 1 : Number(q));
  }
  const weight = (name: Encoding): number => accepted.get(name) ?? accepted.get('*') ?? 0;
  if (weight('br') > 0) return 'br';
  if (weight('gzip') > 0) return 'gzip';
  return null;
}

function compress(body: Uint8Array, encoding: Encoding): Promise<Buffer> {
  return encoding === 'br'
    ? brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength } })
    : gzipAsync(body, { level: 6 });
}

export function useCompression(): Plugin {
  const memo = boundedCache<Buffer>(COMPRESSION_MEMO_BOUNDS, (compressed) => compressed.byteLength);

  return {
    async onResponse({ request, response: received, setResponse }) {
      const type = received.headers.get('content-type') ?? '';
      // A stream (a subscription's events, @defer's payloads) is sent as it comes, never read whole.
      if (received.headers.has('content-encoding') || !COMPRESSIBLE.test(type) || !hasBody(received) || isStreamedAnswer(received)) return;
      /** Sent as it is, saying that another Accept-Encoding could have had it compressed. */
      const sendPlain = (response: Response): void => {
        const answer = withHeaders(response, (headers) => headers.append('vary', 'Accept-Encoding'));
        if (answer !== response) setResponse(answer);
      };
      const encoding = chooseEncoding(request.headers.get('accept-encoding'));
      // Nothing to compress with: the body is left for the server to write, unread here.
      if (!encoding) return sendPlain(received);
      const { bytes: body, answer: response } = await readBody(received, setResponse);
      if (body.byteLength < COMPRESSION_THRESHOLD_BYTES) return sendPlain(response);
      const headers = new Headers(response.headers);
      headers.append('vary', 'Accept-Encoding');
      const etag = response.headers.get('etag');
      const memoId = etag ? `${encoding}:${etag}` : null;
      let compressed = memoId ? memo.get(memoId) : undefined;
      if (!compressed) {
        compressed = await compress(body, encoding);
        if (memoId) memo.set(memoId, compressed);
      }
      headers.set('content-encoding', encoding);
      headers.delete('content-length');
      // The bytes differ per encoding, so the validator is only weakly the same answer (as nginx does).
      if (etag && !etag.startsWith('W/')) headers.set('etag', `W/${etag}`);
      const bytes = new Uint8Array(compressed.buffer as ArrayBuffer, compressed.byteOffset, compressed.byteLength);
      setResponse(responseFromBytes(bytes, { status: response.status, headers }));
    },
  };
}
