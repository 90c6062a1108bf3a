// Instances sharing a database must sign with one session secret, or one request in N gets a refused
// session. The first start records an HMAC fingerprint (never the secret), and later starts compare with it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '../config/index.ts';
import { isUniqueViolation, type Db } from '../db/client.ts';

const SESSION_SECRET_FINGERPRINT_SETTING = 'session_signing_secret_fingerprint';
const FINGERPRINT_LABEL = 'dealership-gateway: session signing secret fingerprint, v1';

export function sessionSecretFingerprint(secret: string): string {
  return `hmac-sha256:${createHmac('sha256', secret).update(FINGERPRINT_LABEL).digest('base64url')}`;
}

const sameText = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

const SESSION_SECRET_ROTATION_HINT =
  'to change it for every instance, run `npm run --silent secrets -- record-session-secret` with the new SESSION_SIGNING_SECRET, then restart every instance with it';

/** The setting's value, recorded as `made` if it has none: of concurrent first starts the primary key lets one record it, and all read that. */
async function recordedSetting(db: Db, name: string, made: () => string): Promise<{ value: string; recorded: boolean }> {
  const stored = await db.sharedSetting.findUnique({ where: { name } });
  if (stored) return { value: stored.value, recorded: false };
  const value = made();
  try {
    await db.sharedSetting.create({ data: { name, value } });
    return { value, recorded: true };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return { value: (await db.sharedSetting.findUniqueOrThrow({ where: { name } })).value, recorded: false };
  }
}

export async function checkSessionSecret(db: Db, secret: string): Promise<'recorded' | 'matches'> {
  const fingerprint = sessionSecretFingerprint(secret);
  const stored = await recordedSetting(db, SESSION_SECRET_FINGERPRINT_SETTING, () => fingerprint);
  if (stored.recorded) return 'recorded';
  if (sameText(stored.value, fingerprint)) return 'matches';
  throw new ConfigError([
    {
      setting: 'SESSION_SIGNING_SECRET',
      message: `differs from the one recorded by the instances already using this database (only its fingerprint is stored): give every instance the same value, or, ${SESSION_SECRET_ROTATION_HINT}`,
    },
  ]);
}

export async function recordSessionSecret(db: Db, secret: string): Promise<{ replaced: boolean }> {
  const fingerprint = sessionSecretFingerprint(secret);
  const where = { name: SESSION_SECRET_FINGERPRINT_SETTING };
  const before = await db.sharedSetting.findUnique({ where });
  await db.sharedSetting.upsert({ where, create: { ...where, value: fingerprint }, update: { value: fingerprint } });
  return { replaced: before !== null && !sameText(before.value, fingerprint) };
}

const REDIS_KEY_PREFIX_SETTING = 'redis_key_prefix';

/** Made once per database, so deployments with their own databases on one Redis never read each other's entries. */
export async function redisKeyPrefixOf(db: Db, configured: string | null): Promise<string> {
  if (configured !== null) return configured;
  return (await recordedSetting(db, REDIS_KEY_PREFIX_SETTING, () => `dgw:${randomBytes(6).toString('base64url')}:`)).value;
}

const CACHE_EPOCH_SETTING = 'cache_epoch';
export const CACHE_EPOCH_POLL_MS = 1_000;

/** For writes whose cache generation Redis missed: an instance cut off from Redis still invalidates the others. */
export type CacheEpoch = { current(): string; advance(): Promise<void>; stop(): void };

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
