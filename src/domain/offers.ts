// A restricted key sees only offers at its dealerships, and only its own among their dealership_ids, so it learns nothing of other dealers.
import type sanitizeHtml from 'sanitize-html';
import type { Actor } from '../auth/api-keys.ts';
import type { Prisma } from '../db/client.ts';
import type { DbClients, ScopedDb } from '../db/scoped.ts';
import { notFound } from '../errors.ts';
import { findAuthorisedWebsite } from './websites.ts';
import { WHOLE_LIST_TAKE } from './whole-lists.ts';

const DAY_MS = 86_400_000;

const BLOCK_TAGS = ['p', 'blockquote', 'ul', 'ol', 'li', 'h2', 'h3', 'h4', 'h5', 'h6'];
const INLINE_TAGS = ['a', 'br', 'strong', 'b', 'em', 'i', 'u', 's', 'sup', 'sub'];

/** Basic formatting only: no scripts, styles, images, iframes or attributes except a link's href. */
const descriptionPolicy: sanitizeHtml.IOptions = {
  allowedTags: [...BLOCK_TAGS, ...INLINE_TAGS],
  allowedAttributes: { a: ['href'] },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowProtocolRelative: false,
};

// sanitize-html (and the parser and PostCSS it brings) is loaded on first use, not at start-up.
export async function sanitizeDescription(html: string): Promise<string> {
  const { default: sanitize } = await import('sanitize-html');
  return sanitize(html, descriptionPolicy);
}

export async function offerDescriptionColumns(description: string): Promise<{ description: string; sanitized_description: string }> {
  return { description, sanitized_description: await sanitizeDescription(description) };
}

export const sanitizedDescriptionSelect = {
  id: true,
  description: true,
  sanitized_description: true,
  updated_at: true,
} satisfies Prisma.OfferSelect;

/** A row written before the column existed is sanitised now and stored, so the next read finds it. */
export async function sanitizedDescriptionOf(
  clients: DbClients,
  offer: Prisma.OfferGetPayload<{ select: typeof sanitizedDescriptionSelect }>,
): Promise<string> {
  if (offer.sanitized_description !== null) return offer.sanitized_description;
  const sanitized = await sanitizeDescription(offer.description);
  // Offers are catalogue rows the scoped client refuses to write; this fills a derived column, so updated_at stays.
  await clients.unscopedDb.offer.updateMany({
    where: { id: offer.id, description: offer.description, sanitized_description: null },
    data: { sanitized_description: sanitized, updated_at: offer.updated_at },
  });
  return sanitized;
}

function utcDay(date: Date): number {
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
}

/** An offer runs to the end of its expiry date (UTC calendar days). */
export function expiryInWords(expiresAt: Date, now: Date): string {
  const days = Math.round((utcDay(expiresAt) - utcDay(now)) / DAY_MS);
  if (days < 0) return 'expired';
  if (days === 0) return 'today';
  if (days === 1) return 'tomorrow';
  return `in ${days} days`;
}

export type ImageVersions = ReturnType<typeof imageVersions>;

export function imageVersions(url: string | null | undefined, thumbUrl: string | null | undefined) {
  return { url: url ?? null, thumb: { url: thumbUrl ?? url ?? null } };
}

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

export function imageOrModelImage(offer: Prisma.OfferGetPayload<{ select: typeof imageOrModelImageSelect }>): ImageVersions {
  if (offer.image_url) return imageVersions(offer.image_url, offer.image_thumb_url);
  const variant = offer.model.variants[0];
  return imageVersions(variant?.image_url, variant?.image_thumb_url);
}

export function visibleDealershipLinks() {
  return {
    orderBy: { dealership_id: 'asc' },
    select: { dealership_id: true },
    take: WHOLE_LIST_TAKE,
  } satisfies Prisma.Offer$dealershipsArgs;
}

/** Offers expiring today still run today. */
export function runningManufacturerOffersWhere(now: Date): Prisma.OfferWhereInput {
  return { kind: 'manufacturer', expires_at: { gte: new Date(utcDay(now)) } };
}

export function manufacturerOffersWhere(manufacturerId: number, now: Date): Prisma.OfferWhereInput {
  return { ...runningManufacturerOffersWhere(now), manufacturer_id: manufacturerId };
}

/** Manufacturers are not dealership data. */
export async function requireManufacturer(db: ScopedDb, manufacturerId: number): Promise<void> {
  const manufacturer = await db.manufacturer.findUnique({ where: { id: manufacturerId }, select: { id: true } });
  if (!manufacturer) throw notFound('manufacturer');
}

/** An expired offer still answers, with expiry_in_words "expired". */
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
