// The API key CLI: npm run --silent keys -- <command> [options]. See `keys help`.
import { parseArgs } from 'node:util';
import { issueKey, revokeKey, rotateKey } from '../src/auth/api-keys.ts';
import {
  addDealerships,
  assertDealershipsExist,
  findKeyId,
  grantPermissions,
  listKeys,
  lockToDocumentApps,
  unlockDocumentApps,
  parsePermissions,
  removeDealerships,
  removePermissions,
  showKey,
  type KeySummary,
} from '../src/auth/key-admin.ts';
import { allPermissions } from '../src/auth/permissions.ts';
import type { Engine } from '../src/config/index.ts';
import { databaseNow } from '../src/db/clock.ts';
import type { Db } from '../src/db/client.ts';
import { summariseKeyCalls, type KeyCallSummaryRow } from '../src/domain/api-key-calls.ts';
import { checkAppName } from '../src/domain/trusted-documents.ts';
import { print, runCliCommand, textTable, usageFailure, UsageError, wholeNumber } from './cli-command.ts';
import { connectRedis, redisKeyChangeFeed } from '../src/redis/client.ts';
import { redisKeyPrefixOf } from '../src/domain/shared-settings.ts';
import pino from 'pino';

const usage = `Usage: npm run --silent keys -- <command> [options]

  create --name NAME (--permission P ... | --all-permissions) [--dealership ID ...] [--app APP ...] [--expires-in-days N]
                      prints the new key's secret (shown once; only its hash is stored)
  list                every key, its status, permissions and dealerships
  show ID             one key in full
  rotate ID [--overlap-hours H]
                      prints a new secret; the old one keeps working for H hours (default 24, 0 = now)
  revoke ID           the key stops working on its next request
  grant ID --permission P ...           add permissions
  remove ID --permission P ...          remove permissions
  restrict ID --dealership ID ...       limit the key to (more) dealerships
  unrestrict ID --dealership ID ...     take dealerships off the key's list
  lock ID --app APP ...                 /graphql runs only the trusted documents of these applications
                      (docs/trusted-documents.md); the REST paths are not affected
  unlock ID [--app APP ...]             take applications off the lock (all without --app): any document again
  audit ID|PREFIX [--since 24h]         the key's calls by operation and status (--since: 30m, 24h, 7d …);
                      PREFIX is dlr_<lookup id> as list and show print it

  --json              machine-readable output
Permissions: ${allPermissions.join(', ')}`;

function parseCommandLine() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        permission: { type: 'string', multiple: true },
        'all-permissions': { type: 'boolean' },
        dealership: { type: 'string', multiple: true },
        app: { type: 'string', multiple: true },
        'expires-in-days': { type: 'string' },
        'overlap-hours': { type: 'string' },
        since: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    // node:util's message names the option and how to pass a value that starts with a dash.
    usageFailure(usage, error instanceof Error ? error.message : String(error));
  }
}

const { values, positionals } = parseCommandLine();

function keyId(): number {
  return wholeNumber(positionals[1], 'the key ID');
}

function dealershipIds(): number[] {
  return (values.dealership ?? []).map((value) => wholeNumber(value, '--dealership'));
}

function documentApps(): string[] {
  return (values.app ?? []).map((app) => checkAppName(app, '--app'));
}

function describe(key: KeySummary): string {
  return [
    `#${key.id} ${key.name} [${key.status}]`,
    `  permissions: ${key.permissions.join(', ') || '(none)'}`,
    `  dealerships: ${key.dealership_ids.length > 0 ? key.dealership_ids.join(', ') : 'all'}`,
    `  documents: ${key.document_apps.length > 0 ? `the trusted documents of ${key.document_apps.join(', ')}` : 'any'}`,
    `  created ${key.created_at}; expires ${key.expires_at ?? 'never'}; last used ${key.last_used_at ?? 'never'}${key.revoked_at ? `; revoked ${key.revoked_at}` : ''}`,
    ...key.secrets.map((s) => `  secret dlr_${s.lookup_id}_…  created ${s.created_at}${s.retires_at ? `, retires ${s.retires_at}` : ''}`),
  ].join('\n');
}

