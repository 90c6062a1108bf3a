// A record's lists in the graph are Relay connections with totalCount, like a dealership's lists
// (test/dealership-lists.test.ts): a car's leads, a lead's events, a manufacturer's models and running
// offers. Each is paged by cursor and counted among the rows the key reaches only: another
// dealership's leads of a car, and offers that run only at another dealership, are neither paged nor
// counted.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeCarLead, makeModel, makeOffer } from './support/fixtures-catalogue.ts';
import { makeStoredLead } from './support/fixtures-leads.ts';
import { makeCar, makeDealership, makeKey, makeManufacturer } from './support/fixtures.ts';

type Page = { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string | null }; edges: { node: { databaseId: number } }[] };

let app: TestApp;
const ids = {
  homeLeads: [] as number[],
  awayLeads: [] as number[],
  homeEvents: [] as number[],
  models: [] as number[],
  homeOffers: [] as number[],
  awayOffers: [] as number[],
};
let carId: number;
let homeLeadId: number;
let awayLeadId: number;
let manufacturerId: number;
let homeKey: string;
let allKey: string;
let withoutLeads: string;

beforeAll(async () => {
  app = await createTestApp();
  const home = await makeDealership(app.db, { name: 'Home Records' });
  const away = await makeDealership(app.db, { name: 'Away Records' });
  carId = (await makeCar(app.db, home.id)).id;
  // Three leads of the home dealership on its car, two of the away dealership on the same car.
  for (let index = 0; index < 3; index += 1) ids.homeLeads.push((await makeCarLead(app.db, home.id, carId)).id);
  for (let index = 0; index < 2; index += 1) ids.awayLeads.push((await makeCarLead(app.db, away.id, carId)).id);

  homeLeadId = (await makeStoredLead(app.db, home.id)).id;
  awayLeadId = (await makeStoredLead(app.db, away.id)).id;
  for (let index = 0; index < 3; index += 1) {
    ids.homeEvents.push(
      (await app.db.leadEvent.create({ data: { lead_id: homeLeadId, service: 'sms', created_at: new Date(Date.UTC(2026, 0, 1 + index)) } }))
        .id,
    );
  }
  await app.db.leadEvent.create({ data: { lead_id: awayLeadId, service: 'sms' } });

  manufacturerId = (await makeManufacturer(app.db)).id;
  for (let index = 0; index < 3; index += 1) ids.models.push((await makeModel(app.db, manufacturerId)).id);
  const running = new Date('2099-01-01T00:00:00.000Z');
  const offer = (dealershipIds: number[]) =>
    makeOffer(app.db, { manufacturer_id: manufacturerId, model_id: ids.models[0]!, expires_at: running }, dealershipIds);
  for (let index = 0; index < 2; index += 1) ids.homeOffers.push((await offer([home.id])).id);
  ids.homeOffers.push((await offer([home.id, away.id])).id);
  for (let index = 0; index < 2; index += 1) ids.awayOffers.push((await offer([away.id])).id);

  const permissions = ['read:car', 'read:lead', 'index:offer'] as const;
  homeKey = (await makeKey(app.db, { permissions: [...permissions], dealershipIds: [home.id] })).key;
  allKey = (await makeKey(app.db, { permissions: [...permissions] })).key;
  withoutLeads = (await makeKey(app.db, { permissions: ['read:car'], dealershipIds: [home.id] })).key;
});

const PAGE = 'totalCount pageInfo { hasNextPage endCursor } edges { node { databaseId } }';

/** Every page of 2 of one connection, following endCursor: the ids in order and each page's count. */
async function pageThrough(key: string, query: string, variables: Record<string, unknown>, pick: (data: unknown) => Page | null) {
  const seen: number[] = [];
  const counts: number[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 10; pages += 1) {
    const answer = await app.graphql(query, { ...variables, after }, key);
    expect(answer.errors).toBeUndefined();
    const page = pick(answer.data);
    if (!page) throw new Error('the connection is null');
    expect(page.edges.length).toBeLessThanOrEqual(2);
    seen.push(...page.edges.map((edge) => edge.node.databaseId));
    counts.push(page.totalCount);
    if (!page.pageInfo.hasNextPage) return { seen, counts };
    after = page.pageInfo.endCursor;
  }
  throw new Error('more than 10 pages');
}

