// Several onResponse hooks need an answer's bytes, and reading a body consumes it: the bytes are read
// once and remembered here, and hooks change headers in place where they can.
import { Response } from './fetch-api.ts';
import { requestState } from './request-state.ts';
const knownBytes = new WeakMap<Response, Uint8Array<ArrayBuffer>>();

/** The answer's bytes, read at most once; `answer` replaces a consumed response and is the one to keep using. */
export async function readBody(
  response: Response,
  setResponse: (response: Response) => void,
): Promise<{ bytes: Uint8Array<ArrayBuffer>; answer: Response }> {
  const known = knownBytes.get(response);
  if (known) return { bytes: known, answer: response };
  const text = wholeText(response);
  if (text !== undefined) {
    // A small Buffer would share Node's pool, kept alive by a cache; TextEncoder's bytes are their own.
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

function bodyInitOf(response: Response): unknown {
  return Object.hasOwn(response, 'bodyInit') ? (response as Response & { bodyInit: unknown }).bodyInit : undefined;
}

function wholeText(response: Response): string | undefined {
  const init = bodyInitOf(response);
  return typeof init === 'string' && !response.bodyUsed ? init : undefined;
}

/** Whether the answer has a body without asking for `body`, which on whatwg-node builds a stream. */
export function hasBody(response: Response): boolean {
  if (knownBytes.has(response)) return true;
  const init = bodyInitOf(response);
  return init === undefined ? response.body !== null : init !== null;
}

export async function finalBytes(response: Response): Promise<Uint8Array<ArrayBuffer>> {
  return knownBytes.get(response) ?? asBytes(await response.arrayBuffer());
}

/** The text while no hook has read it (Node writes text to the socket without an extra copy), else bytes. */
export function bodyToSend(response: Response): string | Uint8Array | Promise<Uint8Array> {
  const known = knownBytes.get(response);
  if (known) return known;
  const text = wholeText(response);
  if (text !== undefined) return text;
  // whatwg-node's arrayBuffer() returns a promise-like, and the server detects a pending body by `instanceof Promise`.
  return finalBytes(response);
}

function asBytes(read: ArrayBuffer): Uint8Array<ArrayBuffer> {
  return ArrayBuffer.isView(read) ? (read as unknown as Uint8Array<ArrayBuffer>) : new Uint8Array(read);
}

export function responseFromBytes(bytes: Uint8Array<ArrayBuffer>, init: ResponseInit): Response {
  const response = new Response(bytes, init);
  knownBytes.set(response, bytes);
  return response;
}

/** Changes headers in place, or on a copy when they are immutable (a fetched or redirect Response). */
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

export function recordRequestBody(request: Request, bytes: Uint8Array): void {
  requestState(request).body = bytes;
}

export async function peekRequestBody(request: Request): Promise<Uint8Array> {
  return requestState(request).body ?? new Uint8Array(await request.clone().arrayBuffer());
}

/** The same answer, calling `ended` once its body is read to its end, fails or its reader leaves. */
export function whenBodyEnds(response: Response, ended: () => void): Response {
  const source = response.body;
  if (!source) {
    ended();
    return response;
  }
  let called = false;
  const once = (): void => {
    if (called) return;
    called = true;
    ended();
  };
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const read = await reader.read();
        if (read.done) {
          controller.close();
          once();
        } else controller.enqueue(read.value);
      } catch (error) {
        controller.error(error);
        once();
      }
    },
    cancel(reason) {
      once();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
