// Every figure is computed from stored facts when asked, so none can drift from them; any number of cars costs the same statements.
import DataLoader from 'dataloader';
import type { Prisma } from '../db/client.ts';
import type { DbClients, ScopedDb } from '../db/scoped.ts';
import { groupBy } from '../lib/group-by.ts';
import { findCarForKey, type CarLookupBy } from './cars.ts';
import { type BoundedList, boundedList, WHOLE_LIST_TAKE } from './whole-lists.ts';

const DAY_MS = 86_400_000;
const PHOTO_MILESTONE = 20;

export type CarPerformanceLead = Pick<Prisma.LeadModel, 'id' | 'created_at' | 'source' | 'lead_status' | 'lead_state'>;

export type CarFigures = Awaited<ReturnType<typeof figuresOf>> extends Map<number, infer Figures> ? Figures : never;
export type CarPerformancePriceChange = CarFigures['price_changes'][number];
export type CarPerformance = Awaited<ReturnType<typeof carPerformance>>;

/** Never negative: a clock skew must not produce "-1 days". */
function wholeDaysBetween(from: Date, to: Date): number {
  return Math.max(0, Math.floor((to.getTime() - from.getTime()) / DAY_MS));
}

function priceType(car: { advertised_price: string | null; dapprice: number | null; egcprice: number | null }): string {
  if (car.advertised_price) return car.advertised_price;
  if (car.dapprice === null && car.egcprice !== null) return 'egcprice';
  return 'dapprice';
}

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

/** Ordered by id too, so that "first" and "latest" are stable when rows share a timestamp. */
const byTimeThenId = [{ created_at: 'asc' as const }, { id: 'asc' as const }];

const leadSelect = {
  id: true,
  car_id: true,
  created_at: true,
  source: true,
  lead_status: true,
  lead_state: true,
} satisfies Prisma.LeadSelect;

function carFigureFacts(db: ScopedDb, ids: readonly number[]) {
  const inIds = { in: [...ids] };
  return Promise.all([
    db.carPhoto.findMany({ where: { car_id: inIds }, select: { car_id: true, created_at: true }, orderBy: byTimeThenId }),
    db.phoneCall.groupBy({ by: ['car_id'], where: { car_id: inIds }, _count: { _all: true } }),
    db.carPriceChange.findMany({
      where: { car_id: inIds },
      select: { car_id: true, dapprice: true, egcprice: true, created_at: true },
      orderBy: byTimeThenId,
    }),
    db.carViewDay.groupBy({ by: ['car_id'], where: { car_id: inIds }, _sum: { views: true } }),
  ]).then(([photos, calls, prices, views]) => ({ photos, calls, prices, views }));
}

/** The car's id is read to group a page's leads, never answered. */
const leadOf = ({ car_id: _carId, ...lead }: Prisma.LeadGetPayload<{ select: typeof leadSelect }>): CarPerformanceLead => lead;

async function leadsOfCar(db: ScopedDb, carId: number): Promise<BoundedList<CarPerformanceLead>> {
  const rows = await db.lead.findMany({ where: { car_id: carId }, select: leadSelect, orderBy: byTimeThenId, take: WHOLE_LIST_TAKE });
  return boundedList(rows.map(leadOf));
}

// A page of a list relation under the page's cars: src/db/bounded-relations.ts reads it with a LIMIT of the pages' rows.
async function leadsOfCars(db: ScopedDb, ids: readonly number[]): Promise<Map<number, BoundedList<CarPerformanceLead>>> {
  const [only] = ids;
  if (ids.length === 1 && only !== undefined) return new Map([[only, await leadsOfCar(db, only)]]);
  const cars = await db.car.findMany({
    where: { id: { in: [...ids] } },
    select: { id: true, leads: { select: leadSelect, orderBy: byTimeThenId, take: WHOLE_LIST_TAKE } },
  });
  return new Map(cars.map((car) => [car.id, boundedList(car.leads.map(leadOf))]));
}

