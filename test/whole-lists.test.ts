// The lists the spec answers whole (docs/decisions.md, "Lists the spec answers whole"), on both doors:
// an API key's dealerships (4.7), the partner mappings (4.14) and an offer's dealership ids (4.5, 4.6)
// carry at most WHOLE_LIST_BOUND entries, the first in their order, with `<list>_truncated` saying
// whether more were left out. A key restricted to a few dealerships gets its whole lists, with false.
import { beforeAll, describe, expect, it } from 'vitest';
import { WHOLE_LIST_BOUND } from '../src/domain/whole-lists.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeModel, makeOffer } from './support/fixtures-catalogue.ts';
import { makeKey, makeManufacturer, makeUser, makeWebsite } from './support/fixtures.ts';

/** More dealerships than the bound, each with one location mapped at the partner. */
const DEALERSHIPS = WHOLE_LIST_BOUND + 40;

let app: TestApp;
let dealershipIds: number[];
let locationIds: number[];
let manufacturerId: number;
let offerId: number;
let websiteOfferId: number;
let websiteId: number;
let everyDealership: string;
let restricted: string;
/** The restricted key's dealerships: a few, the last of them past the bound. */
let reach: number[];

beforeAll(async () => {
  app = await createTestApp();
  // Made cheaply in a few statements: the answers' size is what is tested, not the writes.
  await app.db.dealership.createMany({
    data: Array.from({ length: DEALERSHIPS }, (_, index) => ({ name: `Bulk Motors ${index}`, slug: `bulk-motors-${index}` })),
  });
  dealershipIds = (await app.db.dealership.findMany({ orderBy: { id: 'asc' }, select: { id: true } })).map((row) => row.id);
  await app.db.location.createMany({
    data: dealershipIds.map((dealership_id, index) => ({
      dealership_id,
      name: `Bulk Yard ${index}`,
      location_type: 'sales' as const,
      partner_dealership_id: `P-${index}`,
      partner_account_id: `A-${index}`,
    })),
  });
  locationIds = (await app.db.location.findMany({ orderBy: { id: 'asc' }, select: { id: true } })).map((row) => row.id);
  reach = [dealershipIds[0]!, dealershipIds[5]!, dealershipIds.at(-1)!];
  await makeUser(app.db, [reach[0]!, reach[2]!], { name: 'Sam Lee' });
  manufacturerId = (await makeManufacturer(app.db)).id;
  const modelId = (await makeModel(app.db, manufacturerId)).id;
  offerId = (await makeOffer(app.db, { manufacturer_id: manufacturerId, model_id: modelId }, dealershipIds)).id;
  const website = await makeWebsite(app.db, reach[0]!);
  websiteId = website.id;
  websiteOfferId = (
    await makeOffer(app.db, { manufacturer_id: manufacturerId, model_id: modelId, kind: 'website', website_id: website.id }, dealershipIds)
  ).id;
  const permissions = ['index:dealership', 'index:offer'] as const;
  everyDealership = (await makeKey(app.db, { permissions })).key;
  restricted = (await makeKey(app.db, { permissions, dealershipIds: reach })).key;
}, 180_000);

