// The benchmark's floor (`npm run bench`): a plain node:http handler that answers every REST read of
// the service that has a JSON body (the GET paths of src/rest/routes.ts but the car redirect, whose
// answer is a 302 with no body, and the partner sign-on, which consumes its token) with the same
// Prisma client and the service's own domain functions, so the queries cannot drift: no GraphQL, no
// Sofa, no caches. The key is verified by its hash on every request (lookUpKey, one statement, as the
// service does on a key-cache miss); every read goes through the caller's scoped client (forActor) as
// the service reads it. A read whose resolver answers its body as is runs that resolver, no more; one
// whose body is shaped past it (or whose resolver queries inline in src/schema) has its own answer
// below, issuing the queries that resolver issues with the selection Pothos makes for the REST body
// (whole rows where the type exposes most of its columns, the relations it answers, in its order).
// Its paths, and who may call them, are the REST door's own (src/rest/routes.ts's table and the root
// field's access declaration), checked as the door checks them. test/bench-bare-handler.test.ts holds
// every read's bodies, statuses and SQL statements (the key lookup aside) equal to the service's.
//
// Run alone: DATABASE_URL=… PORT=… tsx scripts/bench-bare-handler.ts (listens on 127.0.0.1).
import { getNamedType, type GraphQLField, type GraphQLFieldResolver, type GraphQLResolveInfo } from 'graphql';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { lastUseIsStale, lookUpKey, recordKeyUse, type Actor } from '../src/auth/api-keys.ts';
import { loadSecretsConfig } from '../src/config/index.ts';
import type { Context } from '../src/context.ts';
import type { Keyring } from '../src/config/secrets.ts';
import { createDb, type Db, type Prisma } from '../src/db/client.ts';
import { forActor, type DbClients } from '../src/db/scoped.ts';
import { carPerformance, type CarPerformance } from '../src/domain/car-performance.ts';
import { contactListArgs, contactNotFound, contactWhere } from '../src/domain/contacts.ts';
import { inIdOrder, partnerDealershipMappings, rankLocationsByPostcode } from '../src/domain/dealerships.ts';
import { PostcodeGeocoder, type Geocoder } from '../src/domain/geocoding.ts';
import { jsonStrings } from '../src/domain/json-columns.ts';
import { keyDealerships } from '../src/domain/key-dealerships.ts';
import {
  type availabilitiesSelect,
  availabilityGroups,
  shownVariantWhere,
  specificationGroups,
  type specificationValuesSelect,
} from '../src/domain/model-variants.ts';
import {
  expiryInWords,
  imageOrModelImage,
  imageOrModelImageSelect,
  imageVersions,
  manufacturerOffersWhere,
  requireManufacturer,
  sanitizedDescriptionOf,
  visibleDealershipLinks,
  websiteOfferWhere,
} from '../src/domain/offers.ts';
import { carPaymentProcessors, processorAuthorizationKey } from '../src/domain/payment-processors.ts';
import { boundedList } from '../src/domain/whole-lists.ts';
import { refusalOf } from '../src/auth/field-access.ts';
import { permissionDenied } from '../src/errors.ts';
import { restErrorResponse } from '../src/rest/errors.ts';
import { accessOfRoute, matchPath, restRoutes, type RestRoute } from '../src/rest/routes.ts';
import { getSchema } from '../src/schema/index.ts';
import { numberOrZero, textOrEmpty } from '../src/schema/always-present.ts';

const UNAUTHORIZED = { error: 'unauthorized', message: 'A valid API key is required: send "Authorization: Bearer <key>".' };

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function authenticate(db: Db, req: IncomingMessage, now: Date): Promise<Actor | null> {
  const header = req.headers.authorization ?? '';
  const key = header.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : '';
  const verified = await lookUpKey(db, key, now);
  if (!verified) return null;
  // Same rule as the service: last_used_at at most once a minute, known from the lookup's own row.
  if (lastUseIsStale(verified.lastUsedAt, now)) await recordKeyUse(db, verified.actor.apiKeyId, now);
  return verified.actor;
}

/** What the handler is given besides the database: what the service's context gives its resolvers. */
export interface BareServices {
  secretsKeyring: Keyring;
  geocoder: Geocoder;
}

/** One request, as a route reads it. */
interface BareRequest {
  db: Db;
  actor: Actor;
  at: Date;
  services: BareServices;
  /** The path parameters, decoded. */
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
}

/**
 * A route of the bare handler: one GET read of the REST door. Its path and who may call it are the
 * REST door's (src/rest/routes.ts, and the root field's access declaration), looked up by its field.
 */
