// The recorded fingerprint of the session signing secret, on the engine under test: the first start
// records it, concurrent first starts agree on one, and a differing secret is refused by name.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/index.ts';
import { checkSessionSecret, recordSessionSecret, sessionSecretFingerprint } from '../src/domain/shared-settings.ts';
import { createTestApp } from './support/app.ts';

const secret = (n: number) => `session-signing-secret-number-${n}-0123456789abcdef`;

describe('the session signing secret’s fingerprint', () => {
  it('is an HMAC under the secret: the same for the same secret, different for another, never the secret', () => {
    expect(sessionSecretFingerprint(secret(1))).toBe(sessionSecretFingerprint(secret(1)));
    expect(sessionSecretFingerprint(secret(1))).not.toBe(sessionSecretFingerprint(secret(2)));
    expect(sessionSecretFingerprint(secret(1))).toMatch(/^hmac-sha256:[A-Za-z0-9_-]{43}$/);
    expect(sessionSecretFingerprint(secret(1))).not.toContain('session-signing-secret');
  });

  it('concurrent first starts record one secret; the others compare with it', async () => {
    const app = await createTestApp();
    const outcomes = await Promise.allSettled([1, 2, 3, 1].map((n) => checkSessionSecret(app.db, secret(n))));
    const winner = await app.db.sharedSetting.findUniqueOrThrow({ where: { name: 'session_signing_secret_fingerprint' } });
    const winningSecret = [1, 2, 3].find((n) => sessionSecretFingerprint(secret(n)) === winner.value);
    expect(winningSecret).toBeDefined();
    outcomes.forEach((outcome, index) => {
      const n = [1, 2, 3, 1][index];
      if (n === winningSecret) expect(outcome.status).toBe('fulfilled');
      else {
        expect(outcome.status).toBe('rejected');
        const reason = (outcome as PromiseRejectedResult).reason as ConfigError;
        expect(reason).toBeInstanceOf(ConfigError);
        expect(reason.problems.map((problem) => problem.setting)).toEqual(['SESSION_SIGNING_SECRET']);
      }
    });
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled' && outcome.value === 'recorded')).toHaveLength(1);

    const other = [1, 2, 3].find((n) => n !== winningSecret)!;
    expect(await recordSessionSecret(app.db, secret(other))).toEqual({ replaced: true });
    expect(await checkSessionSecret(app.db, secret(other))).toBe('matches');
    await expect(checkSessionSecret(app.db, secret(winningSecret!))).rejects.toBeInstanceOf(ConfigError);
    expect(await recordSessionSecret(app.db, secret(other))).toEqual({ replaced: false });
  });
});
