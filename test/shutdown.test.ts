// SIGTERM to the real service process under load loses nothing: 32 keep-alive clients (reads and lead
// POSTs) are running when the signal arrives; every request the server received is answered (an
// upload whose body is still arriving at the signal too, once it has arrived), every 201 lead is
// stored and no other lead is, /ready turns 503, and the process exits 0 having cut no connection. The process runs src/index.ts through tsx (the same code `npm start` runs compiled).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../src/config/index.ts';
import { createDb, type Db } from '../src/db/client.ts';
import { testSettings } from './support/app.ts';
import { createMigratedDatabase, type TestDatabase } from './support/database.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { samplePayload } from './support/fixtures-leads.ts';
import {
  isAnswer,
  isDrainAnswer,
  keepAliveClient,
  openRaw,
  sleep,
  type HttpAnswer,
  type HttpFailure,
  type KeepAliveClient,
} from './support/http-client.ts';
import { freePort } from '../scripts/free-port.ts';
import { NO_ENV_FILE } from './support/processes.ts';

const CLIENTS = 32;
/** Every client stops after this many requests, whatever happens (bounds the test). */
const MAX_REQUESTS_PER_CLIENT = 150;
/** The signal is sent once this many answers have come back: the clients are mid-load. */
const ANSWERS_BEFORE_SIGTERM = 120;
// Generous, so that a slow shared machine does not make the service cut requests at the end of the
// grace period (the test then asserts that nothing was cut).
const GRACE_MS = 20_000;

interface LogLine {
  msg: string;
  port?: number;
  [field: string]: unknown;
}

interface Outcome {
  method: 'GET' | 'POST';
  email?: string;
  afterSigterm: boolean;
  result: HttpAnswer | HttpFailure;
}

let database: TestDatabase;
let db: Db;
let storageDir: string;
let key: string;
let dealershipId: number;
let child: ChildProcess;
const logs: LogLine[] = [];
let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

