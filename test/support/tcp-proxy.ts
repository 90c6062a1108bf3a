// A TCP proxy on a loopback port in front of a real server (PostgreSQL, Redis), which a test
// controls to make that server fail as networks and databases do: frozen (nothing answers, the
// connections stay open), cut (every connection reset, as pg_terminate_backend or a failover),
// or gone (connections refused).
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Nothing is forwarded any more, either way, and new connections are accepted but never reach the server. */
  freeze(): void;
  /** Forwards again, what was held included. */
  thaw(): void;
  /** Resets every open connection; new ones are still forwarded. */
  cutConnections(): void;
  /** Closes the listening port and resets every connection: connections are refused. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket | null }>();
  let frozen = false;
  const waiting: (() => void)[] = [];

  const forward = (client: Socket): void => {
    const pair: { client: Socket; upstream: Socket | null } = { client, upstream: null };
    pairs.add(pair);
    client.on('error', () => undefined);
    client.once('close', () => {
      pair.upstream?.destroy();
      pairs.delete(pair);
    });
    const open = (): void => {
      if (client.destroyed) return;
      const upstream = connect(target);
      pair.upstream = upstream;
      upstream.on('error', () => client.destroy());
      upstream.once('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    };
    if (frozen) {
      client.pause();
      waiting.push(open);
    } else open();
  };

  let server: Server = createServer(forward);
  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
  const port = await listen(0);

  const cut = (): void => {
    for (const { client, upstream } of pairs) {
      client.resetAndDestroy();
      upstream?.resetAndDestroy();
    }
  };

  return {
    port,
    freeze() {
      frozen = true;
      for (const { client, upstream } of pairs) {
        client.pause();
        upstream?.pause();
      }
    },
    thaw() {
      frozen = false;
      for (const { client, upstream } of pairs) {
        client.resume();
        upstream?.resume();
      }
      for (const open of waiting.splice(0)) open();
    },
    cutConnections: cut,
    stop() {
      cut();
      return new Promise((resolve) => server.close(() => resolve()));
    },
    async start() {
      server = createServer(forward);
      await listen(port);
    },
  };
}
