// Dealerships: the graph front-end teams follow (Dealership, Location, Website, User; GraphQL only),
// and the documented operations over dealerships and their locations: partner mappings (4.14),
// postcode search (4.15) and plugins (4.17). The REST operations have their own types, exactly the
// documented shapes, because the REST body is every field of the return type.
import { builder, nodeById } from '../builder.ts';
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
import type { ListSize } from '../graphql-limits.ts';

// ───────────────────────────── the graph ─────────────────────────────

export const LocationAddress = builder.prismaObject('LocationAddress', {
  fields: (t) => ({
    id: t.exposeInt('id'),
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
  }),
});

export const LocationContactDetail = builder.prismaObject('LocationContactDetail', {
  description: "A location's business contact details (not personal data).",
  fields: (t) => ({
    id: t.exposeInt('id'),
    email: t.exposeString('email', { nullable: true }),
    phone: t.exposeString('phone', { nullable: true }),
    mobile: t.exposeString('mobile', { nullable: true }),
    landline_phone: t.exposeString('landline_phone', { nullable: true }),
    fax: t.exposeString('fax', { nullable: true }),
    google_maps_url: t.exposeString('google_maps_url', { nullable: true }),
    place_id: t.exposeString('place_id', { nullable: true }),
    facebook_url: t.exposeString('facebook_url', { nullable: true }),
    instagram_url: t.exposeString('instagram_url', { nullable: true }),
    linkedin_url: t.exposeString('linkedin_url', { nullable: true }),
    mailchimp_url: t.exposeString('mailchimp_url', { nullable: true }),
    tiktok_url: t.exposeString('tiktok_url', { nullable: true }),
    youtube_url: t.exposeString('youtube_url', { nullable: true }),
  }),
});

export const Website = builder.prismaNode('Website', {
  ...nodeById,
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    slug: t.exposeString('slug'),
    custom_slug: t.exposeString('custom_slug', { nullable: true }),
    url: t.exposeString('url'),
  }),
});

export const Location = builder.prismaNode('Location', {
  ...nodeById,
  fields: (t) => ({
    id: t.exposeInt('id'),
    dealership_id: t.exposeInt('dealership_id'),
    name: t.exposeString('name'),
    location_type: t.exposeString('location_type'),
    partner_dealership_id: t.exposeString('partner_dealership_id', { nullable: true }),
    partner_account_id: t.exposeString('partner_account_id', { nullable: true }),
    address: t.relation('address', { type: LocationAddress, nullable: true }),
    contact_detail: t.relation('contact_detail', { type: LocationContactDetail, nullable: true }),
    website: t.relation('website', { type: Website, nullable: true }),
  }),
});

export const User = builder.prismaObject('User', {
  description: 'A platform user (dealership staff), with their work e-mail.',
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    // Staff work addresses, as the key details answer them: read:personal_data guards customers' data.
    email: t.exposeString('email'),
  }),
});

export const Dealership = builder.prismaNode('Dealership', {
  ...nodeById,
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    slug: t.exposeString('slug'),
    locations: t.relatedConnection('locations', { type: Location, cursor: 'id', query: { orderBy: { id: 'asc' } }, totalCount: true, description: 'The dealership’s locations, by id.' }),
    websites: t.relatedConnection('websites', { type: Website, cursor: 'id', query: { orderBy: { id: 'asc' } }, totalCount: true, description: 'The dealership’s websites, by id.' }),
    // `users`, a connection through the DealershipUser link: src/schema/dealership-users.ts.
    // The Car type is the car area's (src/schema/car.ts). Stock is read:car data wherever it is
    // reached from (src/auth/type-guards.ts), so without that permission the connection is null.
    cars: t.relatedConnection('cars', { cursor: 'id', query: { orderBy: { id: 'asc' } }, nullable: true, totalCount: true, description: 'The dealership’s cars, by id.' }),
  }),
});

builder.queryField('dealership', (t) =>
  t.prismaField({
    type: Dealership,
    nullable: true,
    description: 'A dealership the key reaches; null when it does not exist or is not reachable.',
    authScopes: { permission: 'index:dealership' },
    args: { id: t.arg.int({ required: true }) },
    resolve: (query, _root, args, context) =>
      context.db.dealership.findUnique({ ...query, where: { id: args.id } }),
  }),
);

builder.queryField('dealerships', (t) =>
  t.prismaConnection({
    type: Dealership,
    cursor: 'id',
    description: 'The dealerships the key reaches, by id.',
    authScopes: { permission: 'index:dealership' },
    totalCount: (_connection, _args, context) => context.db.dealership.count(),
    resolve: (query, _root, _args, context) =>
      context.db.dealership.findMany({ ...query, orderBy: { id: 'asc' } }),
  }),
);

// ───────────────────────────── 4.14 partner mappings ─────────────────────────────

const PartnerDealershipRef = builder.objectRef<PartnerDealershipMapping>('PartnerDealership').implement({
  description: 'A platform location mapped to its ids at the partner.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The platform location id.' }),
    name: t.exposeString('name', { description: 'The location name.' }),
    dealership_id: t.exposeInt('dealership_id'),
    dealership_name: t.exposeString('dealership_name'),
    partner_dealership_id: t.exposeString('partner_dealership_id', { description: "The location's id at the partner (primary)." }),
    partner_account_id: t.exposeString('partner_account_id', { description: "The account/group id at the partner (secondary)." }),
  }),
});

