// Dealerships, their locations and websites, and the operations over them: partner mappings (4.14),
// postcode search (4.15) and plugins (4.17).
import { prismaConnectionHelpers } from '@pothos/plugin-prisma';
import { answeredByItsRoot, readAlongItsHolder } from '../auth/record-access.ts';
import type { Prisma } from '../db/client.ts';
import { builder, graphOnly, nodeById, keepNodeIdField } from './builder.ts';
import { guardedBy } from '../auth/field-guards.ts';
import { CAPPED_COUNT_TAKE, cappedCountFields, pagedById, type PrismaFieldBuilder } from './field-builders.ts';
import {
  dealershipPlugins,
  inIdOrder,
  partnerDealershipMappings,
  POSTCODE_SEARCH_LIMIT,
  POSTCODE_SEARCH_MAX_LIMIT,
  rankLocationsByPostcode,
  type RankedLocation,
  type InstalledPlugin,
  type PartnerDealershipMapping,
} from '../domain/dealerships.ts';
import type { ListSize } from './graphql-limits.ts';
import { type BoundedList, truncatedFieldDescription } from '../domain/whole-lists.ts';

// ───────────────────────────── the graph ─────────────────────────────

// Each record is one type, which the REST bodies share: the postcode search answers a location's
// address and website as these types (what its body leaves out of them is `graphOnly`). Where a
// REST shape must stay apart (a variant below), its fields come from the same definitions here.

/** How the search names the owner of an address or a contact detail (Rails' polymorphic `*_type`). */
const addressable = 'Location';

const LocationAddress = builder.prismaObject('LocationAddress', {
  description: 'A location’s postal address.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    addressable_id: t.exposeInt('location_id'),
    addressable_type: t.string({ resolve: () => addressable }),
    name: t.exposeString('name', { nullable: true }),
    street: t.exposeString('street'),
    city: t.exposeString('city'),
    seo_city: t.exposeString('seo_city', { nullable: true }),
    state: t.exposeString('state'),
    postcode: t.exposeInt('postcode'),
    lat: t.exposeFloat('lat', { nullable: true }),
    long: t.exposeFloat('long', { nullable: true }),
    place_id: t.exposeString('place_id', { nullable: true }),
    place_url: t.exposeString('place_url', { nullable: true }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
  }),
});

/** A location's contact details, declared once for LocationContactDetail and the search's variant of it. */
function contactDetailFields(t: PrismaFieldBuilder<'LocationContactDetail'>) {
  const text = (name: Parameters<typeof t.exposeString>[0]) => t.exposeString(name, { nullable: true });
  return {
    databaseId: t.exposeInt('id'),
    contactable_id: t.exposeInt('location_id'),
    contactable_type: t.string({ resolve: () => addressable }),
    email: text('email'),
    phone: text('phone'),
    mobile: text('mobile'),
    landline_phone: text('landline_phone'),
    fax: text('fax'),
    google_maps_url: text('google_maps_url'),
    place_id: text('place_id'),
    facebook_url: text('facebook_url'),
    instagram_url: text('instagram_url'),
    linkedin_url: text('linkedin_url'),
    mailchimp_url: text('mailchimp_url'),
    tiktok_url: text('tiktok_url'),
    youtube_url: text('youtube_url'),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
  };
}

const LocationContactDetail = builder.prismaObject('LocationContactDetail', {
  readPermission: 'search:location',
  description: "A location's business contact details (not personal data).",
  fields: (t) => contactDetailFields(t),
});

/** A website. The postcode search's body shows its id, name and url; the rest is the graph's. */
const Website = builder.prismaNode('Website', {
  ...readAlongItsHolder('index:dealership', 'a location’s website is part of the location'),
  description: 'A website of a dealership, where its cars and offers are shown.',
  ...nodeById,
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    name: t.exposeString('name'),
    slug: t.exposeString('slug', graphOnly),
    custom_slug: t.exposeString('custom_slug', { ...graphOnly, nullable: true }),
    url: t.exposeString('url'),
  }),
});
keepNodeIdField(Website);

const dealershipData = guardedBy('index:dealership');

