// Which dealerships a key reaches, for rules that decide before touching rows (the rows themselves
// are scoped in src/db/scoped.ts).
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
