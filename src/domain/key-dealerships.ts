// The dealerships an API key reaches, with what the caller's selection includes (their locations and
// staff on the REST door): the list apikey_details answers (spec 4.7). Read through the caller's scoped
// client like every other read, so the key's reach is the tenant boundary's one rule (src/db/scoped.ts).
// The spec answers the list whole; a key that reaches every dealership of a platform gets the first
// WHOLE_LIST_BOUND of them and the signal that there are more (src/domain/whole-lists.ts).
import type { Prisma } from '../db/client.ts';
import type { ScopedDb } from '../db/scoped.ts';
import { type BoundedList, boundedList, WHOLE_LIST_TAKE } from './whole-lists.ts';

/** The dealerships `db` reaches, in id order, at most WHOLE_LIST_BOUND, with what `query` includes or selects. */
export async function keyDealerships<Query extends Prisma.DealershipFindManyArgs>(
  db: ScopedDb,
  query: Query,
): Promise<BoundedList<Prisma.DealershipGetPayload<Query>>> {
  const rows = await db.dealership.findMany({ ...query, orderBy: { id: 'asc' }, take: WHOLE_LIST_TAKE });
  return boundedList(rows as Prisma.DealershipGetPayload<Query>[]);
}
