// Offers (spec 4.5, 4.6, record 2.5) on both doors, and the Manufacturer / Offer graph for
// front-end teams. The graph's Offer is also the list form (4.5): what the list's REST body leaves
// out of it is `graphOnly`. The website form (4.6) differs from the list form in
// fields and in its model (with the website's `override_url`), so it is a variant of the same record
// built from the same field definitions.
import { builder, graphOnly, nodeById, keepNodeIdField, restShape } from './builder.ts';
import { readAlongItsHolder } from '../auth/record-access.ts';
import { textOrEmpty } from './always-present.ts';
import { requireActor } from '../auth/scope.ts';
import {
  expiryInWords,
  imageOrModelImage,
  imageOrModelImageSelect,
  imageVersions,
  manufacturerOffersWhere,
  requireManufacturer,
  runningManufacturerOffersWhere,
  sanitizedDescriptionOf,
  sanitizedDescriptionSelect,
  visibleDealershipLinks,
  websiteOfferWhere,
} from '../domain/offers.ts';
import { boundedList, truncatedFieldDescription } from '../domain/whole-lists.ts';
import { pagedById, type PrismaFieldBuilder } from './field-builders.ts';
import { Location } from './dealership.ts';
import { CatalogueImage, modelPageFields, type ModelPages } from './model-variant.ts';

/** A website offer's model: the model's names and path, and where that website sends its pages. */
const WebsiteOfferModel = builder.objectRef<ModelPages & { override_url: string | null }>('WebsiteOfferModel').implement({
  variantOf: { record: 'Model', reason: "The website form (4.6) gives the model's `override_url`." },
  description: 'The model a website offer is for.',
  fields: (t) => ({
    ...modelPageFields(t),
    override_url: t.exposeString('override_url', {
      nullable: true,
      description: "Where the website sends this model's pages instead, if anywhere.",
    }),
  }),
});

