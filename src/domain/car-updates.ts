// Spec 4.1: updating a car record (PUT /api/cars/{id}, Mutation.update_car).
//
// The body is the whole record (a PUT): stocknum, dealership_id, make, model and year are required;
// every other field is optional, absent = unchanged, explicit null = cleared (an empty list for
// list fields). Fields that cannot be empty (the flags, status, car_type, item_type) refuse null.
// Fields named in the car's stored `locked_fields` are left as they are, silently, and the answer
// lists them in `skipped_fields`: locks are set by the dealership so that a feed re-sending the
// whole record does not overwrite its own edits, so refusing the request would break every feed.
// Everything is written in one transaction: a refused request leaves the car exactly as it was.
import type { Actor } from '../auth/api-keys.ts';
import { reachesDealership } from '../auth/scope.ts';
import { isUniqueViolation, type Db, type Prisma } from '../db/client.ts';
import { conflict, invalidInput, notFound } from '../errors.ts';
import { parseDayMonthYear } from './dates.ts';
import { jsonStrings } from './json-columns.ts';

export interface CarCustomAttribute {
  name: string;
  value: string;
}

/** The fields of spec 2.1 plus the sample-only ones, with the wire names. */
export interface CarInput {
  stocknum: string;
  dealership_id: number;
  make: string;
  model: string;
  year: number;
  rego?: string | null;
  rego_expiry?: string | null;
  rego_state?: string | null;
  vin?: string | null;
  location_id?: number | null;
  odometer?: number | null;
  dapprice?: number | null;
  egcprice?: number | null;
  advertised_price?: string | null;
  badge?: string | null;
  series?: string | null;
  body?: string | null;
  colour?: string | null;
  interior_colour?: string | null;
  transmission?: string | null;
  fuel?: string | null;
  drive?: string | null;
  doors?: number | null;
  seats?: number | null;
  redbook_code?: string | null;
  nvic_code?: string | null;
  dealercomments?: string | null;
  features?: readonly string[] | null;
  status?: string | null;
  car_type?: string | null;
  item_type?: string | null;
  compliance_date?: string | null;
  build_date?: string | null;
  external_video_url?: string | null;
  show_on_dealer_website?: boolean | null;
  load_to_carsales?: boolean | null;
  load_to_autotrader?: boolean | null;
  load_to_drive?: boolean | null;
  grey_market_import?: boolean | null;
  subscription_plan_id?: string | null;
  certified?: boolean | null;
  custom_attributes?: readonly CarCustomAttribute[] | null;
  locked_fields?: readonly string[] | null;
  images?: readonly string[] | null;
  match_existing_car_by_stocknum?: boolean | null;
}

/**
 * The car fields a dealership can lock. `locked_fields` itself is not one (it has to stay writable
 * to unlock anything), nor is `match_existing_car_by_stocknum`, which says how to find the car.
 */
export const LOCKABLE_CAR_FIELDS = [
  'rego', 'rego_expiry', 'rego_state', 'stocknum', 'vin', 'dealership_id', 'location_id', 'odometer', 'dapprice',
  'egcprice', 'advertised_price', 'make', 'model', 'badge', 'series', 'year', 'body', 'colour', 'interior_colour',
  'transmission', 'fuel', 'drive', 'doors', 'seats', 'redbook_code', 'nvic_code', 'dealercomments', 'features',
  'status', 'car_type', 'item_type', 'compliance_date', 'build_date', 'external_video_url', 'show_on_dealer_website',
  'load_to_carsales', 'load_to_autotrader', 'load_to_drive', 'grey_market_import', 'subscription_plan_id', 'certified',
  'custom_attributes', 'images',
] as const satisfies readonly (keyof CarInput)[];

export type LockableCarField = (typeof LOCKABLE_CAR_FIELDS)[number];
// Compile-time check that a field added to CarInput is also added to the list above.
type Unlisted = Exclude<keyof CarInput, LockableCarField | 'locked_fields' | 'match_existing_car_by_stocknum'>;
const everyFieldListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyFieldListed;

