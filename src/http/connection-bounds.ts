// What the HTTP server's connections may hold, kind by kind, so that no kind can take every
// connection from the others (src/http/server.ts). Subscription streams are counted by the live event
// hub (SUBSCRIPTIONS_PER_INSTANCE, src/gateway/live-events.ts); this module keeps the other two kinds:
// - request bodies still arriving: every one is known, so that a drain can answer each before its
//   connection closes, and those still arriving after the turn their headers came in (uploads in
//   flight) are held to HTTP_MAX_UPLOADS;
// - idle keep-alive connections: known longest idle first, so that the ones idle longest are closed
//   when the free connections fall below HTTP_RESERVED_CONNECTIONS.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A request whose body is still arriving, and how to stop reading it when the server answers it itself. */
interface ArrivingBody {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  /** Stops reading the body: what else arrives is dropped. */
  stop: () => void;
}

/** Every request whose body is still arriving, and among them the uploads in flight, held to their bound. */
export class ArrivingBodies {
  readonly #arriving = new Map<ServerResponse, ArrivingBody>();
  readonly #uploads = new Set<ServerResponse>();

  constructor(readonly maxUploads: number) {}

  /** Known until the body has arrived, the request ends, or its answer is done. */
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

  /**
   * The body is still arriving after the turn its headers came in: it takes a place among the uploads
   * in flight, or is refused (false) when every place is taken.
   */
  admitUpload(res: ServerResponse): boolean {
    if (!this.#arriving.has(res)) return true;
    if (this.#uploads.size >= this.maxUploads) return false;
    this.#uploads.add(res);
    return true;
  }

  /** The requests whose body is still arriving now. */
  arriving(): ArrivingBody[] {
    return [...this.#arriving.values()].filter(({ req }) => !req.complete);
  }
}

/**
 * Keep-alive connections with no request on them, longest idle first. Each is noted with the bytes
 * read from it when it became idle: more since means its next request is arriving, so it is not idle.
 */
export class IdleConnections {
  readonly #idle = new Map<Socket, number>();

  /** Its last answer is done and nothing else is asked on it. */
  markIdle(socket: Socket): void {
    if (socket.destroyed || !socket.writable) return;
    // Deleted first, so that the map's order stays the order in which they became idle.
    this.#idle.delete(socket);
    this.#idle.set(socket, socket.bytesRead);
  }

  /** A request arrived on it, or it closed. */
  forget(socket: Socket): void {
    this.#idle.delete(socket);
  }

  /** Closes up to `count` of the longest idle; returns how many it closed. */
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
