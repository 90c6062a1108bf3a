// Typed factories for dealership-area rows: contacts' vehicles (contacts: fixtures.ts), location addresses and
// contact details, franchises, plugins. Each makes one valid row and takes overrides.
import type { Db, Prisma } from '../../src/db/client.ts';
import { uniqueNumber } from './fixtures.ts';

export async function makeContactVehicle(db: Db, contactId: number, data: Partial<Prisma.ContactVehicleUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.contactVehicle.create({
    data: { contact_id: contactId, make: 'Mazda', model: 'CX-5', year: 2019, rego: `REG${n}`, ...data },
  });
}

export async function makeAddress(db: Db, locationId: number, data: Partial<Prisma.LocationAddressUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.locationAddress.create({
    data: { location_id: locationId, street: `${n} Main Road`, city: 'Melbourne', state: 'VIC', postcode: 3000, ...data },
  });
}

export async function makeContactDetail(db: Db, locationId: number, data: Partial<Prisma.LocationContactDetailUncheckedCreateInput> = {}) {
  return db.locationContactDetail.create({ data: { location_id: locationId, ...data } });
}

/** The dealership sells the manufacturer's new vehicles. */
export async function franchise(db: Db, dealershipId: number, manufacturerId: number) {
  return db.dealershipManufacturer.create({ data: { dealership_id: dealershipId, manufacturer_id: manufacturerId } });
}

export async function makePlugin(db: Db, data: Partial<Prisma.PluginUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.plugin.create({ data: { name: `Plugin ${n}`, slug: `plugin-${n}`, categories: ['marketing'], ...data } });
}

export async function installPlugin(
  db: Db,
  dealershipId: number,
  pluginId: number,
  data: Partial<Prisma.DealershipPluginUncheckedCreateInput> = {},
) {
  return db.dealershipPlugin.create({ data: { dealership_id: dealershipId, plugin_id: pluginId, ...data } });
}