const lockable = new Set<string>(LOCKABLE_CAR_FIELDS);

const OPTIONAL_TEXT = [
  'rego', 'rego_state', 'advertised_price', 'badge', 'series', 'body', 'colour', 'interior_colour', 'transmission',
  'fuel', 'drive', 'redbook_code', 'nvic_code', 'dealercomments', 'subscription_plan_id',
] as const satisfies readonly (keyof CarInput)[];
const REQUIRED_TEXT = ['stocknum', 'make', 'model'] as const satisfies readonly (keyof CarInput)[];
const NON_NULL_TEXT = ['status', 'car_type', 'item_type'] as const satisfies readonly (keyof CarInput)[];
const COUNTS = ['odometer', 'dapprice', 'egcprice', 'doors', 'seats'] as const satisfies readonly (keyof CarInput)[];
const DATES = ['rego_expiry', 'compliance_date', 'build_date'] as const satisfies readonly (keyof CarInput)[];
const FLAGS = [
  'show_on_dealer_website', 'load_to_carsales', 'load_to_autotrader', 'load_to_drive', 'grey_market_import', 'certified',
] as const satisfies readonly (keyof CarInput)[];

/** The first model year of a motor car; the latest accepted is two years on (models come out early). */
const FIRST_MODEL_YEAR = 1886;
const MAX_URL_LENGTH = 2048;

/** An absolute http(s) URL in its canonical form. The server only stores it, it never fetches it. */
export function httpUrl(text: string, field: string): string {
  const trimmed = text.trim();
  const reason = 'must be an absolute http:// or https:// URL';
  if (!/^https?:\/\//i.test(trimmed)) throw invalidInput(field, reason);
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw invalidInput(field, reason);
  }
  if (!url.hostname) throw invalidInput(field, reason);
  if (url.username || url.password) throw invalidInput(field, 'must not carry a user name or password');
  if (url.href.length > MAX_URL_LENGTH) throw invalidInput(field, `must be at most ${MAX_URL_LENGTH} characters`);
  return url.href;
}

/** A validated update: the columns to write (only those supplied) and the photo URLs, if supplied. */
export interface CarChanges {
  data: Prisma.CarUncheckedUpdateInput;
  images?: string[];
  /** The supplied fields, by input name: the ones a lock can skip. */
  supplied: LockableCarField[];
  matchByStocknum: boolean;
}

function requiredText(value: string, field: string): string {
  const trimmed = value.trim();
  if (trimmed === '') throw invalidInput(field, 'must not be blank');
  return trimmed;
}

function notNull<T>(value: T | null, field: string): T {
  if (value === null) throw invalidInput(field, 'cannot be null');
  return value;
}

