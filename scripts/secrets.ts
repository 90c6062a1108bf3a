// The stored secrets' CLI: npm run --silent secrets -- <command>. See `secrets help`.
import { parseArgs } from 'node:util';
import { loadSecretsConfig, loadSessionSecretConfig, processEnvironment } from '../src/config/index.ts';
import { recordSessionSecret } from '../src/domain/shared-settings.ts';
import type { Db } from '../src/db/client.ts';
import { failIfDatabaseUnavailable, openCliDatabase } from './cli-database.ts';
import { reencryptStoredSecrets, storedSecretsCensus } from '../src/domain/stored-secrets.ts';
import { KEY_ID_PATTERN, newEncryptionKeyText, SecretUnreadableError } from '../src/config/secrets.ts';

const usage = `Usage: npm run --silent secrets -- <command> [options]

  new-key [ID]        prints a new random key as ID:base64 (ID defaults to k<yyyymmdd>), for
                      SECRETS_ENCRYPTION_KEYS; nothing is stored
  status              how many stored secrets each key id encrypts (plaintext: not yet encrypted)
  reencrypt           encrypts every stored secret with the first key of SECRETS_ENCRYPTION_KEYS
                      (decrypting with any key listed); plaintext values are encrypted too
  record-session-secret
                      records the fingerprint of SESSION_SIGNING_SECRET as the one every instance
                      sharing the database must use (instances with another secret refuse to start)

  --json              machine-readable output
  --dev               development mode: the public development key when SECRETS_ENCRYPTION_KEYS is unset

Rotation: put the new key first in SECRETS_ENCRYPTION_KEYS and keep the old one after it
("new:…,old:…"), restart the instances, run reencrypt, then remove the old key and restart again.
Session signing secret: run record-session-secret with the new SESSION_SIGNING_SECRET, then restart
every instance with it (until restarted, the others keep signing with the old one).`;

function usageFailure(message: string): never {
  console.error(`${message}\n\n${usage}`);
  process.exit(2);
}

function parseCommandLine() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: { json: { type: 'boolean' }, dev: { type: 'boolean' }, help: { type: 'boolean' } },
    });
  } catch (error) {
    usageFailure(error instanceof Error ? error.message : String(error));
  }
}

const { values, positionals } = parseCommandLine();
const [command, argument] = positionals;

function print(json: unknown, human: string): void {
  console.log(values.json ? JSON.stringify(json, null, 2) : human);
}

async function withDatabase(work: (db: Db, config: ReturnType<typeof loadSecretsConfig>) => Promise<void>): Promise<void> {
  const { db, config } = await openCliDatabase(() => loadSecretsConfig(processEnvironment()));
  try {
    await work(db, config);
  } catch (error) {
    failIfDatabaseUnavailable(error);
    // A value under a key that is not configured: say which, and change nothing more.
    if (!(error instanceof SecretUnreadableError)) throw error;
    console.error(`${error.message}: add that key to SECRETS_ENCRYPTION_KEYS (after the current one) and run again`);
    process.exitCode = 1;
  } finally {
    await db.$disconnect();
  }
}

if (values.help || command === 'help') {
  console.log(usage);
} else if (command === 'new-key') {
  const id = argument ?? `k${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`;
  if (!KEY_ID_PATTERN.test(id)) usageFailure('the key ID is letters, digits, _ or - (at most 32)');
  console.log(newEncryptionKeyText(id));
} else if (command === 'status') {
  await withDatabase(async (db, config) => {
    const census = await storedSecretsCensus(db);
    const lines = Object.entries(census).map(
      ([column, counts]) =>
        `${column}: ${
          Object.entries(counts)
            .map(([keyId, count]) => `${count} under ${keyId}`)
            .join(', ') || 'none stored'
        }`,
    );
    print(
      { current_key: config.secretsKeyring.current.id, columns: census },
      [`current key: ${config.secretsKeyring.current.id}`, ...lines].join('\n'),
    );
  });
} else if (command === 'reencrypt') {
  await withDatabase(async (db, config) => {
    const results = await reencryptStoredSecrets(db, config.secretsKeyring);
    const lines = results.map(
      (result) =>
        `${result.column}: ${result.reencrypted} re-encrypted, ${result.encryptedPlaintext} encrypted from plaintext, ${result.unchanged} already under "${config.secretsKeyring.current.id}"`,
    );
    print({ current_key: config.secretsKeyring.current.id, columns: results }, lines.join('\n'));
  });
} else if (command === 'record-session-secret') {
  const { db, config } = await openCliDatabase(() => loadSessionSecretConfig(processEnvironment()));
  try {
    const { replaced } = await recordSessionSecret(db, config.sessionSigningSecret).catch((error: unknown) => {
      failIfDatabaseUnavailable(error);
      throw error;
    });
    print(
      { recorded: true, replaced },
      replaced
        ? 'recorded the new SESSION_SIGNING_SECRET: restart every instance with it'
        : 'recorded SESSION_SIGNING_SECRET (it was already the recorded one, or none was)',
    );
  } finally {
    await db.$disconnect();
  }
} else {
  usageFailure(command ? `unknown command "${command}"` : 'no command given');
}
