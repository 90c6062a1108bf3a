// The Node HTTP server around the app: the request body is read here with a hard cap, so a client
// that sends no Content-Length (chunked) cannot make the server buffer more than the limit; slow
// clients are cut by the header and request timeouts; open connections are capped, and each kind
// that can hold one for long is bounded on its own, so that the others are always served
// (src/http/connection-bounds.ts); a client that half-closes its side after its request is
// answered; and a shutdown drains the connections without dropping a request that was received, nor
// a connection the kernel accepted for it.
// Not http-terminator or stoppable: both close the listening socket at once (the kernel resets the connections
// in its accept queue) and destroy idle keep-alive connections at once, the resets the documented drain avoids.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import { finished } from 'node:stream/promises';
import type { Logger } from 'pino';
import type { Config } from '../config/index.ts';
import { connectionBoundsOf } from '../config/http.ts';
import type { Lifecycle } from '../gateway/lifecycle.ts';
import type { Yoga } from '../gateway/yoga.ts';
import { PROTECTIVE_HEADERS } from '../gateway/security-headers.ts';
import { recordSocketAddress } from '../gateway/client-address.ts';
import { bodyToSend, recordRequestBody } from '../web/bodies.ts';
import { requestIdFor } from '../telemetry/request-id.ts';
import { REQUEST_ID_HEADER } from '../gateway/request-telemetry.ts';
import { requestOver, Response } from '../web/fetch-api.ts';
import { acceptQueueLength } from './accept-queue.ts';
import { TurnBudget } from './turn-budget.ts';
import { bodyLimitOf } from '../gateway/http-plugins.ts';
import { isEventStream } from '../gateway/live-streams.ts';
import { ArrivingBodies, IdleConnections } from './connection-bounds.ts';

export type HttpServerSettings = Pick<
  Config,
  'bodyLimitBytes' | 'httpHeadersTimeoutMs' | 'httpRequestTimeoutMs' | 'httpKeepAliveTimeoutMs' | 'httpMaxConnections'
> &
  // Without it, a request without a key has the same limit as one with a key.
  Partial<Pick<Config, 'anonymousBodyLimitBytes'>> &
  // Without them, their defaults: a share of httpMaxConnections (src/config/http.ts).
  Partial<Pick<Config, 'httpMaxUploads' | 'httpReservedConnections'>>;

export interface GatewayServer {
  readonly server: Server;
  listen(port: number, host: string): Promise<AddressInfo>;
  /**
   * Stops accepting connections and answers every request already received with `Connection: close`.
   * The listening socket closes once no connection is waiting in the kernel's accept queue (see
   * `closeListener`); a connection accepted meanwhile is answered 503 with `Retry-After`.
   * A keep-alive connection that was idle when the drain began is closed when its keep-alive timeout
   * ends, or after `maxIdleLingerMs` if that comes first. Resolves once no connection is left open.
   */
  drain(maxIdleLingerMs?: number): Promise<void>;
  /**
   * The grace period is over: answers every request whose body is still arriving 503 (nothing of it
   * was done: it is to be sent again, to another instance), and closes every connection still open;
   * returns how many there were.
   */
  cutConnections(): number;
  /** Connections open now. */
  openConnections(): number;
}

/** A request body being read, up to its limit. */
interface BodyRead {
  /** The body once arrived; 'too_large' past the limit; null when the app is not to answer it (the client left, or this server answered it). */
  readonly result: Promise<Buffer | 'too_large' | null>;
  /** Whether reading has ended, one way or another. */
  settled(): boolean;
  /** Stops reading: what else arrives is dropped. */
  stop(): void;
}

// Events rather than `for await`: an async iterator per request costs more than the small bodies
// most requests carry.
function readBody(req: IncomingMessage, limit: number): BodyRead {
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  let settle: (value: Buffer | 'too_large' | null) => void = () => undefined;
  const result = new Promise<Buffer | 'too_large' | null>((resolve) => (settle = resolve));
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size > limit) {
      // The rest is left unread: the answer says the body is too large and closes the connection.
      req.pause();
      finish('too_large');
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = (): void => finish(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
  // The connection closed before the body ended: the client left, and nobody waits for an answer.
  const onGone = (): void => finish(null);
  function finish(value: Buffer | 'too_large' | null): void {
    if (settled) return;
    settled = true;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onGone);
    req.off('close', onGone);
    settle(value);
  }
  req.on('data', onData);
  req.once('end', onEnd);
  req.once('error', onGone);
  req.once('close', onGone);
  return { result, settled: () => settled, stop: () => finish(null) };
}

