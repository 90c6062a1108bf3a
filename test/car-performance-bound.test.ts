// A car's leads are a list the spec answers whole (2.2): at most WHOLE_LIST_BOUND of them, oldest
// first, with leads_truncated saying there are more and leads_count counting them all
// (src/domain/whole-lists.ts). Both doors, a single car and a page of cars, and the statements each
// read costs (the performance read is plain Prisma on the caller's scoped client).
import { beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/client.ts';
import { forDealerships } from '../src/db/scoped.ts';
import { carPerformance, loadCarLeads } from '../src/domain/car-performance.ts';
import { WHOLE_LIST_BOUND, WHOLE_LIST_TAKE } from '../src/domain/whole-lists.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey } from './support/fixtures.ts';
import { daysAfter, makeCarLead, makePhotos } from './support/fixtures-catalogue.ts';

let app: TestApp;
let dealershipId: number;
let allKey: string;
let dealershipKey: string;
/** A car with more leads than the bound, and their ids oldest first. */
let popular: { id: number; leadIds: number[] };
/** A car with two leads. */
let quiet: { id: number; leadIds: number[] };
let leadless: { id: number };

const PAST_THE_BOUND = WHOLE_LIST_BOUND + 5;

beforeAll(async () => {
  app = await createTestApp();
  const start = daysAfter(app.clock.now(), -60);
  const dealership = await makeDealership(app.db);
  dealershipId = dealership.id;
  const popularCar = await makeCar(app.db, dealership.id, { created_at: start });
  // Created newest first, so that the list's order is the leads' time and not their ids; the last two share a time.
  await app.db.lead.createMany({
    data: Array.from({ length: PAST_THE_BOUND }, (_, index) => ({
      dealership_id: dealership.id,
      car_id: popularCar.id,
      category: 'Used Vehicle Enquiry',
      source: 'Website',
      created_at: daysAfter(start, Math.min(PAST_THE_BOUND - index, PAST_THE_BOUND - 1) / 10),
    })),
  });
  const popularLeads = await app.db.lead.findMany({
    where: { car_id: popularCar.id },
    select: { id: true },
    orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
  });
  popular = { id: popularCar.id, leadIds: popularLeads.map((lead) => lead.id) };
  const quietCar = await makeCar(app.db, dealership.id, { created_at: start });
  quiet = {
    id: quietCar.id,
    leadIds: [
      (await makeCarLead(app.db, dealership.id, quietCar.id, { created_at: daysAfter(start, 1) })).id,
      (await makeCarLead(app.db, dealership.id, quietCar.id, { created_at: daysAfter(start, 2) })).id,
    ],
  };
  await makePhotos(app.db, quietCar.id, 3, start);
  leadless = await makeCar(app.db, dealership.id, { created_at: start });
  allKey = (await makeKey(app.db, { permissions: ['read:car'] })).key;
  dealershipKey = (await makeKey(app.db, { permissions: ['read:car'], dealershipIds: [dealership.id] })).key;
});

interface PerformanceBody {
  leads_count: number;
  leads_truncated: boolean;
  leads: { id: number }[];
}

const performancePath = (id: number) => `/api/v1/cars/${id}/performance.json`;

/** The tables each statement since the last reset read (the key's own lookups and call log left out), sorted. */
function tablesRead(queries: readonly string[]): string[] {
  return queries
    .map((sql) => /\bFROM\s+[`"]\w+[`"]\.[`"](\w+)[`"]/.exec(sql)?.[1] ?? sql)
    .filter((table) => !/^api_key/.test(table))
    .sort();
}

/** A client of its own, to see how many rows each statement returned from the driver. */
function rowCountingDb(url: string) {
  const statements: { sql: string; rows: number | undefined }[] = [];
  const db = createDb(url, {
    aroundStatement: async (sql, run) => {
      const result = await run();
      statements.push({ sql, rows: (result as { rows?: unknown[] }).rows?.length });
      return result;
    },
  });
  return { db, statements };
}

describe('GET /api/v1/cars/{id}/performance.json: a car with more leads than the bound', () => {
  it('answers its first leads, oldest first, up to the bound, says there are more, and counts them all', async () => {
    for (const key of [allKey, dealershipKey]) {
      const response = await app.request(performancePath(popular.id), { key });
      expect(response.status).toBe(200);
      const body = (await response.json()) as PerformanceBody;
      expect(body.leads_count).toBe(PAST_THE_BOUND);
      expect(body.leads_truncated).toBe(true);
      expect(body.leads).toHaveLength(WHOLE_LIST_BOUND);
      expect(body.leads.map((lead) => lead.id)).toEqual(popular.leadIds.slice(0, WHOLE_LIST_BOUND));
    }
  });

  it('answers the same on GraphQL', async () => {
    const rest = (await (await app.request(performancePath(popular.id), { key: allKey })).json()) as PerformanceBody;
    const graph = await app.graphql<{ car_performance: PerformanceBody }>(
      'query ($id: String!) { car_performance(id: $id) { leads_count leads_truncated leads { id: databaseId } } }',
      { id: String(popular.id) },
      allKey,
    );
    expect(graph.errors).toBeUndefined();
    expect(graph.data?.car_performance).toEqual({
      leads_count: rest.leads_count,
      leads_truncated: true,
      leads: rest.leads.map(({ id }) => ({ id })),
    });
  });

  it('answers a car with few leads whole, and leads_truncated false', async () => {
    const body = (await (await app.request(performancePath(quiet.id), { key: allKey })).json()) as PerformanceBody;
    expect(body).toMatchObject({ leads_count: 2, leads_truncated: false, photos_count: 3 });
    expect(body.leads.map((lead) => lead.id)).toEqual(quiet.leadIds);
    const none = (await (await app.request(performancePath(leadless.id), { key: allKey })).json()) as PerformanceBody;
    expect(none).toMatchObject({ leads_count: 0, leads_truncated: false, leads: [] });
  });

  it('costs one statement per kind of fact, and one more to count the leads of a car past the bound', async () => {
    const kinds = ['car_photos', 'car_price_changes', 'car_view_days', 'cars', 'leads', 'phone_calls'];
    for (const key of [allKey, dealershipKey]) {
      app.queries.length = 0;
      expect((await app.request(performancePath(quiet.id), { key })).status).toBe(200);
      expect(tablesRead(app.queries)).toEqual(kinds);
      app.queries.length = 0;
      expect((await app.request(performancePath(popular.id), { key })).status).toBe(200);
      expect(tablesRead(app.queries)).toEqual([...kinds, 'leads'].sort());
    }
  });

  it('reads the list with its bound: one row more than it answers, never the car’s every lead', async () => {
    const { db, statements } = rowCountingDb(app.config.databaseUrl);
    try {
      const performance = await carPerformance(
        { db: forDealerships(db, [dealershipId]), unscopedDb: db },
        String(popular.id),
        null,
        app.clock.now(),
      );
      expect(performance.leads).toHaveLength(WHOLE_LIST_BOUND);
      expect(performance.leads_count).toBe(PAST_THE_BOUND);
      const leadReads = statements.filter(({ sql }) => /FROM\s+[`"]\w+[`"]\.[`"]leads[`"]/.test(sql));
      // The list, and the count of a car past the bound (one row).
      expect(leadReads.map(({ rows }) => rows)).toEqual([WHOLE_LIST_TAKE, 1]);
    } finally {
      await db.$disconnect();
    }
  });
});

