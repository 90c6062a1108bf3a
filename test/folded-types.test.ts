// Each output record of the catalogue and dealership parts is one type on both doors: the REST
// door's copy of the graph's type (src/rest/rest-schema.ts) leaves out what is `graphOnly`
// (src/schema/builder.ts), so it is the spec's shape, while graph clients reach the extras through the same
// root fields. These pin both halves: the REST shapes of the shared types, and the graph's extras.
import { getNamedType, isObjectType, type GraphQLSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { restSchema } from '../src/rest/rest-schema.ts';
import type { RecordVariant } from '../src/schema/record-plugin.ts';
import { getSchema } from '../src/schema/index.ts';
import type { TestApp } from './support/app.ts';
import { createDemoApp, DEMO_READ_PATHS } from './support/demo.ts';
import { makeKey } from './support/fixtures.ts';

type Json = Record<string, unknown>;

/** The field names of an object type of a schema, sorted. */
function fieldsOf(schema: GraphQLSchema, typeName: string): string[] {
  const type = schema.getType(typeName);
  if (!isObjectType(type)) throw new Error(`${typeName} is not an object type of the schema`);
  return Object.keys(type.getFields()).sort();
}

/** The named type a field of an object type returns. */
function typeOfField(schema: GraphQLSchema, typeName: string, fieldName: string): string {
  const type = schema.getType(typeName);
  if (!isObjectType(type)) throw new Error(`${typeName} is not an object type of the schema`);
  const field = type.getFields()[fieldName];
  if (!field) throw new Error(`${typeName}.${fieldName} does not exist`);
  return getNamedType(field.type).name;
}

describe('the folded types in the schemas', () => {
  const graph = getSchema();
  const rest = restSchema(graph);

  it('has no second type for a record the graph already has', () => {
    for (const gone of [
      'ModelVariantDetails',
      'ManufacturerOffer',
      'OfferModel',
      'DealershipSearchAddress',
      'DealershipSearchWebsite',
      'ApiKeyDetailsUser',
    ]) {
      expect(graph.getType(gone), gone).toBeUndefined();
    }
  });

  it('answers the REST-routed fields with the graph’s types', () => {
    expect(typeOfField(graph, 'Query', 'model_variant')).toBe('ModelVariant');
    expect(typeOfField(graph, 'Query', 'manufacturer_offers')).toBe('Offer');
    expect(typeOfField(graph, 'Offer', 'model')).toBe('Model');
    expect(typeOfField(graph, 'DealershipSearchResult', 'address')).toBe('LocationAddress');
    expect(typeOfField(graph, 'DealershipSearchResult', 'website')).toBe('Website');
    expect(typeOfField(graph, 'ApiKeyDetailsDealership', 'users')).toBe('User');
  });

  it('shows on the REST door only the spec’s fields of each shared type', () => {
    expect(fieldsOf(rest, 'Model')).toEqual(['name', 'new_slug', 'path', 'slug']);
    expect(fieldsOf(rest, 'Website')).toEqual(['id', 'name', 'url']);
    expect(fieldsOf(rest, 'User')).toEqual(['email', 'id', 'name']);
    expect(fieldsOf(rest, 'Offer')).toEqual([
      'created_at',
      'dealership_ids',
      'dealership_ids_truncated',
      'description',
      'disclaimer',
      'expires_at',
      'expiry_in_words',
      'id',
      'image_or_model_image',
      'images',
      'manufacturer',
      'manufacturer_id',
      'model',
      'name',
      'sanitized_description',
      'updated_at',
    ]);
    expect(fieldsOf(rest, 'LocationAddress')).toEqual([
      'addressable_id',
      'addressable_type',
      'city',
      'created_at',
      'id',
      'lat',
      'long',
      'name',
      'place_id',
      'place_url',
      'postcode',
      'seo_city',
      'state',
      'street',
      'updated_at',
    ]);
    expect(fieldsOf(rest, 'ModelVariant')).not.toContain('model');
    expect(fieldsOf(rest, 'ModelVariant')).not.toContain('node_id');
    expect(fieldsOf(rest, 'ModelVariant')).not.toContain('databaseId');
  });

  it('answers a selection of the record’s type under the spec’s name where a REST body is one', () => {
    expect(typeOfField(graph, 'Car', 'dealership')).toBe('Dealership');
    expect(typeOfField(graph, 'Car', 'location')).toBe('Location');
    expect(typeOfField(graph, 'WebsiteOffer', 'preferred_locations')).toBe('Location');
    expect(typeOfField(graph, 'ApiKeyDetailsDealership', 'locations')).toBe('Location');
    expect(typeOfField(rest, 'WebsiteOffer', 'preferred_locations')).toBe('OfferLocation');
    expect(fieldsOf(rest, 'OfferLocation')).toEqual(['id', 'name']);
    expect(fieldsOf(rest, 'ApiKeyDetailsLocation')).toEqual(['id', 'location_type', 'name']);
    for (const name of ['CarDealership', 'CarLocation', 'OfferLocation', 'ApiKeyDetailsLocation'])
      expect(graph.getType(name), name).toBeUndefined();
  });

  it('declares why every other type of a record exists (its variantOf), and only on such a type', () => {
    // A record's type: its Prisma model's own type (named as the model), or a plain type with the
    // row's `databaseId`. Any other type of a record is a variant, which must say why it exists.
    const named = new Map<string, string>();
    for (const type of Object.values(graph.getTypeMap())) {
      const variant = isObjectType(type) ? (type.extensions as { variantOf?: RecordVariant }).variantOf : undefined;
      if (variant) named.set(type.name, variant.reason);
    }
    // Plain types that are their record's only type in the graph (no Prisma type to be a variant of).
    const onlyTypeOfTheirRecord = new Set([
      'ApiKeyDetails',
      'CarPaymentProcessor',
      'CarPerformance',
      'LeadFile',
      'LeadPayment',
      'ModelVariantAvailabilityCategory',
      'ModelVariantAvailabilityOption',
      'ModelVariantConfigurableOption',
      'ModelVariantSpecificationCategory',
      'ModelVariantSpecificationField',
      'WebhookDelivery',
      'WebhookSubscription',
    ]);
    const variants: string[] = [];
    for (const type of Object.values(graph.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      const model = (type.extensions as { pothosPrismaModel?: string }).pothosPrismaModel;
      if (model ? type.name !== model : 'databaseId' in type.getFields() && !onlyTypeOfTheirRecord.has(type.name)) variants.push(type.name);
    }
    // Every variant found declares itself; one the walk cannot see (no databaseId) may declare itself too.
    expect(variants.filter((name) => !named.has(name))).toEqual([]);
    for (const name of named.keys()) expect(onlyTypeOfTheirRecord.has(name), name).toBe(false);
    expect(named.size).toBeGreaterThanOrEqual(variants.length);
    for (const [name, reason] of named) expect(reason.length, `${name}'s reason`).toBeGreaterThan(20);
    for (const name of onlyTypeOfTheirRecord) expect(graph.getType(name), name).toBeDefined();
  });
});

describe('the folded types on both doors', () => {
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    ({ app, key } = await createDemoApp());
  }, 120_000);

  async function restBody(coordinate: string): Promise<unknown> {
    const response = await app.request(DEMO_READ_PATHS[coordinate]!, { key });
    expect(response.status, coordinate).toBe(200);
    return response.json();
  }

  it('answers a manufacturer offer’s graph extras on the graph, and the list form on the REST door', async () => {
    const graph = await app.graphql(
      '{ manufacturer_offers(id: 1) { databaseId kind model_id website_id category preferred_locations { databaseId } model { id databaseId manufacturer { name } } } }',
      undefined,
      key,
    );
    expect(graph.errors).toBeUndefined();
    const offers = (graph.data as { manufacturer_offers: { kind: string; model: { id: string; manufacturer: { name: string } } }[] })
      .manufacturer_offers;
    expect(offers.length).toBeGreaterThan(0);
    for (const offer of offers) {
      expect(offer.kind).toBe('manufacturer');
      expect(offer.model.id).toEqual(expect.any(String));
      expect(offer.model.manufacturer.name).toEqual(expect.any(String));
    }

    const body = (await restBody('Query.manufacturer_offers')) as Json[];
    expect(body).toHaveLength(offers.length);
    for (const offer of body) {
      for (const graphOnly of ['kind', 'model_id', 'website_id', 'category', 'preferred_locations'])
        expect(offer, graphOnly).not.toHaveProperty(graphOnly);
      expect(Object.keys(offer.model as Json).sort()).toEqual(['name', 'new_slug', 'path', 'slug']);
    }
  });

  it('shows a car’s location to any reader of the car, and the dealership’s data in it only with index:dealership', async () => {
    const query =
      '{ car(id: "1") { location { __typename databaseId name partner_dealership_id address { city } website { url } } dealership { name } } }';
    const carsOnly = (await makeKey(app.db, { permissions: ['read:car'], dealershipIds: [] })).key;
    const limited = await app.graphql(query, undefined, carsOnly);
    expect(limited.errors).toBeUndefined();
    expect((limited.data as { car: Json }).car).toEqual({
      location: {
        __typename: 'Location',
        databaseId: expect.any(Number),
        name: expect.any(String),
        partner_dealership_id: null,
        address: null,
        website: null,
      },
      dealership: null,
    });
    const full = await app.graphql(query, undefined, key);
    const location = (full.data as { car: { location: Json } }).car.location;
    expect(location.address).toEqual({ city: expect.any(String) });
    expect(location.partner_dealership_id).toEqual(expect.any(String));
  });

  it('answers a model variant’s model on the graph, and not on the REST door', async () => {
    const graph = await app.graphql(
      '{ model_variant(slug: "toyota-corolla-sx-hybrid", website_id: "1") { id model { name } } }',
      undefined,
      key,
    );
    expect(graph.errors).toBeUndefined();
    expect((graph.data as { model_variant: { model: { name: string } } }).model_variant.model.name).toEqual(expect.any(String));

    const body = (await restBody('Query.model_variant')) as Json;
    expect(body).toHaveProperty('model_id');
    expect(body).not.toHaveProperty('model');
    expect(body).not.toHaveProperty('node_id');
  });

  it('answers a search result’s website as the graph’s Website, and as id, name and url on the REST door', async () => {
    const graph = await app.graphql(
      '{ search_dealerships_by_postcode(id: 1, postcode: "3000") { website { __typename id slug } address { __typename addressable_type } } }',
      undefined,
      key,
    );
    expect(graph.errors).toBeUndefined();
    const results = (graph.data as { search_dealerships_by_postcode: { website: Json; address: Json }[] }).search_dealerships_by_postcode;
    expect(results.length).toBeGreaterThan(0);
    for (const result of results) {
      expect(result.website).toEqual({ __typename: 'Website', id: expect.any(String), slug: expect.any(String) });
      expect(result.address).toEqual({ __typename: 'LocationAddress', addressable_type: 'Location' });
    }

    const body = (await restBody('Query.search_dealerships_by_postcode')) as { website: Json }[];
    expect(body).toHaveLength(results.length);
    for (const result of body) expect(Object.keys(result.website).sort()).toEqual(['id', 'name', 'url']);
  });
});
