// Reserving a reserved car is 409; releasing is idempotent.
import type { DbClients } from '../db/scoped.ts';
import { conflict } from '../errors.ts';
import { findCarForKey } from './cars.ts';
import { publishCommitted, recordEvent, type RecordEventPublisher } from './record-events.ts';

export const carAlreadyReserved = () => conflict('car_already_reserved', 'The car is already reserved.');

export async function setCarReserved(
  clients: DbClients & { events: RecordEventPublisher },
  input: { id: string; reserved: boolean },
  now: Date,
): Promise<number> {
  const { reserved } = input;
  const { id: carId } = await findCarForKey(clients, input.id, null, { id: true });
  const event = await clients.db.$transaction(async (tx) => {
    // Checked in the same statement that writes, so of concurrent reservations exactly one finds the car free.
    const { count } = await tx.car.updateMany({
      where: { id: carId, reserved: !reserved },
      data: { reserved, reserved_at: reserved ? now : null, updated_at: now },
    });
    if (count === 0 && reserved) throw carAlreadyReserved();
    // Releasing a free car changes nothing, so it tells nobody.
    if (count === 0) return null;
    const car = await tx.car.findUniqueOrThrow({ where: { id: carId }, select: { dealership_id: true } });
    return recordEvent(tx, { type: reserved ? 'car.reserved' : 'car.released', dealershipId: car.dealership_id, recordId: carId }, now);
  });
  publishCommitted(clients.events, [event]);
  return carId;
}
