// Spec 4.7 (GET /api/v1/apikeys/apikey_details.json): every valid key reads its own details, so its
// dealerships are an unguarded variant of Dealership, with the spec's lists where the graph pages.
import { queryFromInfo } from '@pothos/plugin-prisma';
import { answeredByItsRoot } from '../auth/record-access.ts';
import { builder, restShape } from './builder.ts';
import type { Actor } from '../auth/api-keys.ts';
import { requireActor } from '../auth/scope.ts';
import { keyDealerships } from '../domain/key-dealerships.ts';
import { truncatedFieldDescription } from '../domain/whole-lists.ts';
import { dealershipFields, Location, User } from './dealership.ts';
import { idOrder } from './field-builders.ts';

const ApiKeyDetailsDealership = builder.prismaObject('Dealership', {
  variant: 'ApiKeyDetailsDealership',
  variantOf: {
    record: 'Dealership',
    reason: "The spec lists a dealership's locations and users; the graph pages them. Every key reads it, without `index:dealership`.",
  },
  description: 'A dealership the key can use, with its locations and users.',
  ...answeredByItsRoot('apikey_details answers every valid key its own dealerships, whatever its permissions'),
  fields: (t) => ({
    ...dealershipFields(t),
    // A plain list, in user id order, where the graph's Dealership pages its staff.
    users: t.field({
      type: [User],
      select: (_args, _context, nested) => ({ users: { select: { user: nested(true) }, orderBy: { user_id: 'asc' } } }),
      resolve: (dealership) => dealership.users.map((link) => link.user),
    }),
    locations: t.relation('locations', {
      type: Location,
      query: idOrder,
      ...restShape('ApiKeyDetailsLocation', 'A location of a dealership the key can use.', ['databaseId', 'name', 'location_type']),
    }),
  }),
});

/** The verified caller, and its dealerships as its selection asks them, read once when first asked. */
interface KeyDetails {
  actor: Actor;
  dealerships: () => ReturnType<typeof keyDealerships>;
}

// Built from the verified caller, not read again: the key's id and permissions are already known,
// so the answer costs only the statements of its dealerships. The list and its signal come from one
// read, asked with the selection of `dealerships` (queryFromInfo's path).
const ApiKeyDetails = builder.objectRef<KeyDetails>('ApiKeyDetails').implement({
  description: 'The calling API key: its permissions and the dealerships it can use.',
  fields: (t) => ({
    databaseId: t.int({ resolve: ({ actor }) => actor.apiKeyId }),
    permissions: t.stringList({ resolve: ({ actor }) => [...actor.permissions].sort() }),
    dealerships: t.field({
      type: [ApiKeyDetailsDealership],
      description:
        'The dealerships the key can access, by id: its restriction list, or every dealership when it has none (at most the bound `dealerships_truncated` states).',
      resolve: async (details) => (await details.dealerships()).entries,
    }),
    dealerships_truncated: t.boolean({
      description: truncatedFieldDescription('dealerships'),
      resolve: async (details) => (await details.dealerships()).truncated,
    }),
  }),
});

builder.queryField('apikey_details', (t) =>
  t.field({
    type: ApiKeyDetails,
    description:
      'The key used for this call: id, permissions and the dealerships it reaches, with their locations and users: where to find the dealership and location ids the other operations take.',
    authScopes: { authenticated: true },
    resolve: (_root, _args, context, info) => {
      const actor = requireActor(context);
      let read: ReturnType<typeof keyDealerships> | undefined;
      return {
        actor,
        dealerships: () => {
          // The caller's scoped client answers exactly the dealerships the key reaches.
          read ??= keyDealerships(context.db, queryFromInfo({ context, info, path: ['dealerships'] }));
          return read;
        },
      };
    },
  }),
);
