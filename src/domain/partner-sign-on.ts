// The partner sign-on handoff (spec 4.10 and its redeem half). The partner's server asks for a token
// for a platform user; the user's browser brings the token to GET /api/v1/partner/sign_on, which
// spends it once and hands the browser to the platform with a short-lived signed session value.
//
// Only a SHA-256 of a token is stored: a database leak gives nothing that can be redeemed. A token
// carries 256 random bits, so a plain hash (no salt, no slow hash) is enough, as for API keys.
import { createHash, randomBytes } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import type { Actor } from '../auth/api-keys.ts';
import type { Config } from '../config/index.ts';
import type { Db } from '../db/client.ts';
import type { ScopedDb } from '../db/scoped.ts';
import { apiError } from '../errors.ts';
import { NON_BLANK, parseRecord, withRequired } from './input-records.ts';

/** Spec 8: the sign-on token lives 10 minutes. */
export const PARTNER_TOKEN_TTL_MS = 10 * 60_000;
/** The session value only has to survive one redirect, so it lives 2 minutes. */
const SESSION_TTL_SECONDS = 120;
const SIGN_ON_PATH = '/api/v1/partner/sign_on';
/** Where the platform receives the handoff; it verifies `session` with verifySessionValue. */
const PLATFORM_SSO_PATH = '/sso/partner';

const TOKEN_BYTES = 32;
/** 32 bytes in base64url without padding. Anything else cannot be a token and is not looked up. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

function hashPartnerToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * What the partner's server sends for a token (the arguments of create_partner_token), declared
 * once. The e-mail is optional in the graph on purpose: missing or blank is spec 4.10's own
 * `email_required`, which a required argument's `invalid_input` would replace.
 */
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

type PartnerTokenRequest = z.input<typeof partnerTokenRequest>;

/** The request as the REST door's OpenAPI document states it: the rule above requires the e-mail, not blank. */
export const documentedPartnerTokenRequest = withRequired(partnerTokenRequest, ['email']);

export interface PartnerTokenGrant {
  redirect_url: string;
  expires_at: Date;
}

/**
 * A sign-on token for the platform user with this e-mail (case-insensitive). A key restricted to
 * dealerships only reaches users of those dealerships; anyone else answers like an unknown e-mail.
 */
export async function createPartnerToken(
  db: ScopedDb,
  actor: Actor,
  config: Pick<Config, 'publicUrl'>,
  request: PartnerTokenRequest,
  now: Date,
): Promise<PartnerTokenGrant> {
  const { email: text } = parseRecord(partnerTokenRequest, request, '');

  // Through the caller's scoped client: only users linked to one of the key's dealerships.
  const user = await db.user.findFirst({
    where: { email_normalized: text.toLowerCase() },
    select: { id: true },
  });
  if (!user) {
    throw apiError('NOT_FOUND', 'no_platform_account', 'There is no platform account for that e-mail address.');
  }

  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  const expiresAt = new Date(now.getTime() + PARTNER_TOKEN_TTL_MS);
  await db.partnerToken.create({
    data: { token_hash: hashPartnerToken(token), user_id: user.id, api_key_id: actor.apiKeyId, expires_at: expiresAt, created_at: now },
  });
  const redirect = new URL(`${config.publicUrl}${SIGN_ON_PATH}`);
  redirect.searchParams.set('token', token);
  return { redirect_url: redirect.toString(), expires_at: expiresAt };
}

const tokenNotFound = () => apiError('NOT_FOUND', 'token_not_found', 'This sign-on link is not valid.');

/**
 * Spends a token, once: the conditional update is the only check that counts, so of two concurrent
 * redemptions exactly one changes the row and wins. The losers are then told why.
 * Answers the platform URL carrying the signed session value.
 */
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
    throw apiError('GONE', 'token_expired', 'This sign-on link has expired. Start the sign-on again from the partner.');
  }

  const session = await signSessionValue({ sub: String(row.user.id), email: row.user.email }, config.sessionSigningSecret, now);
  const location = new URL(`${config.platformUrl}${PLATFORM_SSO_PATH}`);
  location.searchParams.set('session', session);
  return { location: location.toString() };
}

// ── The session value: a compact JWS (JWT, HS256), so the platform can verify it with any JWT library
//    or with verifySessionValue below. It says who signed on and is valid for SESSION_TTL_SECONDS.

export const SESSION_ISSUER = 'dealership-gateway';
export const SESSION_AUDIENCE = 'platform-partner-sso';

export interface SessionClaims {
  iss: typeof SESSION_ISSUER;
  aud: typeof SESSION_AUDIENCE;
  /** The platform user id, as a string (JWT convention). */
  sub: string;
  email: string;
  /** Seconds since the epoch. */
  iat: number;
  exp: number;
  /** Unique per session value: the platform refuses a jti it has already accepted. */
  jti: string;
}

/** HS256 needs the secret as bytes; the secret is the configured text, as UTF-8. */
const signingKey = (secret: string): Uint8Array => new TextEncoder().encode(secret);

/** Signs with jose (a maintained JOSE implementation) rather than a hand-rolled HMAC over JSON. */
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

function isClaims(value: unknown): value is SessionClaims {
  if (typeof value !== 'object' || value === null) return false;
  const claims = value as Record<string, unknown>;
  return (
    claims.iss === SESSION_ISSUER &&
    claims.aud === SESSION_AUDIENCE &&
    typeof claims.sub === 'string' &&
    typeof claims.email === 'string' &&
    Number.isInteger(claims.iat) &&
    Number.isInteger(claims.exp) &&
    typeof claims.jti === 'string'
  );
}

/** Clocks of the gateway and the platform may differ this much. */
const CLOCK_SKEW_SECONDS = 30;

/**
 * The claims of a session value signed with `secret` and valid at `now`, else null (malformed,
 * forged, another algorithm, expired, or issued in the future). Single use of `jti` is the
 * platform's to enforce.
 */
export async function verifySessionValue(value: string, secret: string, now: Date): Promise<SessionClaims | null> {
  let payload: unknown;
  try {
    // Only HS256 is accepted (no "none", no key confusion); signature, typ, iss, aud and exp are
    // checked by jose. The expiry has no tolerance: the value lives 2 minutes, exactly.
    ({ payload } = await jwtVerify(value, signingKey(secret), {
      algorithms: ['HS256'],
      typ: 'JWT',
      issuer: SESSION_ISSUER,
      audience: SESSION_AUDIENCE,
      requiredClaims: ['sub', 'email', 'iat', 'exp', 'jti'],
      currentDate: now,
    }));
  } catch {
    return null;
  }
  if (!isClaims(payload)) return null;
  // jose checks a future iat only together with a maximum age; here, with the clocks' skew allowed.
  if (payload.iat > Math.floor(now.getTime() / 1000) + CLOCK_SKEW_SECONDS) return null;
  return payload;
}