function startProcess(port: number): Promise<void> {
  child = spawn(process.execPath, ['--import', 'tsx', 'src/index.ts'], {
    cwd: projectRoot,
    env: {
      PATH: process.env.PATH,
      ...NO_ENV_FILE,
      ...testSettings,
      DATABASE_URL: database.url,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      SEED_DEMO_DATA: 'false',
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
      // The /ready request below keeps its headers open across the signal on purpose; and on a
      // machine busy enough to stall a client for seconds, the normal keep-alive timeout would
      // close connections before the signal (the race every HTTP/1.1 keep-alive client must retry),
      // which is not what this test is about.
      HTTP_HEADERS_TIMEOUT_MS: '60000',
      HTTP_REQUEST_TIMEOUT_MS: '60000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '60000',
      FILE_STORAGE_DIR: storageDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let pending = '';
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as LogLine;
        logs.push(entry);
        if (entry.msg.startsWith('listening')) resolve();
      }
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening: ${stderr}`)));
  });
}

let port: number;

beforeAll(async () => {
  database = await createMigratedDatabase();
  db = createDb(database.url);
  storageDir = mkdtempSync(path.join(tmpdir(), 'shutdown-files-'));
  dealershipId = (await makeDealership(db)).id;
  key = (await makeKey(db, { permissions: ['create:lead'] })).key;
  port = await freePort();
  await startProcess(port);
}, 180_000);

afterAll(async () => {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await db.$disconnect();
  await database.drop();
  rmSync(storageDir, { recursive: true, force: true });
});

describe('SIGTERM under load', () => {
  it('answers every request received, stores exactly the 201 leads, turns /ready 503 and exits 0 within the grace period', async () => {
    const outcomes: Outcome[] = [];
    let answers = 0;
    let sigtermSent = false;
    let sigterm: () => void = () => undefined;
    const sigtermSentNow = new Promise<void>((resolve) => (sigterm = resolve));

    const runClient = async (client: KeepAliveClient, index: number): Promise<void> => {
      for (let i = 0; i < MAX_REQUESTS_PER_CLIENT; i += 1) {
        const isPost = i % 4 === 0;
        const email = `drain.${index}.${i}@example.com`;
        const afterSigterm = sigtermSent;
        const result = isPost
          ? await client.send('POST', '/api/v1/leads', {
              headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
              body: JSON.stringify({
                lead: samplePayload(dealershipId, { email, phone: `04${String(10_000_000 + index * 1000 + i).slice(-8)}` }),
              }),
            })
          : await client.send('GET', '/api/v1/apikeys/apikey_details.json', { headers: { authorization: `Bearer ${key}` } });
        outcomes.push({ method: isPost ? 'POST' : 'GET', ...(isPost ? { email } : {}), afterSigterm, result });
        if (!isAnswer(result)) return; // the server is gone for this client
        answers += 1;
        if (!sigtermSent && answers >= ANSWERS_BEFORE_SIGTERM) {
          sigtermSent = true;
          sigterm();
        }
      }
    };

    const clients = Array.from({ length: CLIENTS }, () => keepAliveClient(port));
    // Every client opens its keep-alive connection first: the load runs on established connections.
    for (const opened of await Promise.all(clients.map((client) => client.send('GET', '/health'))))
      expect(opened).toMatchObject({ status: 200 });
    expect(await clients[0]?.send('GET', '/ready')).toMatchObject({ status: 200, body: '{"status":"ready"}' });
    // A /ready request whose headers are still arriving when the signal comes; it is completed once
    // the service has logged that it is shutting down.
    const readiness = await openRaw(port);
    readiness.socket.write('GET /ready HTTP/1.1\r\nHost: gateway.test\r\n');
    // A lead POST whose body is still arriving when the signal comes; the rest is sent once the
    // service is draining.
    const uploadEmail = 'drain.upload@example.com';
    const uploadBody = JSON.stringify({ lead: samplePayload(dealershipId, { email: uploadEmail }) });
    const upload = await openRaw(port);
    upload.socket.write(
      `POST /api/v1/leads HTTP/1.1\r\nHost: gateway.test\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(uploadBody)}\r\n\r\n${uploadBody.slice(0, 40)}`,
    );

    const load = Promise.all(clients.map((client, index) => runClient(client, index)));
    await sigtermSentNow;
    child.kill('SIGTERM');
    while (!logs.some(({ msg }) => msg.startsWith('shutting down'))) await sleep(5);
    readiness.socket.write('\r\n');
    await sleep(100);
    upload.socket.write(uploadBody.slice(40));
    await load;
    await readiness.closed;
    await upload.closed;
    const exit = await exited;
    for (const client of clients) client.close();

    // Every request was answered, except those that found no server to connect to after the signal:
    // refused, or reset on a new connection by the kernel as the listening socket closed, before the
    // process accepted it (the race src/http/server.ts's closeListener narrows but cannot close; Node
    // 22 meets it more often). An accepted connection is never reset: nothing is cut (below) and a
    // reset POST is not stored.
    const neverAccepted = (result: HttpFailure): boolean =>
      !result.reusedSocket && (result.error === 'ECONNREFUSED' || result.error === 'ECONNRESET');
    const refused = outcomes.filter(({ result }) => !isAnswer(result) && neverAccepted(result));
    const unanswered = outcomes.filter(({ result }) => !isAnswer(result) && !refused.some((entry) => entry.result === result));
    const report = JSON.stringify(
      logs.filter(({ msg }) => msg === 'stopped' || msg.startsWith('shutting down') || msg.startsWith('grace')),
    );
    expect(unanswered, report).toEqual([]);
    expect(refused.every(({ afterSigterm }) => afterSigterm)).toBe(true);
    const answered = outcomes.filter((outcome): outcome is Outcome & { result: HttpAnswer } => isAnswer(outcome.result));
    expect(answered.filter(({ afterSigterm }) => afterSigterm).length).toBeGreaterThan(0);
    // A request on a new connection made after the signal may meet the listening socket still open
    // (it closes once no connection waits to be accepted): it is answered 503, go elsewhere.
    const drainAnswers = answered.filter(({ result }) => isDrainAnswer(result));
    expect(drainAnswers.every(({ afterSigterm, result }) => afterSigterm && !result.reusedSocket)).toBe(true);
    expect(
      answered
        .filter(({ method, result }) => !isDrainAnswer(result) && result.status !== (method === 'POST' ? 201 : 200))
        .map(({ result }) => [result.status, result.body]),
    ).toEqual([]);
    // Answers given during the drain told their clients to go (Connection: close).
    expect(answered.some(({ result }) => result.headers.connection === 'close')).toBe(true);

    // The upload in flight at the signal got its completed answer, and told its client to go.
    expect(upload.received()).toMatch(/^HTTP\/1\.1 201 /);
    expect(upload.received().toLowerCase()).toContain('\r\nconnection: close\r\n');

    // Stored leads are exactly the ones answered 201.
    const stored = await db.lead.findMany({ where: { email: { startsWith: 'drain.' } }, select: { email: true } });
    // A POST answered 503 while draining (on a new connection after the signal) was refused, not stored.
    const created = [
      ...answered.filter(({ method, result }) => method === 'POST' && !isDrainAnswer(result)).map(({ email }) => email),
      uploadEmail,
    ];
    expect(stored.map(({ email }) => email).sort()).toEqual([...created].sort());

    // /ready is 503 once draining, and the connection is closed after the answer.
    const [head = '', body = ''] = readiness.received().split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 503 /);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(body)).toEqual({ status: 'draining' });

    // Exit 0, within the grace period: nothing had to be cut.
    expect(exit).toEqual({ code: 0, signal: null });
    const stopped = logs.find(({ msg }) => msg === 'stopped');
    expect(stopped).toMatchObject({ signal: 'SIGTERM', cutConnections: 0, closedInTime: true });
    console.info(
      `SIGTERM under load: ${outcomes.length} requests (${created.length} leads created), ${answered.filter(({ afterSigterm }) => afterSigterm).length} answered after the signal, ${refused.length} refused new connections, ${unanswered.length} unanswered; drained in ${String(stopped?.ms)} ms`,
    );
  }, 120_000);
});