function tooLarge(limit: number, requestId: string): Response {
  return serverAnswer(413, { error: 'payload_too_large', message: `The request body is over ${limit} bytes.` }, requestId);
}

/** An answer this server writes itself, before the app: the error body with the request's id, and the connection closed. */
function serverAnswer(status: number, error: { error: string; message: string }, requestId: string): Response {
  return new Response(JSON.stringify({ ...error, request_id: requestId }), {
    status,
    headers: {
      ...PROTECTIVE_HEADERS,
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'close',
      [REQUEST_ID_HEADER]: requestId,
    },
  });
}

/**
 * The request's URL, or null when its Host header (the caller's text) and target make none: a Host
 * such as `a b` or `[::1` made the URL parser throw, and the request a 500 outside the app.
 */
function requestUrl(req: IncomingMessage): URL | null {
  try {
    return new URL(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`);
  } catch {
    return null;
  }
}

/** The request's headers as the app gets them, and its id (src/telemetry/request-id.ts). */
function requestHeaders(req: IncomingMessage): { headers: Headers; requestId: string } {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) {
      for (const item of value) headers.append(name, item);
    } else if (value !== undefined) headers.set(name, value);
  }
  headers.delete('transfer-encoding');
  const requestId = requestIdFor(headers);
  // The app works the id out again from the headers: given this one, it finds the same, so the
  // answers this server writes itself (413, 500) and the app's log lines name the request alike.
  headers.set('x-request-id', requestId);
  return { headers, requestId };
}

/** What the server reads of a request before the app: its URL (null: none can be made), and its body as it arrives. */
interface Received {
  url: URL | null;
  bodyLimitBytes: number;
  /** Undefined when there is none, or its declared length is over the limit (the app refuses it, unread: useBodyLimit). */
  body: BodyRead | undefined;
}

function hasBody(req: IncomingMessage): boolean {
  const declared = Number(req.headers['content-length'] ?? '0');
  return req.method !== 'GET' && req.method !== 'HEAD' && (declared > 0 || req.headers['transfer-encoding'] !== undefined);
}

/** Starts reading the body at once, whenever the app starts, so that how fast it arrives is the client's alone. */
function receive(req: IncomingMessage, headers: Headers, settings: HttpServerSettings): Received {
  const url = requestUrl(req);
  if (!url) return { url, bodyLimitBytes: settings.bodyLimitBytes, body: undefined };
  // A request without a key gets the smaller anonymous limit (src/gateway/http-plugins.ts, useBodyLimit).
  const bodyLimitBytes = bodyLimitOf(headers, url, settings.bodyLimitBytes, settings.anonymousBodyLimitBytes ?? settings.bodyLimitBytes);
  const declared = Number(req.headers['content-length'] ?? '0');
  return { url, bodyLimitBytes, body: hasBody(req) && declared <= bodyLimitBytes ? readBody(req, bodyLimitBytes) : undefined };
}

/** The app's answer, or this server's (400, 413); null when there is nobody to answer, or this server has answered already. */
async function answer(app: Yoga, req: IncomingMessage, headers: Headers, requestId: string, received: Received): Promise<Response | null> {
  const { url, bodyLimitBytes } = received;
  if (!url)
    return serverAnswer(400, { error: 'malformed_request', message: 'The Host header and request target do not make a URL.' }, requestId);
  const body = received.body ? await received.body.result : undefined;
  if (body === null) return null;
  if (body === 'too_large') return tooLarge(bodyLimitBytes, requestId);
  const request = requestOver(url, req.method ?? 'GET', headers, body && body.length > 0 ? body : undefined);
  recordSocketAddress(request, req.socket.remoteAddress);
  if (body && body.length > 0) recordRequestBody(request, body);
  // handleRequest rather than fetch: fetch races the answer against the request's AbortSignal, which
  // it makes for every request (a signal, a listener, a deferred promise), and this request has no
  // caller that could abort it.
  return app.handleRequest(request, {});
}

/** Seconds a client told to go away by a draining instance waits before retrying (another instance answers it). */
const DRAINING_RETRY_AFTER_SECONDS = 1;

/** Seconds a client refused for a full bound (uploads in flight) waits before sending the request again. */
const BUSY_RETRY_AFTER_SECONDS = 5;

/** An answer this server writes straight to the response: a refusal, before anything of the request was done. */
interface PlainAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function refusal(error: { error: string; message: string; limit?: number }, requestId: string, retryAfterSeconds: number): PlainAnswer {
  const body = JSON.stringify({ ...error, request_id: requestId });
  return {
    status: 503,
    headers: {
      ...PROTECTIVE_HEADERS,
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'retry-after': String(retryAfterSeconds),
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
      [REQUEST_ID_HEADER]: requestId,
    },
    body,
  };
}

/** The answer during a drain to a request this instance will not do: go to another instance. */
function shuttingDown(requestId: string): PlainAnswer {
  return refusal(
    { error: 'unavailable', message: 'This instance is shutting down: send the request again (another instance answers it).' },
    requestId,
    DRAINING_RETRY_AFTER_SECONDS,
  );
}

/** The answer to one upload more than HTTP_MAX_UPLOADS. */
function uploadsFull(requestId: string, limit: number): PlainAnswer {
  return refusal(
    {
      error: 'unavailable',
      message: `This instance is receiving as many request bodies as it takes at once (${limit}): send the request again after Retry-After seconds.`,
      limit,
    },
    requestId,
    BUSY_RETRY_AFTER_SECONDS,
  );
}

/** Writes an answer of this server's, unless the request has been answered already (or its connection is gone). */
function writePlain(res: ServerResponse, answer: PlainAnswer): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(answer.status, answer.headers).end(answer.body);
}

/** Resolves once the request's body (if any) has been read and dropped, or the request has failed. */
function readToEnd(req: IncomingMessage): Promise<void> {
  req.resume();
  // A request that failed or whose connection closed early is read as far as it goes too.
  return finished(req).catch(() => undefined);
}

/** What the server keeps of its connections: read by the request handler, the drain and the listener's close. */
interface ConnectionState {
  /** Requests received on each open connection and not yet answered (more than one when pipelined). */
  unanswered: Map<Socket, number>;
  /** Connections accepted after the drain began, while the listening socket was still open. */
  acceptedWhileDraining: WeakSet<Socket>;
  /** Keep-alive connections with nothing asked on them, longest idle first. */
  idle: IdleConnections;
  /** Requests whose body is still arriving, and the uploads among them. */
  bodies: ArrivingBodies;
  /** Connections the listening socket has accepted (or dropped at the cap) so far. */
  acceptedCount: number;
  /** Resolves once the listening socket is closed (markListenerClosed). */
  listenerClosed: Promise<void>;
  /** Whether listenerClosed has resolved: read on every answer, so kept as a plain flag too. */
  isListenerClosed: boolean;
  markListenerClosed: () => void;
}

function connectionState(maxUploads: number): ConnectionState {
  let resolveListenerClosed: () => void = () => undefined;
  const listenerClosed = new Promise<void>((resolve) => (resolveListenerClosed = resolve));
  const state: ConnectionState = {
    unanswered: new Map(),
    acceptedWhileDraining: new WeakSet(),
    idle: new IdleConnections(),
    bodies: new ArrivingBodies(maxUploads),
    acceptedCount: 0,
    listenerClosed,
    isListenerClosed: false,
    markListenerClosed: () => {
      state.isListenerClosed = true;
      resolveListenerClosed();
    },
  };
  return state;
}

/**
 * The longest an answer finished during a drain waits for the listening socket to close. The
 * socket closes as soon as no connection arrives (closeListener), which takes a few turns of the
 * event loop unless clients elsewhere keep connecting; then the cap lets the answers go anyway.
 */
const DRAIN_ANSWER_HOLD_MAX_MS = 1_000;

/**
 * Resolves once the listening socket is closed, or after DRAIN_ANSWER_HOLD_MAX_MS. An answer
 * written while the socket is still open in a drain sends its client (told `Connection: close`)
 * straight back to connect again, and a connection whose handshake completes in the instant the
 * socket closes is reset by the kernel: the client had connected and gets no answer. Held until
 * the close, the answer can only send the client to a closed port (a clean refusal) or to another
 * instance. Outside a drain this costs nothing.
 */
function untilListenerClosed(state: ConnectionState, lifecycle: Lifecycle): Promise<void> | undefined {
  if (!lifecycle.draining || state.isListenerClosed) return undefined;
  return new Promise((resolve) => {
    const cap = setTimeout(resolve, DRAIN_ANSWER_HOLD_MAX_MS);
    void state.listenerClosed.then(() => {
      clearTimeout(cap);
      resolve();
    });
  });
}

/** Writes an answer (the app's, or the 500 of a failure outside it) at once, or held by untilListenerClosed. */
function whenListenerClosed(
  state: ConnectionState,
  lifecycle: Lifecycle,
  write: () => Promise<void> | undefined,
): Promise<void> | undefined {
  const held = untilListenerClosed(state, lifecycle);
  return held ? held.then(write) : write();
}

/** Resolves once the response can take more (or is gone: the client left). */
function writable(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/**
 * A subscription's event stream (src/gateway/live-streams.ts), written as its events come. The client
 * leaving cancels it, which ends the subscription and releases its key's count; the stream ending
 * (the subscription completed, or the hub closed it for a shutdown) ends the response. The client's
 * FIN counts as leaving: a stream has nothing more to read from it, and a close looks the same as a
 * half-close (which the server otherwise allows: createHttpServer), so the stream ends then rather
 * than at its next write.
 */
async function writeEventStream(res: ServerResponse, body: ReadableStream<Uint8Array>): Promise<void> {
  const reader = body.getReader();
  res.once('close', () => {
    // whatwg-node's reader holds a cancel back until the read it waits on ends (the next event or
    // heartbeat); the stream's own cancel ends the subscription at once, so that its key's place is
    // free for the client's reconnect. A standard stream refuses that while locked, and its reader's
    // cancel is immediate.
    void body.cancel().catch(() => undefined);
    void reader.cancel().catch(() => undefined);
  });
  res.flushHeaders();
  const socket = res.socket;
  const onClientEnd = (): void => void res.destroy();
  if (socket?.readableEnded) onClientEnd();
  else if (socket) {
    socket.once('end', onClientEnd);
    res.once('close', () => socket.off('end', onClientEnd));
  }
  for (;;) {
    // The read a cancel cut short fails: the client has gone, there is nothing more to write.
    const read = await reader.read().catch(() => null);
    if (!read || read.done || res.destroyed) break;
    if (!res.write(read.value)) await writable(res);
  }
  res.end();
}

/** Writes the answer; a promise only while something is still to come (an event stream, a body still a stream). */
function writeResponse(
  state: ConnectionState,
  lifecycle: Lifecycle,
  req: IncomingMessage,
  res: ServerResponse,
  response: Response,
): Promise<void> | undefined {
  // Answered already by this server (the drain's cut), or the connection is gone.
  if (res.headersSent || res.destroyed) return undefined;
  // The content type first: `body` on whatwg-node's Response makes a stream over the bytes.
  if (isEventStream(response) && response.body) {
    res.statusCode = response.status;
    response.headers.forEach((value, name) => {
      res.appendHeader(name, value);
    });
    if (lifecycle.draining) res.setHeader('connection', 'close');
    return writeEventStream(res, response.body);
  }
  const body = bodyToSend(response);
  if (body instanceof Promise) return body.then((bytes) => writeWhole(state, lifecycle, req, res, response, bytes));
  writeWhole(state, lifecycle, req, res, response, body);
  return undefined;
}

function writeWhole(
  state: ConnectionState,
  lifecycle: Lifecycle,
  req: IncomingMessage,
  res: ServerResponse,
  response: Response,
  body: string | Uint8Array,
): void {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    res.appendHeader(name, value);
  });
  // Decided when the answer is written, not when the request came in: a request received before
  // the shutdown and answered after it still tells its client to open no further request here. So
  // does an answer to a client that has half-closed its side: the connection closes after it.
  // With pipelined requests queued behind this one, the last of them carries the close instead.
  const closing = lifecycle.draining || req.socket.readableEnded;
  if (closing && (state.unanswered.get(req.socket) ?? 0) <= 1) res.setHeader('connection', 'close');
  res.end(body);
}

/** The 500 of a request that failed outside the app (the headers too, unless they were sent already). */
function writeInternalError(res: ServerResponse, requestId: string, draining: boolean): void {
  if (res.writableEnded || res.destroyed) return;
  if (!res.headersSent) {
    res.writeHead(500, {
      ...PROTECTIVE_HEADERS,
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      [REQUEST_ID_HEADER]: requestId,
      ...(draining ? { connection: 'close' } : {}),
    });
  }
  res.end(JSON.stringify({ error: 'internal_error', message: 'Unexpected error.', request_id: requestId }));
}

/**
 * Counts the request on its connection until its answer is done; the connection is idle again once
 * every request on it is answered.
 */
function countRequest(state: ConnectionState, socket: Socket, res: ServerResponse): void {
  const { unanswered, idle } = state;
  unanswered.set(socket, (unanswered.get(socket) ?? 0) + 1);
  idle.forget(socket);
  res.once('close', () => {
    if (!unanswered.has(socket)) return;
    const left = Math.max(0, (unanswered.get(socket) ?? 1) - 1);
    unanswered.set(socket, left);
    if (left === 0) idle.markIdle(socket);
  });
}

/**
 * A request on a connection accepted after the drain began: 503, go elsewhere. Answered once the
 * listening socket is closed, not before: a client told to retry at once would otherwise be back in
 * the accept queue, and the queue would never be empty.
 */
function answerWhileDraining(state: ConnectionState, req: IncomingMessage, res: ServerResponse, requestId: string): void {
  // Known while its body arrives, so that the drain's cut answers it if the body is still arriving then.
  if (hasBody(req)) state.bodies.track({ req, res, requestId, stop: () => undefined });
  void Promise.all([state.listenerClosed, readToEnd(req)]).then(() => writePlain(res, shuttingDown(requestId)));
}

/**
 * Known while its body arrives (the drain's cut answers it if it is still arriving then). A body still
 * arriving once the turn that read its headers is done is an upload in flight, held to HTTP_MAX_UPLOADS:
 * one more is refused 503, unread. The check phase comes right after the turn's reads, so a body sent
 * with its headers has arrived by then and never counts.
 */
function boundUpload(state: ConnectionState, req: IncomingMessage, res: ServerResponse, requestId: string, body: BodyRead): void {
  state.bodies.track({ req, res, requestId, stop: body.stop });
  setImmediate(() => {
    if (body.settled() || res.headersSent || state.bodies.admitUpload(res)) return;
    body.stop();
    writePlain(res, uploadsFull(requestId, state.bodies.maxUploads));
  });
}

/** The request handler: counts the request on its connection, then answers it through the app (or 503 while draining). */
function requestHandler(
  app: Yoga,
  settings: HttpServerSettings,
  logger: Logger,
  lifecycle: Lifecycle,
  state: ConnectionState,
  turns: TurnBudget,
) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    countRequest(state, req.socket, res);
    const { headers, requestId } = requestHeaders(req);
    if (state.acceptedWhileDraining.has(req.socket)) {
      answerWhileDraining(state, req, res, requestId);
      return;
    }
    const received = receive(req, headers, settings);
    if (received.body) boundUpload(state, req, res, requestId, received.body);
    // Started once the loop's turn has budget for it (src/http/turn-budget.ts), so that a busy turn
    // does not keep new connections from being accepted.
    turns.admit(() => {
      answer(app, req, headers, requestId, received)
        .then((response) =>
          response === null ? undefined : whenListenerClosed(state, lifecycle, () => writeResponse(state, lifecycle, req, res, response)),
        )
        .catch((error: unknown) => {
          logger.error({ err: error, request_id: requestId }, 'request failed outside the app');
          return whenListenerClosed(state, lifecycle, () => {
            writeInternalError(res, requestId, lifecycle.draining);
            return undefined;
          });
        });
    });
  };
}

/** The server's timeouts. */
function serverOptions(settings: HttpServerSettings) {
  return {
    headersTimeout: settings.httpHeadersTimeoutMs,
    requestTimeout: settings.httpRequestTimeoutMs,
    keepAliveTimeout: settings.httpKeepAliveTimeoutMs,
    // How often Node checks the two timeouts above (its default, 30 s, would let a slow client
    // outlive a timeout of a few seconds by up to half a minute).
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(settings.httpHeadersTimeoutMs / 4))),
  };
}

/**
 * On each new connection: while fewer than `reserved` connections are free, the longest idle
 * keep-alive ones are closed, so that the next connection is served rather than dropped at the cap.
 */
function keepReserve(state: ConnectionState, maxConnections: number, reserved: number, logger: Logger): void {
  const free = maxConnections - state.unanswered.size;
  if (free >= reserved) return;
  const closed = state.idle.closeLongestIdle(reserved - free);
  if (closed > 0)
    logger.debug({ closed, open: state.unanswered.size, reserved }, 'closed idle keep-alive connections to keep the reserve free');
}

/** The socket handlers: each accepted connection is counted and tracked until it closes; one dropped at the cap is logged. */
function trackConnections(
  server: Server,
  settings: HttpServerSettings,
  logger: Logger,
  lifecycle: Lifecycle,
  state: ConnectionState,
  onClose: () => void,
): void {
  const { reservedConnections } = connectionBoundsOf(settings.httpMaxConnections, {
    reservedConnections: settings.httpReservedConnections,
  });
  server.on('connection', (socket: Socket) => {
    state.acceptedCount += 1;
    if (lifecycle.draining) state.acceptedWhileDraining.add(socket);
    state.unanswered.set(socket, 0);
    socket.once('close', () => {
      state.unanswered.delete(socket);
      state.idle.forget(socket);
      onClose();
    });
    keepReserve(state, settings.httpMaxConnections, reservedConnections, logger);
  });
  server.on('drop', () => {
    state.acceptedCount += 1;
    logger.warn({ max_connections: settings.httpMaxConnections }, 'connection refused: HTTP_MAX_CONNECTIONS reached');
  });
}

/**
 * How long no connection may have arrived before the listening socket closes. A client answered just
 * before the drain began connects again a moment later, later still on a loaded machine; closing
 * in that moment would reset it. Held this long, its connection is accepted and told 503 instead.
 */
const LISTENER_QUIET_MS = 100;
const QUIET_LOOK_INTERVAL_MS = 5;

/**
 * Closes the listening socket once no connection is waiting in the kernel's accept queue. Closing
 * it resets every connection the kernel has accepted (completed the handshake of) and the process
 * has not: a client that had sent its request would get a reset, not an answer. So it closes when
 * no connection has been accepted for LISTENER_QUIET_MS (Node accepts in the event loop's poll
 * phase) and, where the kernel tells (src/http/accept-queue.ts), the queue is empty at that moment;
 * a connection that completes its handshake in the microseconds between that look and the close is
 * the one left to chance. The clients of this instance do not come back into the queue meanwhile:
 * a connection accepted after the drain began waits for its 503, and an answer finished after it
 * waits too (untilListenerClosed), until the socket is closed.
 */
// `maxMs`: the longest it stays open while connections keep arriving (clients elsewhere that keep
// connecting, or answers released by DRAIN_ANSWER_HOLD_MAX_MS); then it closes anyway, and the
// kernel resets those still waiting in its queue.
function closeListener(server: Server, state: ConnectionState, logger: Logger, maxMs: number, onClosed: () => void): void {
  const started = Date.now();
  const quietMs = Math.min(LISTENER_QUIET_MS, maxMs / 2);
  let seen = state.acceptedCount;
  let quietSince = started;
  let looks = 0;
  const look = (): void => {
    looks += 1;
    const address = server.address();
    const port = address !== null && typeof address === 'object' ? address.port : null;
    const now = Date.now();
    const arrived = looks === 1 || state.acceptedCount !== seen || (port !== null && (acceptQueueLength(port) ?? 0) > 0);
    if (arrived) {
      seen = state.acceptedCount;
      quietSince = now;
    }
    const quiet = port === null || (!arrived && now - quietSince >= quietMs);
    const overdue = now - started >= maxMs;
    if (!quiet && !overdue) {
      // While connections arrive, looked at again right after the next poll phase; while none do,
      // every few milliseconds (not a busy loop) until the quiet period is over.
      if (arrived) setImmediate(look);
      else setTimeout(look, QUIET_LOOK_INTERVAL_MS);
      return;
    }
    if (!quiet)
      logger.warn(
        { ms: Date.now() - started },
        'connections kept arriving after the shutdown began: closed the listening socket anyway (those still waiting to be accepted were reset)',
      );
    // net.Server's close, not http.Server's: the latter also destroys every idle keep-alive
    // connection at once, and a client may be sending its next request on one at this very
    // moment (it would get a reset, not an answer). An idle connection is left to its keep-alive
    // timeout instead, as in normal operation: a client (or a load balancer's pool) still
    // sending on it meanwhile is answered, with `Connection: close`.
    // Its callback comes once every connection has closed too.
    NetServer.prototype.close.call(server, onClosed);
    state.markListenerClosed();
  };
  // setImmediate runs right after a poll phase; the first look comes before the next one and
  // only notes the count.
  setImmediate(look);
}

/** How long a connection answered 503 at the drain's cut has to take its answer before it is destroyed too. */
const CUT_ANSWER_LINGER_MS = 250;

/** The end of the grace period: see GatewayServer's cutConnections. */
function cutConnections(state: ConnectionState): number {
  const answered = new Set<Socket>();
  for (const { req, res, requestId, stop } of state.bodies.arriving()) {
    if (res.headersSent || res.destroyed) continue;
    stop();
    writePlain(res, shuttingDown(requestId));
    answered.add(req.socket);
  }
  const open = state.unanswered.size;
  for (const socket of state.unanswered.keys()) if (!answered.has(socket)) socket.destroy();
  // Node closes each once its answer is written (Connection: close); a client that does not read is not waited for.
  if (answered.size > 0)
    setTimeout(() => {
      for (const socket of answered) socket.destroy();
    }, CUT_ANSWER_LINGER_MS);
  return open;
}

export function createHttpServer(app: Yoga, settings: HttpServerSettings, logger: Logger, lifecycle: Lifecycle): GatewayServer {
  const { maxUploads } = connectionBoundsOf(settings.httpMaxConnections, { maxUploads: settings.httpMaxUploads });
  const state = connectionState(maxUploads);
  const { unanswered } = state;
  const turns = new TurnBudget();
  const server = createServer(serverOptions(settings), requestHandler(app, settings, logger, lifecycle, state, turns));
  server.keepAliveTimeout = settings.httpKeepAliveTimeoutMs;
  server.maxConnections = settings.httpMaxConnections;
  // A client may half-close its side (TCP FIN) right after its request and still wait for the answer:
  // HTTP/1.1 frames a request by its length, never by the connection's end. Node's http.Server ends
  // the socket at the client's FIN unless told otherwise, and the answer of a request it had received
  // (whose work, a stored lead, was done) was lost; with this, the answer is written, then the
  // connection closes. The property is Node's own, untyped.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  let listenerDone = false;
  let onDrained: (() => void) | undefined;
  const settleDrain = (): void => {
    if (listenerDone && unanswered.size === 0) onDrained?.();
  };
  trackConnections(server, settings, logger, lifecycle, state, settleDrain);
  server.on('connection', () => turns.noteConnection());

  let drained: Promise<void> | undefined;
  return {
    server,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    drain(maxIdleLingerMs = settings.httpKeepAliveTimeoutMs) {
      drained ??= new Promise<void>((resolve) => {
        lifecycle.draining = true;
        onDrained = resolve;
        closeListener(server, state, logger, maxIdleLingerMs, () => {
          listenerDone = true;
          settleDrain();
        });
        // setImmediate: timers run before the event loop reads the sockets, so under load a request
        // may be waiting unread in a socket Node still counts as idle. The check phase comes right
        // after the sockets are read: whatever had arrived is then being handled, not idle.
        const linger = setTimeout(
          () => setImmediate(() => server.closeIdleConnections()),
          Math.min(settings.httpKeepAliveTimeoutMs, maxIdleLingerMs),
        );
        linger.unref();
      });
      return drained;
    },
    cutConnections: () => cutConnections(state),
    openConnections: () => unanswered.size,
  };
}