export interface BareRoute {
  /** The root field that answers it on the service (the route table's `field`). */
  field: `Query.${string}`;
  answer(request: BareRequest): Promise<unknown>;
}

const clientsOf = (request: BareRequest): DbClients => ({ db: forActor(request.db, request.actor), unscopedDb: request.db });

/** A query-string value as the REST door reads it: an empty one is left out. */
const text = (query: URLSearchParams, name: string): string | null => query.get(name) || null;
const integer = (value: string | null | undefined): number | null => (value ? Number(value) : null);
const pathInteger = (request: BareRequest, name: string): number => Number(request.params[name]);

/** The Date scalar (yyyy-mm-dd). */
const day = (date: Date): string => date.toISOString().slice(0, 10);

/** Spec 4.7 with the REST selection: the key's permissions and dealerships with their locations and users. */
async function apiKeyDetails(db: Db, actor: Actor): Promise<unknown> {
  // The service's own domain function, with the query Pothos asks for the REST selection.
  const { entries: dealerships, truncated } = await keyDealerships(forActor(db, actor), {
    include: {
      locations: { orderBy: { id: 'asc' } },
      users: { select: { user: true }, orderBy: { user_id: 'asc' } },
    },
  });
  return {
    id: actor.apiKeyId,
    permissions: [...actor.permissions].sort(),
    dealerships: dealerships.map((dealership) => ({
      id: dealership.id,
      name: dealership.name,
      slug: dealership.slug,
      locations: dealership.locations.map((location) => ({ id: location.id, name: location.name, location_type: location.location_type })),
      users: dealership.users.map(({ user }) => ({ id: user.id, name: user.name, email: user.email })),
    })),
    dealerships_truncated: truncated,
  };
}

/**
 * The performance record as the service prints it: its scalars (DateTime ISO, Date yyyy-mm-dd) and
 * the never-null fields' empty values (src/schema/always-present.ts).
 */
function performanceBody(performance: CarPerformance): unknown {
  return {
    ...performance,
    vin: textOrEmpty(performance.vin),
    start_price: numberOrZero(performance.start_price),
    price_changes: performance.price_changes.map((change) => ({
      ...change,
      dapprice: numberOrZero(change.dapprice),
      egcprice: numberOrZero(change.egcprice),
    })),
    sold_date: performance.sold_date ? day(performance.sold_date) : null,
  };
}

/** The relations the offer record's shared fields read (src/schema/offer.ts commonOfferFields), beside its whole row. */
const commonOfferInclude = {
  manufacturer: { select: { name: true } },
  dealerships: visibleDealershipLinks(),
} as const;

type CommonOffer = Prisma.OfferModel & { manufacturer: { name: string }; dealerships: { dealership_id: number }[] };

async function commonOfferBody(clients: DbClients, offer: CommonOffer, at: Date): Promise<Record<string, unknown>> {
  const dealerships = boundedList(offer.dealerships);
  return {
    id: offer.id,
    manufacturer_id: offer.manufacturer_id,
    name: offer.name,
    disclaimer: offer.disclaimer,
    expires_at: day(offer.expires_at),
    created_at: offer.created_at,
    updated_at: offer.updated_at,
    description: offer.description,
    sanitized_description: await sanitizedDescriptionOf(clients, offer),
    manufacturer: offer.manufacturer.name,
    expiry_in_words: expiryInWords(offer.expires_at, at),
    dealership_ids: dealerships.entries.map((link) => link.dealership_id),
    dealership_ids_truncated: dealerships.truncated,
  };
}

/** A location's address and contact details: every column the REST types expose, under their REST names. */
function addressBody(address: { id: number; location_id: number } & Record<string, unknown>): unknown {
  const { id, location_id, ...columns } = address;
  return { ...columns, id, addressable_id: location_id, addressable_type: 'Location' };
}

function contactDetailBody(detail: { id: number; location_id: number } & Record<string, unknown>): unknown {
  const { id, location_id, ...columns } = detail;
  return { ...columns, id, contactable_id: location_id, contactable_type: 'Location' };
}

const category = { select: { id: true, name: true, slug: true, position: true } } as const;

/**
 * The variant's relations as Pothos asks for them: specificationValuesSelect and availabilitiesSelect
 * (src/domain/model-variants.ts) with each relation before the columns beside it, the order Pothos
 * merges a selection in, so the statements are the service's column for column.
 */
const variantRelations = {
  specification_values: { select: { value: true, field: { select: { id: true, category, name: true, slug: true, position: true } } } },
  availabilities: {
    select: {
      id: true,
      option: { select: { id: true, category, code: true, description: true, recommended_retail_price_cents: true, position: true } },
      availability: true,
    },
  },
} as const satisfies typeof specificationValuesSelect & typeof availabilitiesSelect;

