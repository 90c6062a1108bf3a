// Secure by default: every root field declares its authorization, and the printed schema is the
// one the code builds. A new field without authScopes fails here, not in production.
import { isObjectType, type GraphQLNamedType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { accessOfField } from '../src/auth/field-access.ts';
import { permissionOfType } from './support/guards.ts';
import { accessOfRoute, restRoutes } from '../src/rest/routes.ts';
import { getSchema } from '../src/schema/index.ts';

type AuthScopes = { public?: boolean; authenticated?: boolean; permission?: string };

function rootFields() {
  const schema = getSchema();
  return [schema.getQueryType(), schema.getMutationType()]
    .filter((type) => type !== null && type !== undefined && isObjectType(type))
    .flatMap((type) =>
      Object.values(type!.getFields()).map((field) => ({
        coordinate: `${type!.name}.${field.name}`,
        authScopes: (field.extensions as { pothosOptions?: { authScopes?: AuthScopes } }).pothosOptions?.authScopes,
      })),
    );
}

describe('the schema', () => {
  it('has authScopes on every root field', () => {
    const fields = rootFields();
    expect(fields.length).toBeGreaterThan(0);
    const missing = fields.filter((field) => field.authScopes === undefined || Object.keys(field.authScopes).length === 0);
    expect(missing.map((field) => field.coordinate)).toEqual([]);
  });

  it('declares who may call each root field in one place, the field, which both doors read', () => {
    const schema = getSchema();
    // Every root field says it: a permission, any valid key, or (rarely) no key at all.
    for (const { coordinate } of rootFields()) {
      const [operation, name] = coordinate.split('.') as ['Query' | 'Mutation', string];
      const field = (operation === 'Query' ? schema.getQueryType() : schema.getMutationType())!.getFields()[name]!;
      expect(() => accessOfField(field), coordinate).not.toThrow();
    }
    const byRoute = Object.fromEntries(restRoutes.map((route) => [route.field, accessOfRoute(route, schema)]));
    // The spec's error table says "unauthorised" for a key without the permission of these (4.4, 4.8, 4.9, 4.11).
    expect(
      Object.keys(byRoute)
        .filter((field) => byRoute[field]!.deniedStatus === 401)
        .sort(),
    ).toEqual(['Mutation.create_lead', 'Mutation.create_lead_event', 'Mutation.update_lead', 'Query.model_variant']);
    // A route's further permissions are derived from the fields its body cannot leave out: only the
    // payment processors' authorization keys are such a field today.
    expect(
      Object.entries(byRoute)
        .filter(([, access]) => access.alsoNeeds.length > 0)
        .map(([field, access]) => [field, access.alsoNeeds]),
    ).toEqual([['Query.car_payment_processors', ['show:payment_processor_secret']]]);
  });

  it('guards every type of a guarded record, variants included, unless it says which root field answers for it', () => {
    const schema = getSchema();
    const exempt: string[] = [];
    const recordOf = (type: GraphQLNamedType) => (type.extensions as { pothosPrismaModel?: string }).pothosPrismaModel ?? type.name;
    const permissionByRecord: Record<string, string> = {};
    for (const type of Object.values(schema.getTypeMap())) {
      const permission = permissionOfType(type);
      if (permission) permissionByRecord[recordOf(type)] = permission;
    }
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type)) continue;
      const extensions = type.extensions as { pothosPrismaModel?: string; answeredByItsRoot?: string };
      const record = extensions.pothosPrismaModel ?? type.name;
      if (!(record in permissionByRecord)) continue;
      if (extensions.answeredByItsRoot) {
        expect(extensions.answeredByItsRoot.length, type.name).toBeGreaterThan(30);
        expect(permissionOfType(type), type.name).toBeUndefined();
        exempt.push(type.name);
      } else {
        expect(permissionOfType(type), type.name).toBe(permissionByRecord[record]);
      }
    }
    // The variants inherit: a contact's list form and an offer's website form are guarded like the record.
    expect(permissionOfType(schema.getType('ContactListEntry')!)).toBe('read:contact');
    expect(permissionOfType(schema.getType('WebsiteOffer')!)).toBe('index:offer');
    expect(exempt.sort()).toEqual(['ApiKeyDetailsDealership', 'CarRecord', 'CarReservation', 'DealershipSearchContactDetail']);
  });

  it('makes public access a visible, rare decision', () => {
    const publicFields = rootFields()
      .filter((field) => field.authScopes?.public === true)
      .map((field) => field.coordinate);
    expect(publicFields.sort()).toEqual(['Mutation.redeem_partner_token', 'Query.car_redirect']);
  });
});
