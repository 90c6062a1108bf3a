// Finding a car as the spec's paths name it: by id, slug or custom slug (4.2, 4.3, 4.19), or by VIN
// with lookup_by=vin (4.2). Read through the caller's scoped client (src/db/scoped.ts), a car outside
// the key's dealerships is not found, exactly like a car that does not exist; except where the spec
// gives that case its own outcome (findCarIdForKey).
import { idOrSlug, recordNamed, recordNameWhere, type NamedRecord } from './record-names.ts';
import type { Prisma } from '../db/client.ts';
import type { ScopedDb } from '../db/scoped.ts';
import type { DbClients } from '../db/scoped.ts';
import { invalidDealership, isApiError, notFound } from '../errors.ts';

/** What lookup_by may say (4.2): `vin` means the identifier is a VIN; without it, an ID, slug or custom slug. */
export const CAR_LOOKUP_BYS = ['vin'] as const;
export type CarLookupBy = (typeof CAR_LOOKUP_BYS)[number];
/** What the id of a car lookup is, for each way of reading it. */
export const CAR_LOOKUP_BY_MEANINGS: Readonly<Record<CarLookupBy, string>> = {
  vin: 'The id is the car’s vehicle identification number.',
};

/**
 * The `where` that finds every car `identifier` could name: by VIN, or by ID, slug or custom slug
 * (src/domain/record-names.ts), of which findCar keeps the one it names.
 */
function carWhere(identifier: string, lookupBy?: CarLookupBy | null): Prisma.CarWhereInput {
  if (lookupBy === 'vin') return { vin: identifier.trim().toUpperCase() };
  return recordNameWhere(idOrSlug(identifier));
}

/**
 * The car's `select`ed columns, or the car_not_found error. By ID, slug or custom slug, the car the
 * text names in that precedence; by VIN, the newest car when several share it. One statement either way.
 */
export async function findCar<Select extends Prisma.CarSelect & { id: true }>(
  db: ScopedDb,
  identifier: string,
  lookupBy: CarLookupBy | null | undefined,
  select: Select,
): Promise<Prisma.CarGetPayload<{ select: Select }>> {
  if (lookupBy === 'vin') {
    const car = await db.car.findFirst({ where: carWhere(identifier, lookupBy), select, orderBy: { created_at: 'desc' } });
    if (!car) throw notFound('car');
    return car;
  }
  const name = idOrSlug(identifier);
  // The naming columns are read along, to pick among the (at most three) cars the text matches; the
  // caller's type leaves them out (the rows hold what it selected, and these).
  const withNames: Prisma.CarSelect = { ...select, slug: true, custom_slug: true };
  const candidates = (await db.car.findMany({ where: recordNameWhere(name), select: withNames })) as unknown as (Prisma.CarGetPayload<{
    select: Select;
  }> &
    NamedRecord)[];
  const car = recordNamed(candidates, name);
  if (!car) throw notFound('car');
  return car;
}

/**
 * Like findCar, for the operations whose spec refuses a car of a dealership the key cannot use with
 * its own error (4.2, 4.19: "invalid dealership", 403), distinct from a car that does not exist
 * (404). Only when the scoped lookup finds nothing does the unscoped client (the escape hatch of
 * src/db/scoped.ts) ask whether such a car exists at all; it reads nothing but that, and the error
 * carries nothing of the car.
 */
export async function findCarForKey<Select extends Prisma.CarSelect & { id: true }>(
  clients: DbClients,
  identifier: string,
  lookupBy: CarLookupBy | null | undefined,
  select: Select,
): Promise<Prisma.CarGetPayload<{ select: Select }>> {
  try {
    return await findCar(clients.db, identifier, lookupBy, select);
  } catch (error) {
    // Only "not found" is asked about: any other error (the database did not answer) is thrown as
    // it is, never read as the car being another dealership's.
    if (!isApiError(error) || error.extensions.code !== 'NOT_FOUND') throw error;
    const elsewhere = await clients.unscopedDb.car.findFirst({ where: carWhere(identifier, lookupBy), select: { id: true } });
    throw elsewhere ? invalidDealership() : error;
  }
}

/** findCarForKey's car id. */
export async function findCarIdForKey(clients: DbClients, identifier: string, lookupBy?: CarLookupBy | null): Promise<number> {
  return (await findCarForKey(clients, identifier, lookupBy, { id: true })).id;
}
