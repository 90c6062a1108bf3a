import pino, { type Logger } from 'pino';
import type { LogLevel } from './config.ts';

/** JSON lines on stdout: one object per event, ready for any log shipper. */
export function createLogger(level: LogLevel): Logger {
  return pino({ level, base: { service: 'dealership-gateway' }, timestamp: pino.stdTimeFunctions.isoTime });
}
