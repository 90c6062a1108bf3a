// What `npm run scale` checks once its instances run (scripts/scale.ts starts them): each check is
// a name and a function of the running cluster that says whether it held and what it saw. A new
// property of a scaled-out deployment is one more entry in `scaleChecks`; the runner and the report
// need no change.
import { createHash } from 'node:crypto';
import type { Config } from '../src/config/index.ts';
import type { Db } from '../src/db/client.ts';
import { createFileStorage } from '../src/storage/file-storage.ts';
import type { TestSmtpServer } from '../test/support/smtp-server.ts';

/** One log line of an instance (pino JSON). */
export type LogLine = Record<string, unknown> & { msg?: unknown };

export interface ScaleInstance {
  name: string;
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  /** Every log line it printed so far. */
  lines: LogLine[];
}

export interface ScaleCluster {
  instances: readonly ScaleInstance[];
  /** An API key with every permission, valid on every instance. */
  key: string;
  /** The instances' shared database, for checks that look at what was stored. */
  db: Db;
  /** The settings every instance runs with (their ports aside), as loaded by the service. */
  config: Config;
  /** A new API key with every permission (its own rate-limit budget), made with the keys CLI. */
  createKey(name: string): Promise<string>;
  /** The SMTP server every instance delivers to: slower to answer than an outbox lease lasts. */
  smtp: TestSmtpServer;
}

export interface CheckOutcome {
  ok: boolean;
  /** One line: what was seen (counts, ids), whether it held or not. */
  detail: string;
}

