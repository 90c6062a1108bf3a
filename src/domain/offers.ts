// Offers (spec 4.5, 4.6, record 2.5): which offers a key sees, and the derived fields of the record.
// A manufacturer offer runs at the dealerships listed for it; a key restricted to dealerships sees
// only the offers that run at one of its dealerships, and only its own dealerships among their
// dealership_ids, so it learns nothing about other dealers.
import type sanitizeHtml from 'sanitize-html';
import type { Actor } from '../auth/api-keys.ts';
import type { Prisma } from '../db/client.ts';
import type { ScopedDb } from '../db/scoped.ts';
import { notFound } from '../errors.ts';
import { findAuthorisedWebsite } from './websites.ts';
import type { DbClients } from '../db/scoped.ts';
import { WHOLE_LIST_TAKE } from './whole-lists.ts';

const DAY_MS = 86_400_000;

/** Basic formatting only: no scripts, styles, images, iframes or attributes except a link's href. */
const descriptionPolicy: sanitizeHtml.IOptions = {
  allowedTags: [
    'p',
    'br',
    'strong',
    'b',
    'em',
    'i',
    'u',
    's',
    'sup',
    'sub',
    'ul',
    'ol',
    'li',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'blockquote',
    'a',
  ],
  allowedAttributes: { a: ['href'] },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowProtocolRelative: false,
};

// sanitize-html (with the HTML parser and PostCSS it brings) is loaded by the first sanitising, not
// at start-up: an instance that never sanitises never loads it. The module loader keeps it once loaded.
export async function sanitizeDescription(html: string): Promise<string> {
  const { default: sanitize } = await import('sanitize-html');
  return sanitize(html, descriptionPolicy);
}

/**
 * An offer's description as every write of one stores it (the seed, the fixtures): the author's HTML
 * and its sanitised form, made once here so that reads answer the stored text.
 */
export async function offerDescriptionColumns(description: string): Promise<{ description: string; sanitized_description: string }> {
  return { description, sanitized_description: await sanitizeDescription(description) };
}

/** What sanitizedDescriptionOf reads of an offer. */
export const sanitizedDescriptionSelect = {
  id: true,
  description: true,
  sanitized_description: true,
  updated_at: true,
} satisfies Prisma.OfferSelect;

/**
 * The offer's sanitised description: the stored one, or, for a row written before the column was
 * (null), the description sanitised now and stored, so that the next read finds it.
 */
export async function sanitizedDescriptionOf(
  clients: DbClients,
  offer: Prisma.OfferGetPayload<{ select: typeof sanitizedDescriptionSelect }>,
): Promise<string> {
  if (offer.sanitized_description !== null) return offer.sanitized_description;
  const sanitized = await sanitizeDescription(offer.description);
  // Offers are catalogue rows the scoped client refuses to write; this fills a derived column of the
  // row the caller has just read through it. Storing it is no change of the offer: updated_at stays.
  await clients.unscopedDb.offer.updateMany({
    where: { id: offer.id, description: offer.description, sanitized_description: null },
    data: { sanitized_description: sanitized, updated_at: offer.updated_at },
  });
  return sanitized;
}

/** Midnight UTC of the day `date` falls on: offer expiry dates are calendar days, kept at midnight UTC. */
function utcDay(date: Date): number {
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
}

/**
 * How long an offer has left, in calendar days (UTC): an offer runs to the end of its expiry date.
 * "expired", "today", "tomorrow", then "in N days".
 */
export function expiryInWords(expiresAt: Date, now: Date): string {
  const days = Math.round((utcDay(expiresAt) - utcDay(now)) / DAY_MS);
  if (days < 0) return 'expired';
  if (days === 0) return 'today';
  if (days === 1) return 'tomorrow';
  return `in ${days} days`;
}

export interface ImageVersions {
  url: string | null;
  thumb: { url: string | null };
}

/** An image with its thumbnail; a missing thumbnail falls back to the image itself. */
export function imageVersions(url: string | null | undefined, thumbUrl: string | null | undefined): ImageVersions {
  return { url: url ?? null, thumb: { url: thumbUrl ?? url ?? null } };
}

/** Selects what imageOrModelImage needs: the offer's image and its model's first variant with an image. */
export const imageOrModelImageSelect = {
  image_url: true,
  image_thumb_url: true,
  model: {
    select: {
      variants: {
        where: { image_url: { not: null } },
        orderBy: { id: 'asc' },
        take: 1,
        select: { image_url: true, image_thumb_url: true },
      },
    },
  },
} satisfies Prisma.OfferSelect;

export function imageOrModelImage(offer: {
  image_url: string | null;
  image_thumb_url: string | null;
  model: { variants: { image_url: string | null; image_thumb_url: string | null }[] };
}): ImageVersions {
  if (offer.image_url) return imageVersions(offer.image_url, offer.image_thumb_url);
  const variant = offer.model.variants[0];
  return imageVersions(variant?.image_url, variant?.image_thumb_url);
}

/**
 * The dealership links of an offer, as a Prisma relation query: read through the caller's scoped
 * client, they are only the links to the key's dealerships (none without a key). Its rows are a list
 * of src/domain/whole-lists.ts: boundedList answers them.
 */
export function visibleDealershipLinks() {
  return {
    orderBy: { dealership_id: 'asc' },
    select: { dealership_id: true },
    // A list the spec answers whole: at most WHOLE_LIST_BOUND ids, read with one more to tell if cut.
    take: WHOLE_LIST_TAKE,
  } satisfies Prisma.Offer$dealershipsArgs;
}

/** The start of the day `now` falls on: offers expiring on it still run today. */
function stillRunning(now: Date): Prisma.DateTimeFilter {
  return { gte: new Date(utcDay(now)) };
}

/**
 * The manufacturer offers that run: expiring today or later. Which of them a key sees (those at one
 * of its dealerships) is the scoped client's rule for offers (src/db/scoped.ts).
 */
export function runningManufacturerOffersWhere(now: Date): Prisma.OfferWhereInput {
  return { kind: 'manufacturer', expires_at: stillRunning(now) };
}

export function manufacturerOffersWhere(manufacturerId: number, now: Date): Prisma.OfferWhereInput {
  return { ...runningManufacturerOffersWhere(now), manufacturer_id: manufacturerId };
}

/** Spec 4.5: 404 manufacturer_not_found for an unknown manufacturer; manufacturers are not dealership data. */
export async function requireManufacturer(db: ScopedDb, manufacturerId: number): Promise<void> {
  const manufacturer = await db.manufacturer.findUnique({ where: { id: manufacturerId }, select: { id: true } });
  if (!manufacturer) throw notFound('manufacturer');
}

/**
 * Spec 4.6: the `where` of the offer `offerId` of the website `websiteId`. 404 website_not_found,
 * 403 for a key not authorised for the website, 404 offer_not_found for an offer of another website
 * (or none). An expired offer still answers, with expiry_in_words "expired".
 */
export async function websiteOfferWhere(
  clients: DbClients,
  actor: Actor,
  websiteId: number,
  offerId: number,
): Promise<Prisma.OfferWhereUniqueInput> {
  const website = await findAuthorisedWebsite(clients, actor, websiteId);
  const offer = await clients.db.offer.findFirst({ where: { id: offerId, website_id: website.id }, select: { id: true } });
  if (!offer) throw notFound('offer');
  return { id: offer.id };
}
