// The body is read here with a hard cap (chunked bodies too); a shutdown drains without dropping a
// received request, nor a connection the kernel accepted for it.
// Not http-terminator or stoppable: both close the listening socket at once (the kernel resets the connections
// in its accept queue) and destroy idle keep-alive connections at once, the resets the documented drain avoids.
import { once } from 'node:events';
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
import { parseUrl } from '../lib/parse-url.ts';
import { acceptQueueLength } from './accept-queue.ts';
import { TurnBudget } from './turn-budget.ts';
import { bodyLimitOf } from '../gateway/http-plugins.ts';
import { isStreamedAnswer } from '../gateway/incremental.ts';
import { ArrivingBodies, IdleConnections } from './connection-bounds.ts';
import { BUSY_RETRY_AFTER_SECONDS } from '../errors.ts';
import { internalError, payloadTooLarge } from '../rest/errors.ts';

export type HttpServerSettings = Pick<
  Config,
  'bodyLimitBytes' | 'httpHeadersTimeoutMs' | 'httpRequestTimeoutMs' | 'httpKeepAliveTimeoutMs' | 'httpMaxConnections'
> &
  Partial<Pick<Config, 'anonymousBodyLimitBytes' | 'httpMaxUploads' | 'httpReservedConnections'>>;

export interface GatewayServer {
  readonly server: Server;
  listen(port: number, host: string): Promise<AddressInfo>;
  /** The listening socket closes only once the accept queue is empty; connections accepted meanwhile get 503. */
  drain(maxIdleLingerMs?: number): Promise<void>;
  /** Requests whose body is still arriving get 503 (nothing of them was done), and every connection closes. */
  cutConnections(): number;
  openConnections(): number;
}

type BodyRead = ReturnType<typeof readBody>;

// Events rather than `for await`: an async iterator per request costs more than most small bodies.
function readBody(req: IncomingMessage, limit: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  let settle: (value: Buffer | 'too_large' | null) => void = () => undefined;
  const result = new Promise<Buffer | 'too_large' | null>((resolve) => (settle = resolve));
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size > limit) {
      req.pause();
      finish('too_large');
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = (): void => finish(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
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

type PlainAnswer = ReturnType<typeof jsonAnswer>;

function jsonAnswer(
  status: number,
  error: { error: string; message: string; limit?: number },
  requestId: string,
  headers: Record<string, string>,
) {
  const body = JSON.stringify({ ...error, request_id: requestId });
  return {
    status,
    headers: {
      ...PROTECTIVE_HEADERS,
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      ...headers,
      'content-length': String(Buffer.byteLength(body)),
      [REQUEST_ID_HEADER]: requestId,
    },
    body,
  };
}

function serverAnswer(status: number, error: { error: string; message: string }, requestId: string): Response {
  const { headers, body } = jsonAnswer(status, error, requestId, { connection: 'close' });
  return new Response(body, { status, headers });
}

function requestHeaders(req: IncomingMessage): { headers: Headers; requestId: string } {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) {
      for (const item of value) headers.append(name, item);
    } else if (value !== undefined) headers.set(name, value);
  }
  headers.delete('transfer-encoding');
  const requestId = requestIdFor(headers);
  // Given this id, the app finds the same, so this server's own answers and the app's logs name the request alike.
  headers.set('x-request-id', requestId);
  return { headers, requestId };
}

function hasBody(req: IncomingMessage): boolean {
  const declared = Number(req.headers['content-length'] ?? '0');
  return req.method !== 'GET' && req.method !== 'HEAD' && (declared > 0 || req.headers['transfer-encoding'] !== undefined);
}

type Received = ReturnType<typeof receive>;

