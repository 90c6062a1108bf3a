// Spec 4.4 (model variant by slug) and 4.20 (a website's models) on both doors: the documented
// shape field by field, website lookup and authorisation (404 / 403), permissions, 401.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership, makeKey, makeManufacturer, makeWebsite } from './support/fixtures.ts';
import {
  makeModel,
  makeOption,
  makeSpecCategory,
  makeSpecField,
  makeVariant,
  setAvailability,
  setSpecValue,
  showModel,
} from './support/fixtures-catalogue.ts';

const UNAUTHORIZED = { error: 'unauthorized', message: 'A valid API key is required: send "Authorization: Bearer <key>".' };
const FORBIDDEN = { error: 'forbidden', message: 'This API key does not have the permission this operation needs.' };
const WEBSITE_FORBIDDEN = { error: 'forbidden', message: 'This API key is not authorised for that website.' };
const WEBSITE_NOT_FOUND = { error: 'website_not_found', message: 'No website with that identifier.' };
const VARIANT_NOT_FOUND = { error: 'model_variant_not_found', message: 'No model variant with that identifier.' };

const VARIANT_QUERY = `query ($slug: String!, $website_id: String!) {
  model_variant(slug: $slug, website_id: $website_id) {
    id: databaseId slug name full_name model_id bodyStyle transmission modelCode engine_capacity fuel redbookCode series
    variant_category vehicle_category description short_description youtube_id brochure_url interior_image_url
    second_interior_image_url isHybrid isElectric cylinders year tare_weight gvm seats price
    image { url thumb { url } }
    banner_data { key url height width }
    specifications { category { id: databaseId name slug position } fields { id: databaseId name slug position value } }
    availability_matrix { category { id: databaseId name slug position } options { id: databaseId availability configurable_option { id: databaseId code description recommended_retail_price_cents position } } }
  }
}`;

const MODELS_QUERY = `query ($website_id: String!, $version: Int) {
  website_models(website_id: $website_id, version: $version) {
    website_id version
    models { id: databaseId name slug new_slug path override_url position manufacturer price_from variants { id: databaseId slug name price } }
  }
}`;

/** The stored columns of the CX-5 Maxx Sport that the 2.4 record answers exactly as they are. */
const MAXX_SPORT_COLUMNS = {
  slug: 'cx-5-maxx-sport',
  name: 'Maxx Sport',
  full_name: 'Mazda CX-5 Maxx Sport',
  bodyStyle: 'SUV',
  transmission: 'Automatic',
  modelCode: 'KF2',
  engine_capacity: '2.5L',
  fuel: 'Petrol',
  redbookCode: 'MAZD23KF',
  series: 'KF',
  variant_category: 'mid',
  vehicle_category: 'passenger',
  description: 'A family SUV.',
  short_description: 'Family SUV',
  youtube_id: 'abc123',
  brochure_url: 'https://mazda.example.com/cx-5.pdf',
  interior_image_url: 'https://img.example.com/cx5-in.jpg',
  second_interior_image_url: null,
  isHybrid: false,
  isElectric: null,
  cylinders: 4,
  year: 2026,
  tare_weight: 1600,
  gvm: 2150,
  seats: 5,
  price: 42990,
};

let app: TestApp;
let site: { id: number; slug: string };
let southSite: { id: number; slug: string };
let manufacturer: { id: number };
let cx5: { id: number };
let mx5: { id: number };
let bt50: { id: number };
let variant: { id: number };
let cheap: { id: number };
let unpriced: { id: number };
let hiddenVariant: { id: number };
let ids: Record<string, number>;
let keys: Record<'all' | 'north' | 'south' | 'noPermission' | 'models', { key: string }>;

