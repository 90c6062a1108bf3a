// Secrets at rest: payment processors' authorization_key is stored AES-256-GCM encrypted under a key
// id (src/config/secrets.ts, src/domain/stored-secrets.ts); a dump of every table after seeding holds no
// secret in clear (processor keys, API keys, partner tokens); reads decrypt on both doors; rotation
// re-encrypts; a plaintext left from before is encrypted at start; a missing key stops the start.
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/index.ts';
import {
  openIdempotentAnswer,
  openPreviousWebhookSecret,
  openProcessorKey,
  openWebhookSecret,
  PAYMENT_PROCESSOR_KEY,
  reencryptStoredSecrets,
  sealIdempotentAnswer,
  sealPreviousWebhookSecret,
  sealWebhookSecret,
  secureStoredSecrets,
} from '../src/domain/stored-secrets.ts';
import { envelopeKeyId, keyringOf, open, parseEncryptionKeys, seal, SecretUnreadableError } from '../src/config/secrets.ts';
import { createApp } from '../src/gateway/yoga.ts';
import { createTestApp, instanceDeps, TEST_ENCRYPTION_KEY, testKeyring, type TestApp } from './support/app.ts';
import { createDemoApp } from './support/demo.ts';
import { dumpDatabase } from './support/dump.ts';
import { makeCar, makeDealership, makeKey } from './support/fixtures.ts';
import { makePaymentProcessor } from './support/fixtures-catalogue.ts';

const silent = pino({ level: 'silent' });
const PROCESSORS_QUERY = `query ($id: String!) { car_payment_processors(id: $id) { payment_processors { id: databaseId authorization_key } } }`;

describe('the database after seeding the demo data', () => {
  let app: TestApp;
  let allKey: string;
  let processorKeys: Map<number, string>;
  const issuedSecrets: string[] = [];

  beforeAll(async () => {
    ({ app, key: allKey } = await createDemoApp());
    issuedSecrets.push(allKey, (await makeKey(app.db, { permissions: ['read:car'] })).key);
    // A partner token, as the API hands it out.
    const user = await app.db.user.findFirstOrThrow({ orderBy: { id: 'asc' } });
    const response = await app.request('/api/v1/partner/tokens', { method: 'POST', key: allKey, json: { email: user.email } });
    expect(response.status).toBe(201);
    issuedSecrets.push(new URL((await response.json()).redirect_url).searchParams.get('token')!);
    const rows = await app.db.paymentProcessor.findMany();
    processorKeys = new Map(rows.map((row) => [row.id, openProcessorKey(app.config.secretsKeyring, row.authorization_key)]));
  });

  it('stores every processor key encrypted under the configured key id', async () => {
    expect(processorKeys.size).toBe(9);
    for (const plaintext of processorKeys.values()) expect(plaintext).toMatch(/^(sk_test_[A-Za-z0-9]{24}|wc_test_[0-9a-f]{32})$/);
    for (const row of await app.db.paymentProcessor.findMany()) {
      expect(envelopeKeyId(row.authorization_key)).toBe(TEST_ENCRYPTION_KEY.id);
    }
  });

  it('holds no secret in clear in any column of any table: processor keys, API keys, partner tokens, settings', async () => {
    const { tables, values } = await dumpDatabase(app.config.databaseUrl);
    expect(tables).toEqual(expect.arrayContaining(['payment_processors', 'api_key_secrets', 'partner_tokens']));
    expect(values.length).toBeGreaterThan(10_000);
    const secrets = [
      ...processorKeys.values(),
      ...issuedSecrets,
      // The random part of an API key (after dlr_<lookup id>_) is the secret; the lookup id is public.
      ...issuedSecrets.filter((secret) => secret.startsWith('dlr_')).map((key) => key.slice(17)),
      app.config.sessionSigningSecret,
      TEST_ENCRYPTION_KEY.key.toString('base64'),
      TEST_ENCRYPTION_KEY.key.toString('hex'),
    ];
    const leaks = values.filter((value) => secrets.some((secret) => value.text.includes(secret)) || /\b(sk|wc)_test_/.test(value.text));
    expect(leaks).toEqual([]);
  });

  it('answers the keys decrypted on both doors to a key holding show:payment_processor_secret', async () => {
    const car = await app.db.car.findFirstOrThrow({ where: { dealership_id: 1 }, orderBy: { id: 'asc' } });
    const rest = await (await app.request(`/api/v1/cars/${car.id}/payment_processors.json`, { key: allKey })).json();
    const graph = await app.graphql<{ car_payment_processors: { payment_processors: { id: number; authorization_key: string }[] } }>(
      PROCESSORS_QUERY,
      { id: String(car.id) },
      allKey,
    );
    const expected = rest.payment_processors.map((processor: { id: number }) => ({
      id: processor.id,
      authorization_key: processorKeys.get(processor.id),
    }));
    expect(expected.length).toBeGreaterThan(0);
    expect(
      rest.payment_processors.map(({ id, authorization_key }: { id: number; authorization_key: string }) => ({ id, authorization_key })),
    ).toEqual(expected);
    expect(graph.data?.car_payment_processors.payment_processors).toEqual(expected);
  });
});

