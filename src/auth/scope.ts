// Which dealerships a key reaches. Every read and write of a dealership's data goes through these,
// so an object outside the key's dealerships is indistinguishable from one that does not exist.
import type { Actor } from './api-keys.ts';
import type { Context } from '../context.ts';
import { unauthenticated } from '../errors.ts';

/** The caller of a field that requires a key; scope-auth has already refused keyless calls. */
export function requireActor(context: Pick<Context, 'actor'>): Actor {
  if (!context.actor) throw unauthenticated();
  return context.actor;
}

/** A Prisma `where` fragment on a dealership id column: everything for unrestricted keys. */
export function dealershipIdFilter(actor: Actor): { in: number[] } | undefined {
  return actor.dealershipIds ? { in: [...actor.dealershipIds] } : undefined;
}

export function reachesDealership(actor: Actor, dealershipId: number): boolean {
  return actor.dealershipIds === null || actor.dealershipIds.includes(dealershipId);
}
