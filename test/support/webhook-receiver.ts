// A real HTTP receiver of webhooks on the loopback: it verifies each delivery with the
// `standardwebhooks` package (Webhook.verify, the check the docs show receivers), answers the
// statuses it is told to (failing on purpose), and keeps what it was sent.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Which of the receiver's secrets verified it (by index in `secrets`), none when none did. */
  verifiedWith: number[];
  answered: number;
}

export interface WebhookReceiver {
  url: (path?: string) => string;
  port: number;
  received: ReceivedWebhook[];
  /** The secrets deliveries are verified with. */
  secrets: string[];
  /** Statuses to answer next, in order; then 204 for a verified delivery, 400 otherwise. */
  failNext: number[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const receiver: Omit<WebhookReceiver, 'url' | 'port' | 'close'> = { received: [], secrets: [], failNext: [] };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
      const verifiedWith = receiver.secrets.flatMap((secret, index) => {
        try {
          new Webhook(secret).verify(body, headers);
          return [index];
        } catch {
          return [];
        }
      });
      const answered = receiver.failNext.shift() ?? (verifiedWith.length > 0 ? 204 : 400);
      receiver.received.push({ path: request.url ?? '', headers: request.headers, body, verifiedWith, answered });
      response.writeHead(answered, { 'content-type': 'text/plain' });
      response.end(answered < 300 ? '' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...receiver,
    get received() {
      return receiver.received;
    },
    get secrets() {
      return receiver.secrets;
    },
    set secrets(value: string[]) {
      receiver.secrets = value;
    },
    get failNext() {
      return receiver.failNext;
    },
    set failNext(value: number[]) {
      receiver.failNext = value;
    },
    port,
    url: (path = '/hooks') => `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
