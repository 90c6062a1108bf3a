// A dealership the key does not reach answers 404, exactly as one that does not exist.
import { z } from 'zod';
import type { ScopedDb } from '../db/scoped.ts';
import { Prisma } from '../generated/prisma/sqlite/client.ts';
import { apiError, notFound } from '../errors.ts';
import {
  boundingBox,
  distanceKm,
  distanceKmSql,
  inBoxSql,
  sqlDouble as double,
  POSTCODE_PATTERN,
  postcodeText,
  type GeoPoint,
  type Geocoder,
} from './geocoding.ts';
import { parseRecord } from './input-records.ts';
import { jsonStrings } from './json-columns.ts';
import { type BoundedList, boundedList, WHOLE_LIST_TAKE } from './whole-lists.ts';

export async function requireDealershipId(db: ScopedDb, by: { id: number } | { slug: string }): Promise<number> {
  const dealership = await db.dealership.findFirst({
    where: 'id' in by ? { id: by.id } : { slug: by.slug.trim() },
    select: { id: true },
  });
  if (!dealership) throw notFound('dealership');
  return dealership.id;
}

export type PartnerDealershipMapping = Pick<Prisma.LocationModel, 'id' | 'name' | 'dealership_id'> & {
  dealership_name: Prisma.DealershipModel['name'];
  partner_dealership_id: string;
  partner_account_id: string;
};

/** Both partner ids set and not blank, since the spec makes both required in every entry. */
export async function partnerDealershipMappings(db: ScopedDb): Promise<BoundedList<PartnerDealershipMapping>> {
  const mappings: PartnerDealershipMapping[] = [];
  let after: number | undefined;
  // A row whose partner ids are only spaces is no mapping: more rows are read by keyset until the list is full.
  for (;;) {
    const take = WHOLE_LIST_TAKE - mappings.length;
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
      take,
      ...(after === undefined ? {} : { cursor: { id: after }, skip: 1 }),
    });
    for (const { dealership, ...location } of locations) {
      const partner_dealership_id = location.partner_dealership_id?.trim();
      const partner_account_id = location.partner_account_id?.trim();
      if (!partner_dealership_id || !partner_account_id) continue;
      mappings.push({ ...location, dealership_name: dealership.name, partner_dealership_id, partner_account_id });
    }
    const last = locations.at(-1);
    if (!last || locations.length < take || mappings.length >= WHOLE_LIST_TAKE) break;
    after = last.id;
  }
  return boundedList(mappings);
}

export type InstalledPlugin = Pick<Prisma.PluginModel, 'name' | 'slug'> &
  Pick<Prisma.DealershipPluginModel, 'installed_at' | 'trial'> & { categories: string[] };

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

export const POSTCODE_SEARCH_LIMIT = 5;
export const POSTCODE_SEARCH_MAX_LIMIT = 20;

export type RankedLocation = Awaited<ReturnType<typeof rankLocationsByPostcode>>[number];

const geolocationError = (reason: string): Error =>
  apiError('BAD_USER_INPUT', 'geolocation_error', `postcode: ${reason}`, { field: 'postcode' });
export const unknownPostcode = (postcode: string): Error => geolocationError(`no place is known for ${postcode}`);

/** The trimmed name as a whole word of a lower-cased text; null for a blank name, which names nothing. */
function brandWord(brand: string): RegExp | null {
  const word = brand
    .trim()
    .toLowerCase()
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return word === '' ? null : new RegExp(`(?<![\\p{L}\\p{N}])${word}(?![\\p{L}\\p{N}])`, 'u');
}

const namesBrand = (name: string, brand: RegExp | null): boolean => brand?.test(name.toLowerCase()) ?? false;

const LIMIT_RANGE = (issue: { input?: unknown }) =>
  `must be a whole number from 1 to ${POSTCODE_SEARCH_MAX_LIMIT}, got ${String(issue.input)}`;

// A missing or malformed postcode is the search's own geolocation_error, which is why the graph does not require it.
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

