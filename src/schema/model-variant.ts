// New vehicles: a model variant as a website shows it (spec 4.4, record 2.4), a website's model
// range (4.20), and the Model / ModelVariant graph types front-end teams follow from cars and
// manufacturers. Each record is one type: what the REST bodies leave out of it is `graphOnly`. The two
// `category` objects have distinct type names so each list keeps its full nested shape.
import { deniedAsUnauthorized } from '../auth/field-access.ts';
import { builder, graphOnly, nodeById, keepNodeIdField, type Types } from './builder.ts';
import { readAlongItsHolder } from '../auth/record-access.ts';
import { requireActor } from '../auth/scope.ts';
import type { Prisma } from '../db/client.ts';
import {
  availabilitiesSelect,
  availabilityGroups,
  shownVariantWhere,
  specificationGroups,
  specificationValuesSelect,
  websiteModels,
  type AvailabilityGroup,
  type AvailabilityOptionEntry,
  type CategoryRow,
  type SpecificationFieldEntry,
  type SpecificationGroup,
  type WebsiteModelEntry,
  type WebsiteModels,
  type WebsiteModelVariantSummary,
} from '../domain/model-variants.ts';
import { imageVersions, type ImageVersions } from '../domain/offers.ts';

// ─── small shared shapes ───

const CatalogueImageThumb = builder.objectRef<ImageVersions['thumb']>('CatalogueImageThumb').implement({
  description: 'The thumbnail of a catalogue image.',
  fields: (t) => ({ url: t.exposeString('url', { nullable: true }) }),
});

/** `{ url, thumb { url } }`, the image shape of model variants and offers. */
export const CatalogueImage = builder.objectRef<ImageVersions>('CatalogueImage').implement({
  description: 'A catalogue image and its thumbnail.',
  fields: (t) => ({ url: t.exposeString('url', { nullable: true }), thumb: t.expose('thumb', { type: CatalogueImageThumb }) }),
});

type BannerColumns = Pick<Prisma.ModelVariantModel, 'banner_key' | 'banner_url' | 'banner_height' | 'banner_width'>;

const ModelVariantBannerData = builder.objectRef<BannerColumns>('ModelVariantBannerData').implement({
  description: 'The banner image of a model variant.',
  fields: (t) => ({
    key: t.exposeString('banner_key', { nullable: true }),
    url: t.exposeString('banner_url', { nullable: true }),
    height: t.exposeInt('banner_height'),
    width: t.exposeInt('banner_width'),
  }),
});

function categoryFields(t: PothosSchemaTypes.ObjectFieldBuilder<Types, CategoryRow>) {
  return { databaseId: t.exposeInt('id'), name: t.exposeString('name'), slug: t.exposeString('slug'), position: t.exposeInt('position') };
}

function categoryType(name: string, description: string) {
  return builder.objectRef<CategoryRow>(name).implement({ description, fields: categoryFields });
}

const ModelVariantSpecificationCategory = categoryType('ModelVariantSpecificationCategory', 'A category of specifications.');
const ModelVariantAvailabilityCategory = categoryType('ModelVariantAvailabilityCategory', 'A category of options.');

const ModelVariantSpecificationField = builder.objectRef<SpecificationFieldEntry>('ModelVariantSpecificationField').implement({
  description: 'One specification and its value.',
  fields: (t) => ({ ...categoryFields(t), value: t.exposeString('value', { description: 'The specification’s value, as text.' }) }),
});

const ModelVariantSpecification = builder.objectRef<SpecificationGroup>('ModelVariantSpecification').implement({
  readPermission: 'show:model_variant',
  description: 'One category of a variant’s specifications.',
  fields: (t) => ({
    category: t.expose('category', { type: ModelVariantSpecificationCategory, description: 'The specification category.' }),
    fields: t.expose('fields', {
      type: [ModelVariantSpecificationField],
      description: 'The specifications in this category, in display order.',
    }),
  }),
});

const ModelVariantConfigurableOption = builder
  .objectRef<AvailabilityOptionEntry['configurable_option']>('ModelVariantConfigurableOption')
  .implement({
    description: 'An option a buyer can choose (a colour, a pack, an accessory).',
    fields: (t) => ({
      databaseId: t.exposeInt('id'),
      code: t.exposeString('code'),
      description: t.exposeString('description', { nullable: true, description: 'What the option is.' }),
      recommended_retail_price_cents: t.exposeInt('recommended_retail_price_cents', { nullable: true }),
      position: t.exposeInt('position'),
    }),
  });