beforeAll(async () => {
  app = await createTestApp();
  const north = await makeDealership(app.db);
  const south = await makeDealership(app.db);
  site = await makeWebsite(app.db, north.id, { slug: 'northside-new', custom_slug: 'northside-cars' });
  southSite = await makeWebsite(app.db, south.id);
  manufacturer = await makeManufacturer(app.db, { name: 'Mazda' });
  cx5 = await makeModel(app.db, manufacturer.id, { name: 'CX-5', slug: 'mazda-cx-5', new_slug: 'cx-5', path: '/new/mazda/cx-5' });
  mx5 = await makeModel(app.db, manufacturer.id, { name: 'MX-5', slug: 'mazda-mx-5', new_slug: 'mx-5', path: '/new/mazda/mx-5' });
  bt50 = await makeModel(app.db, manufacturer.id, { name: 'BT-50' });
  await showModel(app.db, site.id, cx5.id, 2);
  await showModel(app.db, site.id, mx5.id, 1, 'https://mazda.example.com/mx-5');
  await showModel(app.db, southSite.id, bt50.id, 1);

  variant = await makeVariant(app.db, cx5.id, {
    ...MAXX_SPORT_COLUMNS,
    image_url: 'https://img.example.com/cx5.jpg',
    image_thumb_url: 'https://img.example.com/cx5-thumb.jpg',
    banner_key: 'cx5-banner',
    banner_url: 'https://img.example.com/cx5-banner.jpg',
    banner_height: 400,
    banner_width: 1200,
  });
  cheap = await makeVariant(app.db, cx5.id, { slug: 'cx-5-g20', name: 'G20', price: 35990 });
  unpriced = await makeVariant(app.db, cx5.id, { slug: 'cx-5-concept', name: 'Concept', price: null });
  hiddenVariant = await makeVariant(app.db, bt50.id, { slug: 'bt-50-xt', price: 50000 });

  const engine = await makeSpecCategory(app.db, { name: 'Engine', slug: 'engine', position: 2 });
  const dimensions = await makeSpecCategory(app.db, { name: 'Dimensions', slug: 'dimensions', position: 1 });
  const paint = await makeSpecCategory(app.db, { name: 'Paint', slug: 'paint', position: 3 });
  const power = await makeSpecField(app.db, engine.id, { name: 'Power', slug: 'power', position: 2 });
  const torque = await makeSpecField(app.db, engine.id, { name: 'Torque', slug: 'torque', position: 1 });
  const length = await makeSpecField(app.db, dimensions.id, { name: 'Length', slug: 'length', position: 1 });
  await setSpecValue(app.db, variant.id, power.id, '140kW');
  await setSpecValue(app.db, variant.id, torque.id, '252Nm');
  await setSpecValue(app.db, variant.id, length.id, '4575mm');
  await setSpecValue(app.db, cheap.id, power.id, '114kW');
  const red = await makeOption(app.db, paint.id, {
    code: 'PAINT-RED',
    description: 'Soul Red',
    recommended_retail_price_cents: 69500,
    position: 2,
  });
  const white = await makeOption(app.db, paint.id, {
    code: 'PAINT-WHITE',
    description: null,
    recommended_retail_price_cents: null,
    position: 1,
  });
  const tow = await makeOption(app.db, engine.id, {
    code: 'TOWPACK',
    description: 'Towing pack',
    recommended_retail_price_cents: 120000,
    position: 1,
  });
  const redAvailability = await setAvailability(app.db, variant.id, red.id, 'optional');
  const whiteAvailability = await setAvailability(app.db, variant.id, white.id, 'standard');
  const towAvailability = await setAvailability(app.db, variant.id, tow.id, 'unavailable');
  await setAvailability(app.db, cheap.id, red.id, 'unavailable');
  ids = {
    engine: engine.id,
    dimensions: dimensions.id,
    paint: paint.id,
    power: power.id,
    torque: torque.id,
    length: length.id,
    red: red.id,
    white: white.id,
    tow: tow.id,
    redAvailability: redAvailability.id,
    whiteAvailability: whiteAvailability.id,
    towAvailability: towAvailability.id,
  };

  keys = {
    all: await makeKey(app.db, { permissions: ['show:model_variant', 'index:model'] }),
    north: await makeKey(app.db, { permissions: ['show:model_variant', 'index:model'], dealershipIds: [north.id] }),
    south: await makeKey(app.db, { permissions: ['show:model_variant', 'index:model'], dealershipIds: [south.id] }),
    noPermission: await makeKey(app.db, { permissions: ['read:car', 'index:offer'] }),
    models: await makeKey(app.db, { permissions: ['index:model'] }),
  };
});

const variantPath = (slug: string, websiteId?: string | number) =>
  `/api/v1/model_variants/${encodeURIComponent(slug)}${websiteId === undefined ? '' : `?website_id=${encodeURIComponent(String(websiteId))}`}`;

