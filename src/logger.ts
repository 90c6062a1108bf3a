// Known fields that could hold an e-mail address, a phone number or a secret are redacted here, whatever code logs them.
import { format } from 'node:util';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogFormat, LogLevel } from './config/index.ts';
import { cutText } from './web/header-value.ts';

// Defence in depth: a mail logged instead of sent, or an object logged whole, must not leak anyone's details.
// Censored by name at any depth, in the same walk that caps the fields: pino's own redaction re-parses its paths
// and clones every top-level value of every line.
const REDACTED_NAMES = new Set(['email', 'phone', 'recipient', 'authorization', 'password', 'token']);
const REDACTED_MAIL_FIELDS = new Set(['to', 'subject', 'text']);
const CENSOR = '[redacted]';

// Fields can echo caller text, and one request must not write megabytes of log: strings, lists, message and line are capped.
export const LOGGED_STRING_MAX = 200;
const LOGGED_LIST_MAX = 50;
const LOGGED_MESSAGE_MAX = 1_000;
export const LOGGED_LINE_MAX = 16 * 1024;
const CAPPED_DEPTH = 6;

const isRedacted = (name: string, parent: string): boolean =>
  REDACTED_NAMES.has(name) || (parent === 'mail' && REDACTED_MAIL_FIELDS.has(name));

/** An error as pino's serialiser writes it (its stack whole), its fields of those names censored. */
function censoredError(error: Error): unknown {
  const fields = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  for (const name of Object.keys(fields)) if (REDACTED_NAMES.has(name)) fields[name] = CENSOR;
  return fields;
}

function capped(value: unknown, depth = 0, parent = ''): unknown {
  if (typeof value === 'string') return cutText(value, LOGGED_STRING_MAX);
  if (value === null || typeof value !== 'object' || depth >= CAPPED_DEPTH) return value;
  if (Array.isArray(value)) {
    const items = value.slice(0, LOGGED_LIST_MAX).map((item: unknown) => capped(item, depth + 1, parent));
    if (value.length > LOGGED_LIST_MAX) items.push(`… ${value.length - LOGGED_LIST_MAX} more`);
    return items;
  }
  // Instances of classes (Error, Date, Buffer) are left to pino's serialisers.
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, item]) => [
      cutText(name, LOGGED_STRING_MAX),
      isRedacted(name, parent) ? CENSOR : capped(item, depth + 1, name),
    ]),
  );
}

function cappedLine(line: string): string {
  if (line.length <= LOGGED_LINE_MAX) return line;
  const level = /"level":(\d+)/.exec(line)?.[1];
  return `${JSON.stringify({ level: level === undefined ? 40 : Number(level), msg: `log line of ${line.length} characters cut`, head: cutText(line, 1_000) })}\n`;
}

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'dealership-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: censoredError },
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

/** pino-pretty writes synchronously in-process, so a line is on the terminal before the next is made. */
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

/** Libraries' console output, Node's warnings and an uncaught exception become JSON lines too (process entry only). */
export function routeProcessOutput(logger: Logger): void {
  const lineOf =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]) =>
      logger[level]({ source: 'console' }, format(...args));
  const [debug, info, warn, error] = [lineOf('debug'), lineOf('info'), lineOf('warn'), lineOf('error')];
  Object.assign(console, { log: info, info, debug, trace: debug, warn, error });
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
