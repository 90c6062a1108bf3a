// The connection goes to the address that was checked (the request's `lookup` answers it), so DNS
// cannot change its answer between the check and the connection; redirects count as failures.
// Its CLIENT span and `traceparent` are made here: the POST goes through node:http, not fetch (so not @opentelemetry/instrumentation-undici), and instrumentation-http patches node:http only from a start-up hook, which a start with traces off must not load.
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { context, propagation, SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { checkWebhookUrl, refusedAddress, type WebhookUrlRules } from '../domain/webhook-address.ts';
import { tracer } from '../telemetry/tracing.ts';
import { parseUrl } from '../lib/parse-url.ts';

export const WEBHOOK_TIMEOUT_MS = 10_000;
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

export type WebhookResolver = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

interface SendRules extends WebhookUrlRules {
  timeoutMs?: number;
  resolve?: WebhookResolver;
}

const systemResolver: WebhookResolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

type FailureKind = 'refused' | 'unresolved' | 'timeout' | 'connection' | 'answer';

/** The receiver's own words are never trusted further. */
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

function spanUrl(url: URL): string {
  const shown = new URL(url.href);
  shown.hash = '';
  shown.search = [...shown.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=REDACTED`).join('&');
  return shown.href;
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
        span.setAttribute('error.type', error instanceof WebhookSendError ? error.kind : '_OTHER');
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
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
