// The Node HTTP server around the app: the request body is read here with a hard cap, so a client
// that sends no Content-Length (chunked) cannot make the server buffer more than the limit.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Yoga } from './yoga.ts';

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return 'too_large';
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function tooLarge(limit: number): Response {
  return new Response(JSON.stringify({ error: 'payload_too_large', message: `The request body is over ${limit} bytes.` }), {
    status: 413,
    headers: { 'content-type': 'application/json; charset=utf-8', connection: 'close' },
  });
}

async function handle(app: Yoga, bodyLimitBytes: number, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const declared = Number(req.headers['content-length'] ?? '0');
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && (declared > 0 || req.headers['transfer-encoding'] !== undefined);
  // A declared length over the limit is refused by the app itself (useBodyLimit) without reading.
  const body = hasBody && declared <= bodyLimitBytes ? await readBody(req, bodyLimitBytes) : undefined;
  let response: Response;
  if (body === 'too_large') {
    response = tooLarge(bodyLimitBytes);
  } else {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (Array.isArray(value)) value.forEach((item) => headers.append(name, item));
      else if (value !== undefined) headers.set(name, value);
    }
    headers.delete('transfer-encoding');
    const url = `http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`;
    const request = new Request(url, { method: req.method ?? 'GET', headers, body: body && body.length > 0 ? new Uint8Array(body) : undefined });
    response = await app.fetch(request);
  }
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.appendHeader(name, value));
  res.end(Buffer.from(await response.arrayBuffer()));
}

export function createHttpServer(app: Yoga, bodyLimitBytes: number, logger: Logger): Server {
  return createServer((req, res) => {
    handle(app, bodyLimitBytes, req, res).catch((error: unknown) => {
      logger.error({ err: error }, 'request failed outside the app');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ error: 'internal_error', message: 'Unexpected error.' }));
    });
  });
}
