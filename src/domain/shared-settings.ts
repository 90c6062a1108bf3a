// Settings every instance sharing a database must agree on. The session signing secret is one: an
// instance signing handoff sessions with another secret than its peers hands out sessions the
// platform refuses, one request in N, and nothing else would notice. So the first instance to start
// records a fingerprint of its secret in shared_settings, and every later start compares with it.
//
// The fingerprint is an HMAC-SHA256 of a fixed label under the secret: it identifies the secret
// without revealing it, and, unlike a plain hash, cannot be checked against guesses without also
// computing an HMAC per guess under each candidate secret (the label makes it useless for anything
// else the secret signs). The secret itself is never stored.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '../config/index.ts';
import { isUniqueViolation, type Db } from '../db/client.ts';

const SESSION_SECRET_FINGERPRINT_SETTING = 'session_signing_secret_fingerprint';
const FINGERPRINT_LABEL = 'dealership-gateway: session signing secret fingerprint, v1';

export function sessionSecretFingerprint(secret: string): string {
  return `hmac-sha256:${createHmac('sha256', secret).update(FINGERPRINT_LABEL).digest('base64url')}`;
}

const sameText = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** How to change the secret for every instance: also the end of the start-up error. */
const SESSION_SECRET_ROTATION_HINT =
  'to change it for every instance, run `npm run --silent secrets -- record-session-secret` with the new SESSION_SIGNING_SECRET, then restart every instance with it';

/**
 * Records this instance's fingerprint when none is recorded yet (the first start, or concurrent
 * first starts: the primary key lets one of them win and the others compare with it), else checks
 * it. Throws a ConfigError naming SESSION_SIGNING_SECRET when it differs.
 */
export async function checkSessionSecret(db: Db, secret: string): Promise<'recorded' | 'matches'> {
  const fingerprint = sessionSecretFingerprint(secret);
  const where = { name: SESSION_SECRET_FINGERPRINT_SETTING };
  let stored = await db.sharedSetting.findUnique({ where });
  if (!stored) {
    try {
      await db.sharedSetting.create({ data: { ...where, value: fingerprint } });
      return 'recorded';
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      stored = await db.sharedSetting.findUnique({ where });
    }
  }
  if (stored && sameText(stored.value, fingerprint)) return 'matches';
  throw new ConfigError([
    {
      setting: 'SESSION_SIGNING_SECRET',
      message: `differs from the one recorded by the instances already using this database (only its fingerprint is stored): give every instance the same value, or, ${SESSION_SECRET_ROTATION_HINT}`,
    },
  ]);
}

/** The rotation step: makes `secret` the recorded one, whatever was recorded before. */
export async function recordSessionSecret(db: Db, secret: string): Promise<{ replaced: boolean }> {
  const fingerprint = sessionSecretFingerprint(secret);
  const where = { name: SESSION_SECRET_FINGERPRINT_SETTING };
  const before = await db.sharedSetting.findUnique({ where });
  await db.sharedSetting.upsert({ where, create: { ...where, value: fingerprint }, update: { value: fingerprint } });
  return { replaced: before !== null && !sameText(before.value, fingerprint) };
}

const REDIS_KEY_PREFIX_SETTING = 'redis_key_prefix';

/**
 * The prefix of every Redis key and channel of this deployment: the configured one (REDIS_KEY_PREFIX),
 * else `dgw:<id>:` with an id made by the first instance to ask and kept in shared_settings. So every
 * instance (and CLI) of one database agrees on it without being told, and two deployments with their
 * own databases on one Redis server never read each other's entries, though their key ids repeat.
 */
export async function redisKeyPrefixOf(db: Db, configured: string | null): Promise<string> {
  if (configured !== null) return configured;
  const where = { name: REDIS_KEY_PREFIX_SETTING };
  const stored = await db.sharedSetting.findUnique({ where });
  if (stored) return stored.value;
  const made = `dgw:${randomBytes(6).toString('base64url')}:`;
  try {
    await db.sharedSetting.create({ data: { ...where, value: made } });
    return made;
  } catch (error) {
    // Concurrent first starts: one recorded its id; every instance takes that one.
    if (!isUniqueViolation(error)) throw error;
    return (await db.sharedSetting.findUniqueOrThrow({ where })).value;
  }
}

const CACHE_EPOCH_SETTING = 'cache_epoch';
/** How often every instance reads the cache epoch: the bound on serving a result from before a write Redis missed. */
export const CACHE_EPOCH_POLL_MS = 1_000;

/**
 * The cache epoch: a second channel for "a write happened", through the database, for the writes whose
 * new cache generation could not be published in Redis (src/gateway/response-cache.ts). Every instance reads
 * it every `pollMs` and names its cache entries with it, so an instance cut off from Redis still makes
 * every other instance stop serving results from before its write within about `pollMs`.
 */
export interface CacheEpoch {
  /** The epoch last read ('' before the first read). */
  current(): string;
  /** Starts a new epoch, for every instance (and for this one at once). */
  advance(): Promise<void>;
  stop(): void;
}

export function watchCacheEpoch(db: Db, pollMs: number): CacheEpoch {
  const where = { name: CACHE_EPOCH_SETTING };
  let epoch = '';
  const read = async (): Promise<void> => {
    try {
      epoch = (await db.sharedSetting.findUnique({ where }))?.value ?? '';
    } catch {
      // The database did not answer: the epoch read last stands until the next poll.
    }
  };
  void read();
  const timer = setInterval(() => void read(), pollMs);
  timer.unref();
  return {
    current: () => epoch,
    async advance() {
      const value = randomBytes(9).toString('base64url');
      await db.sharedSetting.upsert({ where, create: { ...where, value }, update: { value } });
      epoch = value;
    },
    stop: () => clearInterval(timer),
  };
}