/** Locations the searcher could not be sent on to (no contact details, no website) are left out; `limit` counts only those answered. */
export async function rankLocationsByPostcode(
  db: ScopedDb,
  input: { manufacturerId: number; postcode?: string | null; limit?: number | null },
  geocoder: Geocoder,
) {
  const limit = parseRecord(postcodeSearchRequest.shape.limit, input.limit, 'limit') ?? POSTCODE_SEARCH_LIMIT;
  // A missing postcode is the same failure as a malformed one: there is nothing to locate.
  const postcode = input.postcode?.trim() ?? '';
  if (!POSTCODE_PATTERN.test(postcode)) {
    throw geolocationError(input.postcode ? `"${input.postcode}" is not a four-digit Australian postcode` : 'is required');
  }
  // The whole catalogue's manufacturers: their names tell which showroom sells which brand.
  const manufacturers = await db.manufacturer.findMany({ select: { id: true, name: true } });
  const index = manufacturers.findIndex((candidate) => candidate.id === input.manufacturerId);
  if (index < 0) throw notFound('manufacturer');
  const brands = manufacturers.map((candidate) => brandWord(candidate.name));
  const brand = brands[index] ?? null;
  const origin = await geocoder.locate(postcode);
  if (!origin) throw unknownPostcode(postcode);

  // The tenant boundary, through the scoped client; showrooms without coordinates are placed at their postcode's centre.
  const dealerships = await db.dealership.findMany({
    where: { manufacturers: { some: { manufacturer_id: input.manufacturerId } }, websites: { some: {} } },
    select: {
      id: true,
      locations: {
        where: { ...RANKABLE_LOCATION, address: { is: { OR: [{ lat: null }, { long: null }] } } },
        select: { id: true, name: true, dealership_id: true, website_id: true, address: { select: { postcode: true } } },
      },
    },
  });
  if (dealerships.length === 0) return [];
  // A location records no brand: a showroom naming another manufacturer and not this one sells that brand; one naming none sells all.
  const sells = ({ name }: { name: string }): boolean =>
    namesBrand(name, brand) || !brands.some((other) => other !== brand && namesBrand(name, other));

  const centres = new Map<number, GeoPoint | null>();
  const placedByPostcode: RankedRow[] = [];
  for (const { address, ...location } of dealerships.flatMap((dealership) => dealership.locations)) {
    if (!address || !sells(location)) continue;
    if (!centres.has(address.postcode)) centres.set(address.postcode, await geocoder.locate(postcodeText(address.postcode)));
    const centre = centres.get(address.postcode);
    if (centre) placedByPostcode.push({ ...location, ...centre, distance: distanceKm(origin, centre) });
  }
  placedByPostcode.sort(byDistance);

  const search: RankingSearch = { origin, dealershipIds: dealerships.map((dealership) => dealership.id) };
  const answered = await nearestSelling(db, search, limit, sells, placedByPostcode);
  if (answered.length === 0) return [];

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

const RANKABLE_LOCATION = { location_type: 'sales', contact_detail: { isNot: null } } as const satisfies Prisma.LocationWhereInput;

interface RankingSearch {
  origin: GeoPoint;
  dealershipIds: readonly number[];
}

type RankedRow = Pick<Prisma.LocationModel, 'id' | 'name' | 'dealership_id' | 'website_id'> & GeoPoint & { distance: number };

const byDistance = (a: { distance: number; id: number }, b: { distance: number; id: number }): number =>
  a.distance - b.distance || a.id - b.id;

const SEARCH_RADII_KM = [100, 400, 1_600, Number.POSITIVE_INFINITY] as const;

/** The radius is widened until the answer's last showroom is no farther than the farthest ranked: every unread one is farther. */
async function nearestSelling(
  db: ScopedDb,
  search: RankingSearch,
  limit: number,
  sells: (location: RankedRow) => boolean,
  placedByPostcode: readonly RankedRow[],
): Promise<RankedRow[]> {
  // Room for a few showrooms of another brand among the nearest before a second statement is needed.
  let take = limit * 2;
  let radius = 0;
  for (;;) {
    const radiusKm = SEARCH_RADII_KM[radius] ?? Number.POSITIVE_INFINITY;
    const rows = await db.$queryRaw<Omit<RankedRow, 'distance'>[]>(rankingStatement(search, radiusKm, take));
    const located = rows.map((row) => ({ ...row, distance: distanceKm(search.origin, row) }));
    const answer = [...located.filter(sells), ...placedByPostcode].sort(byDistance).slice(0, limit);
    const full = rows.length === take;
    const reached = full ? located.at(-1) : { distance: radiusKm, id: Number.POSITIVE_INFINITY };
    const last = answer.at(-1);
    if (!reached || (!full && radiusKm === Number.POSITIVE_INFINITY)) return answer;
    if (answer.length === limit && last && byDistance(last, reached) <= 0) return answer;
    if (full) take *= 4;
    else radius += 1;
  }
}

/** Raw SQL because Prisma cannot order by an expression; the tenant boundary is the scoped client's dealershipIds. */
function rankingStatement(search: RankingSearch, radiusKm: number, take: number): Prisma.Sql {
  const bounded = Number.isFinite(radiusKm);
  const distance = distanceKmSql(search.origin, Prisma.sql`a.lat`, Prisma.sql`a.long`);
  return Prisma.sql`
    SELECT id, name, dealership_id, website_id, lat, long FROM (
      SELECT l.id, l.name, l.dealership_id, l.website_id, a.lat, a.long, ${distance} AS distance_km
      FROM locations l JOIN location_addresses a ON a.location_id = l.id
      WHERE l.dealership_id IN (${Prisma.join(search.dealershipIds)})
        -- RANKABLE_LOCATION
        AND l.location_type = 'sales' AND EXISTS (SELECT 1 FROM location_contact_details c WHERE c.location_id = l.id)
        AND a.lat IS NOT NULL AND a.long IS NOT NULL
        ${bounded ? Prisma.sql`AND ${inBoxSql(boundingBox(search.origin, radiusKm), Prisma.sql`a.lat`, Prisma.sql`a.long`)}` : Prisma.empty}
    ) ranked
    ${bounded ? Prisma.sql`WHERE distance_km <= ${double(radiusKm)}` : Prisma.empty}
    ORDER BY distance_km, id
    LIMIT ${take}`;
}

export function inIdOrder<T extends { id: number }>(rows: readonly T[], ids: readonly number[]): T[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [row] : [];
  });
}
