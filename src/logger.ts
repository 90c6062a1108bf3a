// The service's log: JSON lines on stdout for machines (one object per event, ready for any log
// shipper), or readable coloured lines for people (LOG_FORMAT=pretty, pino-pretty). Both carry the
// same fields, and neither ever carries personal data: the known fields that could hold an e-mail
// address, a phone number or a secret are redacted here, whatever code logs them.
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogFormat, LogLevel } from './config.ts';

/**
 * Fields censored in every line, as defence in depth: the code logs ids, not people, but a mail
 * logged instead of sent (no SMTP_URL) or an object logged whole must not leak anyone's details.
 */
export const REDACTED_PATHS = [
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

/** A logger writing to `destination` (stdout when omitted) in pino's JSON lines. */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'dealership-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
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
    pretty({ sync: true, singleLine: true, colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' }),
  );
}
