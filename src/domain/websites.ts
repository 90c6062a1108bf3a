// Website-scoped operations answer another dealership's website with 403 (spec 5.4), unlike dealership-scoped objects (404).
import { idOrSlug, NAME_COLUMNS, recordNamed, recordNameWhere } from './record-names.ts';
import type { Actor } from '../auth/api-keys.ts';
import { reachesDealership } from '../auth/scope.ts';
import type { Db, Prisma } from '../db/client.ts';
import type { DbClients } from '../db/scoped.ts';
import { forbidden, notFound } from '../errors.ts';

type WebsiteRef = Pick<Prisma.WebsiteModel, 'id' | 'dealership_id' | 'url'>;

export async function findWebsite(db: Db, identifier: string | number, within: Prisma.WebsiteWhereInput = {}): Promise<WebsiteRef | null> {
  const name = idOrSlug(identifier);
  const candidates = await db.website.findMany({
    where: { ...within, ...recordNameWhere(name) },
    select: { ...NAME_COLUMNS, dealership_id: true, url: true },
  });
  return recordNamed(candidates, name);
}

/** Deliberately unscoped, since the spec answers another dealership's website with 403; it answers only the id. */
export async function findAuthorisedWebsite(clients: DbClients, actor: Actor, identifier: string | number): Promise<WebsiteRef> {
  const website = await findWebsite(clients.unscopedDb, identifier);
  if (!website) throw notFound('website');
  if (!reachesDealership(actor, website.dealership_id)) throw forbidden('This API key is not authorised for that website.');
  return website;
}
