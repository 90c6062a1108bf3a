// Typed factories for test data: each makes one valid row with unique slugs and takes overrides.
// The other fixtures-*.ts modules add the rows of one area and number theirs with uniqueNumber.
import { issueKey } from '../../src/auth/api-keys.ts';
import type { Permission } from '../../src/auth/permissions.ts';
import type { Db, Prisma } from '../../src/db/client.ts';

let sequence = 0;
/** A number no fixture of this test file has used yet: every factory's unique names and slugs. */
export const uniqueNumber = (): number => {
  sequence += 1;
  return sequence;
};

export async function makeManufacturer(db: Db, data: Partial<Prisma.ManufacturerUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.manufacturer.create({ data: { name: `Maker ${n}`, slug: `maker-${n}`, ...data } });
}

export async function makeDealership(db: Db, data: Partial<Prisma.DealershipUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.dealership.create({ data: { name: `Dealer ${n}`, slug: `dealer-${n}`, ...data } });
}

export async function makeWebsite(db: Db, dealershipId: number, data: Partial<Prisma.WebsiteUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.website.create({
    data: { dealership_id: dealershipId, name: `Site ${n}`, slug: `site-${n}`, url: `https://site-${n}.example.com.au`, ...data },
  });
}

export async function makeLocation(db: Db, dealershipId: number, data: Partial<Prisma.LocationUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.location.create({ data: { dealership_id: dealershipId, name: `Yard ${n}`, location_type: 'sales', ...data } });
}

export async function makeUser(db: Db, dealershipIds: number[], data: Partial<Prisma.UserUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  const email = data.email ?? `Staff.${n}@Dealer.example.com`;
  return db.user.create({
    data: {
      name: `Staff ${n}`,
      email,
      email_normalized: email.toLowerCase(),
      ...data,
      dealerships: { create: dealershipIds.map((dealership_id) => ({ dealership_id })) },
    },
  });
}

export async function makeContact(db: Db, dealershipId: number, data: Partial<Prisma.ContactUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.contact.create({ data: { dealership_id: dealershipId, first_name: `Person ${n}`, ...data } });
}

export async function makeCar(db: Db, dealershipId: number, data: Partial<Prisma.CarUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.car.create({
    data: {
      dealership_id: dealershipId,
      stocknum: `STK${n}`,
      slug: `2020-toyota-corolla-${n}`,
      make: 'Toyota',
      model: 'Corolla',
      year: 2020,
      ...data,
    },
  });
}

export async function makeKey(
  db: Db,
  options: { permissions?: readonly Permission[]; dealershipIds?: readonly number[]; expiresAt?: Date | null; name?: string } = {},
): Promise<{ id: number; key: string }> {
  return issueKey(db, {
    name: options.name ?? `key ${uniqueNumber()}`,
    permissions: options.permissions ?? [],
    dealershipIds: options.dealershipIds ?? [],
    expiresAt: options.expiresAt ?? null,
  });
}

/** What the tests that walk every write act in: a dealership with a user and a call-tracking number, and a key holding every write permission. */
export interface WritersWorld {
  dealership: { id: number };
  user: { id: number; email: string };
  trackingNumber: string;
  key: string;
  apiKeyId: number;
}

/**
 * Makes a writers' world; `alsoReads` are the read permissions a test's writes need besides (a webhook
 * subscription to an event type needs its record's read permission).
 */
export async function makeWritersWorld(db: Db, alsoReads: readonly Permission[] = []): Promise<WritersWorld> {
  const dealership = await makeDealership(db);
  const user = await makeUser(db, [dealership.id], { email: `writer.${uniqueNumber()}@example.com` });
  const trackingNumber = `+612${String(10_000_000 + uniqueNumber()).slice(-8)}`;
  await makeLocation(db, dealership.id, { tracking_phone: trackingNumber });
  const { key, id: apiKeyId } = await makeKey(db, {
    permissions: [
      'create:lead',
      'update:lead',
      'update:car',
      'reserve:car',
      'create:partner_token',
      'create:lead_event',
      'create:phone_call',
      'manage:webhook',
      ...alsoReads,
    ],
  });
  return { dealership, user, trackingNumber, key, apiKeyId };
}
