// Public (ads are followed without keys), so it only ever sends the browser to the origin of a website
// of the named dealership: nothing the caller sends becomes part of the host or the path structure.
import { wellFormed } from '../web/header-value.ts';
import { z } from 'zod';
import { parseUrl } from '../lib/parse-url.ts';
import { findWebsite } from './websites.ts';
import type { Db } from '../db/client.ts';
import { notFound } from '../errors.ts';
import { NON_BLANK, parseRecord } from './input-records.ts';

export const carRedirectRequest = z.object({
  dealership_slug: z.string(),
  website_id: z.string().regex(NON_BLANK, 'is required').trim().describe('Website id, slug or custom slug.'),
  stocknum: z.string().regex(NON_BLANK, 'is required').trim().describe('Stock number.'),
  fbclid: z.string().trim().nullish().describe('Carried through to the target URL.'),
});

const noAddress = () => notFound('website', 'The website has no http(s) address to redirect to.');
const CAR_PAGE_PATH = '/cars/';
const STOCK_LISTING_PATH = '/cars';

function websiteOrigin(url: string): string | null {
  const parsed = parseUrl(url.trim());
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) return null;
  if (parsed.username || parsed.password) return null;
  return parsed.origin;
}

/** The stock listing instead when no car has that stock number, or it is sold or hidden from the website. */
export async function carRedirectLocation(db: Db, input: z.input<typeof carRedirectRequest>): Promise<string> {
  const { website_id: websiteId, stocknum, fbclid } = parseRecord(carRedirectRequest, input, '');

  const dealership = await db.dealership.findUnique({ where: { slug: input.dealership_slug.trim() }, select: { id: true } });
  if (!dealership) throw notFound('dealership');
  const website = await findWebsite(db, websiteId, { dealership_id: dealership.id });
  if (!website) throw notFound('website');
  const origin = websiteOrigin(website.url);
  if (!origin) throw noAddress();

  const car = await db.car.findUnique({
    where: { dealership_id_stocknum: { dealership_id: dealership.id, stocknum } },
    select: { slug: true, custom_slug: true, status: true, sold_date: true, show_on_dealer_website: true },
  });

  const target = new URL(origin);
  if (car?.show_on_dealer_website && car.sold_date === null && car.status.trim().toLowerCase() !== 'sold') {
    // A slug is stored text other systems write too: half a surrogate pair would make encodeURIComponent throw.
    target.pathname = CAR_PAGE_PATH + encodeURIComponent(wellFormed(car.custom_slug?.trim() || car.slug));
  } else {
    target.pathname = STOCK_LISTING_PATH;
    target.searchParams.set('stocknum', stocknum);
  }
  if (fbclid) target.searchParams.set('fbclid', fbclid);
  // The path and query are built from encoded parts, so this cannot fail; it is the last word anyway.
  if (target.origin !== origin) throw noAddress();
  return target.toString();
}