/** Checks every supplied field without touching the database; errors name `car.<field>`. */
export function validateCarInput(car: CarInput, now: Date): CarChanges {
  const data: Prisma.CarUncheckedUpdateInput = {};
  const field = (name: string) => `car.${name}`;

  for (const name of REQUIRED_TEXT) data[name] = requiredText(car[name], field(name));
  if (car.dealership_id < 1) throw invalidInput(field('dealership_id'), 'must be a dealership id');
  data.dealership_id = car.dealership_id;
  const latestYear = now.getUTCFullYear() + 2;
  if (car.year < FIRST_MODEL_YEAR || car.year > latestYear) {
    throw invalidInput(field('year'), `must be between ${FIRST_MODEL_YEAR} and ${latestYear}`);
  }
  data.year = car.year;

  // Blank optional text means "no value", as feeds often send "" for an unknown field.
  for (const name of OPTIONAL_TEXT) {
    const value = car[name];
    if (value !== undefined) data[name] = value === null || value.trim() === '' ? null : value.trim();
  }
  if (car.vin !== undefined) {
    // Stored upper-case: lookup_by=vin (src/domain/cars.ts) matches upper-case.
    const vin = car.vin?.trim().toUpperCase() ?? '';
    if (/\s/.test(vin)) throw invalidInput(field('vin'), 'must not contain spaces');
    data.vin = vin === '' ? null : vin;
  }
  for (const name of NON_NULL_TEXT) {
    const value = car[name];
    if (value !== undefined) data[name] = requiredText(notNull(value, field(name)), field(name));
  }
  for (const name of COUNTS) {
    const value = car[name];
    if (value === undefined) continue;
    if (value !== null && value < 0) throw invalidInput(field(name), 'must not be negative');
    data[name] = value;
  }
  if (car.location_id !== undefined) data.location_id = car.location_id;
  for (const name of DATES) {
    const value = car[name];
    if (value !== undefined) data[name] = value === null || value.trim() === '' ? null : parseDayMonthYear(value, field(name));
  }
  if (car.external_video_url !== undefined) {
    const value = car.external_video_url;
    data.external_video_url = value === null || value.trim() === '' ? null : httpUrl(value, field('external_video_url'));
  }
  for (const name of FLAGS) {
    const value = car[name];
    if (value !== undefined) data[name] = notNull(value, field(name));
  }
  if (car.features !== undefined) {
    data.features = (car.features ?? []).map((feature, index) => requiredText(feature, field(`features[${index}]`)));
  }
  if (car.custom_attributes !== undefined) {
    const seen = new Set<string>();
    data.custom_attributes = (car.custom_attributes ?? []).map((attribute, index) => {
      const name = requiredText(attribute.name, field(`custom_attributes[${index}].name`));
      if (seen.has(name)) throw invalidInput(field(`custom_attributes[${index}].name`), `repeats the attribute "${name}"`);
      seen.add(name);
      return { name, value: attribute.value };
    });
  }
  if (car.locked_fields !== undefined) {
    const names = (car.locked_fields ?? []).map((name, index) => {
      if (!lockable.has(name)) {
        throw invalidInput(field(`locked_fields[${index}]`), `"${name}" is not a car field that can be locked (one of: ${LOCKABLE_CAR_FIELDS.join(', ')})`);
      }
      return name;
    });
    data.locked_fields = [...new Set(names)];
  }
  let images: string[] | undefined;
  if (car.images !== undefined) {
    const seen = new Map<string, number>();
    images = (car.images ?? []).map((text, index) => {
      const url = httpUrl(text, field(`images[${index}]`));
      const first = seen.get(url);
      if (first !== undefined) throw invalidInput(field(`images[${index}]`), `repeats car.images[${first}]`);
      seen.set(url, index);
      return url;
    });
  }

  const supplied = LOCKABLE_CAR_FIELDS.filter((name) => car[name] !== undefined);
  return { data, ...(images ? { images } : {}), supplied, matchByStocknum: car.match_existing_car_by_stocknum === true };
}

const stocknumTaken = (stocknum: string) =>
  conflict('stocknum_taken', `Another car of the dealership already has stock number "${stocknum}".`);

/** Replaces the car's photos by `urls`, in order; a photo whose URL stays keeps its row and its created_at. */
async function replacePhotos(
  tx: Prisma.TransactionClient,
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
  const created: Prisma.CarPhotoCreateManyInput[] = [];
  for (const [position, url] of urls.entries()) {
    const photo = kept.get(url);
    if (!photo) created.push({ car_id: carId, url, position, created_at: now });
    else if (photo.position !== position) await tx.carPhoto.update({ where: { id: photo.id }, data: { position } });
  }
  if (created.length > 0) await tx.carPhoto.createMany({ data: created });
}

export interface UpdateCarResult {
  carId: number;
  /** Supplied fields left unchanged because the car has them locked, in the order of spec 2.1. */
  skippedFields: LockableCarField[];
}

