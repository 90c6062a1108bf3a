// Field-level guards: a field inside an object that needs its own permission resolves to null for a
// key without it, on both doors, instead of failing the whole response.
import type { Permission } from './permissions.ts';

export function guardedBy<P extends Permission>(permission: P) {
  return { nullable: true, authScopes: { permission }, unauthorizedResolver: () => null } as const;
}

/** People's names, e-mails, phones, postcodes and regos. */
export const personalData = guardedBy('read:personal_data');
