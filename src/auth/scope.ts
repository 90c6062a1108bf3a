// Which dealerships a key reaches. Rows are scoped in one place, the caller's client
// (src/db/scoped.ts); these answer the questions a rule asks before it touches rows (which error
// a write into a dealership the key does not reach answers).
import type { Actor } from './api-keys.ts';
import { unauthenticated } from '../errors.ts';

/** The caller of a field that requires a key; scope-auth has already refused keyless calls. */
export function requireActor(context: { actor: Actor | null }): Actor {
  if (!context.actor) throw unauthenticated();
  return context.actor;
}

export function reachesDealership(actor: Actor, dealershipId: number): boolean {
  return actor.dealershipIds === null || actor.dealershipIds.includes(dealershipId);
}