/**
 * Updates the car `id` (or, with match_existing_car_by_stocknum, the car with the body's stocknum
 * in the body's dealership, whatever `id` says) among the cars the actor reaches.
 */
export async function updateCar(db: Db, actor: Actor, input: { id: number; car: CarInput }, now: Date): Promise<UpdateCarResult> {
  const changes = validateCarInput(input.car, now);
  const targetDealershipId = input.car.dealership_id;
  // A car never moves to, and is never matched in, a dealership the key cannot reach; a dealership
  // that does not exist answers the same.
  const noSuchDealership = () => invalidInput('car.dealership_id', 'is not a dealership this API key can access');
  if (!reachesDealership(actor, targetDealershipId)) throw noSuchDealership();

  try {
    return await db.$transaction(async (tx) => {
      const dealership = await tx.dealership.findUnique({ where: { id: targetDealershipId }, select: { id: true } });
      if (!dealership) throw noSuchDealership();

      const where: Prisma.CarWhereInput = changes.matchByStocknum
        ? { dealership_id: targetDealershipId, stocknum: input.car.stocknum.trim() }
        : { id: input.id };
      // Writing first takes the row lock (PostgreSQL) before the car is read, so two concurrent
      // updates cannot both compare against the same old prices and lose a price change.
      const touched = await tx.car.updateMany({ where, data: { updated_at: now } });
      if (touched.count === 0) throw notFound('car');
      const current = await tx.car.findFirstOrThrow({
        where,
        select: {
          id: true, dealership_id: true, location_id: true, stocknum: true, dapprice: true, egcprice: true, locked_fields: true,
          photos: { select: { id: true, url: true, position: true }, orderBy: [{ position: 'asc' }, { id: 'asc' }] },
        },
      });

      const locked = new Set(jsonStrings(current.locked_fields));
      const skippedFields = changes.supplied.filter((name) => locked.has(name));
      const data: Prisma.CarUncheckedUpdateInput = { ...changes.data };
      for (const name of skippedFields) delete data[name as keyof Prisma.CarUncheckedUpdateInput];
      const images = locked.has('images') ? undefined : changes.images;

      const dealershipId = (data.dealership_id as number | undefined) ?? current.dealership_id;
      const locationId = data.location_id !== undefined ? (data.location_id as number | null) : current.location_id;
      if (locationId !== null && (locationId !== current.location_id || dealershipId !== current.dealership_id)) {
        const location = await tx.location.findFirst({ where: { id: locationId, dealership_id: dealershipId }, select: { id: true } });
        if (!location) {
          const field = data.location_id !== undefined ? 'car.location_id' : 'car.dealership_id';
          throw invalidInput(field, `location ${locationId} is not a location of dealership ${dealershipId}`);
        }
      }
      const stocknum = (data.stocknum as string | undefined) ?? current.stocknum;
      if (stocknum !== current.stocknum || dealershipId !== current.dealership_id) {
        const clash = await tx.car.findFirst({ where: { dealership_id: dealershipId, stocknum, id: { not: current.id } }, select: { id: true } });
        if (clash) throw stocknumTaken(stocknum);
      }

      const updated = await tx.car.update({
        where: { id: current.id },
        data: { ...data, updated_at: now },
        select: { dapprice: true, egcprice: true },
      });
      if (updated.dapprice !== current.dapprice || updated.egcprice !== current.egcprice) {
        await tx.carPriceChange.create({ data: { car_id: current.id, dapprice: updated.dapprice, egcprice: updated.egcprice, created_at: now } });
      }
      if (images) await replacePhotos(tx, current.id, current.photos, images, now);
      return { carId: current.id, skippedFields };
    });
  } catch (error) {
    // Two requests giving two cars one stock number at once: the unique index decides.
    if (isUniqueViolation(error)) throw stocknumTaken(input.car.stocknum.trim());
    throw error;
  }
}
