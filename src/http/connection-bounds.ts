// Bounds per kind of connection, so no kind can take every connection from the others: arriving bodies
// (answered by a drain; uploads held to HTTP_MAX_UPLOADS) and idle keep-alive ones (closed longest idle first).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

interface ArrivingBody {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  stop: () => void;
}

export class ArrivingBodies {
  readonly #arriving = new Map<ServerResponse, ArrivingBody>();
  readonly #uploads = new Set<ServerResponse>();

  constructor(readonly maxUploads: number) {}

  track(body: ArrivingBody): void {
    const { req, res } = body;
    this.#arriving.set(res, body);
    const forget = (): void => {
      this.#arriving.delete(res);
      this.#uploads.delete(res);
    };
    req.once('end', forget);
    req.once('close', forget);
    res.once('close', forget);
  }

  admitUpload(res: ServerResponse): boolean {
    if (!this.#arriving.has(res)) return true;
    if (this.#uploads.size >= this.maxUploads) return false;
    this.#uploads.add(res);
    return true;
  }

  arriving(): ArrivingBody[] {
    return [...this.#arriving.values()].filter(({ req }) => !req.complete);
  }
}

/** More bytes read since a socket became idle means its next request is arriving, so it is not idle. */
export class IdleConnections {
  readonly #idle = new Map<Socket, number>();

  markIdle(socket: Socket): void {
    if (socket.destroyed || !socket.writable) return;
    // Deleted first, so that the map's order stays the order in which they became idle.
    this.#idle.delete(socket);
    this.#idle.set(socket, socket.bytesRead);
  }

  forget(socket: Socket): void {
    this.#idle.delete(socket);
  }

  closeLongestIdle(count: number): number {
    let closed = 0;
    for (const [socket, bytesRead] of this.#idle) {
      if (closed >= count) break;
      this.#idle.delete(socket);
      if (socket.bytesRead !== bytesRead || socket.destroyed) continue;
      socket.destroy();
      closed += 1;
    }
    return closed;
  }
}
