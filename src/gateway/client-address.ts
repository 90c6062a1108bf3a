// Who is calling, by network address: what the per-address limits (failed authentication, sign-on
// redemption) count against. The HTTP server records the socket's address for each request it hands
// to the app; X-Forwarded-For is believed only as far as TRUST_PROXY says proxies of ours wrote it,
// since any client can send the header with whatever it likes in it.
import { isIP } from 'node:net';
import { requestState } from '../web/request-state.ts';

declare module '../web/request-state.ts' {
  interface RequestState {
    /** The peer address of the request's connection, as the HTTP server saw it (normalised). */
    socketAddress?: string;
  }
}

/** Stands for a request whose socket is not known (the app called without the HTTP server, as in tests). */
const UNKNOWN_ADDRESS = 'unknown';

/** Longest address text kept: an IPv6 address with a zone fits; anything longer is cut, never stored whole. */
const MAX_ADDRESS_LENGTH = 64;

/** Called by the HTTP server for each request it builds: the peer address of its connection. */
export function recordSocketAddress(request: Request, address: string | undefined): void {
  if (address) requestState(request).socketAddress = normalise(address);
}

/** `::ffff:10.0.0.1` (an IPv4 client on a dual-stack socket) is `10.0.0.1`, so one client is one name. */
function normalise(address: string): string {
  const trimmed = address.trim().slice(0, MAX_ADDRESS_LENGTH).toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(trimmed);
  return mapped?.[1] ?? trimmed;
}

/**
 * The client's address. With `trustedHops` proxies in front (TRUST_PROXY), each appended the address
 * it received the request from to X-Forwarded-For, so the client is the entry that many hops back
 * from the socket; entries further left were written by the client and are ignored. A chain shorter
 * than that (the request bypassed a proxy) gives its leftmost entry.
 */
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
