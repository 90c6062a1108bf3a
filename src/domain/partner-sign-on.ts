// Only a SHA-256 of a token is stored, so a database leak gives nothing redeemable; 256 random bits need no salt or slow hash.
import { hash, randomBytes } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import type { Actor } from '../auth/api-keys.ts';
import type { Config } from '../config/index.ts';
import type { Db } from '../db/client.ts';
import type { ScopedDb } from '../db/scoped.ts';
import { apiError } from '../errors.ts';
import { NON_BLANK, parseRecord, withRequired } from './input-records.ts';

export const PARTNER_TOKEN_TTL_MS = 10 * 60_000;
/** Only has to survive one redirect. */
const SESSION_TTL_SECONDS = 120;
const SIGN_ON_PATH = '/api/v1/partner/sign_on';
const PLATFORM_SSO_PATH = '/sso/partner';

const TOKEN_BYTES = 32;
/** Anything else cannot be a token and is not looked up. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

function hashPartnerToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** The e-mail is optional in the graph on purpose: missing is the spec's own `email_required`, not `invalid_input`. */
export const partnerTokenRequest = z.object({
  email: z
    .string()
    .meta({ pattern: NON_BLANK.source, examples: ['jordan.lee@richmondtoyota.com.au'] })
    .nullish()
    .transform((email, context) => {
      const text = email?.trim() ?? '';
      if (text !== '') return text;
      context.addIssue({ code: 'custom', message: 'is required', params: { error: 'email_required' } });
      return z.NEVER;
    })
    .describe('The e-mail of the platform user signing on.'),
});

export const documentedPartnerTokenRequest = withRequired(partnerTokenRequest, ['email']);

export type PartnerTokenGrant = Awaited<ReturnType<typeof createPartnerToken>>;

/** A restricted key only reaches its dealerships' users; anyone else answers like an unknown e-mail. */
export async function createPartnerToken(
  db: ScopedDb,
  actor: Actor,
  config: Pick<Config, 'publicUrl'>,
  request: z.input<typeof partnerTokenRequest>,
  now: Date,
) {
  const { email: text } = parseRecord(partnerTokenRequest, request, '');

  const user = await db.user.findFirst({ where: { email_normalized: text.toLowerCase() }, select: { id: true } });
  if (!user) throw noPlatformAccount();

  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  const expiresAt = new Date(now.getTime() + PARTNER_TOKEN_TTL_MS);
  await db.partnerToken.create({
    data: { token_hash: hashPartnerToken(token), user_id: user.id, api_key_id: actor.apiKeyId, expires_at: expiresAt, created_at: now },
  });
  const redirect = new URL(`${config.publicUrl}${SIGN_ON_PATH}`);
  redirect.searchParams.set('token', token);
  return { redirect_url: redirect.toString(), expires_at: expiresAt };
}

export const noPlatformAccount = () =>
  apiError('NOT_FOUND', 'no_platform_account', 'There is no platform account for that e-mail address.');
export const tokenNotFound = () => apiError('NOT_FOUND', 'token_not_found', 'This sign-on link is not valid.');
export const tokenExpired = () =>
  apiError('GONE', 'token_expired', 'This sign-on link has expired. Start the sign-on again from the partner.');

/** The conditional update is the only check that counts, so of concurrent redemptions exactly one wins. */
export async function redeemPartnerToken(
  // Unscoped on purpose: the browser holds no key; the single-use token names the one row it reads.
  db: Db,
  config: Pick<Config, 'platformUrl' | 'sessionSigningSecret'>,
  token: string | null | undefined,
  now: Date,
): Promise<{ location: string }> {
  const text = token?.trim() ?? '';
  if (!TOKEN_PATTERN.test(text)) throw tokenNotFound();
  const tokenHash = hashPartnerToken(text);

  const spent = await db.partnerToken.updateMany({
    where: { token_hash: tokenHash, used_at: null, expires_at: { gt: now } },
    data: { used_at: now },
  });
  const row = await db.partnerToken.findUnique({
    where: { token_hash: tokenHash },
    select: { used_at: true, expires_at: true, user: { select: { id: true, email: true } } },
  });
  if (!row) throw tokenNotFound();
  if (spent.count !== 1) {
    if (row.used_at)
      throw apiError('GONE', 'token_used', 'This sign-on link has already been used. Start the sign-on again from the partner.');
    throw tokenExpired();
  }

  const session = await signSessionValue({ sub: String(row.user.id), email: row.user.email }, config.sessionSigningSecret, now);
  const location = new URL(`${config.platformUrl}${PLATFORM_SSO_PATH}`);
  location.searchParams.set('session', session);
  return { location: location.toString() };
}

// A compact JWS (HS256), so the platform can verify it with any JWT library.

const SESSION_ISSUER = 'dealership-gateway';
const SESSION_AUDIENCE = 'platform-partner-sso';

const sessionClaims = z.looseObject({
  iss: z.literal(SESSION_ISSUER),
  aud: z.literal(SESSION_AUDIENCE),
  sub: z.string(),
  email: z.string(),
  iat: z.int(),
  exp: z.int(),
  /** The platform refuses a jti it has already accepted. */
  jti: z.string(),
});

export type SessionClaims = z.infer<typeof sessionClaims>;

const signingKey = (secret: string): Uint8Array => new TextEncoder().encode(secret);

export async function signSessionValue(subject: { sub: string; email: string }, secret: string, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({ email: subject.email })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(SESSION_ISSUER)
    .setAudience(SESSION_AUDIENCE)
    .setSubject(subject.sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + SESSION_TTL_SECONDS)
    .setJti(randomBytes(16).toString('base64url'))
    .sign(signingKey(secret));
}

const CLOCK_SKEW_SECONDS = 30;

/** Single use of `jti` is the platform's to enforce. */
export async function verifySessionValue(value: string, secret: string, now: Date): Promise<SessionClaims | null> {
  // Only HS256 is accepted (no "none", no key confusion); the expiry has no tolerance; sessionClaims checks the rest.
  const verified = await jwtVerify(value, signingKey(secret), { algorithms: ['HS256'], typ: 'JWT', currentDate: now }).catch(() => null);
  const claims = sessionClaims.safeParse(verified?.payload).data;
  // jose checks a future iat only together with a maximum age; here, with the clocks' skew allowed.
  if (!claims || claims.iat > Math.floor(now.getTime() / 1000) + CLOCK_SKEW_SECONDS) return null;
  return claims;
}