async function rest<T>(path: string, key: string): Promise<T> {
  const response = await app.request(path, { key });
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

async function graph<T>(query: string, key: string): Promise<T> {
  const answer = await app.graphql<T>(query, {}, key);
  expect(answer.errors).toBeUndefined();
  return answer.data as T;
}

const statementsOf = async (read: () => Promise<unknown>): Promise<string[]> => {
  app.queries.length = 0;
  await read();
  return app.queries.filter((sql) => !/^(BEGIN|COMMIT|ROLLBACK)\b/i.test(sql.trim()));
};

interface KeyDetails {
  dealerships: { id: number; name: string; locations: { id: number }[]; users: { name: string }[] }[];
  dealerships_truncated: boolean;
}

const KEY_DETAILS =
  '{ apikey_details { dealerships { id: databaseId name slug locations { id: databaseId name location_type } users { id: databaseId name email } } dealerships_truncated } }';

describe('GET /api/v1/apikeys/apikey_details.json', () => {
  it(`answers a key that reaches every dealership the first ${WHOLE_LIST_BOUND}, by id, with dealerships_truncated`, async () => {
    const body = await rest<KeyDetails & { id: number }>('/api/v1/apikeys/apikey_details.json', everyDealership);
    expect(body.dealerships.map((dealership) => dealership.id)).toEqual(dealershipIds.slice(0, WHOLE_LIST_BOUND));
    expect(body.dealerships_truncated).toBe(true);
    expect(body.dealerships[0]?.locations.map((location) => location.id)).toEqual([locationIds[0]]);
    expect(body.dealerships[0]?.users.map((user) => user.name)).toEqual(['Sam Lee']);
    const { apikey_details } = await graph<{ apikey_details: KeyDetails }>(KEY_DETAILS, everyDealership);
    expect(apikey_details).toEqual({ dealerships: body.dealerships, dealerships_truncated: true });
  });

  it('answers a restricted key its whole list, with dealerships_truncated false, the same on both doors', async () => {
    const body = await rest<KeyDetails>('/api/v1/apikeys/apikey_details.json', restricted);
    expect(body.dealerships.map((dealership) => dealership.id)).toEqual(reach);
    expect(body.dealerships.map((dealership) => dealership.users.map((user) => user.name))).toEqual([['Sam Lee'], [], ['Sam Lee']]);
    expect(body.dealerships_truncated).toBe(false);
    const { apikey_details } = await graph<{ apikey_details: KeyDetails }>(KEY_DETAILS, restricted);
    expect(apikey_details).toEqual({ dealerships: body.dealerships, dealerships_truncated: false });
  });

  it('reads through Prisma in four statements (dealerships, their locations, user links, users), whatever the reach', async () => {
    for (const key of [everyDealership, restricted]) {
      await rest('/api/v1/apikeys/apikey_details.json', key);
      const statements = await statementsOf(() => rest('/api/v1/apikeys/apikey_details.json', key));
      expect(statements).toHaveLength(4);
      // No statement reads more dealerships than the answer's bound and the one that tells there are more.
      expect(statements[0]).toMatch(/dealerships/);
      expect(statements[0]).toMatch(/LIMIT/i);
    }
  });

  it('answers dealerships_truncated alone without reading locations or staff', async () => {
    const statements = await statementsOf(async () => {
      const data = await graph<{ apikey_details: { dealerships_truncated: boolean } }>(
        '{ apikey_details { dealerships_truncated } }',
        everyDealership,
      );
      expect(data.apikey_details.dealerships_truncated).toBe(true);
    });
    expect(statements).toHaveLength(1);
  });
});

interface PartnerMappings {
  dealerships: { id: number; dealership_id: number; partner_dealership_id: string }[];
  dealerships_truncated: boolean;
}

const PARTNER =
  '{ partner_dealerships { dealerships { id: databaseId name dealership_id dealership_name partner_dealership_id partner_account_id } dealerships_truncated } }';

describe('GET /api/v1/partner/dealerships', () => {
  it(`answers a key that reaches every dealership the first ${WHOLE_LIST_BOUND} mappings with dealerships_truncated, on both doors`, async () => {
    const body = await rest<PartnerMappings>('/api/v1/partner/dealerships', everyDealership);
    expect(body.dealerships.map((mapping) => mapping.id)).toEqual(locationIds.slice(0, WHOLE_LIST_BOUND));
    expect(body.dealerships_truncated).toBe(true);
    const { partner_dealerships } = await graph<{ partner_dealerships: PartnerMappings }>(PARTNER, everyDealership);
    expect(partner_dealerships).toEqual(body);
  });

  it('answers a restricted key its whole list with dealerships_truncated false, on both doors', async () => {
    const body = await rest<PartnerMappings>('/api/v1/partner/dealerships', restricted);
    expect(body.dealerships.map((mapping) => mapping.dealership_id)).toEqual(reach);
    expect(body.dealerships_truncated).toBe(false);
    const { partner_dealerships } = await graph<{ partner_dealerships: PartnerMappings }>(PARTNER, restricted);
    expect(partner_dealerships).toEqual(body);
  });

  it('skips mappings whose partner ids are only spaces and still fills the list to its bound', async () => {
    // The first ten mappings become blank: the list reads on after them, in one more statement.
    const blanked = locationIds.slice(0, 10);
    await app.db.location.updateMany({ where: { id: { in: blanked } }, data: { partner_dealership_id: '   ' } });
    try {
      const statements = await statementsOf(async () => {
        const body = await rest<PartnerMappings>('/api/v1/partner/dealerships', everyDealership);
        expect(body.dealerships.map((mapping) => mapping.id)).toEqual(locationIds.slice(10, 10 + WHOLE_LIST_BOUND));
        expect(body.dealerships_truncated).toBe(true);
      });
      expect(statements.filter((sql) => /^SELECT\b[\s\S]*partner_account_id/i.test(sql.trim()))).toHaveLength(2);
    } finally {
      await app.db.location.updateMany({
        where: { id: { in: blanked } },
        data: { partner_dealership_id: 'restored' },
      });
    }
  });
});

interface ListedOffer {
  id: number;
  dealership_ids: number[];
  dealership_ids_truncated: boolean;
}

describe("an offer's dealership ids", () => {
  const OFFERS = (id: number) => `{ manufacturer_offers(id: ${id}) { id: databaseId dealership_ids dealership_ids_truncated } }`;

  it(`are the first ${WHOLE_LIST_BOUND} with dealership_ids_truncated for a key that reaches every dealership, on both doors`, async () => {
    const body = await rest<ListedOffer[]>(`/manufacturers/${manufacturerId}/offers.json`, everyDealership);
    const offer = body.find((entry) => entry.id === offerId);
    expect(offer?.dealership_ids).toEqual(dealershipIds.slice(0, WHOLE_LIST_BOUND));
    expect(offer?.dealership_ids_truncated).toBe(true);
    const { manufacturer_offers } = await graph<{ manufacturer_offers: ListedOffer[] }>(OFFERS(manufacturerId), everyDealership);
    expect(manufacturer_offers.find((entry) => entry.id === offerId)).toEqual({
      id: offerId,
      dealership_ids: offer?.dealership_ids,
      dealership_ids_truncated: true,
    });
  });

  it("are a restricted key's own dealerships, whole, with dealership_ids_truncated false, on both doors", async () => {
    const body = await rest<ListedOffer[]>(`/manufacturers/${manufacturerId}/offers.json`, restricted);
    const offer = body.find((entry) => entry.id === offerId);
    expect(offer?.dealership_ids).toEqual(reach);
    expect(offer?.dealership_ids_truncated).toBe(false);
    const { manufacturer_offers } = await graph<{ manufacturer_offers: ListedOffer[] }>(OFFERS(manufacturerId), restricted);
    expect(manufacturer_offers.find((entry) => entry.id === offerId)).toEqual({
      id: offerId,
      dealership_ids: reach,
      dealership_ids_truncated: false,
    });
  });

  it('are bounded on the website offer too, and read in one statement with the flag', async () => {
    const path = `/websites/${websiteId}/offers/${websiteOfferId}.json`;
    const every = await rest<ListedOffer>(path, everyDealership);
    expect(every.dealership_ids).toHaveLength(WHOLE_LIST_BOUND);
    expect(every.dealership_ids_truncated).toBe(true);
    const own = await rest<ListedOffer>(path, restricted);
    expect(own.dealership_ids).toEqual(reach);
    expect(own.dealership_ids_truncated).toBe(false);
    // dealership_ids and its flag share one read of the links.
    const statements = await statementsOf(() => rest(path, restricted));
    expect(statements.filter((sql) => /offer_dealerships/.test(sql) && !/EXISTS/i.test(sql))).toHaveLength(1);
  });
});