/**
 * One type wherever a location is reached. Its id, name and type are what a car's, an offer's or a
 * key's reader sees of it; partner ids, address and website are the dealership's data
 * (index:dealership), its contact details the search's (search:location).
 */
export const Location = builder.prismaNode('Location', {
  ...readAlongItsHolder('index:dealership', 'a car’s, an offer’s or a key’s location is part of that record'),
  ...nodeById,
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    dealership_id: t.exposeInt('dealership_id'),
    name: t.exposeString('name'),
    location_type: t.exposeString('location_type'),
    partner_dealership_id: t.exposeString('partner_dealership_id', dealershipData),
    partner_account_id: t.exposeString('partner_account_id', dealershipData),
    address: t.relation('address', { type: LocationAddress, ...dealershipData, description: 'The location’s address.' }),
    contact_detail: t.relation('contact_detail', { type: LocationContactDetail, nullable: true }),
    website: t.relation('website', { type: Website, ...dealershipData, description: 'The location’s website, if it has one.' }),
  }),
});
keepNodeIdField(Location);

/** Dealership staff; the key details answer them too. */
export const User = builder.prismaObject('User', {
  description: 'A platform user (dealership staff), with their work e-mail.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    name: t.exposeString('name', { description: 'The user’s name.' }),
    // A staff member's work address, part of the record every valid key reads in its key details (the
    // spec types it as a string); read:personal_data guards customers' data, not the dealership's own team.
    email: t.exposeString('email', { description: 'The user’s e-mail address.' }),
  }),
});

// A dealership's staff: a connection paging its DealershipUser links by user id, answering each link's user.
const staffLinks = prismaConnectionHelpers(builder, 'DealershipUser', {
  cursor: 'dealership_id_user_id',
  query: { orderBy: { user_id: 'asc' } },
  // `id` keeps the nested selection non-empty when only the page info or the count is asked: Prisma refuses an empty one.
  select: (nodeSelection) => ({ user: nodeSelection({ select: { id: true } }) }),
  resolveNode: (link) => link.user as Prisma.UserModel,
});

/** A dealership's own fields, declared once for Dealership and the key details' variant of it. */
export function dealershipFields(t: PrismaFieldBuilder<'Dealership'>) {
  return { databaseId: t.exposeInt('id'), name: t.exposeString('name'), slug: t.exposeString('slug') };
}

export const Dealership = builder.prismaNode('Dealership', {
  readPermission: 'index:dealership',
  ...nodeById,
  fields: (t) => ({
    ...dealershipFields(t),
    locations: t.relatedConnection('locations', { type: Location, ...pagedById, description: 'The dealership’s locations, by id.' }),
    websites: t.relatedConnection('websites', { type: Website, ...pagedById, description: 'The dealership’s websites, by id.' }),
    cars: t.relatedConnection('cars', { ...pagedById, nullable: true, description: 'The dealership’s cars, by id.' }),
    users: t.connection(
      {
        type: User,
        description: 'The dealership’s staff (platform users), by user id.',
        args: staffLinks.getArgs(),
        select: (args, context, nestedSelection) => ({
          _count: { select: { users: true } },
          users: staffLinks.getQuery(args, context, nestedSelection),
        }),
        resolve: (dealership, args, context) => ({
          ...staffLinks.resolve(dealership.users, args, context),
          totalCount: dealership._count.users,
        }),
      },
      { name: 'DealershipUsersConnection', fields: (connection) => ({ totalCount: connection.exposeInt('totalCount') }) },
    ),
  }),
});
keepNodeIdField(Dealership);

builder.queryFields((t) => ({
  dealership: t.prismaField({
    type: Dealership,
    nullable: true,
    description: 'A dealership the key reaches; null when it does not exist or is not reachable.',
    authScopes: { permission: 'index:dealership' },
    args: { id: t.arg.int({ required: true, description: 'The dealership’s id.' }) },
    resolve: (query, _root, args, context) => context.db.dealership.findUnique({ ...query, where: { id: args.id } }),
  }),
  dealerships: t.prismaConnection(
    {
      type: Dealership,
      cursor: 'id',
      description: 'The dealerships the key reaches, by id.',
      authScopes: { permission: 'index:dealership' },
      totalCount: (_connection, _args, context) => context.db.dealership.count({ take: CAPPED_COUNT_TAKE }),
      resolve: (query, _root, _args, context) => context.db.dealership.findMany({ ...query, orderBy: { id: 'asc' } }),
    },
    { fields: cappedCountFields },
  ),
}));

