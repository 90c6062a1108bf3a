// Tells "the database did not answer" (answered 503 `unavailable`) from every other error.
import { GraphQLError } from 'graphql';
import { isPlainObject } from '../lib/json.ts';

const PRISMA_CODES = new Set([
  'P1001', // can't reach the database server
  'P1002', // the server was reached but timed out
  'P1008', // operations timed out (SQLite: busy)
  'P1017', // the server closed the connection
  'P2024', // timed out fetching a connection from the pool
  'P2037', // too many connections
]);

const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);

// SQLSTATE 08 connection exception, 53 insufficient resources, 57 operator intervention (57014: statement_timeout).
const SQLSTATE_CLASSES = /^(08|53|57)/;

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

// pg's own errors carry no code.
const PG_CLIENT_MESSAGES =
  /^(Connection terminated( unexpectedly| due to connection timeout)?|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)$/;

const SQLITE_BUSY = /^SQLITE_BUSY/;

function isUnavailableItself(error: Record<string, unknown>): boolean {
  const { code, kind, message } = error;
  if (typeof code === 'string' && (PRISMA_CODES.has(code) || SOCKET_CODES.has(code) || SQLITE_BUSY.test(code))) return true;
  if (typeof kind === 'string' && ADAPTER_KINDS.has(kind)) return true;
  if (
    typeof code === 'string' &&
    /^[0-9A-Z]{5}$/.test(code) &&
    SQLSTATE_CLASSES.test(code) &&
    (kind === 'postgres' || typeof error.severity === 'string')
  )
    return true;
  return typeof message === 'string' && PG_CLIENT_MESSAGES.test(message) && !('code' in error && typeof code === 'string');
}

/** Whether the error, or anything it wraps (cause, original error, Prisma's driver adapter error), says so. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0 && seen.size < 32) {
    const value = pending.pop();
    if (!isPlainObject(value) || seen.has(value)) continue;
    seen.add(value);
    if (isUnavailableItself(value)) return true;
    pending.push(value.cause, isPlainObject(value.meta) ? value.meta.driverAdapterError : undefined);
    if (value instanceof GraphQLError) pending.push(value.originalError);
    if (Array.isArray(value.errors)) pending.push(...(value.errors as unknown[]));
  }
  return false;
}
