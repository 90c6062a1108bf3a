// Spec 4.10 and the handoff on both doors: token creation (201, email_required, no_platform_account,
// 401/403, dealership restriction), redemption (302 with a verifiable session, single use under
// concurrency, expiry on the controllable clock, unknown tokens), and tokens never stored or logged.
import { createHash } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { Writable } from 'node:stream';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/gateway/yoga.ts';
import { verifySessionValue, signSessionValue, type SessionClaims } from '../src/domain/partner-sign-on.ts';
import { createKeyVerifier } from '../src/auth/key-cache.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeDealership, makeKey, makeUser } from './support/fixtures.ts';
import { makePartnerToken } from './support/fixtures-events.ts';

const TOKENS = '/api/v1/partner/tokens';
const SIGN_ON = '/api/v1/partner/sign_on';
const CREATE = `mutation ($email: String) { create_partner_token(email: $email) { redirect_url expires_at } }`;
const REDEEM = `mutation ($token: String!) { redeem_partner_token(token: $token) { location } }`;
const TEN_MINUTES = 10 * 60_000;

let app: TestApp;
let north: { id: number };
let south: { id: number };
let priya: { id: number; email: string };
let sam: { id: number; email: string };
let partnerKey: string;
let northOnlyKey: string;
let otherKey: string;
let partnerKeyId: number;

