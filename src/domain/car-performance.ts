// Spec 4.2 / 2.2: a car's performance figures. Every figure is computed from stored facts (leads,
// photos, phone calls, price rows, daily view counts) when asked, so none can drift from the facts.
// Any number of cars costs the same six queries, so a page of cars with their figures stays cheap.
import type { Prisma } from '../db/client.ts';
import { MOST_LISTED_VALUES, readRows, rowRead } from '../db/direct-reads.ts';
import { dealershipConditionOf, reachOf, type DbClients, type ScopedDb } from '../db/scoped.ts';
import { groupBy } from '../lib/group-by.ts';
import { findCarForKey, type CarLookupBy } from './cars.ts';

const DAY_MS = 86_400_000;
/** The photo count that days_to_twenty_photos measures the time to. */
const PHOTO_MILESTONE = 20;

/** A lead as the car's performance lists it: its columns, as stored. */
export type CarPerformanceLead = Pick<Prisma.LeadModel, 'id' | 'created_at' | 'source' | 'lead_status' | 'lead_state'>;

/** A price change as the car's performance lists it: the price row, its `created_at` named `updated_at`. */
export type CarPerformancePriceChange = Pick<Prisma.CarPriceChangeModel, 'dapprice' | 'egcprice'> & {
  /** When the price changed: the price row's created_at (price rows are never edited). */
  updated_at: Prisma.CarPriceChangeModel['created_at'];
};

/** The car's own columns the performance answers, then the figures computed from its facts. */
export type CarPerformance = Pick<
  Prisma.CarModel,
  'id' | 'car_type' | 'status' | 'make' | 'model' | 'vin' | 'stocknum' | 'slug' | 'created_at' | 'updated_at' | 'sold_date'
> & {
  days_old: number;
  leads_count: number;
  photos_count: number;
  phone_calls: number;
  price_changes_count: number;
  days_to_twenty_photos: number | null;
  views: number;
  start_price: number | null;
  last_price_change: Date | null;
  price_type: string;
  leads: CarPerformanceLead[];
  price_changes: CarPerformancePriceChange[];
};

/** Whole days from `from` to `to`, never negative (a clock skew must not produce "-1 days"). */
function wholeDaysBetween(from: Date, to: Date): number {
  return Math.max(0, Math.floor((to.getTime() - from.getTime()) / DAY_MS));
}

/**
 * Which price the car advertises: advertised_price when the dealer chose one, else the price that
 * is set, driveaway (dapprice) first; a car with neither is on the default, dapprice.
 */
function priceType(car: { advertised_price: string | null; dapprice: number | null; egcprice: number | null }): string {
  if (car.advertised_price) return car.advertised_price;
  if (car.dapprice === null && car.egcprice !== null) return 'egcprice';
  return 'dapprice';
}

/** The car's own columns its figures need. */
const performanceCarSelect = {
  id: true,
  car_type: true,
  status: true,
  make: true,
  model: true,
  vin: true,
  stocknum: true,
  slug: true,
  created_at: true,
  updated_at: true,
  sold_date: true,
  advertised_price: true,
  dapprice: true,
  egcprice: true,
} satisfies Prisma.CarSelect;

type PerformanceCar = Prisma.CarGetPayload<{ select: typeof performanceCarSelect }>;

/**
 * The figures of each of `carIds` that exists. `db` is the caller's scoped client: a foreign car
 * has no figures, and a car's leads, calls and the rest count only rows of the key's dealerships.
 */
async function carPerformances(db: ScopedDb, carIds: readonly number[], now: Date): Promise<Map<number, CarPerformance>> {
  const ids = [...new Set(carIds)];
  if (ids.length === 0) return new Map();
  return figuresOf(db, db.car.findMany({ where: { id: { in: ids } }, select: performanceCarSelect }), ids, now);
}

/** The facts a car's figures are computed from, in the shapes Prisma returns them. */
interface FigureFacts {
  leads: (CarPerformanceLead & { car_id: number | null })[];
  photos: { car_id: number; created_at: Date }[];
  calls: { car_id: number | null; _count: { _all: number } }[];
  prices: { car_id: number; dapprice: number | null; egcprice: number | null; created_at: Date }[];
  views: { car_id: number; _sum: { views: number | null } }[];
}

