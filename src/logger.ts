// The service's log: JSON lines on stdout for machines (one object per event, ready for any log
// shipper), or readable coloured lines for people (LOG_FORMAT=pretty, pino-pretty). Both carry the
// same fields, and neither ever carries personal data: the known fields that could hold an e-mail
// address, a phone number or a secret are redacted here, whatever code logs them.
import { format } from 'node:util';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogFormat, LogLevel } from './config/index.ts';
import { cutText } from './web/header-value.ts';

/**
 * Fields censored in every line, as defence in depth: the code logs ids, not people, but a mail
 * logged instead of sent (no SMTP_URL) or an object logged whole must not leak anyone's details.
 */
const REDACTED_PATHS = [
  'mail.to',
  'mail.subject',
  'mail.text',
  'email',
  'phone',
  'recipient',
  'authorization',
  'password',
  'token',
  '*.email',
  '*.phone',
  '*.recipient',
  '*.authorization',
  '*.password',
  '*.token',
  'headers.authorization',
  'req.headers.authorization',
];

/**
 * How much caller text a line may carry. Fields can hold what a caller sent (a path, the names of
 * ignored parameters, a GraphQL operation name): one request must not be able to write megabytes of
 * log. Each string of a line's fields is cut to LOGGED_STRING_MAX code points, each list to
 * LOGGED_LIST_MAX items, the message to LOGGED_MESSAGE_MAX, and a line still over LOGGED_LINE_MAX
 * characters is replaced by a short one saying so. Errors (`err`) keep their own serialiser.
 */
export const LOGGED_STRING_MAX = 200;
const LOGGED_LIST_MAX = 50;
const LOGGED_MESSAGE_MAX = 1_000;
export const LOGGED_LINE_MAX = 16 * 1024;
/** Nesting below this depth is logged as it is (the service's own fields are shallow). */
const CAPPED_DEPTH = 6;

function capped(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return cutText(value, LOGGED_STRING_MAX);
  if (value === null || typeof value !== 'object' || depth >= CAPPED_DEPTH) return value;
  if (Array.isArray(value)) {
    const items = value.slice(0, LOGGED_LIST_MAX).map((item: unknown) => capped(item, depth + 1));
    if (value.length > LOGGED_LIST_MAX) items.push(`… ${value.length - LOGGED_LIST_MAX} more`);
    return items;
  }
  // Instances of classes (Error, Date, Buffer) are left to pino's serialisers.
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [cutText(name, LOGGED_STRING_MAX), capped(item, depth + 1)]));
}

/** A line over LOGGED_LINE_MAX characters, replaced by one that says so and keeps its start. */
function cappedLine(line: string): string {
  if (line.length <= LOGGED_LINE_MAX) return line;
  const level = /"level":(\d+)/.exec(line)?.[1];
  return `${JSON.stringify({ level: level === undefined ? 40 : Number(level), msg: `log line of ${line.length} characters cut`, head: cutText(line, 1_000) })}\n`;
}

/** A logger writing to `destination` (stdout when omitted) in pino's JSON lines. */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'dealership-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { log: (object) => capped(object) as Record<string, unknown> },
      hooks: {
        logMethod(args, method) {
          const cut = args.map((arg: unknown) => (typeof arg === 'string' ? cutText(arg, LOGGED_MESSAGE_MAX) : arg));
          method.apply(this, cut as Parameters<typeof method>);
        },
        streamWrite: cappedLine,
      },
    },
    destination,
  );
}

/**
 * The logger LOG_FORMAT asks for. pino-pretty is loaded only when chosen, and writes synchronously
 * in this process (no worker thread), so a line is on the terminal before the next one is made.
 */
export async function createConfiguredLogger(settings: { logLevel: LogLevel; logFormat: LogFormat }): Promise<Logger> {
  if (settings.logFormat !== 'pretty') return createLogger(settings.logLevel);
  const { default: pretty } = await import('pino-pretty');
  return createLogger(
    settings.logLevel,
    pretty({
      sync: true,
      singleLine: true,
      colorize: process.stdout.isTTY === true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,service',
    }),
  );
}

/**
 * Makes every line the process writes one of the logger's JSON lines (LOG_FORMAT=json): what
 * libraries print through `console` (Prisma's warnings, ioredis' unhandled-error notice, Sofa's debug
 * output) and Node's own process warnings (a deprecation in a dependency) arrive as lines with
 * `source` saying where from, and an uncaught exception as a `fatal` line before the exit (1).
 * The process entry calls it once; tests and CLIs keep Node's own console.
 */
export function routeProcessOutput(logger: Logger): void {
  const lineOf =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]) =>
      logger[level]({ source: 'console' }, format(...args));
  console.log = lineOf('info');
  console.info = lineOf('info');
  console.debug = lineOf('debug');
  console.trace = lineOf('debug');
  console.warn = lineOf('warn');
  console.error = lineOf('error');
  // Node prints warnings through a listener of its own; this one replaces it.
  process.removeAllListeners('warning');
  process.on('warning', (warning: Error & { code?: string }) => {
    logger.warn({ source: 'node', warning: { name: warning.name, ...(warning.code ? { code: warning.code } : {}) } }, warning.message);
  });
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception: the process stops');
    process.exit(1);
  });
}
