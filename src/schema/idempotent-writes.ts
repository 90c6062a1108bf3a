// Idempotency-Key on every write, both doors: a retry with the same key and arguments answers the
// first answer and writes nothing. A new mutation is keyed by default; the exceptions say why.
import { Kind, type GraphQLFieldResolver, type GraphQLResolveInfo } from 'graphql';
import type { Actor } from '../auth/api-keys.ts';
import { accessOfField } from '../auth/field-access.ts';
import type { Permission } from '../auth/permissions.ts';
import type { Context } from '../context.ts';
import { IDEMPOTENCY_HEADER, idempotencyKeyOf, requestHash, underIdempotencyKey } from '../domain/leads/idempotency.ts';
import { openIdempotentAnswer, sealIdempotentAnswer } from '../domain/stored-secrets.ts';
import { invalidInput } from '../errors.ts';

export const mutationsKeyedInTheirTransaction: Readonly<Record<string, string>> = {
  create_lead: 'stores its answer under the key in the transaction that creates the lead (src/domain/leads/create.ts)',
};
export const mutationsNotKeyed: Readonly<Record<string, string>> = {
  redeem_partner_token:
    'a browser calls it without an API key, to which Idempotency-Key records belong; its token is single-use by design, so a second call changes nothing and answers 410 token_used',
};

export function takesIdempotencyKey(mutation: string): boolean {
  return !(mutation in mutationsNotKeyed);
}

function rootFieldCount(info: GraphQLResolveInfo): number {
  return info.operation.selectionSet.selections.filter(
    (selection) => selection.kind !== Kind.FIELD || selection.name.value !== '__typename',
  ).length;
}

/** Otherwise the field's own check refuses it, before any key is read. */
function mayCall(actor: Actor | null, permissions: readonly Permission[]): actor is Actor {
  return actor !== null && permissions.every((permission) => actor.permissions.has(permission));
}

export function checkKeyExceptions(mutations: ReadonlySet<string>): void {
  for (const name of [...Object.keys(mutationsKeyedInTheirTransaction), ...Object.keys(mutationsNotKeyed)]) {
    if (!mutations.has(name)) throw new Error(`${name} is listed as an Idempotency-Key exception but is no mutation`);
  }
}

type Resolver = GraphQLFieldResolver<unknown, Context, Record<string, unknown>>;

/** A keyed mutation's resolver (outside Pothos' argument parsing, so the hash is of what was sent). */
export function keyedWrite(resolve: Resolver, mutation: string): Resolver {
  if (mutation in mutationsNotKeyed || mutation in mutationsKeyedInTheirTransaction) return resolve;
  return (source, args, context, info) => {
    const key = idempotencyKeyOf(context.request);
    const { permissions } = accessOfField(info.parentType.getFields()[info.fieldName]!);
    if (key === null || !mayCall(context.actor, permissions)) return resolve(source, args, context, info);
    if (rootFieldCount(info) > 1) {
      throw invalidInput(IDEMPOTENCY_HEADER, 'covers one write: send each mutation in a request of its own');
    }
    const now = context.now();
    const keyring = context.config.secretsKeyring;
    return underIdempotencyKey({
      db: context.db,
      claim: {
        apiKeyId: context.actor.apiKeyId,
        key,
        hash: requestHash(mutation, args),
        expiredBefore: new Date(now.getTime() - context.config.idempotencyTtlMs),
      },
      now,
      run: async () => resolve(source, args, context, info) as unknown,
      seal: (text) => sealIdempotentAnswer(keyring, text),
      open: (stored) => openIdempotentAnswer(keyring, stored),
      logger: context.logger,
    });
  };
}