/** The five statements through Prisma, each kept to the caller's dealerships by its scoped client. */
function factsFromPrisma(db: ScopedDb, ids: readonly number[]): Promise<FigureFacts> {
  const inIds = { in: [...ids] };
  // Ordered by time then id, so "first" and "latest" are stable when rows share a timestamp.
  return Promise.all([
    db.lead.findMany({
      where: { car_id: inIds },
      select: { id: true, car_id: true, created_at: true, source: true, lead_status: true, lead_state: true },
      orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
    }),
    db.carPhoto.findMany({
      where: { car_id: inIds },
      select: { car_id: true, created_at: true },
      orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
    }),
    db.phoneCall.groupBy({ by: ['car_id'], where: { car_id: inIds }, _count: { _all: true } }),
    db.carPriceChange.findMany({
      where: { car_id: inIds },
      select: { car_id: true, dapprice: true, egcprice: true, created_at: true },
      orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
    }),
    db.carViewDay.groupBy({ by: ['car_id'], where: { car_id: inIds }, _sum: { views: true } }),
  ]).then(([leads, photos, calls, prices, views]) => ({ leads, photos, calls, prices, views }));
}

// The same five statements written as Prisma writes them (src/db/direct-reads.ts), for the hot
// uncached read of one car's figures: Prisma's own work was about a third of its CPU.
const byTimeThenId = ['created_at', 'id'];
const leadRows = rowRead('Lead', 'leads', {
  columns: ['id', 'car_id', 'created_at', 'source', 'lead_status', 'lead_state'],
  filter: 'car_id',
  orderBy: byTimeThenId,
  condition: dealershipConditionOf('Lead'),
});
const photoRows = rowRead('CarPhoto', 'car_photos', {
  columns: ['id', 'car_id', 'created_at'],
  filter: 'car_id',
  orderBy: byTimeThenId,
  condition: dealershipConditionOf('CarPhoto'),
  ownerTable: 'cars',
});
const callCounts = rowRead('PhoneCall', 'phone_calls', {
  columns: ['car_id'],
  aggregate: { sql: 'COUNT(*)', alias: '_count$_all' },
  filter: 'car_id',
  groupBy: 'car_id',
  condition: dealershipConditionOf('PhoneCall'),
});
const priceRows = rowRead('CarPriceChange', 'car_price_changes', {
  columns: ['id', 'car_id', 'dapprice', 'egcprice', 'created_at'],
  filter: 'car_id',
  orderBy: byTimeThenId,
  condition: dealershipConditionOf('CarPriceChange'),
  ownerTable: 'cars',
});
const viewSums = rowRead('CarViewDay', 'car_view_days', {
  columns: ['car_id'],
  aggregate: { sql: 'SUM', of: 'views', alias: '_sum$views' },
  filter: 'car_id',
  groupBy: 'car_id',
  condition: dealershipConditionOf('CarViewDay'),
  ownerTable: 'cars',
});

/** The facts read directly, kept to the caller's reach; undefined when they cannot be read so here. */
async function factsDirect(db: ScopedDb, ids: readonly number[]): Promise<FigureFacts | undefined> {
  const reach = reachOf(db);
  if (!reach || ids.length > MOST_LISTED_VALUES) return undefined;
  const kept = reach.dealershipIds ?? undefined;
  const [leads, photos, calls, prices, views] = await Promise.all([
    readRows(reach.db, leadRows, ids, kept),
    readRows(reach.db, photoRows, ids, kept),
    readRows(reach.db, callCounts, ids, kept),
    readRows(reach.db, priceRows, ids, kept),
    readRows(reach.db, viewSums, ids, kept),
  ]);
  if (!leads || !photos || !calls || !prices || !views) return undefined;
  return {
    leads: leads as unknown as FigureFacts['leads'],
    photos: photos.map(({ car_id, created_at }) => ({ car_id, created_at })) as FigureFacts['photos'],
    calls: calls.map((row) => ({ car_id: row.car_id, _count: { _all: row._count$_all } })) as FigureFacts['calls'],
    prices: prices.map(({ car_id, dapprice, egcprice, created_at }) => ({
      car_id,
      dapprice,
      egcprice,
      created_at,
    })) as FigureFacts['prices'],
    views: views.map((row) => ({ car_id: row.car_id, _sum: { views: row._sum$views } })) as FigureFacts['views'],
  };
}

/**
 * The facts of `ids`' figures: read directly when they can be, else through Prisma (`through` says
 * which to use; the test compares the two).
 */
export async function carFigureFacts(
  db: ScopedDb,
  ids: readonly number[],
  through: 'direct-or-prisma' | 'prisma' = 'direct-or-prisma',
): Promise<FigureFacts> {
  return (through === 'direct-or-prisma' ? await factsDirect(db, ids) : undefined) ?? factsFromPrisma(db, ids);
}