const CAR_LEADS = `query ($id: String!, $after: String) { car(id: $id) { leads(first: 2, after: $after) { ${PAGE} } } }`;
const carLeads = (data: unknown) => (data as { car: { leads: Page | null } }).car.leads;
const LEAD_EVENTS = `query ($id: Int!, $after: String) { lead(id: $id) { events(first: 2, after: $after) { ${PAGE} } } }`;
const leadEvents = (data: unknown) => (data as { lead: { events: Page } }).lead.events;
const MODELS = `query ($id: Int!, $after: String) { manufacturer(id: $id) { models(first: 2, after: $after) { ${PAGE} } } }`;
const models = (data: unknown) => (data as { manufacturer: { models: Page } }).manufacturer.models;
const OFFERS = `query ($id: Int!, $after: String) { manufacturer(id: $id) { offers(first: 2, after: $after) { ${PAGE} } } }`;
const offers = (data: unknown) => (data as { manufacturer: { offers: Page | null } }).manufacturer.offers;

describe('Car.leads', () => {
  it("pages and counts only the key's dealerships' leads of the car, newest first", async () => {
    const home = await pageThrough(homeKey, CAR_LEADS, { id: String(carId) }, carLeads);
    expect(home.seen).toEqual([...ids.homeLeads].reverse());
    expect(home.counts).toEqual([3, 3]);
    const all = await pageThrough(allKey, CAR_LEADS, { id: String(carId) }, carLeads);
    expect([...all.seen].sort((a, b) => a - b)).toEqual([...ids.homeLeads, ...ids.awayLeads]);
    expect(all.counts).toEqual([5, 5, 5]);
  });

  it('is null without read:lead', async () => {
    const answer = await app.graphql(CAR_LEADS, { id: String(carId), after: null }, withoutLeads);
    expect(answer.errors).toBeUndefined();
    expect(carLeads(answer.data)).toBeNull();
  });
});

describe('Lead.events', () => {
  it("pages and counts the lead's events, oldest first; another dealership's lead is not reached", async () => {
    const home = await pageThrough(homeKey, LEAD_EVENTS, { id: homeLeadId }, leadEvents);
    expect(home.seen).toEqual(ids.homeEvents);
    expect(home.counts).toEqual([3, 3]);
    const foreign = await app.graphql(LEAD_EVENTS, { id: awayLeadId, after: null }, homeKey);
    expect(foreign.errors).toBeUndefined();
    expect(foreign.data).toEqual({ lead: null });
    const all = await app.graphql(LEAD_EVENTS, { id: awayLeadId, after: null }, allKey);
    expect(leadEvents(all.data).totalCount).toBe(1);
  });
});

describe('Manufacturer.models and Manufacturer.offers', () => {
  it('pages and counts the models, catalogue data every key reads alike', async () => {
    for (const key of [homeKey, allKey]) {
      const page = await pageThrough(key, MODELS, { id: manufacturerId }, models);
      expect(page.seen).toEqual(ids.models);
      expect(page.counts).toEqual([3, 3]);
    }
  });

  it("pages and counts only the offers running at the key's dealerships", async () => {
    const home = await pageThrough(homeKey, OFFERS, { id: manufacturerId }, offers);
    expect(home.seen).toEqual(ids.homeOffers);
    expect(home.counts).toEqual([3, 3]);
    const all = await pageThrough(allKey, OFFERS, { id: manufacturerId }, offers);
    expect(all.seen).toEqual([...ids.homeOffers, ...ids.awayOffers].sort((a, b) => a - b));
    expect(all.counts).toEqual([5, 5, 5]);
  });
});
