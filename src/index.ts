// The only place that opens a port: prepares the database, serves the app, shuts down cleanly.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { loadConfig } from './config.ts';
import { createDb } from './db/client.ts';
import { prepareDatabase } from './db/prepare.ts';
import { createLogger } from './logger.ts';
import { createApp, type Yoga } from './yoga.ts';

const config = loadConfig();
const logger = createLogger(config.logLevel);
const db = createDb(config.databaseUrl);

/**
 * Reads the body with a hard cap, so a client that sends no Content-Length (chunked) cannot make the
 * server buffer more than the limit; declared lengths are refused earlier, in the app itself.
 */
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

async function handle(app: Yoga, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const declared = Number(req.headers['content-length'] ?? '0');
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && (declared > 0 || req.headers['transfer-encoding']);
  const body = hasBody && declared <= config.bodyLimitBytes ? await readBody(req, config.bodyLimitBytes) : undefined;
  let response: Response;
  if (body === 'too_large') {
    response = new Response(
      JSON.stringify({ error: 'payload_too_large', message: `The request body is over ${config.bodyLimitBytes} bytes.` }),
      { status: 413, headers: { 'content-type': 'application/json; charset=utf-8', connection: 'close' } },
    );
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

async function main(): Promise<void> {
  await prepareDatabase(config, db, logger);
  const app = createApp({ config, db, logger, now: () => new Date() });
  const server = createServer((req, res) => {
    handle(app, req, res).catch((error: unknown) => {
      logger.error({ err: error }, 'request failed outside the app');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ error: 'internal_error', message: 'Unexpected error.' }));
    });
  });
  server.listen(config.port, config.host, () => {
    logger.info(
      { port: config.port, engine: config.engine },
      `listening on http://localhost:${config.port} (GraphiQL at /graphql); get a key with: npm run --silent keys -- create --name demo --all-permissions`,
    );
  });

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing open requests');
    const force = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
    force.unref();
    server.close(() => {
      db.$disconnect()
        .catch((error: unknown) => logger.error({ err: error }, 'closing the database failed'))
        .finally(() => {
          logger.info('stopped');
          process.exit(0);
        });
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  logger.fatal({ err: error }, 'start-up failed');
  process.exit(1);
});
