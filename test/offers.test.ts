// Spec 4.5 (manufacturer offers) and 4.6 (website offer) on both doors, and the Manufacturer /
// Offer graph: the record's two forms field by field, derived fields, scoping, errors, permissions.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership, makeKey, makeLocation, makeManufacturer, makeWebsite } from './support/fixtures.ts';
import { makeModel, makeOffer, makeVariant, showModel } from './support/fixtures-catalogue.ts';
import { expiryInWords, sanitizeDescription } from '../src/domain/offers.ts';

const UNAUTHORIZED = { error: 'unauthorized', message: 'A valid API key is required: send "Authorization: Bearer <key>".' };
const FORBIDDEN = { error: 'forbidden', message: 'This API key does not have the permission this operation needs.' };
const WEBSITE_FORBIDDEN = { error: 'forbidden', message: 'This API key is not authorised for that website.' };
const WEBSITE_NOT_FOUND = { error: 'website_not_found', message: 'No website with that identifier.' };
const OFFER_NOT_FOUND = { error: 'offer_not_found', message: 'No offer with that identifier.' };
const MANUFACTURER_NOT_FOUND = { error: 'manufacturer_not_found', message: 'No manufacturer with that identifier.' };

const DIRTY_DESCRIPTION =
  '<p onclick="steal()">Save <strong>$2,000</strong> <em>now</em></p><script>alert(1)</script>' +
  '<a href="javascript:alert(1)">bad</a> <a href="https://mazda.example.com/terms" target="_blank">Terms</a><img src="x.jpg"><ul><li>One</li></ul>';
const CLEAN_DESCRIPTION =
  '<p>Save <strong>$2,000</strong> <em>now</em></p><a>bad</a> <a href="https://mazda.example.com/terms">Terms</a><ul><li>One</li></ul>';

const LIST_QUERY = `query ($id: Int!) {
  manufacturer_offers(id: $id) {
    id: databaseId manufacturer_id name disclaimer expires_at created_at updated_at sanitized_description description
    manufacturer expiry_in_words model { name slug new_slug path } dealership_ids dealership_ids_truncated
    images { url thumb { url } } image_or_model_image { url thumb { url } }
  }
}`;

const SHOW_QUERY = `query ($website_id: Int!, $id: Int!) {
  website_offer(website_id: $website_id, id: $id) {
    id: databaseId manufacturer_id name disclaimer expires_at created_at updated_at sanitized_description description
    manufacturer expiry_in_words model { name slug new_slug path override_url } dealership_ids dealership_ids_truncated
    category preferred_locations { id: databaseId name }
  }
}`;

type Row = { id: number; created_at: Date; updated_at: Date };

let app: TestApp;
let north: { id: number };
let south: { id: number };
let mazda: { id: number };
let kia: { id: number };
let cx5: { id: number };
let mx5: { id: number };
let site: { id: number };
let southSite: { id: number };
let locations: { id: number; name: string }[];
let offers: Record<
  | 'runningBoth'
  | 'todaySouth'
  | 'tomorrowNorth'
  | 'expired'
  | 'websiteOwn'
  | 'kia'
  | 'national'
  | 'siteOffer'
  | 'siteOther'
  | 'siteExpired'
  | 'southSiteOffer',
  Row
>;
let keys: Record<'all' | 'north' | 'south' | 'noPermission', { key: string }>;

const stamps = (row: Row) => ({ created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() });