const contactVehicles = { vehicles: { orderBy: { id: 'asc' } } } as const;

/** The reads whose body is shaped past their resolver's result (by its type's own field resolvers), each as the service shapes it. */
const ownRoutes: readonly BareRoute[] = [
  {
    field: 'Query.apikey_details',
    answer: ({ db, actor }) => apiKeyDetails(db, actor),
  },
  {
    field: 'Query.car_performance',
    answer: async (request) => {
      const lookupBy = request.query.get('lookup_by') === 'vin' ? 'vin' : null;
      return performanceBody(await carPerformance(clientsOf(request), request.params.id ?? '', lookupBy, request.at));
    },
  },
  {
    field: 'Query.car_payment_processors',
    answer: async (request) => {
      const processors = await carPaymentProcessors(clientsOf(request).db, request.params.id ?? '', text(request.query, 'website'));
      return {
        payment_processors: processors.map((processor) => ({
          id: processor.id,
          authorization_type: processor.authorization_type,
          authorization_key: processorAuthorizationKey(request.services, processor),
          merchant_id: processor.merchant_id,
          google_merchant_id: textOrEmpty(processor.google_merchant_id),
          supports_all_types: processor.supports_all_types,
          apple_pay_enabled: processor.apple_pay_enabled,
          google_pay_enabled: processor.google_pay_enabled,
          types: jsonStrings(processor.types),
          deposit_amount: processor.deposit_amount,
        })),
      };
    },
  },
  {
    field: 'Query.model_variant',
    answer: async (request) => {
      const clients = clientsOf(request);
      const where = await shownVariantWhere(clients, request.actor, request.params.slug ?? '', text(request.query, 'website_id') ?? '');
      // The resolver's own query (src/schema/model-variant.ts), inline there.
      const variant = await clients.db.modelVariant.findUniqueOrThrow({
        where,
        include: variantRelations,
      });
      const { specification_values, availabilities, image_url, image_thumb_url, banner_key, banner_url, banner_height, banner_width } =
        variant;
      return {
        id: variant.id,
        model_id: variant.model_id,
        slug: variant.slug,
        name: variant.name,
        full_name: variant.full_name,
        bodyStyle: variant.bodyStyle,
        transmission: variant.transmission,
        modelCode: variant.modelCode,
        engine_capacity: variant.engine_capacity,
        fuel: variant.fuel,
        redbookCode: variant.redbookCode,
        series: variant.series,
        variant_category: variant.variant_category,
        vehicle_category: variant.vehicle_category,
        description: variant.description,
        short_description: variant.short_description,
        youtube_id: variant.youtube_id,
        brochure_url: variant.brochure_url,
        interior_image_url: variant.interior_image_url,
        second_interior_image_url: variant.second_interior_image_url,
        isHybrid: variant.isHybrid,
        isElectric: variant.isElectric,
        cylinders: variant.cylinders,
        year: variant.year,
        tare_weight: variant.tare_weight,
        gvm: variant.gvm,
        seats: variant.seats,
        price: variant.price,
        image: imageVersions(image_url, image_thumb_url),
        banner_data: { key: banner_key, url: banner_url, height: banner_height, width: banner_width },
        specifications: specificationGroups(specification_values),
        availability_matrix: availabilityGroups(availabilities),
      };
    },
  },
  {
    field: 'Query.manufacturer_offers',
    answer: async (request) => {
      const clients = clientsOf(request);
      const manufacturerId = pathInteger(request, 'id');
      await requireManufacturer(clients.db, manufacturerId);
      // The resolver's own query (src/schema/offer.ts), inline there, with the list form's selection.
      const offers = await clients.db.offer.findMany({
        where: manufacturerOffersWhere(manufacturerId, request.at),
        orderBy: { id: 'asc' },
        include: {
          ...commonOfferInclude,
          images: { orderBy: [{ position: 'asc' }, { id: 'asc' }], select: { url: true, thumb_url: true } },
          // Pothos reads the model's whole row (its `model` relation) with the image fallback's variants.
          model: { include: { variants: imageOrModelImageSelect.model.select.variants } },
        },
      });
      return Promise.all(
        offers.map(async (offer) => ({
          ...(await commonOfferBody(clients, offer, request.at)),
          images: offer.images.map((image) => imageVersions(image.url, image.thumb_url)),
          image_or_model_image: imageOrModelImage(offer),
          model: { name: offer.model.name, slug: offer.model.slug, new_slug: offer.model.new_slug, path: offer.model.path },
        })),
      );
    },
  },
  {
    field: 'Query.website_offer',
    answer: async (request) => {
      const clients = clientsOf(request);
      const where = await websiteOfferWhere(clients, request.actor, pathInteger(request, 'website_id'), pathInteger(request, 'id'));
      // The resolver's own query (src/schema/offer.ts), inline there, with the website form's selection.
      const offer = await clients.db.offer.findUniqueOrThrow({
        where,
        include: {
          ...commonOfferInclude,
          preferred_locations: { orderBy: { location_id: 'asc' }, select: { location: true } },
          model: { select: { name: true, slug: true, new_slug: true, path: true } },
          website: { select: { models: { select: { model_id: true, override_url: true } } } },
        },
      });
      return {
        ...(await commonOfferBody(clients, offer, request.at)),
        category: textOrEmpty(offer.category),
        preferred_locations: offer.preferred_locations.map(({ location }) => ({ id: location.id, name: location.name })),
        model: {
          ...offer.model,
          override_url: offer.website?.models.find((entry) => entry.model_id === offer.model_id)?.override_url ?? null,
        },
      };
    },
  },
  {
    field: 'Query.contact',
    answer: async (request) => {
      const { db } = clientsOf(request);
      const where = await contactWhere(db, pathInteger(request, 'dealership_id'), pathInteger(request, 'id'));
      // The resolver's own query (src/schema/contact.ts), inline there.
      const contact = await db.contact.findFirst({ include: contactVehicles, where });
      if (!contact) throw contactNotFound();
      return {
        id: contact.id,
        dealership_id: contact.dealership_id,
        first_name: contact.first_name,
        postcode: request.actor.permissions.has('read:personal_data') ? contact.postcode : null,
        vehicles: contact.vehicles.map(({ id, make, model, year, rego }) => ({ id, make, model, year, rego })),
      };
    },
  },
  {
    field: 'Query.contacts',
    answer: async (request) => {
      const { db } = clientsOf(request);
      const { query } = request;
      const args = await contactListArgs(db, {
        dealership_id: pathInteger(request, 'dealership_id'),
        page: integer(query.get('page')),
        per_page: integer(query.get('per_page')),
        after_id: integer(query.get('after_id')),
      });
      // The resolver's own query (src/schema/contact.ts), inline there.
      const contacts = await db.contact.findMany({ include: contactVehicles, ...args });
      const personal = request.actor.permissions.has('read:personal_data');
      return contacts.map((contact) => ({
        id: contact.id,
        dealership_id: contact.dealership_id,
        first_name: contact.first_name,
        postcode: personal ? contact.postcode : null,
        vehicles: contact.vehicles.map(({ id, make, model, year, rego }) => ({ id, make, raw_model: model, year, rego })),
      }));
    },
  },
  {
    field: 'Query.partner_dealerships',
    answer: async (request) => {
      const { entries, truncated } = await partnerDealershipMappings(clientsOf(request).db);
      return { dealerships: entries, dealerships_truncated: truncated };
    },
  },
  {
    field: 'Query.search_dealerships_by_postcode',
    answer: async (request) => {
      const { db } = clientsOf(request);
      const ranked = await rankLocationsByPostcode(
        db,
        {
          manufacturerId: pathInteger(request, 'id'),
          postcode: text(request.query, 'postcode'),
          limit: integer(request.query.get('limit')),
        },
        request.services.geocoder,
      );
      const ids = ranked.map((location) => location.id);
      if (ids.length === 0) return [];
      // The resolver's own query (src/schema/dealership.ts), inline there.
      const rows = inIdOrder(
        await db.location.findMany({ where: { id: { in: ids } }, include: { address: true, contact_detail: true } }),
        ids,
      );
      const answerById = new Map(ranked.map((location) => [location.id, location]));
      return rows.map((row) => {
        const answer = answerById.get(row.id);
        if (!answer || !row.address || !row.contact_detail) throw new Error(`location ${row.id} is not a search result`);
        const website = { id: answer.website.id, name: answer.website.name, url: answer.website.url };
        return {
          id: row.id,
          dealership_id: row.dealership_id,
          name: row.name,
          website_url: answer.own_website?.url ?? null,
          address: addressBody(row.address),
          contact_detail: contactDetailBody(row.contact_detail),
          website,
          distance_km: answer.distance_km,
        };
      });
    },
  },
];

