// Reserving a reserved car is 409; releasing is idempotent.
import type { DbClients, ScopedTx } from '../db/scoped.ts';
import { conflict } from '../errors.ts';
import { findCarForKey } from './cars.ts';
import { publishCommitted, recordEvent, type RecordEvent, type RecordEventPublisher } from './record-events.ts';

export const carAlreadyReserved = () => conflict('car_already_reserved', 'The car is already reserved.');

export async function setCarReserved(
  clients: DbClients & { events: RecordEventPublisher },
  input: { id: string; reserved: boolean },
  now: Date,
): Promise<number> {
  const { db } = clients;
  const { id: carId } = await findCarForKey(clients, input.id, null, { id: true });
  const event = await db.$transaction(async (tx): Promise<RecordEvent | null> => {
    if (!input.reserved) {
      // Releasing a free car changes nothing, so it tells nobody.
      const { count } = await tx.car.updateMany({
        where: { id: carId, reserved: true },
        data: { reserved: false, reserved_at: null, updated_at: now },
      });
      return count === 0 ? null : recordCarEvent(tx, 'car.released', carId, now);
    }
    // Checked in the same statement that writes, so of concurrent reservations exactly one finds the car free.
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