const ModelVariantAvailabilityOption = builder.objectRef<AvailabilityOptionEntry>('ModelVariantAvailabilityOption').implement({
  description: 'Whether the variant offers one option.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    availability: t.exposeString('availability', { description: 'standard, optional or unavailable.' }),
    configurable_option: t.expose('configurable_option', { type: ModelVariantConfigurableOption }),
  }),
});

const ModelVariantAvailability = builder.objectRef<AvailabilityGroup>('ModelVariantAvailability').implement({
  readPermission: 'show:model_variant',
  description: 'One category of options and whether the variant offers each.',
  fields: (t) => ({
    category: t.expose('category', { type: ModelVariantAvailabilityCategory, description: 'The option category.' }),
    options: t.expose('options', { type: [ModelVariantAvailabilityOption] }),
  }),
});

// ─── the variant record (2.4): the REST body of GET /api/v1/model_variants/{slug}, and the graph's type ───

const ModelVariantNode = builder.prismaNode('ModelVariant', {
  ...readAlongItsHolder('show:model_variant', 'a car’s or a model’s variants are part of that record'),
  description: 'A variant of a catalogue model, as a website shows it: its specifications, options, images and price.',
  ...nodeById,
  fields: (t) => {
    const text = (name: Parameters<typeof t.exposeString>[0]) => t.exposeString(name, { nullable: true });
    const int = (name: Parameters<typeof t.exposeInt>[0]) => t.exposeInt(name, { nullable: true });
    return {
      databaseId: t.exposeInt('id'),
      model_id: t.exposeInt('model_id'),
      slug: t.exposeString('slug'),
      name: t.exposeString('name'),
      full_name: t.exposeString('full_name'),
      bodyStyle: text('bodyStyle'),
      transmission: text('transmission'),
      modelCode: text('modelCode'),
      engine_capacity: text('engine_capacity'),
      fuel: text('fuel'),
      redbookCode: text('redbookCode'),
      series: text('series'),
      variant_category: text('variant_category'),
      vehicle_category: text('vehicle_category'),
      description: t.exposeString('description', { nullable: true, description: 'The variant’s description (HTML).' }),
      short_description: text('short_description'),
      youtube_id: text('youtube_id'),
      brochure_url: text('brochure_url'),
      interior_image_url: text('interior_image_url'),
      second_interior_image_url: text('second_interior_image_url'),
      isHybrid: t.exposeBoolean('isHybrid', { nullable: true }),
      isElectric: t.exposeBoolean('isElectric', { nullable: true }),
      cylinders: int('cylinders'),
      year: int('year'),
      tare_weight: int('tare_weight'),
      gvm: int('gvm'),
      seats: int('seats'),
      price: int('price'),
      image: t.field({
        type: CatalogueImage,
        select: { image_url: true, image_thumb_url: true },
        resolve: (variant) => imageVersions(variant.image_url, variant.image_thumb_url),
      }),
      banner_data: t.field({
        type: ModelVariantBannerData,
        select: { banner_key: true, banner_url: true, banner_height: true, banner_width: true },
        resolve: (variant) => variant,
      }),
      specifications: t.field({
        type: [ModelVariantSpecification],
        description: 'Specification values grouped by category; categories and fields ordered by position.',
        select: specificationValuesSelect,
        resolve: (variant) => specificationGroups(variant.specification_values),
      }),
      availability_matrix: t.field({
        type: [ModelVariantAvailability],
        description: "The variant's configurable options grouped by category; categories and options ordered by position.",
        select: availabilitiesSelect,
        resolve: (variant) => availabilityGroups(variant.availabilities),
      }),
      // The graph's way back to the model; the spec's record names only model_id.
      model: t.relation('model', graphOnly),
    };
  },
});
keepNodeIdField(ModelVariantNode);

// ─── the model ───

/** What a REST body shows of a model wherever it names one: its names and the path of its pages. */
export type ModelPages = Pick<Prisma.ModelModel, 'name' | 'slug' | 'new_slug' | 'path'>;

/** A model's names and page path, declared once for the Model type and the REST shapes that add to them. */
export function modelPageFields(t: PothosSchemaTypes.ObjectFieldBuilder<Types, ModelPages>) {
  return {
    name: t.exposeString('name'),
    slug: t.exposeString('slug'),
    new_slug: t.exposeString('new_slug'),
    path: t.exposeString('path'),
  };
}

