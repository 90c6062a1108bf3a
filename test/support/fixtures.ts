// Typed factories for test data: each makes one valid row with unique slugs and takes overrides.
import { issueKey } from '../../src/auth/api-keys.ts';
import type { Permission } from '../../src/auth/permissions.ts';
import type { Db, Prisma } from '../../src/db/client.ts';

let sequence = 0;
const next = (): number => {
  sequence += 1;
  return sequence;
};

export async function makeManufacturer(db: Db, data: Partial<Prisma.ManufacturerUncheckedCreateInput> = {}) {
  const n = next();
  return db.manufacturer.create({ data: { name: `Maker ${n}`, slug: `maker-${n}`, ...data } });
}

export async function makeDealership(db: Db, data: Partial<Prisma.DealershipUncheckedCreateInput> = {}) {
  const n = next();
  return db.dealership.create({ data: { name: `Dealer ${n}`, slug: `dealer-${n}`, ...data } });
}

export async function makeWebsite(db: Db, dealershipId: number, data: Partial<Prisma.WebsiteUncheckedCreateInput> = {}) {
  const n = next();
  return db.website.create({
    data: { dealership_id: dealershipId, name: `Site ${n}`, slug: `site-${n}`, url: `https://site-${n}.example.com.au`, ...data },
  });
}

export async function makeLocation(db: Db, dealershipId: number, data: Partial<Prisma.LocationUncheckedCreateInput> = {}) {
  const n = next();
  return db.location.create({ data: { dealership_id: dealershipId, name: `Yard ${n}`, location_type: 'sales', ...data } });
}

export async function makeUser(db: Db, dealershipIds: number[], data: Partial<Prisma.UserUncheckedCreateInput> = {}) {
  const n = next();
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

export async function makeCar(db: Db, dealershipId: number, data: Partial<Prisma.CarUncheckedCreateInput> = {}) {
  const n = next();
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
    name: options.name ?? `key ${next()}`,
    permissions: options.permissions ?? [],
    dealershipIds: options.dealershipIds ?? [],
    expiresAt: options.expiresAt ?? null,
  });
}
