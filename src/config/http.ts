// The HTTP server: where it listens, what it accepts, how long it waits, who may call it from a browser.
import { z } from 'zod';
import { optional, positiveWholeNumber, setting, wholeNumber, type SettingDeclaration } from './declare.ts';

/** The default of ANONYMOUS_BODY_LIMIT_BYTES: no keyless request (a GraphQL query, a redirect) needs more. */
const DEFAULT_ANONYMOUS_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * CORS_ORIGINS: comma-separated origins (`https://shop.example.com`), or `*`. Each must be a bare
 * http(s) origin, written as browsers send it in `Origin`, so the comparison is exact; `null` (sent by
 * sandboxed frames and files) is refused, since any page can make its requests carry it.
 */
function parseCorsOrigins(value: string): { origins: string[] } | { problem: string } {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.includes('*')) return entries.length > 1 ? { problem: 'must be * alone or a list of origins, not both' } : { origins: ['*'] };
  const origins: string[] = [];
  for (const entry of entries) {
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== entry.replace(/\/$/, '').toLowerCase()) {
      return { problem: `must list origins such as https://shop.example.com (scheme, host and port only), not "${entry}"` };
    }
    origins.push(url.origin);
  }
  return { origins };
}

export const HTTP_SETTINGS = {
  PORT: setting({ schema: wholeNumber(65_535), default: '4000', meaning: 'the TCP port the service listens on' }),
  HOST: setting({
    schema: optional(z.string().trim()),
    default: '0.0.0.0',
    meaning: 'the address the service listens on (`0.0.0.0`: every interface)',
  }),
  BODY_LIMIT_BYTES: setting({
    schema: wholeNumber(),
    default: String(10 * 1024 * 1024),
    meaning: 'largest request body, in bytes (10 MiB: attachments travel base64 in JSON)',
  }),
  ANONYMOUS_BODY_LIMIT_BYTES: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_ANONYMOUS_BODY_LIMIT_BYTES),
    meaning:
      'largest body of a request without an API key (no `Authorization`, no `?token=`), in bytes: refused 413 before it is read or parsed; the smaller of this and `BODY_LIMIT_BYTES` applies',
  }),
  SHUTDOWN_GRACE_MS: setting({
    schema: positiveWholeNumber,
    default: '10000',
    meaning: 'after SIGTERM (or SIGINT) the process exits 0 within this long; see "Stopping" below',
  }),
  // Node's own defaults (60 s for headers, 300 s per request) let a slow client hold a connection for minutes.
  HTTP_HEADERS_TIMEOUT_MS: setting({
    schema: positiveWholeNumber,
    default: '10000',
    meaning: "a client must send a request's headers within this long, else 408 and the connection is closed",
  }),
  HTTP_REQUEST_TIMEOUT_MS: setting({
    schema: positiveWholeNumber,
    default: '30000',
    meaning: '… and the whole request, body included, within this long (at least the headers timeout)',
  }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: setting({
    schema: positiveWholeNumber,
    default: '5000',
    meaning: 'an idle keep-alive connection is closed after this long',
  }),
  HTTP_MAX_CONNECTIONS: setting({
    schema: positiveWholeNumber,
    default: '1000',
    meaning:
      'connections beyond this many open at once are closed as soon as they arrive (logged); see "Connections and their bounds" in docs/operations.md',
  }),
  HTTP_MAX_UPLOADS: setting({
    schema: positiveWholeNumber,
    defaultInWords: 'a tenth of `HTTP_MAX_CONNECTIONS`',
    meaning:
      'requests whose body is still arriving after the moment their headers did (uploads in flight) at once; one more is answered 503 `unavailable` with `Retry-After`, its body unread, and its connection closed',
  }),
  HTTP_RESERVED_CONNECTIONS: setting({
    schema: wholeNumber(),
    defaultInWords: 'a tenth of `HTTP_MAX_CONNECTIONS`',
    meaning:
      'connections neither subscription streams nor uploads can take, kept for every other request (`/health` included): `SUBSCRIPTIONS_PER_INSTANCE` + `HTTP_MAX_UPLOADS` + this must be at most `HTTP_MAX_CONNECTIONS`; while fewer than this many are free, idle keep-alive connections are closed, longest idle first, so that a new connection is served rather than dropped',
  }),
  CORS_ORIGINS: setting({
    schema: optional(
      z.string().transform((value, context) => {
        const parsed = parseCorsOrigins(value);
        if ('problem' in parsed) {
          context.addIssue({ code: 'custom', message: parsed.problem });
          return z.NEVER;
        }
        return parsed.origins;
      }),
    ),
    meaning: 'comma-separated origins (`https://shop.example.com`) whose web pages may call the API, or `*` for any',
  }),
  TRUST_PROXY: setting({
    schema: wholeNumber(10),
    default: '0',
    meaning:
      "how many reverse proxies stand in front: the client address is read that many entries from the right of `X-Forwarded-For`; `0` uses the connection's address and ignores the header",
  }),
} as const satisfies Record<string, SettingDeclaration>;

/** The share of HTTP_MAX_CONNECTIONS that HTTP_MAX_UPLOADS and HTTP_RESERVED_CONNECTIONS each default to. */
const DEFAULT_SHARE_OF_CONNECTIONS = 0.1;

/** How many connections the HTTP server lets uploads hold, and keeps free for everything else (src/http/server.ts). */
interface ConnectionBounds {
  maxUploads: number;
  reservedConnections: number;
}

/** HTTP_MAX_UPLOADS and HTTP_RESERVED_CONNECTIONS as set, or their defaults: a tenth of the connections each (at least one upload). */
export function connectionBoundsOf(
  maxConnections: number,
  set: { maxUploads?: number; reservedConnections?: number } = {},
): ConnectionBounds {
  const share = Math.floor(maxConnections * DEFAULT_SHARE_OF_CONNECTIONS);
  return { maxUploads: set.maxUploads ?? Math.max(1, share), reservedConnections: set.reservedConnections ?? share };
}