/** Starts reading the body at once, so that how fast it arrives is the client's alone. */
function receive(req: IncomingMessage, headers: Headers, settings: HttpServerSettings) {
  // Null when the Host header and target make no URL: the parser would throw, a 500 outside the app.
  const url = parseUrl(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`);
  if (!url) return { url, bodyLimitBytes: settings.bodyLimitBytes, body: undefined };
  const bodyLimitBytes = bodyLimitOf(headers, url, settings.bodyLimitBytes, settings.anonymousBodyLimitBytes ?? settings.bodyLimitBytes);
  const declared = Number(req.headers['content-length'] ?? '0');
  return { url, bodyLimitBytes, body: hasBody(req) && declared <= bodyLimitBytes ? readBody(req, bodyLimitBytes) : undefined };
}

async function answer(app: Yoga, req: IncomingMessage, headers: Headers, requestId: string, received: Received): Promise<Response | null> {
  const { url, bodyLimitBytes } = received;
  if (!url)
    return serverAnswer(400, { error: 'malformed_request', message: 'The Host header and request target do not make a URL.' }, requestId);
  const body = received.body ? await received.body.result : undefined;
  if (body === null) return null;
  if (body === 'too_large') return serverAnswer(413, payloadTooLarge(bodyLimitBytes), requestId);
  const request = requestOver(url, req.method ?? 'GET', headers, body && body.length > 0 ? body : undefined);
  recordSocketAddress(request, req.socket.remoteAddress);
  if (body && body.length > 0) recordRequestBody(request, body);
  // handleRequest rather than fetch: fetch makes an AbortSignal per request, and nothing here can abort one.
  return app.handleRequest(request, {});
}

const DRAINING_RETRY_AFTER_SECONDS = 1;

function unavailable(requestId: string, retryAfterSeconds: number, message: string, limit?: number): PlainAnswer {
  const error = { error: 'unavailable', message, ...(limit === undefined ? {} : { limit }) };
  return jsonAnswer(503, error, requestId, { 'retry-after': String(retryAfterSeconds), connection: 'close' });
}

const shuttingDown = (requestId: string): PlainAnswer =>
  unavailable(
    requestId,
    DRAINING_RETRY_AFTER_SECONDS,
    'This instance is shutting down: send the request again (another instance answers it).',
  );

function writePlain(res: ServerResponse, answer: PlainAnswer): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(answer.status, answer.headers).end(answer.body);
}

type ConnectionState = ReturnType<typeof connectionState>;

/** The server's own state, with its settings, log and lifecycle: what every part of it reads. */
function connectionState(settings: HttpServerSettings, logger: Logger, lifecycle: Lifecycle) {
  const { maxUploads, reservedConnections } = connectionBoundsOf(settings.httpMaxConnections, {
    maxUploads: settings.httpMaxUploads,
    reservedConnections: settings.httpReservedConnections,
  });
  let resolveListenerClosed: () => void = () => undefined;
  const listenerClosed = new Promise<void>((resolve) => (resolveListenerClosed = resolve));
  const state = {
    settings,
    reservedConnections,
    logger,
    lifecycle,
    unanswered: new Map<Socket, number>(),
    acceptedWhileDraining: new WeakSet<Socket>(),
    idle: new IdleConnections(),
    bodies: new ArrivingBodies(maxUploads),
    acceptedCount: 0,
    listenerClosed,
    isListenerClosed: false,
    markListenerClosed: (): void => {
      state.isListenerClosed = true;
      resolveListenerClosed();
    },
  };
  return state;
}

const DRAIN_ANSWER_HOLD_MAX_MS = 1_000;

/** An answer written while the socket is open in a drain sends its client straight back into a queue about to be reset. */
function whenListenerClosed(state: ConnectionState, write: () => Promise<void> | undefined): Promise<void> | undefined {
  if (!state.lifecycle.draining || state.isListenerClosed) return write();
  return new Promise<void>((resolve) => {
    const cap = setTimeout(resolve, DRAIN_ANSWER_HOLD_MAX_MS);
    void state.listenerClosed.then(() => {
      clearTimeout(cap);
      resolve();
    });
  }).then(write);
}

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

/** The client's FIN ends the stream: with half-close allowed, a close looks the same, and the stream has nothing to read. */
async function writeStream(res: ServerResponse, body: ReadableStream<Uint8Array>): Promise<void> {
  const reader = body.getReader();
  res.once('close', () => {
    // whatwg-node's reader holds a cancel until its pending read ends; the stream's own cancel frees the key's place at once for the reconnect.
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
    const read = await reader.read().catch(() => null);
    if (!read || read.done || res.destroyed) break;
    if (!res.write(read.value)) await writable(res);
  }
  res.end();
}

function copyHead(res: ServerResponse, response: Response): void {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    res.appendHeader(name, value);
  });
}

function writeResponse(state: ConnectionState, req: IncomingMessage, res: ServerResponse, response: Response): Promise<void> | undefined {
  if (res.headersSent || res.destroyed) return undefined;
  // The content type first: `body` on whatwg-node's Response makes a stream over the bytes.
  if (isStreamedAnswer(response) && response.body) {
    copyHead(res, response);
    if (state.lifecycle.draining) res.setHeader('connection', 'close');
    return writeStream(res, response.body);
  }
  const writeWhole = (body: string | Uint8Array): void => {
    copyHead(res, response);
    // Decided when the answer is written: a request received before the shutdown still tells its client to stop here.
    const closing = state.lifecycle.draining || req.socket.readableEnded;
    if (closing && (state.unanswered.get(req.socket) ?? 0) <= 1) res.setHeader('connection', 'close');
    res.end(body);
  };
  const body = bodyToSend(response);
  if (body instanceof Promise) return body.then(writeWhole);
  writeWhole(body);
  return undefined;
}

function writeInternalError(res: ServerResponse, requestId: string, draining: boolean): void {
  if (res.writableEnded || res.destroyed) return;
  const answer = jsonAnswer(500, internalError(), requestId, draining ? { connection: 'close' } : {});
  if (res.headersSent) res.end(answer.body);
  else writePlain(res, answer);
}

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

/** Answered once the listening socket is closed: a client told to retry at once would keep the accept queue from emptying. */
function answerWhileDraining(state: ConnectionState, req: IncomingMessage, res: ServerResponse, requestId: string): void {
  if (hasBody(req)) state.bodies.track({ req, res, requestId, stop: () => undefined });
  req.resume();
  void Promise.all([state.listenerClosed, finished(req).catch(() => undefined)]).then(() => writePlain(res, shuttingDown(requestId)));
}

/** The check phase follows the turn's reads, so a body sent with its headers has arrived and never counts as an upload. */
function boundUpload(state: ConnectionState, req: IncomingMessage, res: ServerResponse, requestId: string, body: BodyRead): void {
  state.bodies.track({ req, res, requestId, stop: body.stop });
  setImmediate(() => {
    if (body.settled() || res.headersSent || state.bodies.admitUpload(res)) return;
    body.stop();
    const limit = state.bodies.maxUploads;
    const message = `This instance is receiving as many request bodies as it takes at once (${limit}): send the request again after Retry-After seconds.`;
    writePlain(res, unavailable(requestId, BUSY_RETRY_AFTER_SECONDS, message, limit));
  });
}

function requestHandler(app: Yoga, state: ConnectionState, turns: TurnBudget) {
  const { settings, logger, lifecycle } = state;
  return (req: IncomingMessage, res: ServerResponse): void => {
    countRequest(state, req.socket, res);
    const { headers, requestId } = requestHeaders(req);
    if (state.acceptedWhileDraining.has(req.socket)) {
      answerWhileDraining(state, req, res, requestId);
      return;
    }
    const received = receive(req, headers, settings);
    if (received.body) boundUpload(state, req, res, requestId, received.body);
    // Started within the turn's budget, so that a busy turn does not keep new connections from being accepted.
    turns.admit(() => {
      answer(app, req, headers, requestId, received)
        .then((response) => (response === null ? undefined : whenListenerClosed(state, () => writeResponse(state, req, res, response))))
        .catch((error: unknown) => {
          logger.error({ err: error, request_id: requestId }, 'request failed outside the app');
          return whenListenerClosed(state, () => void writeInternalError(res, requestId, lifecycle.draining));
        });
    });
  };
}

function keepReserve(state: ConnectionState): void {
  const reserved = state.reservedConnections;
  const free = state.settings.httpMaxConnections - state.unanswered.size;
  if (free >= reserved) return;
  const closed = state.idle.closeLongestIdle(reserved - free);
  if (closed > 0)
    state.logger.debug({ closed, open: state.unanswered.size, reserved }, 'closed idle keep-alive connections to keep the reserve free');
}

// A client answered just before the drain reconnects a moment later; closing then would reset it.
const LISTENER_QUIET_MS = 100;
const QUIET_LOOK_INTERVAL_MS = 5;

// Closing resets connections the kernel accepted and the process has not, so it waits for a quiet
// period with an empty accept queue; `maxMs` caps that while connections keep arriving.
function closeListener(server: Server, state: ConnectionState, maxMs: number, onClosed: () => void): void {
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
      // Looked at again right after the next poll phase while connections arrive; otherwise on a timer, not a busy loop.
      if (arrived) setImmediate(look);
      else setTimeout(look, QUIET_LOOK_INTERVAL_MS);
      return;
    }
    if (!quiet)
      state.logger.warn(
        { ms: Date.now() - started },
        'connections kept arriving after the shutdown began: closed the listening socket anyway (those still waiting to be accepted were reset)',
      );
    // net.Server's close, not http.Server's, which destroys idle keep-alive connections a client may be sending on now.
    NetServer.prototype.close.call(server, onClosed);
    state.markListenerClosed();
  };
  // setImmediate runs right after a poll phase; the first look only notes the count.
  setImmediate(look);
}

const CUT_ANSWER_LINGER_MS = 250;

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
  if (answered.size > 0)
    setTimeout(() => {
      for (const socket of answered) socket.destroy();
    }, CUT_ANSWER_LINGER_MS);
  return open;
}

export function createHttpServer(app: Yoga, settings: HttpServerSettings, logger: Logger, lifecycle: Lifecycle): GatewayServer {
  const state = connectionState(settings, logger, lifecycle);
  const { unanswered } = state;
  const turns = new TurnBudget();
  const options = {
    headersTimeout: settings.httpHeadersTimeoutMs,
    requestTimeout: settings.httpRequestTimeoutMs,
    keepAliveTimeout: settings.httpKeepAliveTimeoutMs,
    // Node's default check interval would let a slow client outlive a short timeout by up to half a minute.
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(settings.httpHeadersTimeoutMs / 4))),
  };
  const server = createServer(options, requestHandler(app, state, turns));
  server.maxConnections = settings.httpMaxConnections;
  // HTTP/1.1 frames a request by its length: a client may half-close and still wait for the answer (Node's own, untyped).
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  let listenerDone = false;
  let onDrained: (() => void) | undefined;
  const settleDrain = (): void => {
    if (listenerDone && unanswered.size === 0) onDrained?.();
  };
  server.on('connection', (socket: Socket) => {
    state.acceptedCount += 1;
    if (lifecycle.draining) state.acceptedWhileDraining.add(socket);
    unanswered.set(socket, 0);
    socket.once('close', () => {
      unanswered.delete(socket);
      state.idle.forget(socket);
      settleDrain();
    });
    keepReserve(state);
    turns.noteConnection();
  });
  server.on('drop', () => {
    state.acceptedCount += 1;
    logger.warn({ max_connections: settings.httpMaxConnections }, 'connection refused: HTTP_MAX_CONNECTIONS reached');
  });

  let drained: Promise<void> | undefined;
  return {
    server,
    async listen(port, host) {
      await once(server.listen(port, host), 'listening');
      return server.address() as AddressInfo;
    },
    drain(maxIdleLingerMs = settings.httpKeepAliveTimeoutMs) {
      drained ??= new Promise<void>((resolve) => {
        lifecycle.draining = true;
        onDrained = resolve;
        closeListener(server, state, maxIdleLingerMs, () => {
          listenerDone = true;
          settleDrain();
        });
        // setImmediate: timers run before sockets are read, so a request may be waiting in a socket Node still counts as idle.
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