describe('a page of cars with their performance', () => {
  const PAGE_QUERY = `query ($d: Int) {
    cars(first: 10, dealership_id: $d) { edges { node { id: databaseId performance { leads_count leads_truncated leads { id: databaseId } } } } }
  }`;

  it('answers each car’s leads up to the bound, with its signal, in one statement of leads for the page', async () => {
    app.queries.length = 0;
    const result = await app.graphql<{ cars: { edges: { node: { id: number; performance: PerformanceBody } }[] } }>(
      PAGE_QUERY,
      { d: dealershipId },
      allKey,
    );
    expect(result.errors).toBeUndefined();
    const byCar = new Map(result.data?.cars.edges.map((edge) => [edge.node.id, edge.node.performance]));
    expect(byCar.get(popular.id)).toEqual({
      leads_count: PAST_THE_BOUND,
      leads_truncated: true,
      leads: popular.leadIds.slice(0, WHOLE_LIST_BOUND).map((id) => ({ id })),
    });
    expect(byCar.get(quiet.id)).toEqual({ leads_count: 2, leads_truncated: false, leads: quiet.leadIds.map((id) => ({ id })) });
    expect(byCar.get(leadless.id)).toEqual({ leads_count: 0, leads_truncated: false, leads: [] });
    // The count and the lists: two statements on leads for the whole page.
    expect(tablesRead(app.queries).filter((table) => table === 'leads')).toHaveLength(2);
  });

  it('reads no lead row when the page asks only for the figures', async () => {
    app.queries.length = 0;
    const result = await app.graphql<{ cars: { edges: { node: { performance: { leads_count: number } } }[] } }>(
      'query ($d: Int) { cars(first: 10, dealership_id: $d) { edges { node { performance { leads_count } } } } }',
      { d: dealershipId },
      allKey,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data?.cars.edges.map((edge) => edge.node.performance.leads_count).sort((a, b) => a - b)).toEqual([0, 2, PAST_THE_BOUND]);
    const leadReads = app.queries.filter((sql) => /FROM\s+[`"]\w+[`"]\.[`"]leads[`"]/.test(sql));
    expect(leadReads).toHaveLength(1);
    expect(leadReads[0]).toMatch(/COUNT\(\*\)/);
  });
});

describe('a page of cars one of which has more leads than the page shares', () => {
  // Past the LIMIT the two cars' pages share (two lists of WHOLE_LIST_TAKE), so that a read of every lead would show.
  const HEAVY_LEADS = 2 * WHOLE_LIST_TAKE + 50;
  let own: { dealershipId: number; heavy: number; heavyLeadIds: number[]; light: number; lightLeadId: number };

  beforeAll(async () => {
    const start = daysAfter(app.clock.now(), -30);
    const dealership = await makeDealership(app.db);
    const heavy = await makeCar(app.db, dealership.id, { created_at: start });
    await app.db.lead.createMany({
      data: Array.from({ length: HEAVY_LEADS }, (_, index) => ({
        dealership_id: dealership.id,
        car_id: heavy.id,
        category: 'Used Vehicle Enquiry',
        source: 'Website',
        created_at: daysAfter(start, (HEAVY_LEADS - index) / 100),
      })),
    });
    const heavyLeads = await app.db.lead.findMany({
      where: { car_id: heavy.id },
      select: { id: true },
      orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
      take: WHOLE_LIST_BOUND,
    });
    const light = await makeCar(app.db, dealership.id, { created_at: start });
    const lightLead = await makeCarLead(app.db, dealership.id, light.id, { created_at: daysAfter(start, 1) });
    own = {
      dealershipId: dealership.id,
      heavy: heavy.id,
      heavyLeadIds: heavyLeads.map((lead) => lead.id),
      light: light.id,
      lightLeadId: lightLead.id,
    };
  });

  it('reads at most the rows of the cars’ bounded lists in every statement, and answers each list bounded with its signal', async () => {
    const { db, statements } = rowCountingDb(app.config.databaseUrl);
    try {
      const context = { db: forDealerships(db, [own.dealershipId]), now: () => app.clock.now() };
      const [heavy, light] = await Promise.all([loadCarLeads(context, own.heavy), loadCarLeads(context, own.light)]);
      expect(heavy?.truncated).toBe(true);
      expect(heavy?.entries.map((lead) => lead.id)).toEqual(own.heavyLeadIds);
      expect(light).toMatchObject({ truncated: false, entries: [{ id: own.lightLeadId }] });
      const leadReads = statements.filter(({ sql }) => /FROM\s+[`"]\w+[`"]\.[`"]leads[`"]/.test(sql));
      expect(leadReads.length).toBeGreaterThan(0);
      for (const { sql, rows } of leadReads) {
        expect(sql).toMatch(/\bLIMIT\b/);
        expect(rows).toBeLessThanOrEqual(2 * WHOLE_LIST_TAKE);
      }
    } finally {
      await db.$disconnect();
    }
  });

  it('answers the same through the graph, with one statement more for the car the shared LIMIT cut short', async () => {
    app.queries.length = 0;
    const result = await app.graphql<{ cars: { edges: { node: { id: number; performance: PerformanceBody } }[] } }>(
      `query ($d: Int) {
        cars(first: 10, dealership_id: $d) { edges { node { id: databaseId performance { leads_count leads_truncated leads { id: databaseId } } } } }
      }`,
      { d: own.dealershipId },
      allKey,
    );
    expect(result.errors).toBeUndefined();
    const byCar = new Map(result.data?.cars.edges.map((edge) => [edge.node.id, edge.node.performance]));
    expect(byCar.get(own.heavy)).toEqual({
      leads_count: HEAVY_LEADS,
      leads_truncated: true,
      leads: own.heavyLeadIds.map((id) => ({ id })),
    });
    expect(byCar.get(own.light)).toEqual({ leads_count: 1, leads_truncated: false, leads: [{ id: own.lightLeadId }] });
    // The count, the shared read of the lists, and the light car read alone, cut short by the heavy one before it.
    expect(tablesRead(app.queries).filter((table) => table === 'leads')).toHaveLength(3);
  });
});
