// Spec 4.19 and the state table of section 3: a car's reserved flag (PUT /api/v1/cars/{id}/reserve,
// Mutation.reserve_car).
//
// reserved=true reserves a free car and refuses a reserved one (409 car_already_reserved);
// reserved=false releases the reservation and is idempotent (a free car stays free, 200). A car of a
// dealership the key cannot reach is refused with the spec's own "invalid dealership" (403
// invalid_dealership), distinct from a car that does not exist (404); the write itself goes through
// the caller's scoped client (src/db/scoped.ts), so it can only touch the key's own cars.
import type { DbClients, ScopedTx } from '../db/scoped.ts';
import { conflict } from '../errors.ts';
import { findCarIdForKey } from './cars.ts';
import { publishCommitted, recordEvent, type RecordEvent, type RecordEventPublisher } from './record-events.ts';

const carAlreadyReserved = () => conflict('car_already_reserved', 'The car is already reserved.');

/** Sets or clears the reservation of the car named by id, slug or custom slug; returns its id. */
export async function setCarReserved(
  clients: DbClients & { events: RecordEventPublisher },
  input: { id: string; reserved: boolean },
  now: Date,
): Promise<number> {
  const { db } = clients;
  const carId = await findCarIdForKey(clients, input.id);
  const event = await db.$transaction(async (tx): Promise<RecordEvent | null> => {
    if (!input.reserved) {
      // Releasing a free car changes nothing, so it tells nobody.
      const { count } = await tx.car.updateMany({
        where: { id: carId, reserved: true },
        data: { reserved: false, reserved_at: null, updated_at: now },
      });
      return count === 0 ? null : recordCarEvent(tx, 'car.released', carId, now);
    }
    // The condition is checked by the database in the same statement that writes, so of any number
    // of concurrent reservations exactly one finds the car free.
    const { count } = await tx.car.updateMany({
      where: { id: carId, reserved: false },
      data: { reserved: true, reserved_at: now, updated_at: now },
    });
    if (count === 0) throw carAlreadyReserved();
    return recordCarEvent(tx, 'car.reserved', carId, now);
  });
  publishCommitted(clients.events, [event]);
  return carId;
}

async function recordCarEvent(tx: ScopedTx, type: 'car.reserved' | 'car.released', carId: number, now: Date): Promise<RecordEvent> {
  const car = await tx.car.findUniqueOrThrow({ where: { id: carId }, select: { dealership_id: true } });
  return recordEvent(tx, { type, dealershipId: car.dealership_id, recordId: carId }, now);
}