describe('the envelope', () => {
  const other = { id: 'other', key: randomBytes(32) };

  it('is v1.<key id>.<iv>.<tag>.<ciphertext>, with a fresh IV each time, and opens with any key of the ring', () => {
    const sealed = seal(testKeyring, PAYMENT_PROCESSOR_KEY, 'sk_live_abc');
    expect(sealed).toMatch(/^v1\.test-2026\.[\w-]{16}\.[\w-]{22}\.[\w-]+$/);
    expect(sealed).not.toContain('sk_live_abc');
    expect(seal(testKeyring, PAYMENT_PROCESSOR_KEY, 'sk_live_abc')).not.toBe(sealed);
    expect(open(testKeyring, PAYMENT_PROCESSOR_KEY, sealed)).toBe('sk_live_abc');
    // After a rotation the new key is first and the old one still opens what it sealed.
    expect(open(keyringOf([other, TEST_ENCRYPTION_KEY]), PAYMENT_PROCESSOR_KEY, sealed)).toBe('sk_live_abc');
  });

  it('refuses an altered value, a value moved to another column, an unknown key and a plaintext, naming no secret', () => {
    const sealed = seal(testKeyring, PAYMENT_PROCESSOR_KEY, 'sk_live_abc');
    const parts = sealed.split('.');
    const flipped = parts[4]!.startsWith('A') ? `B${parts[4]!.slice(1)}` : `A${parts[4]!.slice(1)}`;
    const cases = {
      altered: [testKeyring, PAYMENT_PROCESSOR_KEY, [...parts.slice(0, 4), flipped].join('.')],
      'other column': [testKeyring, 'Other.column', sealed],
      'unknown key': [keyringOf([other]), PAYMENT_PROCESSOR_KEY, sealed],
      plaintext: [testKeyring, PAYMENT_PROCESSOR_KEY, 'sk_live_abc'],
    } as const;
    for (const [label, [keyring, column, value]] of Object.entries(cases)) {
      let error: unknown;
      try {
        open(keyring, column, value);
      } catch (caught) {
        error = caught;
      }
      expect(error, label).toBeInstanceOf(SecretUnreadableError);
      expect(String((error as Error).message), label).not.toContain('sk_live_abc');
    }
  });

  it('reads SECRETS_ENCRYPTION_KEYS as id:base64 pairs and explains each bad entry without echoing key material', () => {
    const good = randomBytes(32).toString('base64');
    expect(parseEncryptionKeys(`new:${good}, old:${TEST_ENCRYPTION_KEY.key.toString('base64')}`)).toMatchObject({
      keys: [{ id: 'new' }, { id: 'old' }],
    });
    const short = randomBytes(16).toString('base64');
    const result = parseEncryptionKeys(`a:${short},bad id:${good},b:${good},b:${good}`);
    expect(result).toEqual({
      problems: [
        'key "a" must be 32 bytes in base64 (make one with: npm run --silent secrets -- new-key)',
        'entry 2 must be <key id>:<base64 key>, the id made of letters, digits, _ or - (at most 32)',
        'key id "b" is listed twice',
      ],
    });
    expect(JSON.stringify(result)).not.toContain(short);
    expect(parseEncryptionKeys(' , ')).toEqual({ problems: ['lists no key'] });
  });
});

