// Dealerships as the key sees them: finding one by id or slug (404 when it is not reachable, exactly
// as when it does not exist), its partner mappings (4.14), its plugins (4.17) and the postcode
// search over a manufacturer's sales locations (4.15).
import { z } from 'zod';
import type { Prisma } from '../db/client.ts';
import type { ScopedDb } from '../db/scoped.ts';
import type { Website } from '../generated/prisma/sqlite/client.ts';
import { apiError, notFound } from '../errors.ts';
import { distanceKm, POSTCODE_PATTERN, postcodeText, type GeoPoint, type Geocoder } from './geocoding.ts';
import { parseRecord } from './input-records.ts';
import { jsonStrings } from './json-columns.ts';

/**
 * The id of the dealership with this id or slug, read through the caller's scoped client: one the
 * key does not reach is dealership_not_found, like one that does not exist.
 */
export async function requireDealershipId(db: ScopedDb, by: { id: number } | { slug: string }): Promise<number> {
  const dealership = await db.dealership.findFirst({
    where: 'id' in by ? { id: by.id } : { slug: by.slug.trim() },
    select: { id: true },
  });
  if (!dealership) throw notFound('dealership');
  return dealership.id;
}

/** A location mapped at the partner: its columns, its dealership's name, and both partner ids (set, trimmed). */
export type PartnerDealershipMapping = Pick<Prisma.LocationModel, 'id' | 'name' | 'dealership_id'> & {
  dealership_name: Prisma.DealershipModel['name'];
  partner_dealership_id: string;
  partner_account_id: string;
};

/**
 * One entry per location mapped at the partner: both partner ids set and not blank, since the spec
 * makes both required in every entry. Ordered by dealership id, then location id.
 */
export async function partnerDealershipMappings(db: ScopedDb): Promise<PartnerDealershipMapping[]> {
  const locations = await db.location.findMany({
    where: {
      partner_dealership_id: { not: null },
      partner_account_id: { not: null },
    },
    select: {
      id: true,
      name: true,
      dealership_id: true,
      partner_dealership_id: true,
      partner_account_id: true,
      dealership: { select: { name: true } },
    },
    orderBy: [{ dealership_id: 'asc' }, { id: 'asc' }],
  });
  const mappings: PartnerDealershipMapping[] = [];
  for (const location of locations) {
    const partnerDealershipId = location.partner_dealership_id?.trim();
    const partnerAccountId = location.partner_account_id?.trim();
    if (!partnerDealershipId || !partnerAccountId) continue;
    mappings.push({
      id: location.id,
      name: location.name,
      dealership_id: location.dealership_id,
      dealership_name: location.dealership.name,
      partner_dealership_id: partnerDealershipId,
      partner_account_id: partnerAccountId,
    });
  }
  return mappings;
}

/** A plugin installed on a dealership: the plugin's columns (its categories read from JSON) and the install's. */
export type InstalledPlugin = Pick<Prisma.PluginModel, 'name' | 'slug'> &
  Pick<Prisma.DealershipPluginModel, 'installed_at' | 'trial'> & { categories: string[] };

/** The plugins installed on a dealership the actor reaches, by plugin name (then slug). */
export async function dealershipPlugins(db: ScopedDb, dealershipSlug: string): Promise<InstalledPlugin[]> {
  const dealershipId = await requireDealershipId(db, { slug: dealershipSlug });
  const installs = await db.dealershipPlugin.findMany({
    where: { dealership_id: dealershipId },
    select: { installed_at: true, trial: true, plugin: { select: { name: true, slug: true, categories: true } } },
    orderBy: [{ plugin: { name: 'asc' } }, { plugin: { slug: 'asc' } }],
  });
  return installs.map(({ installed_at, trial, plugin }) => ({
    name: plugin.name,
    slug: plugin.slug,
    categories: jsonStrings(plugin.categories),
    installed_at,
    trial,
  }));
}

