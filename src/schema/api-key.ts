// Spec 4.7: the details of the key used for the call (GET /api/v1/apikeys/apikey_details.json).
// Every valid key reads its own details, whatever its permissions, so its dealerships and locations
// are variants of Dealership and Location (src/schema/dealership.ts) built from the same field
// definitions: the Dealership type is guarded by index:dealership wherever a relation reaches it
// (src/auth/type-guards.ts), which would empty this list, and the graph's Location carries data
// (addresses, partner ids, websites) that a key without index:dealership must not reach through here.
import { builder } from '../builder.ts';
import type { Actor } from '../auth/api-keys.ts';
import { requireActor } from '../auth/scope.ts';
import { dealershipFields, dealershipStaffList, locationColumnFields, locationOrder } from './dealership.ts';

const ApiKeyDetailsLocation = builder.prismaObject('Location', {
  variant: 'ApiKeyDetailsLocation',
  fields: (t) => {
    const { databaseId, name, location_type } = locationColumnFields(t);
    return { databaseId, name, location_type };
  },
});

const ApiKeyDetailsDealership = builder.prismaObject('Dealership', {
  variant: 'ApiKeyDetailsDealership',
  fields: (t) => ({
    ...dealershipFields(t),
    users: dealershipStaffList(t),
    locations: t.relation('locations', { type: ApiKeyDetailsLocation, query: locationOrder }),
  }),
});

// Built from the verified caller, not read again: the key's id and permissions are already known,
// so the answer costs only the statements of its dealerships.
const ApiKeyDetails = builder.objectRef<Actor>('ApiKeyDetails').implement({
  fields: (t) => ({
    databaseId: t.int({ resolve: (actor) => actor.apiKeyId }),
    permissions: t.stringList({ resolve: (actor) => [...actor.permissions].sort() }),
    dealerships: t.prismaField({
      type: [ApiKeyDetailsDealership],
      description: 'The dealerships the key can access: its restriction list, or every dealership when it has none.',
      resolve: (query, _apiKey, _args, context) =>
        // The caller's scoped client answers exactly the dealerships the key reaches.
        context.db.dealership.findMany({ ...query, orderBy: { id: 'asc' } }),
    }),
  }),
});

builder.queryField('apikey_details', (t) =>
  t.field({
    type: ApiKeyDetails,
    description: 'The key used for this call: id, permissions and the dealerships it reaches, with their locations and users: where to find the dealership and location ids the other operations take.',
    authScopes: { authenticated: true },
    resolve: (_root, _args, context) => requireActor(context),
  }),
);