describe('rotation and values from before encryption', () => {
  let app: TestApp;
  let dealership: { id: number };
  let car: { id: number };
  let secretsKey: string;
  const next = { id: 'k20270101', key: randomBytes(32) };

  beforeAll(async () => {
    app = await createTestApp();
    dealership = await makeDealership(app.db);
    car = await makeCar(app.db, dealership.id);
    secretsKey = (await makeKey(app.db, { permissions: ['show:payment_processor', 'show:payment_processor_secret'] })).key;
  });

  const storedKeys = async () =>
    (await app.db.paymentProcessor.findMany({ where: { dealership_id: dealership.id }, orderBy: { id: 'asc' } })).map(
      (row) => row.authorization_key,
    );

  it('encrypts at start a processor key stored in plaintext before encryption existed, keeping its value', async () => {
    await makePaymentProcessor(app.db, dealership.id, { authorization_key: 'sk_live_sealed' });
    // A row as an earlier version stored it.
    await app.db.paymentProcessor.create({
      data: { dealership_id: dealership.id, authorization_type: 'api_key', authorization_key: 'sk_live_legacy', merchant_id: 'm-legacy' },
    });
    await secureStoredSecrets(app.db, testKeyring, silent);
    const stored = await storedKeys();
    expect(stored.map(envelopeKeyId)).toEqual([TEST_ENCRYPTION_KEY.id, TEST_ENCRYPTION_KEY.id]);
    expect(stored.map((value) => openProcessorKey(testKeyring, value))).toEqual(['sk_live_sealed', 'sk_live_legacy']);
  });

  it('re-encrypts every value under the new first key; the service then needs only the new key', async () => {
    // A webhook subscription rotated once: its secret and its previous secret are both stored sealed.
    const owner = await makeKey(app.db, { permissions: ['manage:webhook'], dealershipIds: [dealership.id] });
    const subscription = await app.db.webhookSubscription.create({
      data: {
        dealership_id: dealership.id,
        api_key_id: owner.id,
        url: 'https://crm.example/hooks',
        events: ['lead.created'],
        secret: sealWebhookSecret(testKeyring, 'whsec_current'),
        previous_secret: sealPreviousWebhookSecret(testKeyring, 'whsec_previous'),
        previous_secret_until: app.clock.now(),
        created_at: app.clock.now(),
        updated_at: app.clock.now(),
      },
    });
    // A write's answer kept under its Idempotency-Key, sealed (it may hold a signing secret); a lead's
    // answer, plain JSON by design, is no secret and left as it is.
    const sealedAnswer = await app.db.idempotencyRecord.create({
      data: {
        api_key_id: owner.id,
        key: 'rotate-1',
        request_hash: 'h',
        response_status: 200,
        response_body: sealIdempotentAnswer(testKeyring, '{"secret":"whsec_answered"}'),
      },
    });
    await app.db.idempotencyRecord.create({
      data: { api_key_id: owner.id, key: 'lead-1', request_hash: 'h', response_status: 201, response_body: '{"id":1}' },
    });
    const rotated = keyringOf([next, TEST_ENCRYPTION_KEY]);
    const results = await reencryptStoredSecrets(app.db, rotated);
    expect(results).toEqual([
      { column: PAYMENT_PROCESSOR_KEY, reencrypted: 2, encryptedPlaintext: 0, unchanged: 0 },
      { column: 'WebhookSubscription.secret', reencrypted: 1, encryptedPlaintext: 0, unchanged: 0 },
      { column: 'WebhookSubscription.previous_secret', reencrypted: 1, encryptedPlaintext: 0, unchanged: 0 },
      { column: 'IdempotencyRecord.response_body', reencrypted: 1, encryptedPlaintext: 0, unchanged: 0 },
    ]);
    const answer = await app.db.idempotencyRecord.findUniqueOrThrow({ where: { id: sealedAnswer.id } });
    expect(openIdempotentAnswer(keyringOf([next]), answer.response_body)).toBe('{"secret":"whsec_answered"}');
    expect((await app.db.idempotencyRecord.findFirstOrThrow({ where: { key: 'lead-1' } })).response_body).toBe('{"id":1}');
    expect((await storedKeys()).map(envelopeKeyId)).toEqual([next.id, next.id]);
    const stored = await app.db.webhookSubscription.findUniqueOrThrow({ where: { id: subscription.id } });
    expect([envelopeKeyId(stored.secret), envelopeKeyId(stored.previous_secret!)]).toEqual([next.id, next.id]);
    const onlyNextKeyring = keyringOf([next]);
    expect(openWebhookSecret(onlyNextKeyring, stored.secret)).toBe('whsec_current');
    expect(openPreviousWebhookSecret(onlyNextKeyring, stored.previous_secret!)).toBe('whsec_previous');
    // A second run changes nothing.
    expect(await reencryptStoredSecrets(app.db, rotated)).toEqual([
      { column: PAYMENT_PROCESSOR_KEY, reencrypted: 0, encryptedPlaintext: 0, unchanged: 2 },
      { column: 'WebhookSubscription.secret', reencrypted: 0, encryptedPlaintext: 0, unchanged: 1 },
      { column: 'WebhookSubscription.previous_secret', reencrypted: 0, encryptedPlaintext: 0, unchanged: 1 },
      { column: 'IdempotencyRecord.response_body', reencrypted: 0, encryptedPlaintext: 0, unchanged: 1 },
    ]);

    const onlyNext = createApp(
      instanceDeps({ config: { ...app.config, secretsKeyring: keyringOf([next]) }, db: app.db, now: app.clock.now }),
    );
    const response = await onlyNext.fetch(`http://gateway.test/api/v1/cars/${car.id}/payment_processors.json`, {
      headers: { authorization: `Bearer ${secretsKey}` },
    });
    expect(response.status).toBe(200);
    expect((await response.json()).payment_processors.map((p: { authorization_key: string }) => p.authorization_key)).toEqual([
      'sk_live_sealed',
      'sk_live_legacy',
    ]);
  });

  it('refuses to start when a stored value is under a key that is no longer configured, naming the setting and the key id', async () => {
    let error: unknown;
    try {
      await secureStoredSecrets(app.db, testKeyring, silent);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      {
        setting: 'SECRETS_ENCRYPTION_KEYS',
        message: `does not hold key "${next.id}", under which stored secrets are encrypted: add it back (after the current key), run npm run secrets -- reencrypt, and only then remove it`,
      },
    ]);
    // Nothing was changed by the refused start.
    expect((await storedKeys()).map(envelopeKeyId)).toEqual([next.id, next.id]);
  });
});