/** The fields every form of the offer record shares (2.5). */
function commonOfferFields(t: PrismaFieldBuilder<'Offer'>) {
  return {
    databaseId: t.exposeInt('id'),
    manufacturer_id: t.exposeInt('manufacturer_id'),
    name: t.exposeString('name'),
    disclaimer: t.exposeString('disclaimer', { nullable: true }),
    expires_at: t.expose('expires_at', { type: 'Date', description: 'The last day the offer runs (year-month-day).' }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
    description: t.exposeString('description', { description: 'HTML as written by its author.' }),
    sanitized_description: t.string({
      description: 'The description with basic formatting only: no scripts, styles or attributes except links.',
      select: sanitizedDescriptionSelect,
      resolve: (offer, _args, context) => sanitizedDescriptionOf(context, offer),
    }),
    manufacturer: t.string({
      description: "The manufacturer's name.",
      select: { manufacturer: { select: { name: true } } },
      resolve: (offer) => offer.manufacturer.name,
    }),
    expiry_in_words: t.string({
      description: '"expired", "today", "tomorrow" or "in N days" (calendar days, UTC).',
      select: { expires_at: true },
      resolve: (offer, _args, context) => expiryInWords(offer.expires_at, context.now()),
    }),
    dealership_ids: t.field({
      type: ['Int'],
      description:
        'The dealerships the offer runs at, among those the key reaches, by id (at most the bound `dealership_ids_truncated` states).',
      select: { dealerships: visibleDealershipLinks() },
      resolve: (offer) => boundedList(offer.dealerships).entries.map((link) => link.dealership_id),
    }),
    // The same relation query as dealership_ids', so the two share one read.
    dealership_ids_truncated: t.boolean({
      description: truncatedFieldDescription('dealership_ids'),
      select: { dealerships: visibleDealershipLinks() },
      resolve: (offer) => boundedList(offer.dealerships).truncated,
    }),
  };
}

/** Only the website form's REST body has these; the graph's Offer has them as `graphOnly` (`shown`). */
function websiteOfferFields(t: PrismaFieldBuilder<'Offer'>, shown: { extensions?: typeof graphOnly.extensions } = {}) {
  return {
    category: t.string({ ...shown, description: 'Empty when the offer has no category.', resolve: (offer) => textOrEmpty(offer.category) }),
    // Any index:offer key reads it; a location's other fields need index:dealership.
    preferred_locations: t.field({
      extensions: {
        ...shown.extensions,
        ...restShape('OfferLocation', 'A dealership location an offer is shown for.', ['databaseId', 'name']).extensions,
      },
      type: [Location],
      select: (_args, _context, nestedSelection) => ({
        preferred_locations: { orderBy: { location_id: 'asc' }, select: { location: nestedSelection(true) } },
      }),
      resolve: (offer) => offer.preferred_locations.map((link) => link.location),
    }),
  };
}

/** Spec 2.5, website form: the REST body of GET /websites/{website_id}/offers/{id}.json. */
const WebsiteOffer = builder.prismaObject('Offer', {
  variant: 'WebsiteOffer',
  variantOf: { record: 'Offer', reason: "The website form (4.6) gives the model's `override_url`." },
  description: 'An offer as a website shows it.',
  fields: (t) => ({
    ...commonOfferFields(t),
    ...websiteOfferFields(t),
    model: t.field({
      type: WebsiteOfferModel,
      description: 'The model the offer is for.',
      // A website lists tens of models: its list is the cheap way to the one WebsiteModel row.
      select: {
        model_id: true,
        model: { select: { name: true, slug: true, new_slug: true, path: true } },
        website: { select: { models: { select: { model_id: true, override_url: true } } } },
      },
      resolve: (offer) => ({
        ...offer.model,
        override_url: offer.website?.models.find((entry) => entry.model_id === offer.model_id)?.override_url ?? null,
      }),
    }),
  }),
});

/**
 * The offer record: spec 2.5's list form (the REST body elements of GET /manufacturers/{id}/offers.json)
 * and, for graph clients, the website form's fields and the offer's ids too. Its `model` is the graph's
 * Model, whose REST shape is the list form's model (names and path).
 */
const Offer = builder.prismaObject('Offer', {
  readPermission: 'index:offer',
  description: 'A manufacturer’s offer on a model.',
  fields: (t) => ({
    ...commonOfferFields(t),
    images: t.field({
      type: [CatalogueImage],
      description: 'The offer’s images.',
      select: { images: { orderBy: [{ position: 'asc' }, { id: 'asc' }], select: { url: true, thumb_url: true } } },
      resolve: (offer) => offer.images.map((image) => imageVersions(image.url, image.thumb_url)),
    }),
    image_or_model_image: t.field({
      type: CatalogueImage,
      description: "The offer's image, else the image of its model's first variant that has one.",
      select: imageOrModelImageSelect,
      resolve: (offer) => imageOrModelImage(offer),
    }),
    ...websiteOfferFields(t, graphOnly),
    kind: t.exposeString('kind', { ...graphOnly, description: 'manufacturer or website.' }),
    website_id: t.exposeInt('website_id', { ...graphOnly, nullable: true }),
    model_id: t.exposeInt('model_id', graphOnly),
    model: t.relation('model', { description: 'The model the offer is for.' }),
  }),
});

builder.queryFields((t) => ({
  manufacturer_offers: t.prismaField({
    type: [Offer],
    description:
      "The manufacturer's running offers (expiring today or later), by id. A key restricted to dealerships sees the offers that run at one of them. 404 manufacturer_not_found.",
    authScopes: { permission: 'index:offer' },
    args: { id: t.arg.int({ required: true, description: 'The manufacturer’s id.' }) },
    resolve: async (query, _root, args, context) => {
      await requireManufacturer(context.db, args.id);
      return context.db.offer.findMany({ ...query, where: manufacturerOffersWhere(args.id, context.now()), orderBy: { id: 'asc' } });
    },
  }),
  website_offer: t.prismaField({
    type: WebsiteOffer,
    description:
      'One offer of a website. 404 website_not_found; 403 for a key not authorised for the website; 404 offer_not_found for an offer of another website.',
    authScopes: { permission: 'index:offer' },
    args: {
      website_id: t.arg.int({ required: true, description: 'The website (id, slug or custom slug) showing the offer.' }),
      id: t.arg.int({ required: true, description: 'The offer’s id.' }),
    },
    resolve: async (query, _root, args, context) =>
      context.db.offer.findUniqueOrThrow({
        ...query,
        where: await websiteOfferWhere(context, requireActor(context), args.website_id, args.id),
      }),
  }),
}));

// ─── the graph: manufacturers, their models and offers ───

const ManufacturerNode = builder.prismaNode('Manufacturer', {
  ...readAlongItsHolder('index:offer', 'a model’s manufacturer is part of the catalogue record holding it'),
  description: 'A car manufacturer (a make): catalogue data, shared by every dealership.',
  ...nodeById,
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    name: t.exposeString('name'),
    slug: t.exposeString('slug'),
    models: t.relatedConnection('models', { ...pagedById, description: 'Its models, by id.' }),
    // Offer is index:offer data wherever it is reached, so without it the
    // connection is null. The count is taken under the rows' own `where` (the builder's
    // filterConnectionTotalCount), so it counts only the running offers the key's dealerships see.
    offers: t.relatedConnection('offers', {
      ...pagedById,
      nullable: true,
      description: 'Its running manufacturer offers, as manufacturer_offers lists them; null without index:offer.',
      query: (_args, context) => ({ where: runningManufacturerOffersWhere(context.now()), orderBy: { id: 'asc' } }),
    }),
  }),
});
keepNodeIdField(ManufacturerNode);

builder.queryFields((t) => ({
  manufacturers: t.prismaField({
    type: ['Manufacturer'],
    description: 'Every manufacturer, by id. Manufacturers and their models are catalogue data, not any dealership’s.',
    authScopes: { permission: 'index:offer' },
    resolve: (query, _root, _args, context) => context.db.manufacturer.findMany({ ...query, orderBy: { id: 'asc' } }),
  }),
  manufacturer: t.prismaField({
    type: 'Manufacturer',
    nullable: true,
    authScopes: { permission: 'index:offer' },
    args: { id: t.arg.int({ required: true, description: 'The manufacturer’s id.' }) },
    resolve: (query, _root, args, context) => context.db.manufacturer.findUnique({ ...query, where: { id: args.id } }),
  }),
}));