beforeAll(async () => {
  app = await createTestApp({ publicUrl: 'https://api.dealer.test', platformUrl: 'https://platform.dealer.test' });
  north = await makeDealership(app.db);
  south = await makeDealership(app.db);
  priya = await makeUser(app.db, [north.id], { email: 'Priya.Shah@Northside.example.com' });
  sam = await makeUser(app.db, [south.id], { email: 'sam@southside.example.com' });
  const partner = await makeKey(app.db, { permissions: ['create:partner_token'] });
  partnerKey = partner.key;
  partnerKeyId = partner.id;
  northOnlyKey = (await makeKey(app.db, { permissions: ['create:partner_token'], dealershipIds: [north.id] })).key;
  otherKey = (await makeKey(app.db, { permissions: ['index:dealership', 'read:car'] })).key;
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function tokenOf(redirectUrl: string): string {
  const token = new URL(redirectUrl).searchParams.get('token');
  if (!token) throw new Error(`no token in ${redirectUrl}`);
  return token;
}

async function newToken(email = priya.email, key = partnerKey): Promise<string> {
  const response = await app.request(TOKENS, { method: 'POST', key, json: { email } });
  expect(response.status).toBe(201);
  return tokenOf((await response.json()).redirect_url);
}

function sessionOf(location: string): string {
  const url = new URL(location);
  expect(`${url.origin}${url.pathname}`).toBe('https://platform.dealer.test/sso/partner');
  const session = url.searchParams.get('session');
  if (!session) throw new Error(`no session in ${location}`);
  return session;
}

describe('POST /api/v1/partner/tokens', () => {
  it('answers 201 with a redirect_url carrying an opaque token and an expiry 10 minutes on', async () => {
    const response = await app.request(TOKENS, { method: 'POST', key: partnerKey, json: { email: 'priya.shah@NORTHSIDE.example.com' } });
    expect(response.status).toBe(201);
    const body = await response.json();
    expect(body).toEqual({
      redirect_url: expect.stringMatching(/^https:\/\/api\.dealer\.test\/api\/v1\/partner\/sign_on\?token=[A-Za-z0-9_-]{43}$/),
      expires_at: new Date(app.clock.now().getTime() + TEN_MINUTES).toISOString(),
    });

    const token = tokenOf(body.redirect_url);
    const rows = await app.db.partnerToken.findMany({ where: { user_id: priya.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      token_hash: sha256(token),
      user_id: priya.id,
      api_key_id: partnerKeyId,
      expires_at: new Date(app.clock.now().getTime() + TEN_MINUTES),
      used_at: null,
    });
    // Only the hash is kept: nothing stored contains the token itself.
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('makes a different token each time', async () => {
    const tokens = new Set([await newToken(), await newToken(), await newToken()]);
    expect(tokens.size).toBe(3);
  });

  it('answers the same shape through GraphQL, with the same expiry', async () => {
    const rest = await (await app.request(TOKENS, { method: 'POST', key: partnerKey, json: { email: priya.email } })).json();
    const graph = await app.graphql<{ create_partner_token: { redirect_url: string; expires_at: string } }>(
      CREATE,
      { email: priya.email },
      partnerKey,
    );
    expect(graph.errors).toBeUndefined();
    const result = graph.data!.create_partner_token;
    // Tokens are random, so the two answers differ only in the token.
    expect(Object.keys(result).sort()).toEqual(Object.keys(rest).sort());
    expect(result.expires_at).toBe(rest.expires_at);
    expect(result.redirect_url.replace(/token=.*$/, '')).toBe(rest.redirect_url.replace(/token=.*$/, ''));
    expect(tokenOf(result.redirect_url)).not.toBe(tokenOf(rest.redirect_url));
  });

  it.each([
    ['no email', {}],
    ['a null email', { email: null }],
    ['a blank email', { email: '   ' }],
  ])('answers 422 email_required for %s', async (_label, json) => {
    const response = await app.request(TOKENS, { method: 'POST', key: partnerKey, json });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: 'email_required', message: 'email: is required', field: 'email' });
  });

  it('answers 422 email_required for a request without a body', async () => {
    const response = await app.request(TOKENS, { method: 'POST', key: partnerKey });
    expect(response.status).toBe(422);
    expect((await response.json()).error).toBe('email_required');
  });

  it('answers email_required through GraphQL too', async () => {
    for (const variables of [{}, { email: '' }]) {
      const result = await app.graphql(CREATE, variables, partnerKey);
      expect(result.data).toBeNull();
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', error: 'email_required', field: 'email' });
    }
  });

  it('answers 404 no_platform_account for an e-mail no user has, and stores nothing', async () => {
    const before = await app.db.partnerToken.count();
    const response = await app.request(TOKENS, { method: 'POST', key: partnerKey, json: { email: 'nobody@example.com' } });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: 'no_platform_account',
      message: 'There is no platform account for that e-mail address.',
    });
    expect(await app.db.partnerToken.count()).toBe(before);
    const graph = await app.graphql(CREATE, { email: 'nobody@example.com' }, partnerKey);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'no_platform_account' });
  });

  it('lets a key restricted to dealerships sign on only their users; others answer like no account', async () => {
    const own = await app.request(TOKENS, { method: 'POST', key: northOnlyKey, json: { email: priya.email } });
    expect(own.status).toBe(201);

    const other = await app.request(TOKENS, { method: 'POST', key: northOnlyKey, json: { email: sam.email } });
    const missing = await app.request(TOKENS, { method: 'POST', key: northOnlyKey, json: { email: 'nobody@example.com' } });
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual(await missing.json());

    const graph = await app.graphql(CREATE, { email: sam.email }, northOnlyKey);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'no_platform_account' });
    // An unrestricted key reaches every dealership's users.
    expect((await app.request(TOKENS, { method: 'POST', key: partnerKey, json: { email: sam.email } })).status).toBe(201);
  });

  it('answers 403 forbidden to a key without create:partner_token', async () => {
    const response = await app.request(TOKENS, { method: 'POST', key: otherKey, json: { email: priya.email } });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      error: 'forbidden',
      message: 'This API key does not have the permission this operation needs.',
    });
    const graph = await app.graphql(CREATE, { email: priya.email }, otherKey);
    expect(graph.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it.each([
    ['no key', {}],
    ['an invalid key', { authorization: 'Bearer dlr_not_a_real_key' }],
  ])('answers 401 unauthorized with %s', async (_label, headers) => {
    const response = await app.request(TOKENS, { method: 'POST', headers, json: { email: priya.email } });
    expect(response.status).toBe(401);
    expect((await response.json()).error).toBe('unauthorized');
    const graph = await app.graphql(CREATE, { email: priya.email }, 'dlr_not_a_real_key');
    expect(graph.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('GET /api/v1/partner/sign_on', () => {
  it('spends the token and redirects to the platform with a session value the platform can verify', async () => {
    const token = await newToken();
    const response = await app.request(`${SIGN_ON}?token=${token}`);
    expect(response.status).toBe(302);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const session = sessionOf(response.headers.get('location')!);

    const claims = await verifySessionValue(session, app.config.sessionSigningSecret, app.clock.now());
    const iat = Math.floor(app.clock.now().getTime() / 1000);
    expect(claims).toEqual({
      iss: 'dealership-gateway',
      aud: 'platform-partner-sso',
      sub: String(priya.id),
      email: priya.email,
      iat,
      exp: iat + 120,
      jti: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
    });
    const row = await app.db.partnerToken.findUniqueOrThrow({ where: { token_hash: sha256(token) } });
    expect(row.used_at).toEqual(app.clock.now());
  });

  it('answers 410 token_used the second time', async () => {
    const token = await newToken();
    expect((await app.request(`${SIGN_ON}?token=${token}`)).status).toBe(302);
    const again = await app.request(`${SIGN_ON}?token=${token}`);
    expect(again.status).toBe(410);
    expect(again.headers.get('location')).toBeNull();
    expect(await again.json()).toEqual({
      error: 'token_used',
      message: 'This sign-on link has already been used. Start the sign-on again from the partner.',
    });
  });

  it('lets exactly one of several concurrent redemptions through', async () => {
    const token = await newToken();
    const responses = await Promise.all(Array.from({ length: 5 }, () => app.request(`${SIGN_ON}?token=${token}`)));
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([302, 410, 410, 410, 410]);
    for (const response of responses.filter((r) => r.status === 410)) {
      expect((await response.json()).error).toBe('token_used');
    }
  });

  it('works until 10 minutes have passed and answers 410 token_expired from then on', async () => {
    const early = await newToken();
    const late = await newToken();
    app.clock.advance(TEN_MINUTES - 1000);
    expect((await app.request(`${SIGN_ON}?token=${early}`)).status).toBe(302);
    app.clock.advance(1000);
    const response = await app.request(`${SIGN_ON}?token=${late}`);
    expect(response.status).toBe(410);
    expect(await response.json()).toEqual({
      error: 'token_expired',
      message: 'This sign-on link has expired. Start the sign-on again from the partner.',
    });
    // Still unused: an expired token is refused, not spent.
    expect((await app.db.partnerToken.findUniqueOrThrow({ where: { token_hash: sha256(late) } })).used_at).toBeNull();
  });

  it('says used, not expired, for a token that was used and has since expired', async () => {
    const token = 'U'.repeat(43);
    await makePartnerToken(app.db, priya.id, token, {
      expires_at: new Date(app.clock.now().getTime() - 1000),
      used_at: new Date(app.clock.now().getTime() - 60_000),
    });
    const response = await app.request(`${SIGN_ON}?token=${token}`);
    expect(response.status).toBe(410);
    expect((await response.json()).error).toBe('token_used');
  });

  it.each([
    ['an unknown token', 'A'.repeat(43)],
    ['a malformed token', 'not-a-token'],
    ['a token with a character too many', `${'B'.repeat(43)}x`],
    ['an empty token', ''],
  ])('answers 404 token_not_found for %s', async (_label, token) => {
    const response = await app.request(`${SIGN_ON}?token=${encodeURIComponent(token)}`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'token_not_found', message: 'This sign-on link is not valid.' });
  });

  it('answers 404 token_not_found for a link without its token', async () => {
    const response = await app.request(SIGN_ON);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'token_not_found', message: 'This sign-on link is not valid.' });
  });

  it('needs no API key, and ignores one', async () => {
    const token = await newToken();
    expect((await app.request(`${SIGN_ON}?token=${token}`, { key: otherKey })).status).toBe(302);
  });

  it('answers the same through GraphQL: the location, then the same errors', async () => {
    const token = await newToken();
    const graph = await app.graphql<{ redeem_partner_token: { location: string } }>(REDEEM, { token });
    expect(graph.errors).toBeUndefined();
    const claims = await verifySessionValue(
      sessionOf(graph.data!.redeem_partner_token.location),
      app.config.sessionSigningSecret,
      app.clock.now(),
    );
    expect(claims?.sub).toBe(String(priya.id));

    const again = await app.graphql(REDEEM, { token });
    expect(again.errors?.[0]?.extensions).toMatchObject({ code: 'GONE', error: 'token_used' });
    const unknown = await app.graphql(REDEEM, { token: 'C'.repeat(43) });
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'token_not_found' });
  });

  it('signs on the user the token was made for, whatever the case of the e-mail asked for', async () => {
    const token = await newToken('SAM@SOUTHSIDE.EXAMPLE.COM');
    const response = await app.request(`${SIGN_ON}?token=${token}`);
    const claims = await verifySessionValue(sessionOf(response.headers.get('location')!), app.config.sessionSigningSecret, app.clock.now());
    expect(claims).toMatchObject({ sub: String(sam.id), email: sam.email });
  });
});

