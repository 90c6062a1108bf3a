// The Fetch API objects this service builds its requests and answers with: whatwg-node's, the ones
// Yoga, Sofa and the response cache use in Node, so an answer is one kind of object from the handler
// to the socket and `instanceof Response` means what it says. Node's own (undici) Request and
// Response validate and copy their whole init on construction, and every Request gets an
// AbortSignal and a web stream for its body: a measurable share of an uncached read's CPU
// (docs/benchmarks.md), for objects that never leave the process.
//
// Headers stay Node's own: whatwg-node's treat a header sent with an empty value as absent (a blank
// Idempotency-Key must be refused with 422, not ignored). So requests are built only through
// `requestOver`, which takes a Headers object and keeps it as the request's headers.
import { Request as WhatwgRequest } from '@whatwg-node/fetch';

export { Response } from '@whatwg-node/fetch';

/**
 * A request over headers already in a Node `Headers` (kept as they are, not copied) and a body
 * already in memory. The body bytes are not copied into a stream unless something reads it as one.
 */
export function requestOver(url: string | URL, method: string, headers: Headers, body?: Uint8Array | string): Request {
  return new WhatwgRequest(url, { method, headers, ...(body === undefined ? {} : { body: body as BodyInit }) });
}

/**
 * The request's URL, parsed once per request: whatwg-node's Request keeps the URL it was built from
 * (the HTTP server parses each request's once, and Yoga reads the same one), so the plugins that
 * read a path or a query share it instead of parsing `request.url` again. Shared: read it, never
 * change it (copy it with `new URL(…)` to change it).
 */
export function parsedUrl(request: Request): URL {
  const kept = (request as Request & { parsedUrl?: unknown }).parsedUrl;
  return kept instanceof URL ? kept : new URL(request.url);
}
