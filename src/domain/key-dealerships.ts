// The dealerships an API key reaches, with their locations and staff: the list apikey_details answers
// (spec 4.7), on every request of the hottest uncached read there is. The selection the REST path makes
// (and any GraphQL selection of the same or less) always asks the same rows, so those are read as a
// fixed plan of whole rows straight through the driver adapter (src/db/direct-reads.ts): the same
// statements Prisma sends, without Prisma's per-query work. Any other selection (a location's address,
// say) is Prisma's, as it was.
import { isDeepStrictEqual } from 'node:util';
import type { Db } from '../db/client.ts';
import { MOST_LISTED_VALUES, readRows, rowRead } from '../db/direct-reads.ts';
import { reachOf, type ScopedDb } from '../db/scoped.ts';
import { groupBy } from '../lib/group-by.ts';

type DealershipRecord = Awaited<ReturnType<Db['dealership']['findMany']>>[number];

/** The relations the fixed plan reads, exactly as the schema's fields ask Prisma for them. */
const FIXED_INCLUDES = {
  locations: { orderBy: { id: 'asc' } },
  users: { orderBy: { user_id: 'asc' }, select: { user: true } },
} as const;
type Included = keyof typeof FIXED_INCLUDES;

const dealershipRows = rowRead('Dealership', 'dealerships', { filter: 'id', orderBy: 'id' });
const locationRows = rowRead('Location', 'locations', { filter: 'dealership_id', orderBy: 'id' });
const staffLinks = rowRead('DealershipUser', 'dealership_users', {
  filter: 'dealership_id',
  orderBy: 'user_id',
  columns: ['dealership_id', 'user_id'],
});
const userRows = rowRead('User', 'users', { filter: 'id' });

/** The relations a Pothos query includes, when it is one the fixed plan answers; null for any other. */
function fixedPlan(query: Record<string, unknown>): Set<Included> | null {
  const { include, ...rest } = query;
  if (Object.keys(rest).length > 0) return null;
  const included = new Set<Included>();
  if (include === undefined) return included;
  if (typeof include !== 'object' || include === null) return null;
  for (const [relation, asked] of Object.entries(include)) {
    if (!(relation in FIXED_INCLUDES) || !isDeepStrictEqual(asked, FIXED_INCLUDES[relation as Included])) return null;
    included.add(relation as Included);
  }
  return included;
}

/** The fixed plan's rows, in Prisma's shapes; undefined when it cannot run here (the caller asks Prisma). */
async function readFixed(
  db: Db,
  dealershipIds: readonly number[] | null,
  included: Set<Included>,
): Promise<DealershipRecord[] | undefined> {
  const dealerships = await readRows(db, dealershipRows, dealershipIds);
  // No dealership still sends the relations' statements (with an empty list), as Prisma does.
  if (!dealerships || included.size === 0) return dealerships as DealershipRecord[] | undefined;
  const ids = dealerships.map((dealership) => dealership.id as number);
  if (ids.length > MOST_LISTED_VALUES) return undefined;
  // The dealerships' own ids: their locations and staff are in the key's reach by construction.
  const [locations, links] = await Promise.all([
    included.has('locations') ? readRows(db, locationRows, ids) : [],
    included.has('users') ? readRows(db, staffLinks, ids) : [],
  ]);
  if (!locations || !links) return undefined;
  // One id per link, repeats kept: the list Prisma sends.
  const userIds = links.map((link) => link.user_id as number);
  if (userIds.length > MOST_LISTED_VALUES) return undefined;
  const users = included.has('users') ? await readRows(db, userRows, userIds) : [];
  if (!users) return undefined;
  const byDealership = (row: Record<string, unknown>) => row.dealership_id as number;
  const locationsOf = groupBy(locations, byDealership);
  const linksOf = groupBy(links, byDealership);
  const userById = new Map(users.map((user) => [user.id as number, user]));
  for (const dealership of dealerships) {
    const id = dealership.id as number;
    if (included.has('locations')) dealership.locations = locationsOf.get(id) ?? [];
    if (included.has('users'))
      // A fresh object per link, as Prisma returns: one user on two dealerships is two rows of the answer.
      dealership.users = (linksOf.get(id) ?? []).flatMap((link) => {
        const user = userById.get(link.user_id as number);
        return user ? [{ user: { ...user } }] : [];
      });
  }
  return dealerships as DealershipRecord[];
}

/**
 * The dealerships `db` reaches, in id order, with what the Pothos `query` includes. `db` is the caller's
 * scoped client: its reach (src/db/scoped.ts) decides the rows, on the direct path as through Prisma.
 */
export async function keyDealerships(db: ScopedDb, query: Record<string, unknown>): Promise<DealershipRecord[]> {
  const included = fixedPlan(query);
  const reach = included && reachOf(db);
  if (included && reach) {
    const rows = await readFixed(reach.db, reach.dealershipIds, included);
    if (rows) return rows;
  }
  return db.dealership.findMany({ ...query, orderBy: { id: 'asc' } });
}
