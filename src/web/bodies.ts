// An answer passes through several onResponse hooks that need its bytes (the answer cache, ETags,
// compression, HEAD) and then the HTTP server, which writes them. Reading a Response's body consumes
// it, and re-wrapping the bytes in a new Response at each hook costs a stream and a copy each time:
// the bytes are read once and remembered here, and hooks change headers in place where they can.
import { Response } from './fetch-api.ts';
import { requestState } from './request-state.ts';
const knownBytes = new WeakMap<Response, Uint8Array<ArrayBuffer>>();

/**
 * The answer's body as bytes, read at most once whichever hook asks first. Reading consumes the
 * stream, so the first reader puts an equal answer over the same bytes in its place (through the
 * hook's setResponse): `answer` is the one to keep working on.
 */
export async function readBody(
  response: Response,
  setResponse: (response: Response) => void,
): Promise<{ bytes: Uint8Array<ArrayBuffer>; answer: Response }> {
  const known = knownBytes.get(response);
  if (known) return { bytes: known, answer: response };
  const text = wholeText(response);
  if (text !== undefined) {
    // Text is not consumed by being read: the answer stays as it is, with its bytes remembered.
    // TextEncoder's bytes are their own (a small Buffer would share an 8 KB pool, kept alive by a cache).
    const encoded = textEncoder.encode(text);
    knownBytes.set(response, encoded);
    return { bytes: encoded, answer: response };
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  const answer = responseFromBytes(bytes, { status: response.status, statusText: response.statusText, headers: response.headers });
  setResponse(answer);
  return { bytes, answer };
}

const textEncoder = new TextEncoder();

/**
 * What a whatwg-node Response was made with (its own `bodyInit`: null when made without a body), or
 * undefined for any other Response.
 */
function bodyInitOf(response: Response): unknown {
  return Object.hasOwn(response, 'bodyInit') ? (response as Response & { bodyInit: unknown }).bodyInit : undefined;
}

/** The text a whatwg-node Response was made with (Yoga answers with text), while nothing has consumed it. */
function wholeText(response: Response): string | undefined {
  const init = bodyInitOf(response);
  return typeof init === 'string' && !response.bodyUsed ? init : undefined;
}

/**
 * Whether the answer has a body, without asking for `body`: on whatwg-node's Response that getter
 * makes a stream over the bytes (and its teardown later), for a yes or no. Its body is null exactly
 * when it was made without one (its `bodyInit`); any other Response is asked.
 */
export function hasBody(response: Response): boolean {
  if (knownBytes.has(response)) return true;
  const init = bodyInitOf(response);
  return init === undefined ? response.body !== null : init !== null;
}

/** The bytes to send: the last reader of an answer may consume it. */
export async function finalBytes(response: Response): Promise<Uint8Array<ArrayBuffer>> {
  return knownBytes.get(response) ?? asBytes(await response.arrayBuffer());
}

/**
 * What the HTTP server sends: the text the answer was made with while no hook has read it (Yoga
 * answers with text, and Node writes text straight into the socket: read as bytes first it would be
 * encoded once and then copied), else its bytes. Synchronous unless the body is still a stream.
 */
export function bodyToSend(response: Response): string | Uint8Array | Promise<Uint8Array> {
  const known = knownBytes.get(response);
  if (known) return known;
  const text = wholeText(response);
  if (text !== undefined) return text;
  // Through finalBytes, an async function: whatwg-node answers arrayBuffer() with a promise-like
  // object of its own, and the server tells a body still to come by `instanceof Promise`.
  return finalBytes(response);
}

/** whatwg-node's arrayBuffer() resolves to a Buffer (already a view on bytes): viewed, not copied. */
function asBytes(read: ArrayBuffer): Uint8Array<ArrayBuffer> {
  return ArrayBuffer.isView(read) ? (read as unknown as Uint8Array<ArrayBuffer>) : new Uint8Array(read);
}

/** A Response over bytes already in hand, which later hooks read without touching its stream. */
export function responseFromBytes(bytes: Uint8Array<ArrayBuffer>, init: ResponseInit): Response {
  const response = new Response(bytes, init);
  knownBytes.set(response, bytes);
  return response;
}

/**
 * The answer with its headers changed: in place, or on a copy when its headers cannot change (a
 * fetched or redirect Response); a copy keeps the bytes already read.
 */
export function withHeaders(response: Response, change: (headers: Headers) => void): Response {
  try {
    change(response.headers);
    return response;
  } catch {
    const headers = new Headers(response.headers);
    change(headers);
    const init = { status: response.status, statusText: response.statusText, headers };
    const bytes = knownBytes.get(response);
    return bytes ? responseFromBytes(bytes, init) : new Response(response.body, init);
  }
}

/** Keeps the body the HTTP server already read as bytes (it reads bodies to enforce the body limit). */
export function recordRequestBody(request: Request, bytes: Uint8Array): void {
  requestState(request).body = bytes;
}

/** A request's body as bytes without consuming it: the server's copy, else a clone's. */
export async function peekRequestBody(request: Request): Promise<Uint8Array> {
  return requestState(request).body ?? new Uint8Array(await request.clone().arrayBuffer());
}