beforeAll(async () => {
  app = await createTestApp();
  north = await makeDealership(app.db);
  south = await makeDealership(app.db);
  mazda = await makeManufacturer(app.db, { name: 'Mazda' });
  kia = await makeManufacturer(app.db, { name: 'Kia' });
  cx5 = await makeModel(app.db, mazda.id, { name: 'CX-5', slug: 'mazda-cx-5', new_slug: 'cx-5', path: '/new/mazda/cx-5' });
  mx5 = await makeModel(app.db, mazda.id, { name: 'MX-5', slug: 'mazda-mx-5', new_slug: 'mx-5', path: '/new/mazda/mx-5' });
  const sorento = await makeModel(app.db, kia.id);
  // The first variant has no image: the model's image is its first variant that has one.
  await makeVariant(app.db, cx5.id, { image_url: null });
  await makeVariant(app.db, cx5.id, {
    image_url: 'https://img.example.com/cx5.jpg',
    image_thumb_url: 'https://img.example.com/cx5-thumb.jpg',
  });
  await makeVariant(app.db, cx5.id, { image_url: 'https://img.example.com/cx5-later.jpg' });
  await makeVariant(app.db, mx5.id);
  site = await makeWebsite(app.db, north.id);
  southSite = await makeWebsite(app.db, south.id);
  await showModel(app.db, site.id, cx5.id, 1, 'https://north.example.com/cx-5');
  await showModel(app.db, site.id, mx5.id, 2);
  locations = [
    await makeLocation(app.db, north.id, { name: 'North Sales' }),
    await makeLocation(app.db, north.id, { name: 'North Service' }),
  ];

  const day = (text: string) => new Date(`${text}T00:00:00.000Z`);
  offers = {
    runningBoth: await makeOffer(
      app.db,
      {
        manufacturer_id: mazda.id,
        model_id: cx5.id,
        name: 'CX-5 bonus',
        disclaimer: 'Conditions apply.',
        description: DIRTY_DESCRIPTION,
        expires_at: day('2026-12-03'),
        image_url: 'https://img.example.com/offer.jpg',
        image_thumb_url: 'https://img.example.com/offer-thumb.jpg',
        images: {
          create: [
            { url: 'https://img.example.com/b.jpg', thumb_url: 'https://img.example.com/b-t.jpg', position: 2 },
            { url: 'https://img.example.com/a.jpg', thumb_url: 'https://img.example.com/a-t.jpg', position: 1 },
          ],
        },
      },
      [south.id, north.id],
    ),
    todaySouth: await makeOffer(
      app.db,
      { manufacturer_id: mazda.id, model_id: mx5.id, name: 'MX-5 ends today', expires_at: day('2026-11-21') },
      [south.id],
    ),
    tomorrowNorth: await makeOffer(
      app.db,
      { manufacturer_id: mazda.id, model_id: cx5.id, name: 'CX-5 ends tomorrow', expires_at: day('2026-11-22') },
      [north.id],
    ),
    expired: await makeOffer(app.db, { manufacturer_id: mazda.id, model_id: cx5.id, expires_at: day('2026-11-20') }, [north.id]),
    websiteOwn: await makeOffer(app.db, { kind: 'website', website_id: southSite.id, manufacturer_id: mazda.id, model_id: cx5.id }, [
      south.id,
    ]),
    kia: await makeOffer(app.db, { manufacturer_id: kia.id, model_id: sorento.id }, [north.id]),
    national: await makeOffer(app.db, { manufacturer_id: mazda.id, model_id: mx5.id, name: 'National' }),
    siteOffer: await makeOffer(
      app.db,
      {
        kind: 'website',
        website_id: site.id,
        manufacturer_id: mazda.id,
        model_id: cx5.id,
        name: 'Finance from 2.9%',
        disclaimer: null,
        category: 'Finance',
        description: '<p>Low rate</p><iframe src="https://evil.example.com"></iframe>',
        expires_at: day('2026-12-21'),
        preferred_locations: { create: [{ location_id: locations[1]!.id }, { location_id: locations[0]!.id }] },
      },
      [north.id, south.id],
    ),
    siteOther: await makeOffer(
      app.db,
      { kind: 'website', website_id: site.id, manufacturer_id: mazda.id, model_id: mx5.id, category: null },
      [north.id],
    ),
    siteExpired: await makeOffer(app.db, {
      kind: 'website',
      website_id: site.id,
      manufacturer_id: mazda.id,
      model_id: cx5.id,
      expires_at: day('2026-01-01'),
    }),
    southSiteOffer: await makeOffer(app.db, { kind: 'website', website_id: southSite.id, manufacturer_id: mazda.id, model_id: cx5.id }, [
      south.id,
    ]),
  };

  keys = {
    all: await makeKey(app.db, { permissions: ['index:offer'] }),
    north: await makeKey(app.db, { permissions: ['index:offer'], dealershipIds: [north.id] }),
    south: await makeKey(app.db, { permissions: ['index:offer'], dealershipIds: [south.id] }),
    noPermission: await makeKey(app.db, { permissions: ['read:car', 'show:model_variant'] }),
  };
});

