// Locked fields are skipped silently and listed in `skipped_fields`: locks keep a feed re-sending the
// whole record from overwriting the dealership's edits, so refusing would break every feed.
import type { Actor } from '../auth/api-keys.ts';
import { reachesDealership } from '../auth/scope.ts';
import { isUniqueViolation, type Prisma } from '../db/client.ts';
import type { ScopedDb, ScopedTx } from '../db/scoped.ts';
import { conflict, invalidInput, notFound } from '../errors.ts';
import { LOCKABLE_CAR_FIELDS, carRecordAt, type CarInput } from './car-record.ts';
import { parseRecord } from './input-records.ts';
import { jsonStrings } from './json-columns.ts';
import { publishCommitted, recordEvent, type RecordEventPublisher } from './record-events.ts';
import { insertRows } from '../db/insert-rows.ts';

export const stocknumTaken = (stocknum: string) =>
  conflict('stocknum_taken', `Another car of the dealership already has stock number "${stocknum}".`);

async function replacePhotos(
  tx: ScopedTx,
  carId: number,
  current: { id: number; url: string; position: number }[],
  urls: string[],
  now: Date,
): Promise<void> {
  const kept = new Map<string, { id: number; position: number }>();
  for (const photo of current) if (!kept.has(photo.url)) kept.set(photo.url, photo);
  const wanted = new Set(urls);
  const gone = current.filter((photo) => !wanted.has(photo.url) || kept.get(photo.url)?.id !== photo.id).map((photo) => photo.id);
  if (gone.length > 0) await tx.carPhoto.deleteMany({ where: { id: { in: gone } } });
  const created: { car_id: number; url: string; position: number; created_at: Date }[] = [];
  for (const [position, url] of urls.entries()) {
    const photo = kept.get(url);
    if (!photo) created.push({ car_id: carId, url, position, created_at: now });
    else if (photo.position !== position) await tx.carPhoto.update({ where: { id: photo.id }, data: { position } });
  }
  await insertRows(tx, 'car_photos', created);
}

export type UpdateCarResult = Awaited<ReturnType<typeof updateCar>>;

/** With match_existing_car_by_stocknum, the car with the body's stocknum in its dealership, whatever `id` says. */
export async function updateCar(db: ScopedDb, actor: Actor, input: { id: number; car: CarInput }, now: Date, events: RecordEventPublisher) {
  const { images, match_existing_car_by_stocknum, ...changes } = parseRecord(carRecordAt(now), input.car, 'car');
  const supplied = LOCKABLE_CAR_FIELDS.filter((name) => input.car[name] !== undefined);
  const targetDealershipId = input.car.dealership_id;
  // A dealership that does not exist answers the same as one the key cannot reach.
  const noSuchDealership = () => invalidInput('car.dealership_id', 'is not a dealership this API key can access');
  if (!reachesDealership(actor, targetDealershipId)) throw noSuchDealership();

  try {
    const { result, event } = await db.$transaction(async (tx) => {
      const dealership = await tx.dealership.findUnique({ where: { id: targetDealershipId }, select: { id: true } });
      if (!dealership) throw noSuchDealership();

      const where: Prisma.CarWhereInput = match_existing_car_by_stocknum
        ? { dealership_id: targetDealershipId, stocknum: input.car.stocknum.trim() }
        : { id: input.id };
      // Writing first takes the row lock before the car is read, so concurrent updates cannot lose a price change.
      const touched = await tx.car.updateMany({ where, data: { updated_at: now } });
      if (touched.count === 0) throw notFound('car');
      const current = await tx.car.findFirstOrThrow({
        where,
        select: {
          id: true,
          dealership_id: true,
          location_id: true,
          stocknum: true,
          dapprice: true,
          egcprice: true,
          locked_fields: true,
          photos: { select: { id: true, url: true, position: true }, orderBy: [{ position: 'asc' }, { id: 'asc' }] },
        },
      });

      const locked = new Set(jsonStrings(current.locked_fields));
      const skippedFields = supplied.filter((name) => locked.has(name));
      const data: Partial<typeof changes> = { ...changes };
      for (const name of skippedFields) delete data[name as keyof typeof data];

      const dealershipId = data.dealership_id ?? current.dealership_id;
      const locationId = data.location_id !== undefined ? data.location_id : current.location_id;
      if (locationId !== null && (locationId !== current.location_id || dealershipId !== current.dealership_id)) {
        const location = await tx.location.findFirst({ where: { id: locationId, dealership_id: dealershipId }, select: { id: true } });
        if (!location) {
          const field = data.location_id !== undefined ? 'car.location_id' : 'car.dealership_id';
          throw invalidInput(field, `location ${locationId} is not a location of dealership ${dealershipId}`);
        }
      }
      const stocknum = data.stocknum ?? current.stocknum;
      if (stocknum !== current.stocknum || dealershipId !== current.dealership_id) {
        const clash = await tx.car.findFirst({
          where: { dealership_id: dealershipId, stocknum, id: { not: current.id } },
          select: { id: true },
        });
        if (clash) throw stocknumTaken(stocknum);
      }

      const updated = await tx.car.update({
        where: { id: current.id },
        data: { ...data, updated_at: now },
        select: { dapprice: true, egcprice: true },
      });
      if (updated.dapprice !== current.dapprice || updated.egcprice !== current.egcprice) {
        await tx.carPriceChange.create({
          data: { car_id: current.id, dapprice: updated.dapprice, egcprice: updated.egcprice, created_at: now },
        });
      }
      if (images && !locked.has('images')) await replacePhotos(tx, current.id, current.photos, images, now);
      const event = await recordEvent(tx, { type: 'car.updated', dealershipId, recordId: current.id }, now);
      return { result: { carId: current.id, skippedFields }, event };
    });
    publishCommitted(events, [event]);
    return result;
  } catch (error) {
    // Two requests giving two cars one stock number at once: the unique index decides.
    if (isUniqueViolation(error)) throw stocknumTaken(input.car.stocknum.trim());
    throw error;
  }
}