// ───────────────────────────── 4.14 partner mappings ─────────────────────────────

const PartnerDealershipRef = builder.objectRef<PartnerDealershipMapping>('PartnerDealership').implement({
  variantOf: {
    record: 'Location',
    reason: "A partner mapping: the location with its dealership's name and the partner's ids, never null.",
  },
  description: 'A platform location mapped to its ids at the partner.',
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'The platform location id.' }),
    name: t.exposeString('name', { description: 'The location name.' }),
    dealership_id: t.exposeInt('dealership_id'),
    dealership_name: t.exposeString('dealership_name'),
    partner_dealership_id: t.exposeString('partner_dealership_id', { description: "The location's id at the partner (primary)." }),
    partner_account_id: t.exposeString('partner_account_id', { description: 'The account/group id at the partner (secondary).' }),
  }),
});

const PartnerDealerships = builder.objectRef<BoundedList<PartnerDealershipMapping>>('PartnerDealerships').implement({
  description: 'The dealership locations the vehicle-data partner knows, with its ids for them.',
  fields: (t) => ({
    dealerships: t.expose('entries', {
      type: [PartnerDealershipRef],
      description: 'The mappings, by dealership then location id (at most the bound `dealerships_truncated` states).',
    }),
    dealerships_truncated: t.exposeBoolean('truncated', { description: truncatedFieldDescription('dealerships') }),
  }),
});

builder.queryField('partner_dealerships', (t) =>
  t.field({
    type: PartnerDealerships,
    description: "The partner mappings of the key's dealerships, by dealership then location id.",
    authScopes: { permission: 'index:dealership' },
    resolve: (_root, _args, context) => partnerDealershipMappings(context.db),
  }),
);

// ───────────────────────────── 4.15 postcode search ─────────────────────────────

// The search's own variant of the contact details: the same fields, but answered outside the
// search:location guard of LocationContactDetail (the search itself needs search:location), because
// every result carries its contact details (never null), which a guarded type cannot.
const DealershipSearchContactDetail = builder.prismaObject('LocationContactDetail', {
  variant: 'DealershipSearchContactDetail',
  variantOf: {
    record: 'Location contact detail',
    reason: "Never null and read with the search's own permission; `LocationContactDetail` is null without `search:location`.",
  },
  description: 'The contact details of a location found by a search.',
  ...answeredByItsRoot('only the postcode search answers it, which needs search:location; every result carries its details'),
  fields: (t) => contactDetailFields(t),
});

const DealershipSearchResult = builder.prismaObject('Location', {
  variant: 'DealershipSearchResult',
  variantOf: {
    record: 'Location',
    reason: "A search result: `distance_km` and `website_url` are the search's, and address, contact details and website are never null.",
  },
  description: 'A dealership location found by the postcode search.',
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'The location id.' }),
    dealership_id: t.exposeInt('dealership_id'),
    name: t.exposeString('name'),
    website_url: t.string({
      nullable: true,
      description: "The location's own website's address; null when the location has none (its `website` is then its dealership's).",
      resolve: (location) => searchAnswerOf(location).own_website?.url ?? null,
    }),
    // The search only answers locations with an address (it cannot rank the others) and contact details.
    address: t.relation('address', {
      type: LocationAddress,
      description: 'The location’s address.',
      onNull: (location) => new Error(`location ${location.id} has no address`),
    }),
    contact_detail: t.relation('contact_detail', {
      type: DealershipSearchContactDetail,
      description: "The location's contact details (a location without them is not a search result).",
      onNull: (location) => new Error(`location ${location.id} has no contact details`),
    }),
    website: t.field({
      type: Website,
      description:
        "Where to send the searcher: the location's own website, else its dealership's first website (lowest id). " +
        'A location whose dealership has no website is not a search result.',
      resolve: (location) => searchAnswerOf(location).website,
    }),
    distance_km: t.float({
      description: "Distance from the postcode's centre in kilometres (great-circle, to 0.1 km).",
      resolve: (location) => searchAnswerOf(location).distance_km,
    }),
  }),
});

