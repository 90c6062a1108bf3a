// A car outside the key's dealerships is not found, like one that does not exist, except where the spec gives that its own outcome.
import { idOrSlug, NAME_COLUMNS, recordNamed, recordNameWhere, type NamedRecord } from './record-names.ts';
import type { Prisma } from '../db/client.ts';
import type { DbClients, ScopedDb } from '../db/scoped.ts';
import { invalidDealership, isApiError, notFound } from '../errors.ts';

export const CAR_LOOKUP_BYS = ['vin'] as const;
export type CarLookupBy = (typeof CAR_LOOKUP_BYS)[number];
export const CAR_LOOKUP_BY_MEANINGS: Readonly<Record<CarLookupBy, string>> = {
  vin: 'The id is the car’s vehicle identification number.',
};

type SelectedCar<Select extends Prisma.CarSelect> = Prisma.CarGetPayload<{ select: Select }>;

function carWhere(identifier: string, lookupBy?: CarLookupBy | null): Prisma.CarWhereInput {
  if (lookupBy === 'vin') return { vin: identifier.trim().toUpperCase() };
  return recordNameWhere(idOrSlug(identifier));
}

/** By ID, slug or custom slug in that precedence; by VIN, the newest car when several share it. One statement either way. */
export async function findCar<Select extends Prisma.CarSelect & { id: true }>(
  db: ScopedDb,
  identifier: string,
  lookupBy: CarLookupBy | null | undefined,
  select: Select,
): Promise<SelectedCar<Select>> {
  if (lookupBy === 'vin') {
    const car = await db.car.findFirst({ where: carWhere(identifier, lookupBy), select, orderBy: { created_at: 'desc' } });
    if (!car) throw notFound('car');
    return car;
  }
  const name = idOrSlug(identifier);
  // The naming columns are read along, to pick among the cars the text matches.
  const withNames: Prisma.CarSelect = { ...select, ...NAME_COLUMNS };
  const candidates = await db.car.findMany({ where: recordNameWhere(name), select: withNames });
  const car = recordNamed(candidates as unknown as (SelectedCar<Select> & NamedRecord)[], name);
  if (!car) throw notFound('car');
  return car;
}

/** The spec answers another dealership's car with 403, so only when the scoped lookup finds nothing is the unscoped client asked. */
export async function findCarForKey<Select extends Prisma.CarSelect & { id: true }>(
  clients: DbClients,
  identifier: string,
  lookupBy: CarLookupBy | null | undefined,
  select: Select,
): Promise<SelectedCar<Select>> {
  try {
    return await findCar(clients.db, identifier, lookupBy, select);
  } catch (error) {
    // Any other error (the database did not answer) is never read as the car being another dealership's.
    if (!isApiError(error) || error.extensions.code !== 'NOT_FOUND') throw error;
    const elsewhere = await clients.unscopedDb.car.findFirst({ where: carWhere(identifier, lookupBy), select: { id: true } });
    throw elsewhere ? invalidDealership() : error;
  }
}
