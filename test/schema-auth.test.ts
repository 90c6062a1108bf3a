// Secure by default: every root field declares its authorization, and the printed schema is the
// one the code builds. A new field without authScopes fails here, not in production.
import { isObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { restRoutes } from '../src/rest/routes.ts';
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

  it('gives each REST route the access its table entry documents', () => {
    const byCoordinate = new Map(rootFields().map((field) => [field.coordinate, field.authScopes]));
    for (const route of restRoutes) {
      const scopes = byCoordinate.get(route.field);
      if (scopes === undefined) continue; // the operation is not implemented in this build
      const expected: AuthScopes =
        route.access === 'public' ? { public: true } : route.access === 'authenticated' ? { authenticated: true } : { permission: route.access };
      expect(scopes, `${route.method} ${route.path}`).toEqual(expected);
    }
  });

  it('makes public access a visible, rare decision', () => {
    const publicFields = rootFields().filter((field) => field.authScopes?.public === true).map((field) => field.coordinate);
    const allowed = restRoutes.filter((route) => route.access === 'public').map((route) => route.field);
    for (const field of publicFields) expect(allowed).toContain(field);
  });
});