/** The figures of `cars` (`ids` are theirs, known before the cars are read, so every query runs at once). */
async function figuresOf(
  db: ScopedDb,
  carsRead: Promise<PerformanceCar[]>,
  ids: readonly number[],
  now: Date,
): Promise<Map<number, CarPerformance>> {
  const result = new Map<number, CarPerformance>();
  const [cars, { leads, photos, calls, prices, views }] = await Promise.all([carsRead, carFigureFacts(db, ids)]);
  const byCar = (row: { car_id: number | null }) => row.car_id;
  const leadsByCar = groupBy(leads, byCar);
  const photosByCar = groupBy(photos, byCar);
  const pricesByCar = groupBy(prices, byCar);
  const callsByCar = new Map(calls.map((row) => [row.car_id, row._count._all]));
  const viewsByCar = new Map(views.map((row) => [row.car_id, row._sum.views ?? 0]));

  for (const car of cars) {
    const carPhotos = photosByCar.get(car.id) ?? [];
    const [listing, ...changes] = pricesByCar.get(car.id) ?? [];
    const milestonePhoto = carPhotos[PHOTO_MILESTONE - 1];
    const latestChange = changes.at(-1);
    result.set(car.id, {
      id: car.id,
      car_type: car.car_type,
      status: car.status,
      make: car.make,
      model: car.model,
      vin: car.vin,
      stocknum: car.stocknum,
      slug: car.slug,
      created_at: car.created_at,
      updated_at: car.updated_at,
      // A sold car stops ageing on the day it was sold.
      days_old: wholeDaysBetween(car.created_at, car.sold_date ?? now),
      leads_count: leadsByCar.get(car.id)?.length ?? 0,
      photos_count: carPhotos.length,
      phone_calls: callsByCar.get(car.id) ?? 0,
      price_changes_count: changes.length,
      days_to_twenty_photos: milestonePhoto ? wholeDaysBetween(car.created_at, milestonePhoto.created_at) : null,
      views: viewsByCar.get(car.id) ?? 0,
      // A car without price rows has never changed price: its current price is its listing price.
      start_price: listing ? (listing.dapprice ?? listing.egcprice) : (car.dapprice ?? car.egcprice),
      last_price_change: latestChange?.created_at ?? null,
      sold_date: car.sold_date,
      price_type: priceType(car),
      leads: (leadsByCar.get(car.id) ?? []).map(({ id, created_at, source, lead_status, lead_state }) => ({
        id,
        created_at,
        source,
        lead_status,
        lead_state,
      })),
      price_changes: changes.map((row) => ({ updated_at: row.created_at, dapprice: row.dapprice, egcprice: row.egcprice })),
    });
  }
  return result;
}

/**
 * Spec 4.2: the figures of the car named by ID, slug or custom slug (or VIN), among the cars the key
 * reaches; a car of another dealership is 403 invalid_dealership.
 */
export async function carPerformance(
  clients: DbClients,
  identifier: string,
  lookupBy: CarLookupBy | null | undefined,
  now: Date,
): Promise<CarPerformance> {
  const { db } = clients;
  // The statement that finds the car also reads its columns: one statement fewer than finding its id first.
  const car = await findCarForKey(clients, identifier, lookupBy, performanceCarSelect);
  const performance = (await figuresOf(db, Promise.resolve([car]), [car.id], now)).get(car.id);
  if (!performance) throw new Error(`car ${car.id} has no figures`);
  return performance;
}

interface PendingLoad {
  carId: number;
  resolve: (value: CarPerformance | null) => void;
  reject: (reason: unknown) => void;
}

interface PerformanceBatcher {
  pending: PendingLoad[];
}

const batchers = new WeakMap<object, PerformanceBatcher>();

/**
 * The figures of one car, batched with every other car asked for in the same tick of the same
 * request: a page of cars selecting `performance` costs six queries, not six per car.
 */
export function loadCarPerformance(context: { db: ScopedDb; now: () => Date }, carId: number): Promise<CarPerformance | null> {
  let batcher = batchers.get(context);
  if (!batcher) {
    batcher = { pending: [] };
    batchers.set(context, batcher);
  }
  const current = batcher;
  return new Promise((resolve, reject) => {
    current.pending.push({ carId, resolve, reject });
    if (current.pending.length > 1) return;
    // setImmediate runs after the resolvers of the current execution pass have all asked.
    setImmediate(() => {
      const batch = current.pending.splice(0);
      carPerformances(
        context.db,
        batch.map((load) => load.carId),
        context.now(),
      ).then(
        (figures) => {
          for (const load of batch) load.resolve(figures.get(load.carId) ?? null);
        },
        (error: unknown) => {
          for (const load of batch) load.reject(error);
        },
      );
    });
  });
}
