// Finding a car as the spec's paths name it: by id, slug or custom slug (4.2, 4.3, 4.19), or by VIN
// with lookup_by=vin (4.2). Read through the caller's scoped client (src/db/scoped.ts), a car outside
// the key's dealerships is not found, exactly like a car that does not exist; except where the spec
// gives that case its own outcome (findCarIdForKey).
import { rowIdFromText } from './input-limits.ts';
import type { Db, Prisma } from '../db/client.ts';
import type { DbClients } from '../db/scoped.ts';
import { invalidDealership, notFound } from '../errors.ts';

/** What lookup_by may say (4.2): `vin` means the identifier is a VIN; without it, an ID, slug or custom slug. */
export const CAR_LOOKUP_BYS = ['vin'] as const;
export type CarLookupBy = (typeof CAR_LOOKUP_BYS)[number];
/** What the id of a car lookup is, for each way of reading it. */
export const CAR_LOOKUP_BY_MEANINGS: Readonly<Record<CarLookupBy, string>> = {
  vin: 'The id is the car’s vehicle identification number.',
};

/** The `where` that finds the car named by `identifier`. */
export function carWhere(identifier: string, lookupBy?: CarLookupBy | null): Prisma.CarWhereInput {
  const text = identifier.trim();
  if (lookupBy === 'vin') return { vin: text.toUpperCase() };
  const byText: Prisma.CarWhereInput[] = [{ slug: text }, { custom_slug: text }];
  const id = rowIdFromText(text);
  if (id !== null) byText.unshift({ id });
  return { OR: byText };
}

/** The car's `select`ed columns, or the car_not_found error. The newest car wins when several share a VIN. */
export async function findCar<Select extends Prisma.CarSelect & { id: true }>(
  db: Db,
  identifier: string,
  lookupBy: CarLookupBy | null | undefined,
  select: Select,
): Promise<Prisma.CarGetPayload<{ select: Select }>> {
  const car = await db.car.findFirst({ where: carWhere(identifier, lookupBy), select, orderBy: { created_at: 'desc' } });
  if (!car) throw notFound('car');
  return car;
}

/** The car's id, or the car_not_found error. */
export async function findCarId(db: Db, identifier: string, lookupBy?: CarLookupBy | null): Promise<number> {
  return (await findCar(db, identifier, lookupBy, { id: true })).id;
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
    const elsewhere = await clients.unscopedDb.car.findFirst({ where: carWhere(identifier, lookupBy), select: { id: true } });
    throw elsewhere ? invalidDealership() : error;
  }
}

/** findCarForKey's car id. */
export async function findCarIdForKey(clients: DbClients, identifier: string, lookupBy?: CarLookupBy | null): Promise<number> {
  return (await findCarForKey(clients, identifier, lookupBy, { id: true })).id;
}