const PartnerDealerships = builder.objectRef<{ dealerships: PartnerDealershipMapping[] }>('PartnerDealerships').implement({
  fields: (t) => ({ dealerships: t.expose('dealerships', { type: [PartnerDealershipRef] }) }),
});

builder.queryField('partner_dealerships', (t) =>
  t.field({
    type: PartnerDealerships,
    description: "The partner mappings of the key's dealerships, by dealership then location id.",
    authScopes: { permission: 'index:dealership' },
    resolve: async (_root, _args, context) => ({ dealerships: await partnerDealershipMappings(context.db) }),
  }),
);

// ───────────────────────────── 4.15 postcode search ─────────────────────────────

const addressable = 'Location';

const DealershipSearchAddress = builder.prismaObject('LocationAddress', {
  variant: 'DealershipSearchAddress',
  fields: (t) => ({
    id: t.exposeInt('id'),
    addressable_id: t.exposeInt('location_id'),
    addressable_type: t.string({ resolve: () => addressable }),
    city: t.exposeString('city'),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
    long: t.exposeFloat('long', { nullable: true }),
    lat: t.exposeFloat('lat', { nullable: true }),
    name: t.exposeString('name', { nullable: true }),
    place_id: t.exposeString('place_id', { nullable: true }),
    place_url: t.exposeString('place_url', { nullable: true }),
    seo_city: t.exposeString('seo_city', { nullable: true }),
    postcode: t.exposeInt('postcode'),
    state: t.exposeString('state'),
    street: t.exposeString('street'),
  }),
});

const DealershipSearchContactDetail = builder.prismaObject('LocationContactDetail', {
  variant: 'DealershipSearchContactDetail',
  fields: (t) => ({
    id: t.exposeInt('id'),
    contactable_id: t.exposeInt('location_id'),
    contactable_type: t.string({ resolve: () => addressable }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
    email: t.exposeString('email', { nullable: true }),
    facebook_url: t.exposeString('facebook_url', { nullable: true }),
    fax: t.exposeString('fax', { nullable: true }),
    google_maps_url: t.exposeString('google_maps_url', { nullable: true }),
    instagram_url: t.exposeString('instagram_url', { nullable: true }),
    landline_phone: t.exposeString('landline_phone', { nullable: true }),
    linkedin_url: t.exposeString('linkedin_url', { nullable: true }),
    mailchimp_url: t.exposeString('mailchimp_url', { nullable: true }),
    mobile: t.exposeString('mobile', { nullable: true }),
    phone: t.exposeString('phone', { nullable: true }),
    place_id: t.exposeString('place_id', { nullable: true }),
    tiktok_url: t.exposeString('tiktok_url', { nullable: true }),
    youtube_url: t.exposeString('youtube_url', { nullable: true }),
  }),
});

const DealershipSearchWebsite = builder.prismaObject('Website', {
  variant: 'DealershipSearchWebsite',
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    url: t.exposeString('url'),
  }),
});

const DealershipSearchResult = builder.prismaObject('Location', {
  variant: 'DealershipSearchResult',
  description: 'A dealership location found by the postcode search.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The location id.' }),
    dealership_id: t.exposeInt('dealership_id'),
    name: t.exposeString('name'),
    website_url: t.string({
      nullable: true,
      description: "The location's own website's address; null when the location has none (its `website` is then its dealership's).",
      resolve: (location) => searchAnswerOf(location).own_website?.url ?? null,
    }),
    // The search only answers locations with an address (it cannot rank the others).
    address: t.field({
      type: DealershipSearchAddress,
      select: (_args, _context, nested) => ({ address: nested(true) }),
      resolve: (location) => {
        if (!location.address) throw new Error(`location ${location.id} has no address`);
        return location.address;
      },
    }),
    // The search only answers locations with contact details.
    contact_detail: t.field({
      type: DealershipSearchContactDetail,
      description: "The location's contact details (a location without them is not a search result).",
      select: (_args, _context, nested) => ({ contact_detail: nested(true) }),
      resolve: (location) => {
        if (!location.contact_detail) throw new Error(`location ${location.id} has no contact details`);
        return location.contact_detail;
      },
    }),
    website: t.field({
      type: DealershipSearchWebsite,
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
    extensions: { listSize: { slicingArgument: 'limit', defaultSize: POSTCODE_SEARCH_LIMIT, maxSize: POSTCODE_SEARCH_MAX_LIMIT } satisfies ListSize },
    args: {
      id: t.arg.int({ required: true, description: 'The manufacturer id.' }),
      // Nullable on purpose: missing or blank is the geolocation_error of the search, which a required arg's invalid_input would replace.
      postcode: t.arg.string({ description: 'Four-digit Australian postcode (required); text, so 0800 keeps its leading zero.' }),
      limit: t.arg.int({ description: `How many locations to answer: 1 to ${POSTCODE_SEARCH_MAX_LIMIT}, default ${POSTCODE_SEARCH_LIMIT}.` }),
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
  fields: (t) => ({ plugins: t.expose('plugins', { type: [PluginRef] }) }),
});

builder.queryField('dealership_plugins', (t) =>
  t.field({
    type: DealershipPlugins,
    description: "The plugins of a dealership the key reaches, by plugin name.",
    authScopes: { permission: 'index:plugin' },
    args: { dealership_slug: t.arg.string({ required: true }) },
    resolve: async (_root, args, context) => ({
      plugins: await dealershipPlugins(context.db, args.dealership_slug),
    }),
  }),
);