/** What a root field's resolver reads of its context here: the service's own, minus what no read uses. */
type BareContext = Pick<Context, 'db' | 'unscopedDb' | 'actor' | 'now' | 'geocoder'> & { config: BareServices };

/**
 * A read whose root field's resolver answers its REST body as is (its domain function's result): that
 * resolver as declared (Pothos keeps it as `pothosOptions.resolve`), given the route's arguments, no GraphQL.
 */
function resolverAnswer(coordinate: string): BareRoute['answer'] {
  let field: GraphQLField<unknown, BareContext> | undefined;
  return async (request) => {
    field ??= getSchema().getQueryType()?.getFields()[coordinate.slice('Query.'.length)];
    const options = field?.extensions.pothosOptions as { resolve?: GraphQLFieldResolver<unknown, BareContext> } | undefined;
    if (!field || !options?.resolve) throw new Error(`${coordinate} has no resolver`);
    const args = Object.fromEntries(
      field.args.flatMap((arg) => {
        const raw = request.params[arg.name] ?? text(request.query, arg.name);
        return raw === null ? [] : [[arg.name, getNamedType(arg.type).name === 'Int' ? Number(raw) : raw]];
      }),
    );
    const { actor, at, services } = request;
    const context: BareContext = { ...clientsOf(request), actor, now: () => at, geocoder: services.geocoder, config: services };
    return options.resolve(undefined, args, context, {} as GraphQLResolveInfo);
  };
}

