// The caller's network address, for the per-address limits. X-Forwarded-For is believed only as far as
// TRUST_PROXY says our proxies wrote it: any client can send the header with whatever it likes in it.
import { isIP } from 'node:net';
import { requestState } from '../web/request-state.ts';

declare module '../web/request-state.ts' {
  interface RequestState {
    socketAddress?: string;
  }
}

const UNKNOWN_ADDRESS = 'unknown';

const MAX_ADDRESS_LENGTH = 64;

export function recordSocketAddress(request: Request, address: string | undefined): void {
  if (address) requestState(request).socketAddress = normalise(address);
}

/** A request the service makes for its caller (an MCP tool call) comes from the caller's address. */
export function carrySocketAddress(from: Request, to: Request): void {
  const address = requestState(from).socketAddress;
  if (address) requestState(to).socketAddress = address;
}

function normalise(address: string): string {
  const trimmed = address.trim().slice(0, MAX_ADDRESS_LENGTH).toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(trimmed);
  return mapped?.[1] ?? trimmed;
}

export function clientAddress(request: Request, trustedHops: number): string {
  const socket = requestState(request).socketAddress ?? UNKNOWN_ADDRESS;
  if (trustedHops === 0) return socket;
  const forwarded = (request.headers.get('x-forwarded-for') ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const chain = [...forwarded, socket];
  const entry = chain[Math.max(0, chain.length - 1 - trustedHops)] ?? socket;
  const address = normalise(entry);
  // A trusted proxy writes addresses; anything else in that place is not one, and counts as unknown.
  return isIP(address) !== 0 ? address : UNKNOWN_ADDRESS;
}
