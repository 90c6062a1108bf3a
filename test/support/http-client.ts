// Plain node:http clients for the tests that need a real socket (the server's timeouts, connection
// cap and drain): each keep-alive client holds one connection and tells whether it was reused.
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The request went out on a connection that had already carried one. */
  reusedSocket: boolean;
}

export interface HttpFailure {
  /** ECONNREFUSED, ECONNRESET … or the message when Node gives no code ("socket hang up"). */
  error: string;
  reusedSocket: boolean;
}

export interface KeepAliveClient {
  send(method: string, path: string, options?: { headers?: Record<string, string>; body?: string }): Promise<HttpAnswer | HttpFailure>;
  close(): void;
}

/** One keep-alive connection at a time to 127.0.0.1:port; a failure is returned, not thrown. */
export function keepAliveClient(port: number): KeepAliveClient {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    send(method, path, options = {}) {
      return new Promise((resolve) => {
        const headers: Record<string, string> = { ...options.headers };
        if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
        const req = httpRequest({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, reusedSocket: req.reusedSocket }));
          res.on('error', (error: NodeJS.ErrnoException) =>
            resolve({ error: error.code ?? error.message, reusedSocket: req.reusedSocket }),
          );
        });
        req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, reusedSocket: req.reusedSocket }));
        req.end(options.body);
      });
    },
    close: () => agent.destroy(),
  };
}

/**
 * One request on a connection of its own (no keep-alive, as a client that opens one per request).
 * A failure says whether the connection had been established: a refused connection never was, and
 * anything else (a reset, a hang-up) happened to a connection the server's kernel had accepted.
 */
export function requestOnce(
  port: number,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<HttpAnswer | (HttpFailure & { connected: boolean })> {
  return new Promise((resolve) => {
    let connected = false;
    const headers: Record<string, string> = { connection: 'close', ...options.headers };
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = httpRequest({ host: '127.0.0.1', port, method, path, agent: false, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, reusedSocket: false }));
      res.on('error', (error: NodeJS.ErrnoException) =>
        resolve({ error: error.code ?? error.message, reusedSocket: false, connected: true }),
      );
    });
    req.on('socket', (socket) => socket.once('connect', () => (connected = true)));
    // A reset can reach the client before its 'connect' event has run: only a refusal means the
    // connection was never established.
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ error: error.code ?? error.message, reusedSocket: false, connected: connected || error.code !== 'ECONNREFUSED' }),
    );
    req.end(options.body);
  });
}

export function isAnswer(outcome: HttpAnswer | HttpFailure): outcome is HttpAnswer {
  return 'status' in outcome;
}

/** A draining instance's answer to a connection accepted after the drain began: go elsewhere (src/http/server.ts). */
export function isDrainAnswer(answer: HttpAnswer): boolean {
  return (
    answer.status === 503 &&
    answer.headers['retry-after'] === '1' &&
    answer.headers.connection === 'close' &&
    (JSON.parse(answer.body) as { error?: string }).error === 'unavailable'
  );
}

/** A raw TCP connection: what the server wrote, and when it closed the connection. */
export interface RawConnection {
  socket: Socket;
  received(): string;
  closed: Promise<void>;
  isClosed(): boolean;
}

export function openRaw(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let text = '';
    let isClosed = false;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    // A reset is a close too (the server destroyed the connection).
    socket.on('error', () => undefined);
    const closed = new Promise<void>((done) =>
      socket.once('close', () => {
        isClosed = true;
        done();
      }),
    );
    socket.once('connect', () => resolve({ socket, received: () => text, closed, isClosed: () => isClosed }));
    socket.once('error', reject);
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