/** How many locations the postcode search answers when `limit` is not given, and the most it may ask for. */
export const POSTCODE_SEARCH_LIMIT = 5;
export const POSTCODE_SEARCH_MAX_LIMIT = 20;

export interface RankedLocation {
  id: number;
  /** Great-circle distance from the postcode's centre, in kilometres, to 0.1 km. */
  distance_km: number;
  /** The location's own website, null when it has none (the answer's `website_url`). */
  own_website: Website | null;
  /** Where the searcher is sent: the location's own website, else its dealership's lowest-id one. */
  website: Website;
}

const geolocationError = (reason: string): Error =>
  apiError('BAD_USER_INPUT', 'geolocation_error', `postcode: ${reason}`, { field: 'postcode' });

/** Whether `name` contains `brand` as a whole word, in any case ("North Shore Mazda" names Mazda). */
function namesBrand(name: string, brand: string): boolean {
  const escaped = brand.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return escaped !== '' && new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}($|[^\\p{L}\\p{N}])`, 'iu').test(name);
}

/**
 * Where the manufacturer's new cars are sold: `sales` locations (not service centres, parts
 * counters, used-car yards or head offices) of dealerships franchised for the manufacturer (the
 * query's part). A dealership with several franchises often has a showroom per brand, and a
 * location records no brand: a showroom whose name names another manufacturer and not this one
 * ("North Shore Mazda" of a Toyota and Mazda dealership) sells that brand, so a Toyota search
 * leaves it out; one that names no manufacturer sells all its dealership's franchises.
 */
function sellsManufacturer(locationName: string, manufacturer: string, allManufacturers: readonly string[]): boolean {
  if (namesBrand(locationName, manufacturer)) return true;
  return !allManufacturers.some((brand) => brand.toLowerCase() !== manufacturer.toLowerCase() && namesBrand(locationName, brand));
}

const LIMIT_RANGE = (issue: { input?: unknown }) =>
  `must be a whole number from 1 to ${POSTCODE_SEARCH_MAX_LIMIT}, got ${String(issue.input)}`;

/**
 * The search's arguments (spec 4.15), declared once: postcodeSearchLimit checks `limit`; the
 * postcode is checked by rankLocationsByPostcode with POSTCODE_PATTERN, a missing or malformed one
 * being the search's own geolocation_error (which is why the graph does not require it).
 */
export const postcodeSearchRequest = z.object({
  id: z.int().describe('The manufacturer id.'),
  postcode: z
    .string()
    .regex(POSTCODE_PATTERN)
    .meta({ 'x-references': 'a postcode the geocoder knows (422 geolocation_error otherwise)', examples: ['3000'] })
    .nullish()
    .describe('Four-digit Australian postcode (required); text, so 0800 keeps its leading zero.'),
  limit: z
    .int()
    .min(1, { error: LIMIT_RANGE })
    .max(POSTCODE_SEARCH_MAX_LIMIT, { error: LIMIT_RANGE })
    .nullish()
    .describe(`How many locations to answer: 1 to ${POSTCODE_SEARCH_MAX_LIMIT}, default ${POSTCODE_SEARCH_LIMIT}.`),
});

/** The search's `limit`: absent is POSTCODE_SEARCH_LIMIT; otherwise a whole number from 1 to POSTCODE_SEARCH_MAX_LIMIT. */
function postcodeSearchLimit(limit: number | null | undefined): number {
  return parseRecord(postcodeSearchRequest.shape.limit, limit, 'limit') ?? POSTCODE_SEARCH_LIMIT;
}

/**
 * The manufacturer's sales locations (see sellsManufacturer) closest to the postcode, nearest first
 * (ties by location id), at most `limit` (postcodeSearchLimit). A location is placed by its
 * address's lat/long, else by its address's postcode; a location with neither an address nor a
 * known postcode cannot be ranked and is left out. So is a location the searcher could not be sent
 * on to: one without contact details, or whose dealership has no website at all; `limit` counts
 * only the locations answered. Restricted keys rank only their own dealerships' locations.
 */
export async function rankLocationsByPostcode(
  db: ScopedDb,
  input: { manufacturerId: number; postcode?: string | null; limit?: number | null },
  geocoder: Geocoder,
): Promise<RankedLocation[]> {
  const limit = postcodeSearchLimit(input.limit);
  // A missing postcode is the same failure as a malformed one: there is nothing to locate.
  const postcode = input.postcode?.trim() ?? '';
  if (!POSTCODE_PATTERN.test(postcode)) {
    throw geolocationError(input.postcode ? `"${input.postcode}" is not a four-digit Australian postcode` : 'is required');
  }
  // The whole catalogue's manufacturers (a few dozen rows) in the statement that finds this one:
  // their names tell which showroom sells which brand.
  const manufacturers = await db.manufacturer.findMany({ select: { id: true, name: true } });
  const manufacturer = manufacturers.find((candidate) => candidate.id === input.manufacturerId);
  if (!manufacturer) throw notFound('manufacturer');
  const origin = await geocoder.locate(postcode);
  if (!origin) throw geolocationError(`no place is known for ${postcode}`);

  const candidates = await db.location.findMany({
    where: {
      location_type: 'sales',
      dealership: { manufacturers: { some: { manufacturer_id: manufacturer.id } }, websites: { some: {} } },
      address: { isNot: null },
      contact_detail: { isNot: null },
    },
    select: {
      id: true,
      name: true,
      dealership_id: true,
      website_id: true,
      address: { select: { lat: true, long: true, postcode: true } },
    },
  });
  const brands = manufacturers.map((candidate) => candidate.name);
  const selling = candidates.filter((location) => sellsManufacturer(location.name, manufacturer.name, brands));

  // One lookup per distinct postcode, however many locations share it.
  const byPostcode = new Map<string, Promise<GeoPoint | null>>();
  const pointOf = (address: { lat: number | null; long: number | null; postcode: number }): Promise<GeoPoint | null> => {
    if (address.lat !== null && address.long !== null) return Promise.resolve({ lat: address.lat, long: address.long });
    const text = postcodeText(address.postcode);
    let point = byPostcode.get(text);
    if (!point) {
      point = geocoder.locate(text);
      byPostcode.set(text, point);
    }
    return point;
  };

  const placed = await Promise.all(
    selling.map(async ({ address, ...location }) => {
      const point = address ? await pointOf(address) : null;
      return point ? [{ ...location, distance: distanceKm(origin, point) }] : [];
    }),
  );
  const ranked = placed.flat();
  ranked.sort((a, b) => a.distance - b.distance || a.id - b.id);
  const answered = ranked.slice(0, limit);
  if (answered.length === 0) return [];

  // One statement for every answered location's website: its own, and its dealership's in id order
  // (the first of them is the fallback for a location without one).
  const ownIds = answered.flatMap((location) => (location.website_id === null ? [] : [location.website_id]));
  const websites = await db.website.findMany({
    where: { OR: [{ id: { in: ownIds } }, { dealership_id: { in: [...new Set(answered.map((location) => location.dealership_id))] } }] },
    orderBy: { id: 'asc' },
  });
  return answered.map(({ id, dealership_id, website_id, distance }) => {
    const own = websites.find((site) => site.id === website_id) ?? null;
    const website = own ?? websites.find((site) => site.dealership_id === dealership_id);
    // The query above only keeps locations whose dealership has a website, so this cannot happen.
    if (!website) throw new Error(`location ${id} has no website to answer`);
    return { id, distance_km: Math.round(distance * 10) / 10, own_website: own, website };
  });
}

/** Rows fetched by id, put back in the order of `ids`. */
export function inIdOrder<T extends { id: number }>(rows: readonly T[], ids: readonly number[]): T[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [row] : [];
  });
}