/**
 * A model of the catalogue. On the REST door it is a manufacturer offer's `model`, which the spec
 * shows as its names and path only: the ids and relations are the graph's.
 */
const Model = builder.prismaNode('Model', {
  ...readAlongItsHolder('index:offer', 'an offer’s or a variant’s model is part of that record'),
  description: 'A model of a manufacturer’s range (a Corolla, a HiLux): catalogue data, shared by every dealership.',
  ...nodeById,
  fields: (t) => ({
    databaseId: t.exposeInt('id', graphOnly),
    manufacturer_id: t.exposeInt('manufacturer_id', graphOnly),
    manufacturer: t.relation('manufacturer', { ...graphOnly, description: 'The model’s manufacturer.' }),
    variants: t.relation('variants', { ...graphOnly, query: { orderBy: { id: 'asc' } } }),
  }),
});
keepNodeIdField(Model);
builder.objectFields(Model, modelPageFields);

builder.queryField('model_variant', (t) =>
  t.prismaField({
    type: 'ModelVariant',
    description:
      'A model variant by slug, as the website (ID, slug or custom slug) shows it. 404 website_not_found; 403 for a key not authorised for the website; 404 model_variant_not_found when the website does not show its model.',
    authScopes: { permission: 'show:model_variant' },
    extensions: deniedAsUnauthorized,
    args: {
      slug: t.arg.string({ required: true, description: 'The model variant’s slug.' }),
      website_id: t.arg.string({ required: true, description: 'The website ID, slug or custom slug.' }),
    },
    resolve: async (query, _root, args, context) =>
      context.db.modelVariant.findUniqueOrThrow({
        ...query,
        where: await shownVariantWhere(context, requireActor(context), args.slug, args.website_id),
      }),
  }),
);

// ─── spec 4.20: a website's models ───

const WebsiteModelVariantSummaryRef = builder.objectRef<WebsiteModelVariantSummary>('WebsiteModelVariantSummary').implement({
  variantOf: {
    record: 'Model variant',
    reason: "A variant's summary in the website's model list (4.20), computed by the list's own query and read with `index:model`.",
  },
  description: 'A variant of a model a website shows.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    slug: t.exposeString('slug'),
    name: t.exposeString('name'),
    price: t.exposeInt('price', { nullable: true }),
  }),
});

const WebsiteModelEntryRef = builder.objectRef<WebsiteModelEntry>('WebsiteModelEntry').implement({
  variantOf: {
    record: 'Model',
    reason:
      "The website's model list (4.20): its position, lowest price and manufacturer's name, computed by the list's own query and read with `index:model`.",
  },
  description: 'A model a website shows.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    ...modelPageFields(t),
    override_url: t.exposeString('override_url', {
      nullable: true,
      description: "Where this website sends the model's pages instead, if anywhere.",
    }),
    position: t.exposeInt('position', { description: "The model's place in the website's range." }),
    manufacturer: t.exposeString('manufacturer', { description: "The manufacturer's name." }),
    price_from: t.exposeInt('price_from', {
      nullable: true,
      description: 'The lowest price among the variants; null when none has a price.',
    }),
    variants: t.expose('variants', {
      type: [WebsiteModelVariantSummaryRef],
      nullable: true,
      description: 'Version 2 only (cheapest first, unpriced last); null in version 1.',
    }),
  }),
});

const WebsiteModelsRef = builder.objectRef<WebsiteModels>('WebsiteModels').implement({
  description: 'The models a website shows, in its order.',
  fields: (t) => ({
    website_id: t.exposeInt('website_id'),
    version: t.exposeInt('version'),
    models: t.expose('models', { type: [WebsiteModelEntryRef] }),
  }),
});

builder.queryField('website_models', (t) =>
  t.field({
    type: WebsiteModelsRef,
    description:
      'The models a website (ID, slug or custom slug) shows, in its order. version 1 (default): the models; version 2: each model also lists its variants. 404 website_not_found; 403 for a key not authorised for the website; 422 for another version.',
    authScopes: { permission: 'index:model' },
    args: {
      website_id: t.arg.string({ required: true, description: 'Website ID, slug or custom slug.' }),
      version: t.arg.int({ description: '1 (default) or 2.' }),
    },
    resolve: (_root, args, context) => websiteModels(context, requireActor(context), args.website_id, args.version),
  }),
);
