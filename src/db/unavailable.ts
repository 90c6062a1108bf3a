// The one place that tells "the database did not answer" from every other error: unreachable,
// connections refused, reset or terminated, a statement cancelled by its timeout, no free connection
// in the pool, a SQLite database locked by another process past the busy timeout. The error masking
// (src/errors.ts, `maskError`) answers such an error 503 `unavailable` with Retry-After on both
// doors, and a domain rule that handles one expected error (a car not found, a unique key taken)
// rethrows it rather than reading it as an outcome (docs/errors.md, "Errors").
import { GraphQLError } from 'graphql';

/** Prisma's codes for a database it could not reach or that stopped answering. */
const PRISMA_CODES = new Set([
  'P1001', // can't reach the database server
  'P1002', // the server was reached but timed out
  'P1008', // operations timed out (SQLite: busy)
  'P1017', // the server closed the connection
  'P2024', // timed out fetching a connection from the pool
  'P2037', // too many connections
]);

/** The kinds of driver adapter error (@prisma/driver-adapter-utils) that mean the same. */
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);

/**
 * PostgreSQL's SQLSTATE classes: 08 connection exception, 53 insufficient resources (too many
 * connections, out of memory or disk), 57 operator intervention (57014: cancelled by
 * statement_timeout; 57P01–57P03: terminated by an administrator, shut down, starting up).
 */
const SQLSTATE_CLASSES = /^(08|53|57)/;

/** Socket errors of the driver, before any adapter wraps them. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** pg's own errors, which carry no code: a connection that ended, a connect or read that timed out. */
const PG_CLIENT_MESSAGES =
  /^(Connection terminated( unexpectedly| due to connection timeout)?|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)$/;

/** SQLite's "database is locked" (SQLITE_BUSY and its extended codes), once the busy timeout ran out. */
const SQLITE_BUSY = /^SQLITE_BUSY/;

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
}

function isUnavailableItself(error: Record<string, unknown>): boolean {
  const { code, kind, message } = error;
  if (typeof code === 'string' && (PRISMA_CODES.has(code) || SOCKET_CODES.has(code) || SQLITE_BUSY.test(code))) return true;
  if (typeof kind === 'string' && ADAPTER_KINDS.has(kind)) return true;
  // A PostgreSQL error as the adapter describes it ({ kind: 'postgres', code: '57014' }) or as pg raises it.
  if (
    typeof code === 'string' &&
    /^[0-9A-Z]{5}$/.test(code) &&
    SQLSTATE_CLASSES.test(code) &&
    (kind === 'postgres' || typeof error.severity === 'string')
  )
    return true;
  return typeof message === 'string' && PG_CLIENT_MESSAGES.test(message) && !('code' in error && typeof code === 'string');
}

/**
 * Whether the error, or anything it wraps (a cause, a GraphQL error's original error, the driver
 * adapter's error in Prisma's meta, an aggregate's errors), says the database did not answer.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0 && seen.size < 32) {
    const next = pending.pop();
    const value = record(next);
    if (!value || seen.has(value)) continue;
    seen.add(value);
    if (isUnavailableItself(value)) return true;
    pending.push(value.cause, record(value.meta)?.driverAdapterError, value instanceof GraphQLError ? value.originalError : undefined);
    if (Array.isArray(value.errors)) pending.push(...(value.errors as unknown[]));
  }
  return false;
}