describe('GET /api/v1/model_variants/{slug}', () => {
  it('answers the 2.4 record with specifications and availability grouped and ordered by position', async () => {
    const response = await app.request(variantPath('cx-5-maxx-sport', site.id), { key: keys.north.key });
    expect(response.status).toBe(200);
    const category = (id: number | undefined, name: string, slug: string, position: number) => ({ id, name, slug, position });
    expect(await response.json()).toEqual({
      id: variant.id,
      ...MAXX_SPORT_COLUMNS,
      model_id: cx5.id,
      image: { url: 'https://img.example.com/cx5.jpg', thumb: { url: 'https://img.example.com/cx5-thumb.jpg' } },
      banner_data: { key: 'cx5-banner', url: 'https://img.example.com/cx5-banner.jpg', height: 400, width: 1200 },
      specifications: [
        {
          category: category(ids.dimensions, 'Dimensions', 'dimensions', 1),
          fields: [{ id: ids.length, name: 'Length', slug: 'length', position: 1, value: '4575mm' }],
        },
        {
          category: category(ids.engine, 'Engine', 'engine', 2),
          fields: [
            { id: ids.torque, name: 'Torque', slug: 'torque', position: 1, value: '252Nm' },
            { id: ids.power, name: 'Power', slug: 'power', position: 2, value: '140kW' },
          ],
        },
      ],
      availability_matrix: [
        {
          category: category(ids.engine, 'Engine', 'engine', 2),
          options: [
            {
              id: ids.towAvailability,
              availability: 'unavailable',
              configurable_option: {
                id: ids.tow,
                code: 'TOWPACK',
                description: 'Towing pack',
                recommended_retail_price_cents: 120000,
                position: 1,
              },
            },
          ],
        },
        {
          category: category(ids.paint, 'Paint', 'paint', 3),
          options: [
            {
              id: ids.whiteAvailability,
              availability: 'standard',
              configurable_option: {
                id: ids.white,
                code: 'PAINT-WHITE',
                description: null,
                recommended_retail_price_cents: null,
                position: 1,
              },
            },
            {
              id: ids.redAvailability,
              availability: 'optional',
              configurable_option: {
                id: ids.red,
                code: 'PAINT-RED',
                description: 'Soul Red',
                recommended_retail_price_cents: 69500,
                position: 2,
              },
            },
          ],
        },
      ],
    });
  });

  it('answers a bare variant: no image, no banner, empty lists', async () => {
    const body = await (await app.request(variantPath('cx-5-concept', site.id), { key: keys.all.key })).json();
    expect(body).toMatchObject({
      id: unpriced.id,
      price: null,
      image: { url: null, thumb: { url: null } },
      banner_data: { key: null, url: null, height: 0, width: 0 },
      specifications: [],
      availability_matrix: [],
    });
  });

  it('finds the website by ID, slug or custom slug', async () => {
    const expected = await (await app.request(variantPath('cx-5-g20', site.id), { key: keys.all.key })).json();
    expect(expected.id).toBe(cheap.id);
    for (const website of ['northside-new', 'northside-cars']) {
      const response = await app.request(variantPath('cx-5-g20', website), { key: keys.all.key });
      expect(response.status, website).toBe(200);
      expect(await response.json()).toEqual(expected);
    }
  });

  it('answers 404 model_variant_not_found for an unknown slug and for a variant whose model the website does not show', async () => {
    for (const slug of ['no-such-variant', 'bt-50-xt']) {
      const response = await app.request(variantPath(slug, site.id), { key: keys.all.key });
      expect(response.status, slug).toBe(404);
      expect(await response.json()).toEqual(VARIANT_NOT_FOUND);
    }
    // The same variant is found on the website that shows its model.
    const shown = await app.request(variantPath('bt-50-xt', southSite.id), { key: keys.all.key });
    expect(shown.status).toBe(200);
    expect((await shown.json()).id).toBe(hiddenVariant.id);
  });

  it('answers 404 website_not_found for an unknown website', async () => {
    const response = await app.request(variantPath('cx-5-maxx-sport', 'no-such-site'), { key: keys.all.key });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual(WEBSITE_NOT_FOUND);
  });

  it('answers 403 forbidden for a key not authorised for the website', async () => {
    for (const website of [site.id, site.slug]) {
      const response = await app.request(variantPath('cx-5-maxx-sport', website), { key: keys.south.key });
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual(WEBSITE_FORBIDDEN);
    }
  });

  it('answers 422 naming website_id when it is missing', async () => {
    for (const path of [variantPath('cx-5-maxx-sport'), variantPath('cx-5-maxx-sport', '')]) {
      const response = await app.request(path, { key: keys.all.key });
      expect(response.status, path).toBe(422);
      expect(await response.json()).toEqual({
        error: 'invalid_input',
        message: 'website_id: is required',
        field: 'website_id',
      });
    }
  });

  // The spec's error table: a key lacking show:model_variant is "unauthorized"; one not authorised for the website, "forbidden".
  it('answers 401 without show:model_variant (its own message) and 401 without a valid key', async () => {
    const forbidden = await app.request(variantPath('cx-5-maxx-sport', site.id), { key: keys.models.key });
    expect(forbidden.status).toBe(401);
    expect(await forbidden.json()).toEqual({ ...FORBIDDEN, error: 'unauthorized' });
    const none = await app.request(variantPath('cx-5-maxx-sport', site.id));
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual(UNAUTHORIZED);
    const bad = await app.request(variantPath('cx-5-maxx-sport', site.id), { headers: { authorization: 'Bearer nope' } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual(UNAUTHORIZED);
  });

  it('answers exactly the same on GraphQL, and the same errors', async () => {
    const rest = await (await app.request(variantPath('cx-5-maxx-sport', site.slug), { key: keys.north.key })).json();
    const graph = await app.graphql(VARIANT_QUERY, { slug: 'cx-5-maxx-sport', website_id: site.slug }, keys.north.key);
    expect(graph.errors).toBeUndefined();
    expect(graph.data?.model_variant).toEqual(rest);
    const cases: [Record<string, unknown>, string, Record<string, unknown>][] = [
      [{ slug: 'cx-5-maxx-sport', website_id: String(site.id) }, keys.south.key, { code: 'FORBIDDEN', error: 'forbidden' }],
      [{ slug: 'cx-5-maxx-sport', website_id: 'nope' }, keys.all.key, { code: 'NOT_FOUND', error: 'website_not_found' }],
      [{ slug: 'bt-50-xt', website_id: String(site.id) }, keys.all.key, { code: 'NOT_FOUND', error: 'model_variant_not_found' }],
      [{ slug: 'cx-5-maxx-sport' }, keys.all.key, { code: 'BAD_USER_INPUT', field: 'website_id' }],
      [{ slug: 'cx-5-maxx-sport', website_id: String(site.id) }, keys.models.key, { code: 'UNAUTHENTICATED', error: 'unauthorized' }],
    ];
    for (const [variables, key, extensions] of cases) {
      const result = await app.graphql(VARIANT_QUERY, variables, key);
      // A missing variable stops the request before execution: GraphQL then answers no data at all.
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.[0]?.extensions).toMatchObject(extensions);
    }
    const anonymous = await app.graphql(VARIANT_QUERY, { slug: 'cx-5-maxx-sport', website_id: String(site.id) });
    expect(anonymous.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});

const modelsPath = (website: string | number, query = '') => `/api/v1/websites/${encodeURIComponent(String(website))}/models${query}`;

describe('GET /api/v1/websites/{website_id}/models', () => {
  const mx5Entry = {
    id: 0,
    name: 'MX-5',
    slug: 'mazda-mx-5',
    new_slug: 'mx-5',
    path: '/new/mazda/mx-5',
    override_url: 'https://mazda.example.com/mx-5',
    position: 1,
    manufacturer: 'Mazda',
    price_from: null,
  };

  it("version 1 (the default): the website's models in its order, each with its lowest price, without variants", async () => {
    const response = await app.request(modelsPath(site.id), { key: keys.north.key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      website_id: site.id,
      version: 1,
      models: [
        { ...mx5Entry, id: mx5.id, variants: null },
        {
          id: cx5.id,
          name: 'CX-5',
          slug: 'mazda-cx-5',
          new_slug: 'cx-5',
          path: '/new/mazda/cx-5',
          override_url: null,
          position: 2,
          manufacturer: 'Mazda',
          price_from: 35990,
          variants: null,
        },
      ],
    });
    const explicit = await app.request(modelsPath(site.id, '?version=1'), { key: keys.north.key });
    expect(await explicit.json()).toEqual(await (await app.request(modelsPath(site.id), { key: keys.north.key })).json());
  });

  it('version 2: each model also lists its variants, cheapest first and unpriced last', async () => {
    const body = await (await app.request(modelsPath('northside-cars', '?version=2'), { key: keys.all.key })).json();
    expect(body.version).toBe(2);
    expect(body.models).toEqual([
      { ...mx5Entry, id: mx5.id, variants: [] },
      expect.objectContaining({
        id: cx5.id,
        price_from: 35990,
        variants: [
          { id: cheap.id, slug: 'cx-5-g20', name: 'G20', price: 35990 },
          { id: variant.id, slug: 'cx-5-maxx-sport', name: 'Maxx Sport', price: 42990 },
          { id: unpriced.id, slug: 'cx-5-concept', name: 'Concept', price: null },
        ],
      }),
    ]);
  });

  it('answers 422 naming version for an unsupported or malformed version', async () => {
    const unsupported = await app.request(modelsPath(site.id, '?version=3'), { key: keys.all.key });
    expect(unsupported.status).toBe(422);
    expect(await unsupported.json()).toEqual({ error: 'invalid_input', message: 'version: must be one of 1, 2, got 3', field: 'version' });
    const malformed = await app.request(modelsPath(site.id, '?version=two'), { key: keys.all.key });
    expect(malformed.status).toBe(422);
    expect(await malformed.json()).toMatchObject({ error: 'invalid_input', field: 'version' });
  });

  it('answers 404 website_not_found for an unknown website, 403 for a key not authorised for it', async () => {
    const missing = await app.request(modelsPath('no-such-site'), { key: keys.all.key });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual(WEBSITE_NOT_FOUND);
    const refused = await app.request(modelsPath(site.slug), { key: keys.south.key });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual(WEBSITE_FORBIDDEN);
  });

  it('answers 403 without index:model and 401 without a valid key', async () => {
    const forbidden = await app.request(modelsPath(site.id), { key: keys.noPermission.key });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toEqual(FORBIDDEN);
    const none = await app.request(modelsPath(site.id));
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual(UNAUTHORIZED);
  });

  it('answers exactly the same on GraphQL, and the same errors', async () => {
    for (const [variables, query] of [
      [{ website_id: String(site.id) }, ''],
      [{ website_id: site.slug, version: 2 }, '?version=2'],
    ] as const) {
      const rest = await (await app.request(modelsPath(variables.website_id, query), { key: keys.all.key })).json();
      const graph = await app.graphql(MODELS_QUERY, variables, keys.all.key);
      expect(graph.errors).toBeUndefined();
      expect(graph.data?.website_models).toEqual(rest);
    }
    const cases: [Record<string, unknown>, string, Record<string, unknown>][] = [
      [{ website_id: String(site.id), version: 7 }, keys.all.key, { code: 'BAD_USER_INPUT', field: 'version' }],
      [{ website_id: 'nope' }, keys.all.key, { code: 'NOT_FOUND', error: 'website_not_found' }],
      [{ website_id: site.slug }, keys.south.key, { code: 'FORBIDDEN' }],
      [{ website_id: site.slug }, keys.noPermission.key, { code: 'FORBIDDEN' }],
    ];
    for (const [variables, key, extensions] of cases) {
      const result = await app.graphql(MODELS_QUERY, variables, key);
      expect(result.errors?.[0]?.extensions).toMatchObject(extensions);
    }
  });
});

describe('the Model / ModelVariant graph (GraphQL only)', () => {
  it('reaches variants from a manufacturer and back', async () => {
    const result = await app.graphql(
      `query ($id: Int!) { manufacturer(id: $id) { name models { edges { node { name variants { slug price image { url } model { slug } } } } } } }`,
      { id: manufacturer.id },
      (await makeKey(app.db, { permissions: ['index:offer'] })).key,
    );
    expect(result.errors).toBeUndefined();
    const answered = result.data?.manufacturer as { name: string; models: { edges: { node: unknown }[] } };
    expect({ ...answered, models: answered.models.edges.map((edge) => edge.node) }).toEqual({
      name: 'Mazda',
      models: [
        {
          name: 'CX-5',
          variants: [
            { slug: 'cx-5-maxx-sport', price: 42990, image: { url: 'https://img.example.com/cx5.jpg' }, model: { slug: 'mazda-cx-5' } },
            { slug: 'cx-5-g20', price: 35990, image: { url: null }, model: { slug: 'mazda-cx-5' } },
            { slug: 'cx-5-concept', price: null, image: { url: null }, model: { slug: 'mazda-cx-5' } },
          ],
        },
        { name: 'MX-5', variants: [] },
        { name: 'BT-50', variants: [{ slug: 'bt-50-xt', price: 50000, image: { url: null }, model: { slug: expect.any(String) } }] },
      ],
    });
  });
});