/** What the search worked out for each answered location (distance, websites), set per request on the row it answers. */
const searchAnswers = new WeakMap<object, RankedLocation>();

function searchAnswerOf(location: { id: number }): RankedLocation {
  const answer = searchAnswers.get(location);
  if (!answer) throw new Error(`location ${location.id} was not ranked by the search`);
  return answer;
}

builder.queryField('search_dealerships_by_postcode', (t) =>
  t.prismaField({
    type: [DealershipSearchResult],
    description:
      "The manufacturer's sales locations closest to the postcode, nearest first, each with its distance in kilometres: " +
      `showrooms of dealerships franchised for the manufacturer (not service centres, parts counters, used-car yards or head offices, ` +
      `nor a showroom named for another manufacturer). A location without contact details, or whose dealership has no website, is left out. ` +
      `${POSTCODE_SEARCH_LIMIT} by default, at most ${POSTCODE_SEARCH_MAX_LIMIT}. ` +
      '422 geolocation_error for a postcode that is not a known four-digit Australian postcode.',
    authScopes: { permission: 'search:location' },
    extensions: {
      listSize: { slicingArgument: 'limit', defaultSize: POSTCODE_SEARCH_LIMIT, maxSize: POSTCODE_SEARCH_MAX_LIMIT } satisfies ListSize,
    },
    args: {
      id: t.arg.int({ required: true, description: 'The manufacturer id.' }),
      // Nullable on purpose: missing or blank is the geolocation_error of the search, which a required arg's invalid_input would replace.
      postcode: t.arg.string({ description: 'Four-digit Australian postcode (required); text, so 0800 keeps its leading zero.' }),
      limit: t.arg.int({
        description: `How many locations to answer: 1 to ${POSTCODE_SEARCH_MAX_LIMIT}, default ${POSTCODE_SEARCH_LIMIT}.`,
      }),
    },
    resolve: async (query, _root, args, context) => {
      const ranked = await rankLocationsByPostcode(
        context.db,
        { manufacturerId: args.id, postcode: args.postcode, limit: args.limit },
        context.geocoder,
      );
      const ids = ranked.map((location) => location.id);
      if (ids.length === 0) return [];
      const rows = inIdOrder(await context.db.location.findMany({ ...query, where: { id: { in: ids } } }), ids);
      const answerById = new Map(ranked.map((location) => [location.id, location]));
      for (const row of rows) {
        const answer = answerById.get(row.id);
        if (answer) searchAnswers.set(row, answer);
      }
      return rows;
    },
  }),
);

// ───────────────────────────── 4.17 plugins ─────────────────────────────

const PluginRef = builder.objectRef<InstalledPlugin>('InstalledPlugin').implement({
  description: 'A plugin installed on a dealership.',
  fields: (t) => ({
    name: t.exposeString('name'),
    slug: t.exposeString('slug'),
    categories: t.exposeStringList('categories'),
    installed_at: t.expose('installed_at', { type: 'DateTime' }),
    trial: t.exposeBoolean('trial'),
  }),
});

const DealershipPlugins = builder.objectRef<{ plugins: InstalledPlugin[] }>('DealershipPlugins').implement({
  description: 'The plugins a dealership has installed.',
  fields: (t) => ({ plugins: t.expose('plugins', { type: [PluginRef] }) }),
});

builder.queryField('dealership_plugins', (t) =>
  t.field({
    type: DealershipPlugins,
    description: 'The plugins of a dealership the key reaches, by plugin name.',
    authScopes: { permission: 'index:plugin' },
    args: { dealership_slug: t.arg.string({ required: true, description: 'The dealership, by slug.' }) },
    resolve: async (_root, args, context) => ({ plugins: await dealershipPlugins(context.db, args.dealership_slug) }),
  }),
);
