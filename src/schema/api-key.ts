// Spec 4.7: the details of the key used for the call (GET /api/v1/apikeys/apikey_details.json).
// The object types here are the documented shape exactly, because the REST body is every field.
import { builder } from '../builder.ts';
import type { Actor } from '../auth/api-keys.ts';
import { requireActor } from '../auth/scope.ts';

const ApiKeyDetailsUser = builder.prismaObject('User', {
  variant: 'ApiKeyDetailsUser',
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    // A staff member's work address, part of the record every valid key reads (the spec types it as
    // a string); read:personal_data guards customers' data, not the dealership's own team.
    email: t.exposeString('email'),
  }),
});

const ApiKeyDetailsLocation = builder.prismaObject('Location', {
  variant: 'ApiKeyDetailsLocation',
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    location_type: t.exposeString('location_type'),
  }),
});

const ApiKeyDetailsDealership = builder.prismaObject('Dealership', {
  variant: 'ApiKeyDetailsDealership',
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    slug: t.exposeString('slug'),
    locations: t.relation('locations', { type: ApiKeyDetailsLocation, query: { orderBy: { id: 'asc' } } }),
    users: t.field({
      type: [ApiKeyDetailsUser],
      select: { users: { select: { user: true }, orderBy: { user_id: 'asc' } } },
      resolve: (dealership) => dealership.users.map((link) => link.user),
    }),
  }),
});

// Built from the verified caller, not read again: the key's id and permissions are already known,
// so the answer costs only the statements of its dealerships.
const ApiKeyDetails = builder.objectRef<Actor>('ApiKeyDetails').implement({
  fields: (t) => ({
    id: t.int({ resolve: (actor) => actor.apiKeyId }),
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