describe('verifySessionValue', () => {
  const secret = 'a-test-secret-of-at-least-32-characters!';
  const now = new Date('2026-11-21T09:00:00.000Z');
  const value = () => signSessionValue({ sub: '7', email: 'a@b.example' }, secret, now);

  it('accepts a value it signed until it expires 2 minutes later', async () => {
    const session = await value();
    expect((await verifySessionValue(session, secret, now))?.sub).toBe('7');
    expect((await verifySessionValue(session, secret, new Date(now.getTime() + 119_000)))?.email).toBe('a@b.example');
    expect(await verifySessionValue(session, secret, new Date(now.getTime() + 120_000))).toBeNull();
  });

  it('refuses another secret, a changed payload or signature, and junk', async () => {
    const session = await value();
    const [header, payload, sig] = session.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as SessionClaims;
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: '1' })).toString('base64url');
    expect(await verifySessionValue(session, `${secret}x`, now)).toBeNull();
    expect(await verifySessionValue(`${header}.${forged}.${sig}`, secret, now)).toBeNull();
    expect(await verifySessionValue(`${header}.${payload}.${sig.slice(0, -2)}`, secret, now)).toBeNull();
    expect(await verifySessionValue(`${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`, secret, now)).toBeNull();
    expect(await verifySessionValue('junk', secret, now)).toBeNull();
  });

  it('refuses a value issued in the future', async () => {
    const session = await signSessionValue({ sub: '7', email: 'a@b.example' }, secret, new Date(now.getTime() + 5 * 60_000));
    expect(await verifySessionValue(session, secret, now)).toBeNull();
  });

  it('is a standard JWT: another JWT library reads ours, and we read one it signed with the header in another order', async () => {
    const key = new TextEncoder().encode(secret);
    const ours = await value();
    const { payload, protectedHeader } = await jwtVerify(ours, key, {
      currentDate: now,
      issuer: 'dealership-gateway',
      audience: 'platform-partner-sso',
    });
    expect(protectedHeader).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toMatchObject({ sub: '7', email: 'a@b.example', exp: payload.iat! + 120 });
    const iat = Math.floor(now.getTime() / 1000);
    // The hand-rolled verifier compared the header text byte for byte and refused this valid value.
    const theirs = await new SignJWT({
      email: 'c@d.example',
      iss: 'dealership-gateway',
      aud: 'platform-partner-sso',
      sub: '9',
      iat,
      exp: iat + 120,
      jti: 'j-1',
    })
      .setProtectedHeader({ typ: 'JWT', alg: 'HS256' })
      .sign(key);
    expect(await verifySessionValue(theirs, secret, now)).toMatchObject({ sub: '9', email: 'c@d.example', jti: 'j-1' });
    const hs512 = await new SignJWT({
      email: 'c@d.example',
      iss: 'dealership-gateway',
      aud: 'platform-partner-sso',
      sub: '9',
      iat,
      exp: iat + 120,
      jti: 'j-2',
    })
      .setProtectedHeader({ alg: 'HS512', typ: 'JWT' })
      .sign(new Uint8Array(64).fill(1));
    expect(await verifySessionValue(hs512, secret, now)).toBeNull();
  });
});

describe('logging', () => {
  it('never writes a token or a session value to the log', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const yoga = createApp(
      instanceDeps(
        { config: app.config, db: app.db, now: app.clock.now },
        { logger: pino({ level: 'trace' }, sink), keys: createKeyVerifier({ db: app.db, now: app.clock.now, ttlMs: 0 }) },
      ),
    );
    const created = await yoga.fetch('http://gateway.test/api/v1/partner/tokens', {
      method: 'POST',
      headers: { authorization: `Bearer ${partnerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: priya.email }),
    });
    const token = tokenOf((await created.json()).redirect_url);
    const redeemed = await yoga.fetch(`http://gateway.test${SIGN_ON}?token=${token}`);
    expect(redeemed.status).toBe(302);
    const session = sessionOf(redeemed.headers.get('location')!);
    await yoga.fetch(`http://gateway.test${SIGN_ON}?token=${token}`);

    expect(lines.length).toBeGreaterThan(0);
    const log = lines.join('');
    expect(log).not.toContain(token);
    expect(log).not.toContain(session);
  });
});
