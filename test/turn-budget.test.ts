// How much request work one turn of the event loop starts (src/http/turn-budget.ts): while
// connections arrive, a busy turn ends once its budget is spent, so the listening socket (one accept
// per turn, as libuv does it) takes the next connection soon; otherwise requests start where they
// are read.
import { connect, type Socket } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createLifecycle } from '../src/gateway/lifecycle.ts';
import type { Yoga } from '../src/gateway/yoga.ts';
import { createHttpServer, type GatewayServer } from '../src/http/server.ts';
import { BURST_WINDOW_MS, TurnBudget } from '../src/http/turn-budget.ts';
import { Response } from '../src/web/fetch-api.ts';

/** Resolves after the check phase of the turn after this one (setImmediate from a check phase runs in the next turn). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('TurnBudget', () => {
  /**
   * A budget of 5 ms on a clock that moves only when a start says it worked, with the names of the
   * starts run so far; `connected` notes a connection first, so starts keep to the budget.
   */
  function budget({ connected }: { connected: boolean }) {
    let at = 1_000;
    const spend = (ms: number) => (at += ms);
    const turns = new TurnBudget(5, () => at);
    if (connected) turns.noteConnection();
    const started: string[] = [];
    /** A start named `name` that works for `ms`. */
    const costing = (name: string, ms: number) => () => {
      started.push(name);
      spend(ms);
    };
    return { turns, started, costing, spend };
  }

  it('starts a request where it is read when no connection arrived lately', () => {
    const { turns, started, costing } = budget({ connected: false });
    turns.admit(costing('a', 3));
    expect(started).toEqual(['a']);
    expect(turns.waiting).toBe(0);
  });

  it('after a connection, starts requests in arrival order until the turn has spent its budget, the rest in later turns', async () => {
    const { turns, started, costing } = budget({ connected: true });
    // Read in one turn: 3 + 3 ms spends the 5 ms budget, so c waits.
    turns.admit(costing('a', 3));
    turns.admit(costing('b', 3));
    turns.admit(costing('c', 3));
    expect(started).toEqual([]);
    await nextTurn();
    expect(started).toEqual(['a', 'b']);
    expect(turns.waiting).toBe(1);
    // Read in the next turn: it goes after c, which waited first.
    turns.admit(costing('d', 1));
    await nextTurn();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    expect(turns.waiting).toBe(0);
  });

  it('starts one request per turn when each costs more than the budget', async () => {
    const { turns, started, costing } = budget({ connected: true });
    for (const name of ['0', '1', '2', '3']) turns.admit(costing(name, 20));
    for (let turn = 1; turn <= 4; turn += 1) {
      await nextTurn();
      expect(started).toEqual(['0', '1', '2', '3'].slice(0, turn));
    }
  });

  it('starts where read again once the window after the last connection has passed and nothing waits', async () => {
    const { turns, started, costing, spend } = budget({ connected: true });
    turns.admit(costing('queued', 0));
    spend(BURST_WINDOW_MS);
    // Something still waits: a newer request does not pass it.
    turns.admit(costing('after', 0));
    expect(started).toEqual([]);
    await nextTurn();
    expect(started).toEqual(['queued', 'after']);
    turns.admit(costing('inline', 0));
    expect(started).toEqual(['queued', 'after', 'inline']);
  });
});

describe('the HTTP server under a synchronous load', () => {
  let gateway: GatewayServer | undefined;
  const sockets: Socket[] = [];

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    gateway?.cutConnections();
    await gateway?.drain(0);
    gateway = undefined;
  });

  /** Keeps the event loop busy for `ms`, as a request on SQLite's synchronous driver does. */
  function work(ms: number): void {
    const until = performance.now() + ms;
    while (performance.now() < until);
  }

  const REQUEST = 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

  /** Calls `onAnswer` for each answer on the socket (one small 200 per request). */
  function onAnswers(socket: Socket, onAnswer: () => void): void {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      for (let at = chunk.indexOf('HTTP/1.1 200'); at !== -1; at = chunk.indexOf('HTTP/1.1 200', at + 1)) onAnswer();
    });
  }

  it('accepts connections opened at once while busy ones keep it working, each within a few requests', async () => {
    // An app stand-in whose every request holds the loop for 10 ms.
    const app = {
      handleRequest: () => {
        work(10);
        return new Response('ok', { status: 200, headers: { 'content-type': 'text/plain' } });
      },
    } as unknown as Yoga;
    gateway = createHttpServer(
      app,
      {
        bodyLimitBytes: 1024,
        httpHeadersTimeoutMs: 10_000,
        httpRequestTimeoutMs: 10_000,
        httpKeepAliveTimeoutMs: 10_000,
        httpMaxConnections: 100,
      },
      pino({ level: 'silent' }),
      createLifecycle(),
    );
    const { port } = await gateway.listen(0, '127.0.0.1');
    const open = (): Promise<Socket> =>
      new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => resolve(socket));
        socket.once('error', reject);
        sockets.push(socket);
      });

    // Eight busy keep-alive connections: each sends its next request as soon as it is answered.
    let busyAnswers = 0;
    for (let i = 0; i < 8; i += 1) {
      const socket = await open();
      onAnswers(socket, () => {
        busyAnswers += 1;
        socket.write(REQUEST);
      });
      socket.write(REQUEST);
    }
    while (busyAnswers < 40) await new Promise((resolve) => setTimeout(resolve, 5));

    // Sixteen more at once, one request each: how many busy answers went out before each was answered.
    const waited = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const socket = await open();
        const before = busyAnswers;
        return new Promise<number>((resolve) => {
          onAnswers(socket, () => resolve(busyAnswers - before));
          socket.write(REQUEST);
        });
      }),
    );
    // One accept per turn. Without the budget a turn ran every request read in it, and each
    // connection waited four busy answers longer than the one before (the last, 68); with it, a turn
    // runs one request of 10 ms, and each waits about one longer (the last, 19).
    expect(Math.max(...waited)).toBeLessThan(40);
  });
});
