// One webhook POST, safely (docs/webhooks.md, "Where webhooks may go"): the stored URL is checked
// again as at creation (`checkWebhookUrl`, src/domain/webhook-address.ts), the host is resolved here,
// every address it resolves to is checked (`refusedAddress`), and the connection goes to the address
// checked (the request's `lookup` answers it), so DNS cannot change its answer between the check and
// the connection. https only in production; redirects are not followed (Node's client never follows
// them, and a 3xx counts as a failure); the whole exchange has 10 seconds; at most RESPONSE_BODY_CAP
// bytes of the answer are read.
//
// Each POST is an OpenTelemetry CLIENT span (the HTTP client conventions) under the active context,
// and carries that span's W3C `traceparent`; with traces off both are no-ops (src/telemetry/tracing.ts).
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type BlockList, type LookupFunction } from 'node:net';
import { context, propagation, SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import type { Config } from '../config/index.ts';
import { checkWebhookUrl, refusedAddress } from '../domain/webhook-address.ts';
import { tracer } from '../telemetry/tracing.ts';
import { parseUrl } from '../lib/parse-url.ts';

export const WEBHOOK_TIMEOUT_MS = 10_000;
/** Of the receiver's answer only this much is read (it is kept for the delivery log, shortened). */
const RESPONSE_BODY_CAP = 16 * 1024;

export interface WebhookPost {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface WebhookAnswer {
  status: number;
  body: string;
}

/** A host's addresses, as `dns.lookup(host, { all: true })` answers them. */
export type WebhookResolver = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

interface SendRules {
  mode: Config['mode'];
  allowed: BlockList;
  timeoutMs?: number;
  /** How a host name is resolved: the system's resolver unless a test gives its own. */
  resolve?: WebhookResolver;
}

const systemResolver: WebhookResolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Why an attempt failed, low-cardinality, as the span's `error.type`. */
type FailureKind = 'refused' | 'unresolved' | 'timeout' | 'connection' | 'answer';

/** A failure the delivery log states as it is (the receiver's own words are never trusted further). */
class WebhookSendError extends Error {
  constructor(
    message: string,
    readonly kind: FailureKind,
  ) {
    super(message);
  }
}

async function checkedAddress(hostname: string, rules: SendRules): Promise<{ address: string; family: 4 | 6 }> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  const resolve = rules.resolve ?? systemResolver;
  const addresses = literal !== 0 ? [{ address: host }] : await resolve(host).catch(() => []);
  if (addresses.length === 0) throw new WebhookSendError(`the host ${host} could not be resolved`, 'unresolved');
  for (const { address } of addresses) {
    const refusal = refusedAddress(address, rules.allowed);
    if (refusal) throw new WebhookSendError(`refused: ${host} resolves to ${refusal}`, 'refused');
  }
  // Every answer passed the check; the connection goes to the first, the one the resolver prefers.
  const address = addresses[0]!.address.replace(/^\[|\]$/g, '');
  return { address, family: isIP(address) === 6 ? 6 : 4 };
}

/** The URL as a span states it: no credentials (refused anyway), no fragment, every query value REDACTED. */
function spanUrl(url: URL): string {
  const shown = new URL(url.href);
  shown.hash = '';
  shown.search = [...shown.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=REDACTED`).join('&');
  return shown.href;
}

function failSpan(span: Span, error: unknown): void {
  const kind = error instanceof WebhookSendError ? error.kind : '_OTHER';
  span.setAttribute('error.type', kind);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

export async function postWebhook(post: WebhookPost, rules: SendRules): Promise<WebhookAnswer> {
  const checked = checkWebhookUrl(post.url, rules);
  const url = checked.url ?? parseUrl(post.url);
  const port = url?.port ? Number(url.port) : url?.protocol === 'http:' ? 80 : 443;
  return tracer().startActiveSpan(
    'POST',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'POST',
        ...(url ? { 'url.full': spanUrl(url), 'server.address': url.hostname.replace(/^\[|\]$/g, ''), 'server.port': port } : {}),
      },
    },
    async (span) => {
      try {
        if (checked.problem !== null) throw new WebhookSendError(`refused: the URL ${checked.problem}`, 'refused');
        const answer = await send(checked.url, post, rules, span);
        span.setAttribute('http.response.status_code', answer.status);
        if (answer.status >= 400) {
          span.setAttribute('error.type', String(answer.status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        return answer;
      } catch (error) {
        failSpan(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

async function send(url: URL, post: WebhookPost, rules: SendRules, span: Span): Promise<WebhookAnswer> {
  const pinned = await checkedAddress(url.hostname, rules);
  span.setAttribute('network.peer.address', pinned.address);
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
  // The receiver's trace continues from this span (`traceparent`, and `tracestate` when there is one).
  const headers: Record<string, string> = { ...post.headers };
  propagation.inject(context.active(), headers);
  const client = url.protocol === 'https:' ? https : http;
  const timeoutMs = rules.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  return new Promise<WebhookAnswer>((resolve, reject) => {
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(post.body).toString() },
        lookup,
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          if (size >= RESPONSE_BODY_CAP) return;
          chunks.push(chunk.subarray(0, RESPONSE_BODY_CAP - size));
          size += Math.min(chunk.length, RESPONSE_BODY_CAP - size);
          // Enough read: the rest is not waited for.
          if (size >= RESPONSE_BODY_CAP) {
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
            response.destroy();
          }
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', (error) => reject(new WebhookSendError(`the answer broke off: ${error.message}`, 'answer')));
      },
    );
    const timer = setTimeout(() => request.destroy(new WebhookSendError(`no answer within ${timeoutMs / 1000} s`, 'timeout')), timeoutMs);
    timer.unref();
    request.on('close', () => clearTimeout(timer));
    request.on('error', (error) =>
      reject(error instanceof WebhookSendError ? error : new WebhookSendError(`could not be sent: ${error.message}`, 'connection')),
    );
    request.end(post.body);
  });
}
