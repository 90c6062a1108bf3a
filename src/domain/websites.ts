// Finding a website as the spec's paths name it (ID, slug or custom slug) and deciding whether a key
// may act for it. Website-scoped operations (4.4, 4.6, 4.20) refuse a key whose dealerships do not
// include the website's dealership with 403 `forbidden` (spec 5.4), unlike dealership-scoped objects,
// which answer "not found".
import { idOrSlug, recordNamed, recordNameWhere } from './record-names.ts';
import type { Actor } from '../auth/api-keys.ts';
import { reachesDealership } from '../auth/scope.ts';
import type { Db } from '../db/client.ts';
import type { DbClients } from '../db/scoped.ts';
import { forbidden, notFound } from '../errors.ts';

interface WebsiteRef {
  id: number;
  dealership_id: number;
}

/**
 * The website named by `identifier` (ID, slug or custom slug, in that precedence: src/domain/record-names.ts),
 * whoever owns it, or null.
 */
export async function findWebsite(db: Db, identifier: string | number): Promise<WebsiteRef | null> {
  const name = idOrSlug(identifier);
  const candidates = await db.website.findMany({
    where: recordNameWhere(name),
    select: { id: true, dealership_id: true, slug: true, custom_slug: true },
  });
  const website = recordNamed(candidates, name);
  return website ? { id: website.id, dealership_id: website.dealership_id } : null;
}

/** Whether the key may act for the website: an unrestricted key, or one holding its dealership. */
function reachesWebsite(actor: Actor, website: WebsiteRef): boolean {
  return reachesDealership(actor, website.dealership_id);
}

/**
 * The website, or 404 `website_not_found` when none has that identifier, or 403 when the key may not
 * act for it. The spec answers another dealership's website with 403, not 404, so this lookup is
 * deliberately unscoped (the escape hatch of src/db/scoped.ts); it answers only the website's id.
 */
export async function findAuthorisedWebsite(clients: DbClients, actor: Actor, identifier: string | number): Promise<WebsiteRef> {
  const website = await findWebsite(clients.unscopedDb, identifier);
  if (!website) throw notFound('website');
  if (!reachesWebsite(actor, website)) throw forbidden('This API key is not authorised for that website.');
  return website;
}