const DURATION_UNITS_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `30m`, `24h`, `7d`: how far back `audit` looks. */
function sinceMs(value: string | undefined): number {
  const match = /^(\d+)([mhd])$/.exec(value ?? '24h');
  if (!match || Number(match[1]) === 0) throw new UsageError('--since must be a number of minutes, hours or days, e.g. 30m, 24h, 7d');
  return Number(match[1]) * DURATION_UNITS_MS[match[2] as keyof typeof DURATION_UNITS_MS];
}

/** The audit as an aligned table, with each door's share of the calls. */
function auditTable(rows: readonly KeyCallSummaryRow[]): string {
  const header = ['OPERATION', 'STATUS', 'CALLS', 'REST', 'GRAPHQL', 'LAST SEEN'];
  const cells = rows.map((row) => [
    row.operation,
    String(row.status),
    String(row.calls),
    String(row.rest),
    String(row.graphql),
    row.last_seen_at,
  ]);
  return textTable(header, cells);
}

const commands = new Set([
  'create',
  'list',
  'show',
  'rotate',
  'revoke',
  'grant',
  'remove',
  'restrict',
  'unrestrict',
  'lock',
  'unlock',
  'audit',
]);

/** Runs the command; answers the id of a key whose verdict instances must drop, if any. */
async function run(db: Db, engine: Engine): Promise<number | null> {
  // The database's time, as the instances use it: a revocation or an expiry set from a machine whose
  // clock is off takes effect when it says, not minutes early or late.
  const now = await databaseNow(db, engine);
  const command = positionals[0];
  switch (command) {
    case 'create': {
      if (!values.name) throw new UsageError('create needs --name');
      const permissions = values['all-permissions'] ? allPermissions : parsePermissions(values.permission ?? []);
      if (permissions.length === 0) throw new UsageError('create needs --permission P (repeatable) or --all-permissions');
      const dealerships = dealershipIds();
      await assertDealershipsExist(db, dealerships);
      const days = values['expires-in-days'];
      const expiresAt = days === undefined ? null : new Date(now.getTime() + wholeNumber(days, '--expires-in-days') * 86_400_000);
      const created = await issueKey(db, {
        name: values.name,
        permissions,
        dealershipIds: dealerships,
        documentApps: documentApps(),
        expiresAt,
      });
      // Only the secret on stdout, so `KEY=$(npm run --silent keys -- create ...)` works.
      print(values.json, { id: created.id, key: created.key }, created.key);
      return null;
    }
    case 'list': {
      const keys = await listKeys(db, now);
      print(values.json, keys, keys.length > 0 ? keys.map(describe).join('\n') : 'no keys yet');
      return null;
    }
    case 'show': {
      const key = await showKey(db, keyId(), now);
      print(values.json, key, describe(key));
      return null;
    }
    case 'rotate': {
      const id = keyId();
      await showKey(db, id, now);
      const overlapHours = values['overlap-hours'] === undefined ? 24 : wholeNumber(values['overlap-hours'], '--overlap-hours');
      const key = await rotateKey(db, id, overlapHours * 3_600_000, now);
      print(values.json, { id, key, previous_secrets_retire_at: new Date(now.getTime() + overlapHours * 3_600_000).toISOString() }, key);
      return id;
    }
    case 'revoke': {
      const id = keyId();
      await showKey(db, id, now);
      await revokeKey(db, id, now);
      print(values.json, { id, revoked_at: now.toISOString() }, `key #${id} revoked`);
      return id;
    }
    case 'grant':
    case 'remove': {
      const id = keyId();
      const permissions = parsePermissions(values.permission ?? []);
      if (permissions.length === 0) throw new UsageError(`${command} needs --permission P`);
      await (command === 'grant' ? grantPermissions : removePermissions)(db, id, permissions);
      const key = await showKey(db, id, now);
      print(values.json, key, describe(key));
      return id;
    }
    case 'restrict':
    case 'unrestrict': {
      const id = keyId();
      const dealerships = dealershipIds();
      if (dealerships.length === 0) throw new UsageError(`${command} needs --dealership ID`);
      await (command === 'restrict' ? addDealerships : removeDealerships)(db, id, dealerships);
      const key = await showKey(db, id, now);
      print(values.json, key, describe(key));
      return id;
    }
    case 'lock':
    case 'unlock': {
      const id = keyId();
      const apps = documentApps();
      if (command === 'lock' && apps.length === 0) throw new UsageError('lock needs --app APP');
      if (command === 'lock') await lockToDocumentApps(db, id, apps);
      else await unlockDocumentApps(db, id, apps.length > 0 ? apps : null);
      const key = await showKey(db, id, now);
      print(values.json, key, describe(key));
      return id;
    }
    case 'audit': {
      const reference = positionals[1];
      if (!reference) throw new UsageError('audit needs the key ID or its dlr_<lookup id> prefix');
      const window = sinceMs(values.since);
      const key = await showKey(db, await findKeyId(db, reference), now);
      const since = new Date(now.getTime() - window);
      const rows = await summariseKeyCalls(db, key.id, since);
      const total = rows.reduce((sum, row) => sum + row.calls, 0);
      const title = `key #${key.id} ${key.name} [${key.status}]: ${total} call(s) from ${since.toISOString()} to ${now.toISOString()}`;
      print(
        values.json,
        {
          api_key: { id: key.id, name: key.name, status: key.status },
          since: since.toISOString(),
          until: now.toISOString(),
          calls: total,
          operations: rows,
        },
        rows.length > 0 ? `${title}\n${auditTable(rows)}` : title,
      );
      return null;
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

/** How long the announcement of a key change may wait for Redis before the command gives up on it. */
const ANNOUNCE_TIMEOUT_MS = 2_000;

/**
 * Running instances drop what they remember of the key at once. The change is stored already, so
 * the command has done its work whatever Redis does: a Redis that does not answer within
 * ANNOUNCE_TIMEOUT_MS (down, or frozen) is never waited on, and is one warning line on stderr with
 * exit code 0, saying when the instances see the change instead: each refuses or re-reads the key
 * once the verdict it remembers expires (API_KEY_CACHE_TTL_MS, src/auth/key-cache.ts), and an open
 * subscription stream of the key follows at its next event or heartbeat after that.
 */
async function announceKeyChange(redisUrl: string, prefix: string, apiKeyId: number, keyCacheTtlMs: number): Promise<void> {
  // The feed logs a failure to publish rather than throwing it: this logger notes it, and writes
  // nothing (the command says the outcome itself, in one line).
  let failed = false;
  const logger = pino({ level: 'warn' }, { write: () => (failed = true) });
  const redis = connectRedis(redisUrl, logger, prefix);
  let timer: NodeJS.Timeout | undefined;
  const tooLate = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no answer')), ANNOUNCE_TIMEOUT_MS);
  });
  try {
    await Promise.race([
      (async () => {
        await redis.ready(ANNOUNCE_TIMEOUT_MS);
        // Connecting may have logged a retry before Redis answered: only the publishing counts.
        failed = false;
        await redisKeyChangeFeed(redis, logger).publish(apiKeyId);
        if (failed) throw new Error('not published');
      })(),
      tooLate,
    ]);
  } catch {
    console.error(
      `warning: key ${apiKeyId} changed and the change is stored, but the key-change broadcast could not be sent now: Redis (REDIS_URL) did not answer within ${ANNOUNCE_TIMEOUT_MS} ms. Running instances see the change within API_KEY_CACHE_TTL_MS (${keyCacheTtlMs} ms), when the verdict they remember expires, instead of at once; open subscription streams of the key at their next event or heartbeat after that`,
    );
  } finally {
    clearTimeout(timer);
    // Not QUIT, which waits for an answer from a Redis that may give none.
    redis.client.disconnect();
    redis.subscriber.disconnect();
  }
}

await runCliCommand({
  usage,
  commands,
  positionals,
  help: values.help,
  async run(db, config) {
    const changed = await run(db, config.engine);
    // On the channel of the service's instances: the prefix they use (REDIS_KEY_PREFIX, or the database's own).
    if (changed !== null && config.redisUrl)
      await announceKeyChange(config.redisUrl, await redisKeyPrefixOf(db, config.redisKeyPrefix), changed, config.apiKeyCacheTtlMs);
  },
});
// The command is over: the Redis client may still hold timers of its own (a connect timeout, a
// reconnection) after it was told to disconnect from a Redis that did not answer.
process.exit();