export interface ScaleCheck {
  name: string;
  run(cluster: ScaleCluster): Promise<CheckOutcome>;
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

async function call(
  instance: ScaleInstance,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown; headers: Headers }> {
  const response = await fetch(`${instance.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: kept as text for the report.
  }
  return { status: response.status, json, headers: response.headers };
}

const graphql = (instance: ScaleInstance, key: string, query: string, variables: Record<string, unknown> = {}) =>
  call(instance, key, 'POST', '/graphql', { query, variables });

/** The start-up line saying what the instance's migration step did (src/db/prepare.ts). */
export function migrationOutcome(lines: readonly LogLine[]): { applied: number } | null {
  for (const line of lines) {
    if (Array.isArray(line.applied)) return { applied: line.applied.length };
  }
  return null;
}

export const migratedOnce: ScaleCheck = {
  name: 'one instance migrates, the others find the schema applied',
  async run({ instances }) {
    const outcomes = instances.map((instance) => ({ name: instance.name, outcome: migrationOutcome(instance.lines) }));
    const migrators = outcomes.filter((entry) => (entry.outcome?.applied ?? 0) > 0);
    const current = outcomes.filter((entry) => entry.outcome?.applied === 0);
    return {
      ok: migrators.length === 1 && current.length === instances.length - 1,
      detail: `${migrators.map((entry) => `${entry.name} applied ${entry.outcome?.applied} migration(s)`).join(', ') || 'no instance applied a migration'}; ${
        current.map((entry) => entry.name).join(', ') || 'none'
      } found the schema current`,
    };
  },
};

/** Reads that touch most of the graph: the same answer from every instance, to the byte. */
const READS: readonly { label: string; method: 'GET' | 'POST'; path: string; body?: unknown }[] = [
  { label: 'GET /api/v1/partner/dealerships', method: 'GET', path: '/api/v1/partner/dealerships' },
  { label: 'GET /dealerships/1/contacts', method: 'GET', path: '/dealerships/1/contacts?per_page=20' },
  { label: 'GET /manufacturers/1/offers.json', method: 'GET', path: '/manufacturers/1/offers.json' },
  {
    label: 'GraphQL cars(first: 50)',
    method: 'POST',
    path: '/graphql',
    body: {
      query: '{ cars(first: 50) { edges { node { id stocknum dapprice reserved dealership { slug } performance { leads_count } } } } }',
    },
  },
];

export const identicalReads: ScaleCheck = {
  name: 'every instance serves identical reads',
  async run({ instances, key }) {
    const differing: string[] = [];
    for (const read of READS) {
      const answers = await Promise.all(instances.map((instance) => call(instance, key, read.method, read.path, read.body)));
      const shapes = new Set(answers.map((answer) => `${answer.status} ${JSON.stringify(answer.json)}`));
      if (shapes.size !== 1 || answers[0]?.status !== 200)
        differing.push(`${read.label} (${answers.map((answer) => answer.status).join('/')})`);
    }
    return {
      ok: differing.length === 0,
      detail:
        differing.length === 0
          ? `${READS.length} reads answered 200 and identically by all ${instances.length}`
          : `differ or fail: ${differing.join(', ')}`,
    };
  },
};

const CAR_RESERVED = 'query ($id: String!) { car(id: $id) { id reserved } }';

export const writesVisible: ScaleCheck = {
  name: 'a write on one instance is visible on the others at once',
  async run({ instances, key, db }) {
    const [writer, ...readers] = instances;
    if (!writer) return { ok: false, detail: 'no instance' };
    const car = await db.car.findFirst({ where: { reserved: false }, orderBy: { id: 'asc' }, select: { id: true } });
    if (!car) return { ok: false, detail: 'no unreserved car in the seeded data' };
    const reserved = await call(writer, key, 'PUT', `/api/v1/cars/${car.id}/reserve?reserved=true`);
    const seen = await Promise.all(readers.map((reader) => graphql(reader, key, CAR_RESERVED, { id: String(car.id) })));
    const seenReserved = seen.map((answer) => (answer.json as { data?: { car?: { reserved?: boolean } } }).data?.car?.reserved);
    // The one-winner rule holds across instances: a second reservation elsewhere is refused.
    const again = readers[0] ? await call(readers[0], key, 'PUT', `/api/v1/cars/${car.id}/reserve?reserved=true`) : null;
    await call(writer, key, 'PUT', `/api/v1/cars/${car.id}/reserve?reserved=false`);
    const ok = reserved.status === 200 && seenReserved.every((value) => value === true) && again?.status === 409;
    return {
      ok,
      detail: `car ${car.id} reserved on ${writer.name} (${reserved.status}); ${readers.map((reader, index) => `${reader.name} sees reserved=${seenReserved[index]}`).join(', ')}; reserving again on ${readers[0]?.name}: ${again?.status}`,
    };
  },
};

// The smallest PDF the service accepts, and a PNG pixel.
const PDF_BYTES = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
const PNG_BYTES = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

export const sharedFiles: ScaleCheck = {
  name: 'a file stored through one instance is read through another',
  async run({ instances, key, db, config }) {
    const [first, second, third] = instances;
    if (!first || !second || !third) return { ok: false, detail: 'needs 3 instances' };
    const dealership = await db.dealership.findFirst({ orderBy: { id: 'asc' }, select: { id: true } });
    if (!dealership) return { ok: false, detail: 'no dealership in the seeded data' };
    const created = await call(first, key, 'POST', '/api/v1/leads', {
      lead: {
        name: 'Scale Test',
        email: 'scale.test@example.com',
        phone: '0412 345 678',
        dealership_id: dealership.id,
        category: 'Used Vehicle Enquiry',
        source: 'Website',
        lead_files_attributes: [{ file_type: 'resume', file: PDF_BYTES.toString('base64') }],
      },
    });
    const leadId = (created.json as { lead?: { id?: number } }).lead?.id;
    if (created.status !== 201 || leadId === undefined)
      return { ok: false, detail: `creating the lead on ${first.name} answered ${created.status}` };
    const updated = await call(second, key, 'PUT', `/api/v1/leads/${leadId}`, {
      lead: { lead_files_attributes: [{ file_type: 'other', file: PNG_BYTES.toString('base64') }] },
    });
    const files = await db.leadFile.findMany({ where: { lead_id: leadId }, orderBy: { id: 'asc' } });
    // Read back through the store the instances are configured with (the API serves no file bytes),
    // as a third instance would.
    const storage = createFileStorage(config, db);
    const readable = await Promise.all(
      files.map(async (file) => sha256((await storage.get(file.storage_key)) ?? new Uint8Array()) === file.sha256),
    );
    const ok = updated.status === 200 && files.length === 2 && readable.every(Boolean);
    return {
      ok,
      detail: `lead ${leadId}: a PDF stored through ${first.name}, a PNG added through ${second.name} (${updated.status}); ${readable.filter(Boolean).length} of ${files.length} read back intact from the ${storage.kind} store, as ${third.name} reads it`,
    };
  },
};

const KEY_DETAILS = '/api/v1/apikeys/apikey_details.json';

export const sharedRateBudget: ScaleCheck = {
  name: "one key's rate-limit budget is shared by every instance",
  async run({ instances, config, createKey }) {
    const key = await createKey('scale budget');
    const quota = config.rateLimits.keyRequests;
    // Round-robin over the instances: what is left goes down by one whichever instance answers.
    const left: number[] = [];
    const statuses: number[] = [];
    for (let index = 0; index < quota; index += 1) {
      const answer = await call(instances[index % instances.length]!, key, 'GET', KEY_DETAILS);
      statuses.push(answer.status);
      left.push(Number(answer.headers.get('ratelimit-remaining')));
    }
    const refusals = await Promise.all(instances.map((instance) => call(instance, key, 'GET', KEY_DETAILS)));
    const countedDown = left.every((value, index) => value === quota - 1 - index);
    const allServed = statuses.every((status) => status === 200);
    const allRefused = refusals.every((answer) => answer.status === 429 && Number(answer.headers.get('retry-after')) > 0);
    return {
      ok: countedDown && allServed && allRefused,
      detail: `budget ${quota} per window: ${statuses.filter((status) => status === 200).length} answered 200 round-robin, remaining ${left[0]}…${left.at(
        -1,
      )}${countedDown ? ' one by one' : ' NOT one by one'}; then ${refusals.map((answer, index) => `${instances[index]!.name} ${answer.status}`).join(', ')}`,
    };
  },
};

const DELIVERY_TIMEOUT_MS = 120_000;

export const noDuplicateMail: ScaleCheck = {
  name: 'every notification is delivered once, though the mail server is slower than a lease',
  async run({ instances, key, db, smtp }) {
    const dealership = await db.dealership.findFirst({ orderBy: { id: 'asc' }, select: { id: true } });
    if (!dealership) return { ok: false, detail: 'no dealership in the seeded data' };
    const before = await db.outboxMessage.aggregate({ _max: { id: true } });
    const firstId = (before._max.id ?? 0) + 1;
    const LEADS = 6;
    const created = await Promise.all(
      Array.from({ length: LEADS }, (_, index) =>
        call(instances[index % instances.length]!, key, 'POST', '/api/v1/leads', {
          lead: {
            name: `Mail Test ${index}`,
            email: `mail.test.${index}@example.com`,
            phone: '0412 345 678',
            dealership_id: dealership.id,
            category: 'Used Vehicle Enquiry',
            source: 'Website',
          },
        }),
      ),
    );
    if (created.some((answer) => answer.status !== 201))
      return { ok: false, detail: `creating leads answered ${created.map((answer) => answer.status).join('/')}` };
    const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
    let rows = await db.outboxMessage.findMany({ where: { id: { gte: firstId } }, select: { id: true, status: true, attempts: true } });
    while (rows.some((row) => row.status === 'pending') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      rows = await db.outboxMessage.findMany({ where: { id: { gte: firstId } }, select: { id: true, status: true, attempts: true } });
    }
    const sent = rows.filter((row) => row.status === 'sent').length;
    // Only this check's messages: the Message-ID names its outbox row (src/notifications/outbox.ts).
    const ids = new Set(rows.map((row) => row.id));
    const ours = (mail: { messageId: string }): boolean => ids.has(Number(/^<outbox-(\d+)-/.exec(mail.messageId)?.[1]));
    const accepted = new Map<string, number>();
    for (const mail of smtp.received.filter(ours)) accepted.set(mail.messageId, (accepted.get(mail.messageId) ?? 0) + 1);
    const duplicates = [...accepted.values()].reduce((sum, count) => sum + count - 1, 0);
    const arrived = smtp.arrived.filter(ours);
    const arrivedTwice = arrived.length - new Set(arrived.map((mail) => mail.messageId)).size;
    return {
      ok: rows.length > 0 && sent === rows.length && accepted.size === rows.length && duplicates === 0 && arrivedTwice === 0,
      detail: `${LEADS} leads made ${rows.length} messages; ${sent} sent, ${accepted.size} distinct Message-IDs accepted by a server answering after ${smtp.replyDelayMs} ms, ${duplicates} duplicate(s), ${arrivedTwice} content(s) sent twice`,
    };
  },
};

/** In the order the report shows them. */
export const scaleChecks: readonly ScaleCheck[] = [
  migratedOnce,
  identicalReads,
  writesVisible,
  sharedFiles,
  sharedRateBudget,
  noDuplicateMail,
];

/** Runs every check, each on its own: one failing (or throwing) does not hide the others. */
export async function runScaleChecks(
  cluster: ScaleCluster,
  checks: readonly ScaleCheck[] = scaleChecks,
): Promise<{ name: string; outcome: CheckOutcome }[]> {
  const results: { name: string; outcome: CheckOutcome }[] = [];
  for (const check of checks) {
    const outcome = await check
      .run(cluster)
      .catch((error: unknown) => ({ ok: false, detail: `failed: ${error instanceof Error ? error.message : String(error)}` }));
    results.push({ name: check.name, outcome });
  }
  return results;
}

export function formatReport(results: readonly { name: string; outcome: CheckOutcome }[]): string {
  const failed = results.filter((result) => !result.outcome.ok).length;
  return [
    ...results.map((result) => `${result.outcome.ok ? 'PASS' : 'FAIL'}  ${result.name}\n      ${result.outcome.detail}`),
    '',
    failed === 0 ? `all ${results.length} checks held` : `${failed} of ${results.length} checks failed`,
  ].join('\n');
}