describe('derived fields', () => {
  it('sanitizes descriptions to basic formatting, links keeping only a safe href', async () => {
    expect(await sanitizeDescription(DIRTY_DESCRIPTION)).toBe(CLEAN_DESCRIPTION);
  });

  it('says how long an offer has left in calendar days (UTC)', () => {
    const now = new Date('2026-11-21T23:30:00.000Z');
    expect(expiryInWords(new Date('2026-11-20T00:00:00.000Z'), now)).toBe('expired');
    expect(expiryInWords(new Date('2026-11-21T00:00:00.000Z'), now)).toBe('today');
    expect(expiryInWords(new Date('2026-11-22T00:00:00.000Z'), now)).toBe('tomorrow');
    expect(expiryInWords(new Date('2026-12-03T00:00:00.000Z'), now)).toBe('in 12 days');
  });
});

const listPath = (id: number | string) => `/manufacturers/${id}/offers.json`;

describe('GET /manufacturers/{id}/offers.json', () => {
  it("lists the manufacturer's running manufacturer offers by id, in the list form of 2.5", async () => {
    const response = await app.request(listPath(mazda.id), { key: keys.all.key });
    expect(response.status).toBe(200);
    const cx5Model = { name: 'CX-5', slug: 'mazda-cx-5', new_slug: 'cx-5', path: '/new/mazda/cx-5' };
    const mx5Model = { name: 'MX-5', slug: 'mazda-mx-5', new_slug: 'mx-5', path: '/new/mazda/mx-5' };
    const noImage = { url: null, thumb: { url: null } };
    expect(await response.json()).toEqual([
      {
        id: offers.runningBoth.id,
        manufacturer_id: mazda.id,
        name: 'CX-5 bonus',
        disclaimer: 'Conditions apply.',
        expires_at: '2026-12-03',
        ...stamps(offers.runningBoth),
        sanitized_description: CLEAN_DESCRIPTION,
        description: DIRTY_DESCRIPTION,
        manufacturer: 'Mazda',
        expiry_in_words: 'in 12 days',
        model: cx5Model,
        dealership_ids: [north.id, south.id],
        dealership_ids_truncated: false,
        images: [
          { url: 'https://img.example.com/a.jpg', thumb: { url: 'https://img.example.com/a-t.jpg' } },
          { url: 'https://img.example.com/b.jpg', thumb: { url: 'https://img.example.com/b-t.jpg' } },
        ],
        image_or_model_image: { url: 'https://img.example.com/offer.jpg', thumb: { url: 'https://img.example.com/offer-thumb.jpg' } },
      },
      expect.objectContaining({
        id: offers.todaySouth.id,
        expires_at: '2026-11-21',
        expiry_in_words: 'today',
        disclaimer: null,
        model: mx5Model,
        dealership_ids: [south.id],
        images: [],
        image_or_model_image: noImage,
      }),
      expect.objectContaining({
        id: offers.tomorrowNorth.id,
        expiry_in_words: 'tomorrow',
        dealership_ids: [north.id],
        image_or_model_image: { url: 'https://img.example.com/cx5.jpg', thumb: { url: 'https://img.example.com/cx5-thumb.jpg' } },
      }),
      expect.objectContaining({ id: offers.national.id, dealership_ids: [] }),
    ]);
  });

  it("shows a restricted key only the offers at its dealerships, and only its own dealerships' ids", async () => {
    const body = await (await app.request(listPath(mazda.id), { key: keys.north.key })).json();
    expect(body.map((offer: { id: number; dealership_ids: number[] }) => [offer.id, offer.dealership_ids])).toEqual([
      [offers.runningBoth.id, [north.id]],
      [offers.tomorrowNorth.id, [north.id]],
    ]);
  });

  it('answers an empty list for a manufacturer with no offers the key sees', async () => {
    const none = await makeManufacturer(app.db);
    const response = await app.request(listPath(none.id), { key: keys.all.key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
    expect(await (await app.request(listPath(kia.id), { key: keys.south.key })).json()).toEqual([]);
  });

  it('answers 404 manufacturer_not_found for an unknown manufacturer and 422 for a malformed id', async () => {
    const missing = await app.request(listPath(999_999), { key: keys.all.key });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual(MANUFACTURER_NOT_FOUND);
    const malformed = await app.request(listPath('mazda'), { key: keys.all.key });
    expect(malformed.status).toBe(422);
    expect(await malformed.json()).toMatchObject({ error: 'invalid_input', field: 'id' });
  });

  it('moves offers out of the list when they expire', async () => {
    app.clock.set('2026-11-22T08:00:00.000Z');
    try {
      const body = await (await app.request(listPath(mazda.id), { key: keys.all.key })).json();
      expect(body.map((offer: { id: number }) => offer.id)).toEqual([offers.runningBoth.id, offers.tomorrowNorth.id, offers.national.id]);
      expect(body[1].expiry_in_words).toBe('today');
    } finally {
      app.clock.set('2026-11-21T09:00:00.000Z');
    }
  });

  it('answers 403 without index:offer and 401 without a valid key', async () => {
    const forbidden = await app.request(listPath(mazda.id), { key: keys.noPermission.key });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toEqual(FORBIDDEN);
    const none = await app.request(listPath(mazda.id));
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual(UNAUTHORIZED);
    const bad = await app.request(listPath(mazda.id), { headers: { authorization: 'Bearer nope' } });
    expect(bad.status).toBe(401);
  });

  it('answers exactly the same on GraphQL, and the same errors', async () => {
    for (const key of [keys.all.key, keys.north.key]) {
      const rest = await (await app.request(listPath(mazda.id), { key })).json();
      const graph = await app.graphql(LIST_QUERY, { id: mazda.id }, key);
      expect(graph.errors).toBeUndefined();
      expect(graph.data?.manufacturer_offers).toEqual(rest);
    }
    const missing = await app.graphql(LIST_QUERY, { id: 999_999 }, keys.all.key);
    expect(missing.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'manufacturer_not_found' });
    const forbidden = await app.graphql(LIST_QUERY, { id: mazda.id }, keys.noPermission.key);
    expect(forbidden.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
    const anonymous = await app.graphql(LIST_QUERY, { id: mazda.id });
    expect(anonymous.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('costs the same number of queries for 3 offers as for 30', async () => {
    const count = async (n: number): Promise<number> => {
      const maker = await makeManufacturer(app.db);
      const model = await makeModel(app.db, maker.id);
      for (let i = 0; i < n; i += 1) {
        await makeOffer(
          app.db,
          { manufacturer_id: maker.id, model_id: model.id, images: { create: [{ url: 'u', thumb_url: 't', position: 1 }] } },
          [north.id],
        );
      }
      app.queries.length = 0;
      const response = await app.request(listPath(maker.id), { key: keys.all.key });
      expect(await response.json()).toHaveLength(n);
      return app.queries.length;
    };
    expect(await count(30)).toBe(await count(3));
  });
});

const showPath = (websiteId: number | string, id: number | string) => `/websites/${websiteId}/offers/${id}.json`;

describe('GET /websites/{website_id}/offers/{id}.json', () => {
  it('answers the website form of 2.5, with the website’s override_url, category and preferred locations', async () => {
    const response = await app.request(showPath(site.id, offers.siteOffer.id), { key: keys.north.key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      id: offers.siteOffer.id,
      manufacturer_id: mazda.id,
      name: 'Finance from 2.9%',
      disclaimer: null,
      expires_at: '2026-12-21',
      ...stamps(offers.siteOffer),
      sanitized_description: '<p>Low rate</p>',
      description: '<p>Low rate</p><iframe src="https://evil.example.com"></iframe>',
      manufacturer: 'Mazda',
      expiry_in_words: 'in 30 days',
      model: {
        name: 'CX-5',
        slug: 'mazda-cx-5',
        new_slug: 'cx-5',
        path: '/new/mazda/cx-5',
        override_url: 'https://north.example.com/cx-5',
      },
      dealership_ids: [north.id],
      dealership_ids_truncated: false,
      category: 'Finance',
      preferred_locations: [
        { id: locations[0]?.id, name: 'North Sales' },
        { id: locations[1]?.id, name: 'North Service' },
      ],
    });
  });

  it('answers null override_url and an empty category when the website has none, and an expired offer as "expired"', async () => {
    const other = await (await app.request(showPath(site.id, offers.siteOther.id), { key: keys.all.key })).json();
    expect(other).toMatchObject({ category: '', preferred_locations: [], model: { name: 'MX-5', override_url: null } });
    const expired = await app.request(showPath(site.id, offers.siteExpired.id), { key: keys.all.key });
    expect(expired.status).toBe(200);
    expect(await expired.json()).toMatchObject({ expires_at: '2026-01-01', expiry_in_words: 'expired', dealership_ids: [] });
  });

  it("lists all the offer's dealerships for an unrestricted key", async () => {
    const body = await (await app.request(showPath(site.id, offers.siteOffer.id), { key: keys.all.key })).json();
    expect(body.dealership_ids).toEqual([north.id, south.id]);
  });

  it('answers 404 offer_not_found for an offer of another website, a manufacturer offer, or none', async () => {
    for (const id of [offers.southSiteOffer.id, offers.runningBoth.id, 999_999]) {
      const response = await app.request(showPath(site.id, id), { key: keys.all.key });
      expect(response.status, String(id)).toBe(404);
      expect(await response.json()).toEqual(OFFER_NOT_FOUND);
    }
  });

  it('answers 404 website_not_found for an unknown website, 403 for a key not authorised for it', async () => {
    const missing = await app.request(showPath(999_999, offers.siteOffer.id), { key: keys.all.key });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual(WEBSITE_NOT_FOUND);
    const refused = await app.request(showPath(site.id, offers.siteOffer.id), { key: keys.south.key });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual(WEBSITE_FORBIDDEN);
    const own = await app.request(showPath(southSite.id, offers.southSiteOffer.id), { key: keys.south.key });
    expect(own.status).toBe(200);
  });

  it('answers 422 naming a malformed website_id or id', async () => {
    const website = await app.request(showPath('north', offers.siteOffer.id), { key: keys.all.key });
    expect(website.status).toBe(422);
    expect(await website.json()).toMatchObject({ error: 'invalid_input', field: 'website_id' });
    const offer = await app.request(showPath(site.id, 'x1'), { key: keys.all.key });
    expect(offer.status).toBe(422);
    expect(await offer.json()).toMatchObject({ error: 'invalid_input', field: 'id' });
  });

  it('answers 403 without index:offer and 401 without a valid key', async () => {
    const forbidden = await app.request(showPath(site.id, offers.siteOffer.id), { key: keys.noPermission.key });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toEqual(FORBIDDEN);
    const none = await app.request(showPath(site.id, offers.siteOffer.id));
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual(UNAUTHORIZED);
  });

  it('answers exactly the same on GraphQL, and the same errors', async () => {
    for (const [key, id] of [
      [keys.north.key, offers.siteOffer.id],
      [keys.all.key, offers.siteOther.id],
    ] as const) {
      const rest = await (await app.request(showPath(site.id, id), { key })).json();
      const graph = await app.graphql(SHOW_QUERY, { website_id: site.id, id }, key);
      expect(graph.errors).toBeUndefined();
      expect(graph.data?.website_offer).toEqual(rest);
    }
    const cases: [Record<string, unknown>, string, Record<string, unknown>][] = [
      [{ website_id: site.id, id: offers.southSiteOffer.id }, keys.all.key, { code: 'NOT_FOUND', error: 'offer_not_found' }],
      [{ website_id: 999_999, id: offers.siteOffer.id }, keys.all.key, { code: 'NOT_FOUND', error: 'website_not_found' }],
      [{ website_id: site.id, id: offers.siteOffer.id }, keys.south.key, { code: 'FORBIDDEN', error: 'forbidden' }],
      [{ website_id: site.id, id: offers.siteOffer.id }, keys.noPermission.key, { code: 'FORBIDDEN' }],
    ];
    for (const [variables, key, extensions] of cases) {
      const result = await app.graphql(SHOW_QUERY, variables, key);
      expect(result.data).toBeNull();
      expect(result.errors?.[0]?.extensions).toMatchObject(extensions);
    }
  });
});

describe('the Manufacturer / Offer graph (GraphQL only)', () => {
  const QUERY = `query ($id: Int!) {
    manufacturer(id: $id) {
      id: databaseId name models { totalCount edges { node { name } } }
      offers { totalCount edges { node { id: databaseId kind name expiry_in_words dealership_ids website_id model { name manufacturer { name } } image_or_model_image { url } preferred_locations { name } } } }
    }
  }`;

  it('answers a manufacturer with its models and its running offers, scoped like manufacturer_offers', async () => {
    const result = await app.graphql(QUERY, { id: mazda.id }, keys.north.key);
    expect(result.errors).toBeUndefined();
    const manufacturer = result.data?.manufacturer as {
      models: { totalCount: number; edges: { node: unknown }[] };
      offers: { totalCount: number; edges: { node: unknown }[] };
    };
    expect(manufacturer.models.totalCount).toBe(2);
    expect(manufacturer.offers.totalCount).toBe(manufacturer.offers.edges.length);
    expect({
      ...manufacturer,
      models: manufacturer.models.edges.map((edge) => edge.node),
      offers: manufacturer.offers.edges.map((edge) => edge.node),
    }).toEqual({
      id: mazda.id,
      name: 'Mazda',
      models: [{ name: 'CX-5' }, { name: 'MX-5' }],
      offers: [
        {
          id: offers.runningBoth.id,
          kind: 'manufacturer',
          name: 'CX-5 bonus',
          expiry_in_words: 'in 12 days',
          dealership_ids: [north.id],
          website_id: null,
          model: { name: 'CX-5', manufacturer: { name: 'Mazda' } },
          image_or_model_image: { url: 'https://img.example.com/offer.jpg' },
          preferred_locations: [],
        },
        expect.objectContaining({ id: offers.tomorrowNorth.id }),
      ],
    });
    const rest = await (await app.request(listPath(mazda.id), { key: keys.south.key })).json();
    const graph = await app.graphql<{ manufacturer: { offers: { totalCount: number; edges: { node: { id: number } }[] } } }>(
      QUERY,
      { id: mazda.id },
      keys.south.key,
    );
    expect(graph.data?.manufacturer.offers.edges.map((edge) => edge.node.id)).toEqual(rest.map((offer: { id: number }) => offer.id));
    expect(graph.data?.manufacturer.offers.totalCount).toBe(rest.length);
  });

  it('lists manufacturers by id, answers null for an unknown one', async () => {
    const list = await app.graphql<{ manufacturers: { id: number; name: string }[] }>(
      `{ manufacturers { id: databaseId name } }`,
      {},
      keys.south.key,
    );
    expect(list.data?.manufacturers.slice(0, 2)).toEqual([
      { id: mazda.id, name: 'Mazda' },
      { id: kia.id, name: 'Kia' },
    ]);
    const missing = await app.graphql(`{ manufacturer(id: 999999) { id: databaseId } }`, {}, keys.all.key);
    expect(missing.data).toEqual({ manufacturer: null });
  });

  it('is FORBIDDEN without index:offer and UNAUTHENTICATED without a key', async () => {
    const forbidden = await app.graphql(`{ manufacturers { id: databaseId } }`, {}, keys.noPermission.key);
    expect(forbidden.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
    const anonymous = await app.graphql(`{ manufacturers { id: databaseId } }`);
    expect(anonymous.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});
