// Read through the caller's scoped client like every other read, so the key's reach stays the tenant boundary's one rule.
import type { Prisma } from '../db/client.ts';
import type { ScopedDb } from '../db/scoped.ts';
import { type BoundedList, boundedList, WHOLE_LIST_TAKE } from './whole-lists.ts';

export async function keyDealerships<Query extends Prisma.DealershipFindManyArgs>(
  db: ScopedDb,
  query: Query,
): Promise<BoundedList<Prisma.DealershipGetPayload<Query>>> {
  const rows = await db.dealership.findMany({ ...query, orderBy: { id: 'asc' }, take: WHOLE_LIST_TAKE });
  return boundedList(rows as Prisma.DealershipGetPayload<Query>[]);
}
