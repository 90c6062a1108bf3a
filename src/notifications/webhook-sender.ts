// One webhook POST, safely (docs/webhooks.md, "Where webhooks may go"): the host is resolved here,
// every address it resolves to is checked (src/domain/webhook-address.ts), and the connection goes to
// the address checked (the request's `lookup` answers it), so DNS cannot change its answer between
// the check and the connection. https only in production; redirects are not followed (Node's client
// never follows them, and a 3xx counts as a failure); the whole exchange has 10 seconds; at most
// RESPONSE_BODY_CAP bytes of the answer are read.
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type BlockList, type LookupFunction } from 'node:net';
import type { Config } from '../config/index.ts';
import { refusedAddress } from '../domain/webhook-address.ts';

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

interface SendRules {
  mode: Config['mode'];
  allowed: BlockList;
  timeoutMs?: number;
}

/** A failure the delivery log states as it is (the receiver's own words are never trusted further). */
class WebhookSendError extends Error {}

async function checkedAddress(hostname: string, allowed: BlockList): Promise<{ address: string; family: 4 | 6 }> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  const addresses =
    literal !== 0 ? [{ address: host, family: literal }] : await dnsLookup(host, { all: true, verbatim: true }).catch(() => []);
  if (addresses.length === 0) throw new WebhookSendError(`the host ${host} could not be resolved`);
  for (const { address } of addresses) {
    const refusal = refusedAddress(address, allowed);
    if (refusal) throw new WebhookSendError(`refused: ${host} resolves to ${refusal}`);
  }
  const [first] = addresses;
  return { address: first!.address, family: first!.family === 6 ? 6 : 4 };
}

export async function postWebhook(post: WebhookPost, rules: SendRules): Promise<WebhookAnswer> {
  const url = new URL(post.url);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && rules.mode === 'development')) {
    throw new WebhookSendError('refused: only https URLs are called in production mode');
  }
  const pinned = await checkedAddress(url.hostname, rules.allowed);
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  const timeoutMs = rules.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  return new Promise<WebhookAnswer>((resolve, reject) => {
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: { ...post.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(post.body).toString() },
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
        response.on('error', (error) => reject(new WebhookSendError(`the answer broke off: ${error.message}`)));
      },
    );
    const timer = setTimeout(() => request.destroy(new WebhookSendError(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    timer.unref();
    request.on('close', () => clearTimeout(timer));
    request.on('error', (error) =>
      reject(error instanceof WebhookSendError ? error : new WebhookSendError(`could not be sent: ${error.message}`)),
    );
    request.end(post.body);
  });
}