const ownAnswers = new Map<string, BareRoute['answer']>(ownRoutes.map((route) => [route.field, route.answer]));

/** Every REST read with a JSON body: its own answer above, else its resolver's. */
const bareRouteByField = new Map<string, BareRoute>(
  restRoutes
    .filter((route) => route.method === 'GET' && route.field.startsWith('Query.') && route.successStatus !== 302)
    .map((route) => [
      route.field,
      { field: route.field as BareRoute['field'], answer: ownAnswers.get(route.field) ?? resolverAnswer(route.field) },
    ]),
);

/** The handler's paths, each answered as the service answers its REST read. */
export const bareRoutes: readonly BareRoute[] = [...bareRouteByField.values()];

/** The REST door's GET route at `pathname` that the handler serves, with its decoded parameters. */
function matchRoute(pathname: string): { route: BareRoute; restRoute: RestRoute; params: Record<string, string> } | null {
  for (const { route: restRoute, params } of matchPath(pathname)) {
    const route = restRoute.method === 'GET' ? bareRouteByField.get(restRoute.field) : undefined;
    if (route) return { route, restRoute, params };
  }
  return null;
}

/** The REST door's status and error body for an error (src/rest/errors.ts). */
async function sendError(res: ServerResponse, error: unknown): Promise<void> {
  const response = restErrorResponse([error]);
  send(res, response.status, await response.json());
}

/** The request handler: exported so the test can hold its answers equal to the service's. */
export function createBareHandler(db: Db, now: () => Date, services: BareServices): (req: IncomingMessage, res: ServerResponse) => void {
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://bare.local');
    if (req.method === 'GET' && url.pathname === '/health') return send(res, 200, { status: 'ok' });
    const matched = req.method === 'GET' ? matchRoute(url.pathname) : null;
    if (!matched) return send(res, 404, { error: 'not_found', message: "Only the service's REST reads are served here." });
    const at = now();
    const actor = await authenticate(db, req, at);
    if (!actor) return send(res, 401, UNAUTHORIZED);
    // Who may call it, as its root field declares and the REST door checks it (prepareRequest in src/rest/plugin.ts).
    const refused = refusalOf(accessOfRoute(matched.restRoute, getSchema()), actor.permissions);
    if (refused) return sendError(res, permissionDenied(refused.status, refused.further));
    const request: BareRequest = { db, actor, at, services, params: matched.params, query: url.searchParams };
    const outcome = await matched.route.answer(request).then(
      (body) => ({ body }),
      (error: unknown) => ({ error }),
    );
    if ('body' in outcome) return send(res, 200, outcome.body);
    await sendError(res, outcome.error);
  }
  return (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, { error: 'internal_error', message: 'Unexpected error.' });
      else res.end();
    });
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is required');
  const db = createDb(databaseUrl);
  // The keys the service decrypts payment processors' secrets with: `npm run bench` starts it with
  // --dev (npm start), whose development keyring applies unless the environment names the mode or the keys.
  const { secretsKeyring } = loadSecretsConfig({ APP_MODE: 'development', ...process.env });
  const server = createServer(createBareHandler(db, () => new Date(), { secretsKeyring, geocoder: new PostcodeGeocoder() }));
  server.listen(Number(process.env.PORT ?? 4100), '127.0.0.1');
  const stop = (): void => {
    server.close();
    server.closeAllConnections();
    void db.$disconnect().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
