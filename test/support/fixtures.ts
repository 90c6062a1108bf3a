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
