// A website shows only the models listed for it, so a variant of any other model is "not found" there, whoever asks.
import { z } from 'zod';
import type { Actor } from '../auth/api-keys.ts';
import type { Prisma } from '../db/client.ts';
import { notFound } from '../errors.ts';
import type { DbClients } from '../db/scoped.ts';
import { groupBy } from '../lib/group-by.ts';
import { NON_BLANK, parseRecord } from './input-records.ts';
import { findAuthorisedWebsite } from './websites.ts';

/** A specification category's columns; a specification field has the same four. */
const categoryColumns = { id: true, name: true, slug: true, position: true } as const;

/** The selections the grouping functions below need, for Prisma `select`s of a ModelVariant. */
export const specificationValuesSelect = {
  specification_values: { select: { value: true, field: { select: { ...categoryColumns, category: { select: categoryColumns } } } } },
} satisfies Prisma.ModelVariantSelect;

export const availabilitiesSelect = {
  availabilities: {
    select: {
      id: true,
      availability: true,
      option: {
        select: {
          id: true,
          code: true,
          description: true,
          recommended_retail_price_cents: true,
          position: true,
          category: { select: categoryColumns },
        },
      },
    },
  },
} satisfies Prisma.ModelVariantSelect;

type SelectedVariant = Prisma.ModelVariantGetPayload<{ select: typeof specificationValuesSelect & typeof availabilitiesSelect }>;

export type CategoryRow = SelectedVariant['specification_values'][number]['field']['category'];
export type SpecificationGroup = ReturnType<typeof specificationGroups>[number];
export type SpecificationFieldEntry = SpecificationGroup['fields'][number];
export type AvailabilityGroup = ReturnType<typeof availabilityGroups>[number];
export type AvailabilityOptionEntry = AvailabilityGroup['options'][number];

const byPosition = (a: { position: number; id: number }, b: { position: number; id: number }): number =>
  a.position - b.position || a.id - b.id;

/** Categories by position, and within each its entries by the place `placeOf` gives them. */
function groupByCategory<Entry>(
  items: readonly { category: CategoryRow; entry: Entry }[],
  placeOf: (entry: Entry) => { position: number; id: number },
): { category: CategoryRow; entries: Entry[] }[] {
  return Array.from(groupBy(items, (item) => item.category.id).values(), (group) => ({
    category: group[0]!.category,
    entries: group.map((item) => item.entry).sort((a, b) => byPosition(placeOf(a), placeOf(b))),
  })).sort((a, b) => byPosition(a.category, b.category));
}

export function specificationGroups(values: SelectedVariant['specification_values']) {
  const items = values.map(({ value, field: { category, ...field } }) => ({ category, entry: { ...field, value } }));
  return groupByCategory(items, (field) => field).map(({ category, entries }) => ({ category, fields: entries }));
}

/** Options by their own position; two availabilities of one position by the availability's id. */
export function availabilityGroups(rows: SelectedVariant['availabilities']) {
  const items = rows.map(({ id, availability, option: { category, ...option } }) => ({
    category,
    entry: { id, availability, configurable_option: option },
  }));
  return groupByCategory(items, (entry) => ({ position: entry.configurable_option.position, id: entry.id })).map(
    ({ category, entries }) => ({ category, options: entries }),
  );
}

/** The arguments of spec 4.4, declared once: website_id must say something (blank is missing). */
export const modelVariantRequest = z.object({
  slug: z.string(),
  website_id: z.string().regex(NON_BLANK, 'is required').trim().describe('The website ID, slug or custom slug.'),
});

/**
 * Spec 4.4: the `where` of the variant with this slug, shown on the website named by ID, slug or
 * custom slug. 404 website_not_found, 403 for a key not authorised for the website.
 */
export async function shownVariantWhere(
  clients: DbClients,
  actor: Actor,
  slug: string,
  websiteIdentifier: string,
): Promise<Prisma.ModelVariantWhereUniqueInput> {
  const { website_id: wanted } = parseRecord(modelVariantRequest, { slug, website_id: websiteIdentifier }, '');
  const website = await findAuthorisedWebsite(clients, actor, wanted);
  const variant = await clients.db.modelVariant.findFirst({
    where: { slug: slug.trim(), model: { websites: { some: { website_id: website.id } } } },
    select: { id: true },
  });
  if (!variant) throw notFound('model_variant');
  return { id: variant.id };
}

/** The versions of GET /api/v1/websites/{website_id}/models; 1 when the query omits it. */
const websiteModelsVersions = [1, 2] as const;

export type WebsiteModelVariantSummary = Pick<Prisma.ModelVariantModel, 'id' | 'slug' | 'name' | 'price'>;

/** A model a website shows: the model's columns, the website's own link and place for it, and figures. */
export type WebsiteModelEntry = WebsiteModels['models'][number];
export type WebsiteModels = Awaited<ReturnType<typeof websiteModels>>;

/** Cheapest first, unpriced variants last (sorted here: SQLite and PostgreSQL order nulls differently). */
function cheapestFirst(a: WebsiteModelVariantSummary, b: WebsiteModelVariantSummary): number {
  if (a.price === b.price) return a.id - b.id;
  if (a.price === null) return 1;
  if (b.price === null) return -1;
  return a.price - b.price;
}

/** The arguments of spec 4.20, declared once: websiteModels checks `version`, the OpenAPI document states both. */
export const websiteModelsRequest = z.object({
  website_id: z.string().describe('Website ID, slug or custom slug.'),
  version: z
    .literal(websiteModelsVersions, { error: (issue) => `must be one of ${websiteModelsVersions.join(', ')}, got ${String(issue.input)}` })
    .nullish()
    .describe('1 (default) or 2.'),
});

/** Spec 4.20: the models the website shows, in the website's order, in one query after the website lookup. */
export async function websiteModels(
  clients: DbClients,
  actor: Actor,
  websiteIdentifier: string,
  requestedVersion: number | null | undefined,
) {
  const version = parseRecord(websiteModelsRequest.shape.version, requestedVersion, 'version') ?? 1;
  const website = await findAuthorisedWebsite(clients, actor, websiteIdentifier);
  const rows = await clients.db.websiteModel.findMany({
    where: { website_id: website.id },
    orderBy: [{ position: 'asc' }, { model_id: 'asc' }],
    select: {
      position: true,
      override_url: true,
      model: {
        select: {
          id: true,
          name: true,
          slug: true,
          new_slug: true,
          path: true,
          manufacturer: { select: { name: true } },
          variants: { select: { id: true, slug: true, name: true, price: true }, orderBy: { id: 'asc' } },
        },
      },
    },
  });
  return {
    website_id: website.id,
    version,
    models: rows.map(({ position, override_url, model: { manufacturer, variants, ...model } }) => {
      const prices = variants.flatMap((variant) => (variant.price === null ? [] : [variant.price]));
      return {
        ...model,
        override_url,
        position,
        manufacturer: manufacturer.name,
        price_from: prices.length > 0 ? Math.min(...prices) : null,
        variants: version === 2 ? [...variants].sort(cheapestFirst) : null,
      };
    }),
  };
}