async function figuresOf(
  db: ScopedDb,
  carsRead: Promise<PerformanceCar[]>,
  ids: readonly number[],
  leadsCounted: Promise<(carId: number) => number>,
  now: Date,
) {
  const [cars, { photos, calls, prices, views }, leadsCount] = await Promise.all([carsRead, carFigureFacts(db, ids), leadsCounted]);
  const byCar = (row: { car_id: number | null }) => row.car_id;
  const photosByCar = groupBy(photos, byCar);
  const pricesByCar = groupBy(prices, byCar);
  const callsByCar = new Map(calls.map((row) => [row.car_id, row._count._all]));
  const viewsByCar = new Map(views.map((row) => [row.car_id, row._sum.views ?? 0]));

  const figures = cars.map((car) => {
    const carPhotos = photosByCar.get(car.id) ?? [];
    const [listing, ...changes] = pricesByCar.get(car.id) ?? [];
    const milestonePhoto = carPhotos[PHOTO_MILESTONE - 1];
    const latestChange = changes.at(-1);
    const carFigures = {
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
      sold_date: car.sold_date,
      // A sold car stops ageing on the day it was sold.
      days_old: wholeDaysBetween(car.created_at, car.sold_date ?? now),
      leads_count: leadsCount(car.id),
      photos_count: carPhotos.length,
      phone_calls: callsByCar.get(car.id) ?? 0,
      price_changes_count: changes.length,
      days_to_twenty_photos: milestonePhoto ? wholeDaysBetween(car.created_at, milestonePhoto.created_at) : null,
      views: viewsByCar.get(car.id) ?? 0,
      // A car without price rows has never changed price: its current price is its listing price.
      start_price: listing ? (listing.dapprice ?? listing.egcprice) : (car.dapprice ?? car.egcprice),
      last_price_change: latestChange?.created_at ?? null,
      price_type: priceType(car),
      price_changes: changes.map((row) => ({ updated_at: row.created_at, dapprice: row.dapprice, egcprice: row.egcprice })),
    };
    return [car.id, carFigures] as const;
  });
  return new Map(figures);
}

export async function carPerformance(clients: DbClients, identifier: string, lookupBy: CarLookupBy | null | undefined, now: Date) {
  const { db } = clients;
  const car = await findCarForKey(clients, identifier, lookupBy, performanceCarSelect);
  const leadsRead = leadsOfCar(db, car.id);
  // Only a car with more leads than the bound is counted.
  const leadsCounted = leadsRead.then(async (list) => {
    const count = list.truncated ? await db.lead.count({ where: { car_id: car.id } }) : list.entries.length;
    return () => count;
  });
  const [figures, leads] = await Promise.all([figuresOf(db, Promise.resolve([car]), [car.id], leadsCounted, now), leadsRead]);
  const performance = figures.get(car.id);
  if (!performance) throw new Error(`car ${car.id} has no figures`);
  return { ...performance, leads: leads.entries, leads_truncated: leads.truncated };
}

async function carFiguresOf(db: ScopedDb, carIds: readonly number[], now: Date): Promise<Map<number, CarFigures>> {
  const ids = [...new Set(carIds)];
  if (ids.length === 0) return new Map();
  const counted = db.lead.groupBy({ by: ['car_id'], where: { car_id: { in: ids } }, _count: { _all: true } }).then((counts) => {
    const byCar = new Map(counts.map((row) => [row.car_id, row._count._all]));
    return (carId: number) => byCar.get(carId) ?? 0;
  });
  return figuresOf(db, db.car.findMany({ where: { id: { in: ids } }, select: performanceCarSelect }), ids, counted, now);
}

type LoadContext = { db: ScopedDb; now: () => Date };

/** Batched per request and tick (setImmediate: after the resolvers of the current pass have all asked), never cached. */
function batchedByCar<Value>(
  read: (context: LoadContext, carIds: readonly number[]) => Promise<Map<number, Value>>,
): (context: LoadContext, carId: number) => Promise<Value | undefined> {
  const loaders = new WeakMap<LoadContext, DataLoader<number, Value | undefined>>();
  return (context, carId) => {
    const loader =
      loaders.get(context) ??
      new DataLoader<number, Value | undefined>(
        async (carIds) => {
          const values = await read(context, [...new Set(carIds)]);
          return carIds.map((id) => values.get(id));
        },
        { cache: false, batchScheduleFn: setImmediate },
      );
    loaders.set(context, loader);
    return loader.load(carId);
  };
}

export const loadCarFigures = batchedByCar((context, carIds) => carFiguresOf(context.db, carIds, context.now()));

export const loadCarLeads = batchedByCar((context, carIds) => leadsOfCars(context.db, carIds));
