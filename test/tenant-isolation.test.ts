// Dealership scoping holds through every relation, by construction (src/db/scoped.ts), and nested
// access follows the permission of the type reached (src/auth/record-access.ts). Relations are made to
// cross dealerships on purpose; then a key restricted to one dealership walks every path of the
// schema from every root field and must see no row of another dealership, while the same walk with
// an unrestricted key does see them (so the walk and its oracle can fail).
import {
  getNamedType,
  isInterfaceType,
  isLeafType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import { decodeGlobalID, encodeGlobalID } from '@pothos/plugin-relay';
import { beforeAll, describe, expect, it } from 'vitest';
import { allPermissions, type Permission } from '../src/auth/permissions.ts';
import { guardedFields } from './support/guards.ts';
import { relationsOf } from '../src/db/datamodel.ts';
import { dealershipScope, forDealerships, isScoped, modelNames, type ModelName } from '../src/db/scoped.ts';
import type { Db } from '../src/db/client.ts';
import { getDatamodel } from '../src/generated/pothos-types.ts';
import { queryLimits } from '../src/schema/graphql-limits.ts';
import { getSchema } from '../src/schema/index.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import {
  makeCarLead,
  makeModel,
  makeOffer,
  makePaymentProcessor,
  makePhoneCall,
  makeSpecCategory,
  makeSpecField,
  makeVariant,
  setSpecValue,
  showModel,
  makeOption,
  setAvailability,
} from './support/fixtures-catalogue.ts';
import { franchise, installPlugin, makeAddress, makeContactDetail, makeContactVehicle, makePlugin } from './support/fixtures-dealership.ts';
import {
  makeCar,
  makeContact,
  makeDealership,
  makeKey,
  makeLocation,
  makeManufacturer,
  makeUser,
  makeWebsite,
} from './support/fixtures.ts';
import { makeStoredLead } from './support/fixtures-leads.ts';

type Row = { id: number };
type Json = Record<string, unknown>;

let app: TestApp;
let home: Row & { slug: string };
let away: Row & { slug: string };
/** A webhook subscription of each dealership. */
let hooks: Row[] = [];
let maker: Row;
let variant: Row & { slug: string };
let homeSite: Row;
let awaySite: Row;
let homeYard: Row;
let awayYard: Row;
let homeContact: Row;
let awayContact: Row;
let homeCar: Row & { stocknum: string };
let movedCar: Row;
let awayCar: Row & { slug: string; stocknum: string };
let homeLead: Row;
let awayLead: Row;
let movedLeads: Row[];
let websiteOffer: Row;
/** Every permission, restricted to `home`. */
let homeKey: string;
/** Every permission, restricted to `away`. */
let awayKey: string;
/** Every permission, every dealership. */
let allKey: string;

beforeAll(async () => {
  // The walk follows every path four hops deep, deeper than the GraphQL cost limit lets a client go:
  // the scoping must hold even on paths the limits would refuse today.
  app = await createTestApp({ graphqlMaxCost: 100_000_000 });
  const db = app.db;
  home = await makeDealership(db, { name: 'Home Motors' });
  away = await makeDealership(db, { name: 'Away Motors' });
  maker = await makeManufacturer(db);
  await franchise(db, home.id, maker.id);
  await franchise(db, away.id, maker.id);
  const model = await makeModel(db, maker.id);
  variant = await makeVariant(db, model.id);
  const category = await makeSpecCategory(db);
  await setSpecValue(db, variant.id, (await makeSpecField(db, category.id)).id, '2.0 L');
  await setAvailability(db, variant.id, (await makeOption(db, category.id)).id, 'standard');

  homeSite = await makeWebsite(db, home.id);
  awaySite = await makeWebsite(db, away.id);
  await showModel(db, homeSite.id, model.id, 1);
  await showModel(db, awaySite.id, model.id, 1);
  // A home location whose website is the away dealership's.
  homeYard = await makeLocation(db, home.id, { website_id: awaySite.id, partner_dealership_id: 'P-H', partner_account_id: 'A-H' });
  awayYard = await makeLocation(db, away.id, { website_id: awaySite.id, partner_dealership_id: 'P-A', partner_account_id: 'A-A' });
  for (const yard of [homeYard, awayYard]) {
    await makeAddress(db, yard.id, { street: '1 Main St', city: 'Melbourne', state: 'VIC', postcode: 3000, lat: -37.81, long: 144.96 });
    await makeContactDetail(db, yard.id, { phone: '+61390000000' });
  }
  await makeUser(db, [home.id]);
  await makeUser(db, [away.id]);
  await makeUser(db, [home.id, away.id]);
  homeContact = await makeContact(db, home.id);
  awayContact = await makeContact(db, away.id);
  await makeContactVehicle(db, homeContact.id);
  await makeContactVehicle(db, awayContact.id);
  for (const dealership of [home, away]) {
    await makePaymentProcessor(db, dealership.id);
    await installPlugin(db, dealership.id, (await makePlugin(db)).id);
  }

  // A home car kept at the away dealership's yard.
  homeCar = await makeCar(db, home.id, { location_id: awayYard.id, model_variant_id: variant.id });
  awayCar = await makeCar(db, away.id, { location_id: awayYard.id, model_variant_id: variant.id });
  movedCar = await makeCar(db, home.id);
  await db.carPhoto.create({ data: { car_id: movedCar.id, url: 'https://img.example.com/m.jpg', position: 1 } });
  movedLeads = [await makeCarLead(db, home.id, movedCar.id, { name: 'Secret Buyer', email: 'secret@example.com' })];
  movedLeads.push(await makeCarLead(db, home.id, movedCar.id, { name: 'Other Buyer' }));

  // A home lead pointing at the away dealership's car, location, contact and website.
  homeLead = await makeStoredLead(db, home.id, {
    car_id: awayCar.id,
    location_id: awayYard.id,
    contact_id: awayContact.id,
    website_id: awaySite.id,
    payment: { create: { amount: 10, car_id: awayCar.id } },
    address: { create: { city: 'Hobart' } },
    events: { create: { service: 'sms', description: 'hello' } },
  });
  await makeCarLead(db, home.id, homeCar.id);
  // An away lead on the home car, about the home contact.
  awayLead = await makeStoredLead(db, away.id, {
    car_id: homeCar.id,
    contact_id: homeContact.id,
    events: { create: { service: 'sms', description: 'away' } },
  });
  // An away dealership's call counted on the home car, and an unmatched call.
  await makePhoneCall(db, homeCar.id, { dealership_id: away.id });
  await makePhoneCall(db, null);

  await makeOffer(db, { manufacturer_id: maker.id, model_id: model.id }, [home.id, away.id]);
  // Offers only the away dealership sees: a manufacturer offer running there, and its website's offer.
  await makeOffer(db, { manufacturer_id: maker.id, model_id: model.id }, [away.id]);
  await makeOffer(db, { manufacturer_id: maker.id, model_id: model.id, kind: 'website', website_id: awaySite.id });
  websiteOffer = await makeOffer(db, { manufacturer_id: maker.id, model_id: model.id, kind: 'website', website_id: homeSite.id });
  for (const location of [homeYard, awayYard]) {
    await db.offerPreferredLocation.create({ data: { offer_id: websiteOffer.id, location_id: location.id } });
  }

  homeKey = (await makeKey(db, { permissions: allPermissions, dealershipIds: [home.id] })).key;
  awayKey = (await makeKey(db, { permissions: allPermissions, dealershipIds: [away.id] })).key;
  allKey = (await makeKey(db, { permissions: allPermissions })).key;
  const hookKey = await db.apiKey.findFirstOrThrow({ orderBy: { id: 'asc' }, select: { id: true } });
  hooks = [];
  for (const dealership of [home, away]) {
    const at = new Date();
    hooks.push(
      await db.webhookSubscription.create({
        data: {
          dealership_id: dealership.id,
          api_key_id: hookKey.id,
          url: 'https://hooks.example/',
          events: ['car.updated'],
          secret: 'planted',
          created_at: at,
          updated_at: at,
        },
        select: { id: true },
      }),
    );
  }

  // The reproduction: an all-dealerships key moves a car to the away dealership; its leads stay home.
  const moved = await app.request(`/api/cars/${movedCar.id}`, {
    method: 'PUT',
    key: allKey,
    json: { car: { stocknum: 'MOVED1', dealership_id: away.id, make: 'Toyota', model: 'Moved', year: 2024 } },
  });
  expect(moved.status).toBe(200);
});

// ───────────────────────────── the table is complete ─────────────────────────────

const datamodel = getDatamodel().datamodel.models as Record<
  string,
  { fields: readonly { name: string; kind: string; relationFromFields?: readonly string[] }[] }
>;

/**
 * The models that hold a dealership's data, read from the datamodel alone: a `dealership_id`
 * foreign key, or a foreign key to such a model (a car's photo, a lead's file …).
 */
function modelsWithDealershipPath(): Set<string> {
  const owned = new Set<string>(['Dealership']);
  for (let changed = true; changed; ) {
    changed = false;
    for (const [model, { fields }] of Object.entries(datamodel)) {
      if (owned.has(model) || model in deliberatelyGlobal) continue;
      const holdsKeyToOwned = fields.some(
        (field) =>
          field.kind === 'object' && (field.relationFromFields?.length ?? 0) > 0 && owned.has((field as { type?: string }).type ?? ''),
      );
      if (holdsKeyToOwned) {
        owned.add(model);
        changed = true;
      }
    }
  }
  return owned;
}

/** Models with a dealership path that are global on purpose, and why (each reviewed): none today. */
const deliberatelyGlobal: Partial<Record<ModelName, string>> = {};

describe('the scope table', () => {
  it('scopes every model that has a dealership path in the datamodel', () => {
    const unscoped = [...modelsWithDealershipPath()].filter((model) => !isScoped(model) && !(model in deliberatelyGlobal));
    expect(unscoped).toEqual([]);
    for (const model of Object.keys(deliberatelyGlobal)) expect(isScoped(model), model).toBe(false);
  });

  it('names every model of the datamodel, and every rule names a real relation to a scoped model', () => {
    expect(Object.keys(dealershipScope).sort()).toEqual(Object.keys(datamodel).sort());
    expect([...modelNames].sort()).toEqual(Object.keys(datamodel).sort());
    const ways = Object.entries(dealershipScope).flatMap(([model, rule]) =>
      rule.kind === 'any' ? rule.of.map((way) => [model, way] as const) : [[model, rule] as const],
    );
    for (const [model, rule] of ways) {
      if (rule.kind === 'owner' || rule.kind === 'links' || rule.kind === 'dealership') {
        const relation = relationsOf(model).get(rule.relation);
        expect(relation, `${model}.${rule.relation}`).toBeDefined();
        expect(isScoped(relation!.target), `${model}.${rule.relation}`).toBe(true);
        expect(relation!.isList, `${model}.${rule.relation}`).toBe(rule.kind === 'links');
      }
      if (rule.kind === 'dealership') expect(relationsOf(model).get(rule.relation)?.target, model).toBe('Dealership');
    }
  });
});

// ───────────────────────────── the oracle: which rows are foreign ─────────────────────────────

const delegateOf = (model: string) => model.charAt(0).toLowerCase() + model.slice(1);

/** The ids of each model's rows that are not `home`'s, read with the unscoped client. */
async function foreignIdsByModel(db: Db, homeId: number): Promise<Map<string, Set<number>>> {
  const homeIds = new Map<string, Set<number>>();
  const all = new Map<string, { id: number; [key: string]: unknown }[]>();
  const delegates = db as unknown as Record<string, { findMany(args: unknown): Promise<{ id: number; [key: string]: unknown }[]> }>;
  const withId = modelNames.filter((model) => datamodel[model]!.fields.some((field) => field.name === 'id'));
  for (const model of withId) all.set(model, await delegates[delegateOf(model)]!.findMany({}));
  type Rule = (typeof dealershipScope)[ModelName];
  const ownerBy = (model: string, rule: Rule): ((row: Json) => boolean) => {
    switch (rule.kind) {
      case 'dealership-itself':
        return (row) => row.id === homeId;
      case 'dealership':
        return (row) => row[rule.column] === homeId;
      case 'owner': {
        const relation = relationsOf(model).get(rule.relation)!;
        const column = datamodel[model]!.fields.find((field) => field.name === rule.relation)!.relationFromFields![0]!;
        return (row) => homeIds.get(relation.target)?.has(row[column] as number) ?? false;
      }
      case 'links':
        // Linked rows (users, offers) are home's when one of their links is to home: set below.
        return () => false;
      case 'any': {
        const ways = rule.of.map((way) => ownerBy(model, way));
        return (row) => ways.some((way) => way(row));
      }
      case 'global':
        return () => true;
    }
  };
  // Owners first: dealership-scoped models, then owned ones (owners' ids are then known).
  const order = [...withId].sort((a, b) => rank(a) - rank(b));
  function rank(model: string, rule: Rule = dealershipScope[model as ModelName]): number {
    if (rule.kind === 'any') return Math.max(...rule.of.map((way) => rank(model, way)));
    return rule.kind === 'owner' ? 1 + rank(relationsOf(model).get(rule.relation)!.target) : 0;
  }
  // Rows linked to home: users through their dealership links, manufacturer offers through theirs.
  const linkedToHome = new Map<string, Set<number>>([
    ['User', new Set((await db.dealershipUser.findMany({ where: { dealership_id: homeId } })).map((link) => link.user_id))],
    ['Offer', new Set((await db.offerDealership.findMany({ where: { dealership_id: homeId } })).map((link) => link.offer_id))],
  ]);
  for (const model of order)
    homeIds.set(
      model,
      new Set(
        all
          .get(model)!
          .filter((row) => ownerBy(model, dealershipScope[model as ModelName])(row) || (linkedToHome.get(model)?.has(row.id) ?? false))
          .map((row) => row.id),
      ),
    );
  const foreign = new Map<string, Set<number>>();
  for (const model of withId)
    foreign.set(
      model,
      new Set(
        all
          .get(model)!
          .map((row) => row.id)
          .filter((id) => !homeIds.get(model)!.has(id)),
      ),
    );
  return foreign;
}

// ───────────────────────────── the schema walk ─────────────────────────────

const schema: GraphQLSchema = getSchema();

/** Arguments for each root query field (GraphQL literals), own and foreign objects alike. */
function rootArguments(): Record<string, string[]> {
  const text = (value: number | string) => JSON.stringify(String(value));
  // A page holds every row this file makes (a handful per list).
  const page = '(first: 25)';
  return {
    apikey_details: [''],
    car: [homeCar, movedCar, awayCar].map((car) => `(id: ${text(car.id)})`),
    cars: [page],
    car_performance: [homeCar, movedCar, awayCar].map((car) => `(id: ${text(car.id)})`),
    car_payment_processors: [homeCar, awayCar].map((car) => `(id: ${text(car.id)})`),
    car_redirect: [
      `(dealership_slug: ${JSON.stringify(home.slug)}, website_id: ${text(homeSite.id)}, stocknum: ${JSON.stringify(homeCar.stocknum)})`,
    ],
    contact: [
      `(dealership_id: ${home.id}, id: ${homeContact.id})`,
      `(dealership_id: ${away.id}, id: ${awayContact.id})`,
      `(dealership_id: ${home.id}, id: ${awayContact.id})`,
    ],
    contacts: [home, away].map((dealership) => `(dealership_id: ${dealership.id})`),
    dealership: [home, away].map((dealership) => `(id: ${dealership.id})`),
    dealership_plugins: [home, away].map((dealership) => `(dealership_slug: ${JSON.stringify(dealership.slug)})`),
    dealerships: [page],
    lead: [homeLead, awayLead, ...movedLeads].map((lead) => `(id: ${lead.id})`),
    leads: [page],
    manufacturer: [`(id: ${maker.id})`],
    manufacturer_offers: [`(id: ${maker.id})`],
    manufacturers: [''],
    model_variant: [homeSite, awaySite].map((site) => `(slug: ${JSON.stringify(variant.slug)}, website_id: ${text(site.id)})`),
    partner_dealerships: [''],
    search_dealerships_by_postcode: [`(id: ${maker.id}, postcode: "3000")`],
    website_models: [homeSite, awaySite].map((site) => `(website_id: ${text(site.id)}, version: 2)`),
    website_offer: [`(website_id: ${homeSite.id}, id: ${websiteOffer.id})`],
    webhook_subscriptions: [''],
    webhook_deliveries: hooks.map((hook) => `(id: ${hook.id})`),
    // Every Node type's own rows and the other dealership's, by global id: the foreign ones are null.
    node: nodeIds().map((id) => `(id: ${JSON.stringify(id)})`),
    nodes: [`(ids: ${JSON.stringify(nodeIds())})`],
  };
}

/** Global ids of this file's rows of every dealership-owned Node type, at home and away. */
function nodeIds(): string[] {
  const pairs: [string, Row[]][] = [
    ['Car', [homeCar, movedCar, awayCar]],
    ['Lead', [homeLead, awayLead, ...movedLeads]],
    ['Contact', [homeContact, awayContact]],
    ['Dealership', [home, away]],
    ['Location', [homeYard, awayYard]],
    ['Website', [homeSite, awaySite]],
  ];
  return pairs.flatMap(([typename, rows]) => rows.map((row) => encodeGlobalID(typename, row.id)));
}

const MAX_HOPS = 4;

/** The fields of a type that lead to another object and can be selected without arguments. */
const objectFieldsOf = (type: GraphQLObjectType): GraphQLField<unknown, unknown>[] =>
  Object.values(type.getFields()).filter(
    (field) =>
      isObjectType(getNamedType(field.type)) && field.args.every((arg) => !isNonNullType(arg.type) || arg.defaultValue !== undefined),
  );

/** `__typename id: databaseId dealership_id` (the stored ids under the row's names), as far as the type has them. */
function identity(type: GraphQLObjectType): string {
  const fields = type.getFields();
  const leaf = (name: string): boolean => fields[name] !== undefined && isLeafType(getNamedType(fields[name]!.type));
  return ['__typename', ...(leaf('databaseId') ? ['id: databaseId'] : []), ...(leaf('dealership_id') ? ['dealership_id'] : [])].join(' ');
}

/** A connection's `edges` or an edge's `node`: the list's wrapping, not a relation between records. */
const isRelayStep = (type: GraphQLObjectType, field: GraphQLField<unknown, unknown>): boolean =>
  (type.name.endsWith('Connection') && field.name === 'edges') || (type.name.endsWith('Edge') && field.name === 'node');

/**
 * Every maximal path of object fields from a type, up to MAX_HOPS relations, as nested selections. A
 * connection's edges and nodes are no hop, so a relation turned into a connection is walked as deep
 * as the plain list it was (a car's leads' car, a dealership's cars' leads' records), as far as the
 * depth limit lets a query go (`levels`: the fields nested above this selection, the root field's 1).
 */
function selections(type: GraphQLObjectType, hops: number, seen: ReadonlySet<string>, levels = 1): string[] {
  // A child field and the identity inside it are two more levels.
  const children =
    levels + 2 <= queryLimits.maxDepth
      ? objectFieldsOf(type).filter((field) => !seen.has(`${type.name}.${field.name}`) && (hops < MAX_HOPS || isRelayStep(type, field)))
      : [];
  if (children.length === 0) return [identity(type)];
  return children.flatMap((field) => {
    const next = getNamedType(field.type) as GraphQLObjectType;
    const nextSeen = new Set(seen).add(`${type.name}.${field.name}`);
    return selections(next, isRelayStep(type, field) ? hops : hops + 1, nextSeen, levels + 1).map(
      (inner) => `${identity(type)} ${field.name} { ${inner} }`,
    );
  });
}

function walkQueries(): { root: string; query: string }[] {
  const queries: { root: string; query: string }[] = [];
  const args = rootArguments();
  for (const [root, field] of Object.entries(schema.getQueryType()!.getFields())) {
    const named = getNamedType(field.type);
    for (const arg of args[root] ?? []) {
      if (isInterfaceType(named)) {
        // node / nodes: each type that may answer, through a fragment, with its every path.
        // One id answers only its own type: node(id:) is walked through that type's fragment alone.
        const single = root === 'node' ? decodeGlobalID(JSON.parse(/"[^"]*"/.exec(arg)![0]) as string).typename : null;
        for (const type of schema.getPossibleTypes(named).filter((candidate) => !single || candidate.name === single)) {
          for (const selection of selections(type, 0, new Set()))
            queries.push({ root, query: `{ ${root}${arg} { ... on ${type.name} { ${selection} } } }` });
        }
        continue;
      }
      const inner = isObjectType(named) ? selections(named, 0, new Set()) : [''];
      for (const selection of inner) queries.push({ root, query: `{ ${root}${arg}${selection ? ` { ${selection} }` : ''} }` });
    }
  }
  return queries;
}

const modelOfType = (typeName: string): string | null => {
  const type = schema.getType(typeName);
  const prismaModel = type && isObjectType(type) ? (type.extensions as { pothosPrismaModel?: string }).pothosPrismaModel : undefined;
  if (prismaModel) return prismaModel;
  // Plain object types whose `databaseId` is a row's id.
  return (
    (
      {
        CarPerformance: 'Car',
        CarPerformanceLead: 'Lead',
        PartnerDealership: 'Location',
        CarPaymentProcessor: 'PaymentProcessor',
      } as Record<string, string>
    )[typeName] ?? null
  );
};

interface Sighting {
  path: string;
  type: string;
  id: unknown;
}

/** Every object of an answer that is a foreign row (or names a foreign dealership), with its path. */
function foreignSightings(value: unknown, foreign: Map<string, Set<number>>, homeId: number, path: string, found: Sighting[]): Sighting[] {
  if (Array.isArray(value)) {
    for (const item of value) foreignSightings(item, foreign, homeId, path, found);
    return found;
  }
  if (typeof value !== 'object' || value === null) return found;
  const row = value as Json;
  const typeName = typeof row.__typename === 'string' ? row.__typename : '';
  const model = modelOfType(typeName);
  if (model && typeof row.id === 'number' && foreign.get(model)?.has(row.id)) found.push({ path, type: typeName, id: row.id });
  else if (typeof row.dealership_id === 'number' && row.dealership_id !== homeId) found.push({ path, type: typeName, id: row.id });
  for (const [key, child] of Object.entries(row)) {
    if (key !== '__typename') foreignSightings(child, foreign, homeId, path ? `${path}.${key}` : key, found);
  }
  return found;
}

async function walk(
  key: string,
  roots?: readonly string[],
): Promise<{ queries: number; objects: number; sightings: Sighting[]; unexpectedErrors: string[] }> {
  const foreign = await foreignIdsByModel(app.db, home.id);
  const sightings: Sighting[] = [];
  const unexpectedErrors: string[] = [];
  let objects = 0;
  const queries = walkQueries().filter(({ root }) => !roots || roots.includes(root));
  for (const { query } of queries) {
    const result = await app.graphql(query, undefined, key);
    for (const error of result.errors ?? []) {
      const code = error.extensions?.code;
      // Another dealership's object is not found; another dealership's website is 403 (spec 4.4).
      if (code !== 'NOT_FOUND' && code !== 'FORBIDDEN') unexpectedErrors.push(`${query}: ${error.message}`);
    }
    objects += JSON.stringify(result.data ?? {}).split('"__typename"').length - 1;
    foreignSightings(result.data, foreign, home.id, '', sightings);
  }
  return { queries: queries.length, objects, sightings, unexpectedErrors };
}

describe('a key restricted to one dealership, walking every path of the schema', () => {
  it('has arguments for every root query field, so a new root is walked too', () => {
    expect(Object.keys(schema.getQueryType()!.getFields()).sort()).toEqual(Object.keys(rootArguments()).sort());
  });

  it('sees no row of another dealership through any relation', { timeout: 600_000 }, async () => {
    const restricted = await walk(homeKey);
    expect(restricted.unexpectedErrors).toEqual([]);
    expect(restricted.sightings).toEqual([]);
    expect(restricted.queries).toBeGreaterThan(100);
    expect(restricted.objects).toBeGreaterThan(500);
    console.info(`tenant walk: ${restricted.queries} queries, ${restricted.objects} objects seen by the restricted key, 0 foreign`);

    // The same walk with an unrestricted key, from the roots that lead to the planted cross-dealership
    // rows, meets them: the walk and its oracle can see a leak.
    const unrestricted = await walk(allKey, ['car', 'lead', 'leads', 'dealership']);
    expect(unrestricted.unexpectedErrors).toEqual([]);
    const seen = new Set(unrestricted.sightings.map((sighting) => sighting.path));
    for (const path of [
      'car.leads.edges.node',
      'lead.events.edges.node',
      'lead.car',
      'lead.contact',
      'car.location',
      'dealership.locations.edges.node.website',
      'dealership.contacts.edges.node',
      'dealership.users.edges.node',
      'dealership.cars.edges.node.leads',
      'leads.edges.node.car',
    ]) {
      expect(
        [...seen].some((sightingPath) => sightingPath.startsWith(path)),
        path,
      ).toBe(true);
    }
  });
});

// ───────────────────────────── the reproduction, on both doors ─────────────────────────────

describe('the reproduction of issue 10', () => {
  it("keeps a moved car's leads from the key of the dealership it moved to", async () => {
    const graph = await app.graphql(
      `{ car(id: "${movedCar.id}") { dealership_id leads { totalCount edges { node { name email phone } } } } }`,
      undefined,
      awayKey,
    );
    expect(graph.errors).toBeUndefined();
    expect(graph.data).toEqual({ car: { dealership_id: away.id, leads: { totalCount: 0, edges: [] } } });

    const viaDealership = await app.graphql(
      `{ dealership(id: ${away.id}) { cars { edges { node { id: databaseId leads { totalCount edges { node { id: databaseId name } } } } } } } }`,
      undefined,
      awayKey,
    );
    expect(viaDealership.errors).toBeUndefined();
    const nodes = (viaDealership.data as { dealership: { cars: { edges: { node: { id: number; leads: unknown } }[] } } }).dealership.cars
      .edges;
    expect(nodes.find((edge) => edge.node.id === movedCar.id)?.node.leads).toEqual({ totalCount: 0, edges: [] });

    const rest = await app.request(`/api/v1/cars/${movedCar.id}/performance.json`, { key: awayKey });
    expect(rest.status).toBe(200);
    const body = (await rest.json()) as { leads: unknown[]; leads_count: number; photos_count: number };
    expect(body.leads).toEqual([]);
    expect(body.leads_count).toBe(0);
    // The car's own photo moved with it.
    expect(body.photos_count).toBe(1);
  });

  it("answers a lead's foreign car, contact and location as null, and its foreign payment car is not shown", async () => {
    const graph = await app.graphql(
      `{ lead(id: ${homeLead.id}) { id: databaseId car { vin } contact { id: databaseId } payment { car_id } } }`,
      undefined,
      homeKey,
    );
    expect(graph.errors).toBeUndefined();
    expect(graph.data).toEqual({ lead: { id: homeLead.id, car: null, contact: null, payment: { car_id: awayCar.id } } });
  });

  it("counts on a car only the key's own dealership's leads and calls", async () => {
    const response = await app.request(`/api/v1/cars/${homeCar.id}/performance.json`, { key: homeKey });
    const body = (await response.json()) as { leads: { id: number }[]; phone_calls: number };
    expect(body.leads.map((lead) => lead.id)).not.toContain(awayLead.id);
    expect(body.leads).toHaveLength(1);
    expect(body.phone_calls).toBe(0);
    const unrestricted = (await (await app.request(`/api/v1/cars/${homeCar.id}/performance.json`, { key: allKey })).json()) as typeof body;
    expect(unrestricted.leads).toHaveLength(2);
    expect(unrestricted.phone_calls).toBe(1);
  });

  it('answers a foreign object exactly like a missing one, on every by-id REST path but the two the spec words otherwise', async () => {
    const pairs: [string, string][] = [
      [`/api/v1/cars/${awayCar.id}/payment_processors.json`, '/api/v1/cars/999999/payment_processors.json'],
      [`/dealerships/${away.id}/contacts/${awayContact.id}`, `/dealerships/999999/contacts/${awayContact.id}`],
      [`/dealerships/${home.id}/contacts/${awayContact.id}`, `/dealerships/${home.id}/contacts/999999`],
      [`/dealerships/${away.id}/contacts`, '/dealerships/999999/contacts'],
      [`/api/v1/dealerships/${away.slug}/plugins`, '/api/v1/dealerships/no-such-dealer/plugins'],
    ];
    for (const [foreignPath, missingPath] of pairs) {
      const foreign = await app.request(foreignPath, { key: homeKey });
      const missing = await app.request(missingPath, { key: homeKey });
      expect(foreign.status, foreignPath).toBe(404);
      expect(await foreign.json(), foreignPath).toEqual(await missing.json());
    }
  });

  // The spec gives a car of a dealership the key cannot use its own outcome on the performance read
  // and the reservation ("invalid dealership", distinct from "car does not exist"): one fixed body
  // that carries nothing of the car, however it was named.
  it("refuses another dealership's car with invalid_dealership on 4.2 and 4.19, telling nothing about it", async () => {
    const invalid = { error: 'invalid_dealership', message: 'The car belongs to a dealership this API key cannot use.' };
    for (const name of [String(awayCar.id), awayCar.slug]) {
      const performance = await app.request(`/api/v1/cars/${encodeURIComponent(name)}/performance.json`, { key: homeKey });
      expect(performance.status, name).toBe(403);
      const text = await performance.text();
      expect(JSON.parse(text), name).toEqual(invalid);
      expect(text).not.toContain(awayCar.stocknum);
      const reserve = await app.request(`/api/v1/cars/${encodeURIComponent(name)}/reserve?reserved=true`, { method: 'PUT', key: homeKey });
      expect(reserve.status, name).toBe(403);
      expect(await reserve.json(), name).toEqual(invalid);
    }
    const missing = await app.request('/api/v1/cars/999999/performance.json', { key: homeKey });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: string }).error).toBe('car_not_found');
    expect((await app.db.car.findUniqueOrThrow({ where: { id: awayCar.id } })).reserved).toBe(false);
  });
});

// ───────────────────────────── writes ─────────────────────────────

describe('writes by a restricted key', () => {
  it('cannot update, reserve or create into another dealership, and nothing is stored', async () => {
    const before = await app.db.car.findUniqueOrThrow({ where: { id: awayCar.id } });
    const update = await app.request(`/api/cars/${awayCar.id}`, {
      method: 'PUT',
      key: homeKey,
      json: { car: { stocknum: 'STOLEN', dealership_id: home.id, make: 'Toyota', model: 'Taken', year: 2024 } },
    });
    expect(update.status).toBe(404);
    const moveAway = await app.request(`/api/cars/${homeCar.id}`, {
      method: 'PUT',
      key: homeKey,
      json: { car: { stocknum: 'GONE', dealership_id: away.id, make: 'Toyota', model: 'Gone', year: 2024 } },
    });
    expect(moveAway.status).toBe(422);
    const reserve = await app.request(`/api/v1/cars/${awayCar.id}/reserve?reserved=true`, { method: 'PUT', key: homeKey });
    expect(reserve.status).toBe(403); // invalid_dealership: the spec's own outcome for a reservation (4.19)
    const lead = await app.request('/api/v1/leads', {
      method: 'POST',
      key: homeKey,
      json: {
        lead: { email: 'x@example.com', phone: '0412 345 678', dealership_id: away.id, category: 'General Enquiry', source: 'Website' },
      },
    });
    expect(lead.status).toBe(404);
    const updateLead = await app.request(`/api/v1/leads/${awayLead.id}`, {
      method: 'PUT',
      key: homeKey,
      json: { lead: { message: 'mine now' } },
    });
    expect(updateLead.status).toBe(404);

    expect(await app.db.car.findUniqueOrThrow({ where: { id: awayCar.id } })).toEqual(before);
    expect((await app.db.car.findUniqueOrThrow({ where: { id: homeCar.id } })).dealership_id).toBe(home.id);
    expect(await app.db.lead.count({ where: { email: 'x@example.com' } })).toBe(0);
    expect((await app.db.lead.findUniqueOrThrow({ where: { id: awayLead.id } })).message).toBeNull();
  });

  it("is refused by the scoped client itself, whatever the caller's code forgets", async () => {
    const scoped = forDealerships(app.db, [home.id]);
    await expect(
      scoped.car.create({ data: { dealership_id: away.id, stocknum: 'X1', slug: 'x-1-scoped', make: 'Kia', model: 'Rio', year: 2020 } }),
    ).rejects.toMatchObject({ extensions: { code: 'NOT_FOUND', error: 'dealership_not_found' } });
    await expect(scoped.car.update({ where: { id: homeCar.id }, data: { dealership_id: away.id } })).rejects.toMatchObject({
      extensions: { code: 'NOT_FOUND' },
    });
    expect((await scoped.car.updateMany({ where: { id: awayCar.id }, data: { reserved: true } })).count).toBe(0);
    expect((await scoped.lead.deleteMany({ where: { id: awayLead.id } })).count).toBe(0);
    await expect(scoped.lead.update({ where: { id: awayLead.id }, data: { message: 'x' } })).rejects.toThrow();
    expect(await scoped.car.findUnique({ where: { id: awayCar.id } })).toBeNull();
    expect(await scoped.lead.count({ where: { car_id: movedCar.id } })).toBe(2);
    expect(await forDealerships(app.db, [away.id]).lead.count({ where: { car_id: movedCar.id } })).toBe(0);
    // _count of relations counts only rows in scope.
    const counted = await forDealerships(app.db, [away.id]).car.findUniqueOrThrow({
      where: { id: movedCar.id },
      select: { _count: { select: { leads: true, photos: true } } },
    });
    expect(counted._count).toEqual({ leads: 0, photos: 1 });
    expect(await app.db.car.count({ where: { slug: 'x-1-scoped' } })).toBe(0);
    expect((await app.db.car.findUniqueOrThrow({ where: { id: awayCar.id } })).reserved).toBe(false);
    expect(await app.db.lead.count({ where: { id: awayLead.id } })).toBe(1);
  });
});

// ───────────────────────────── nested permissions ─────────────────────────────

/** The payload types of mutations, whose guarded fields test/graph-payloads.test.ts walks. */
const MUTATION_PAYLOADS = new Set(['UpdateCarPayload', 'CarReservation', 'LeadPayload']);

describe('every non-root field returning a guarded type', () => {
  /** The paths from a root (with its first arguments) to `typeName`, shortest first, as a query prefix and suffix. */
  function pathsTo(typeName: string): { open: string; close: string }[] {
    const found: { open: string; close: string }[] = [];
    const args = rootArguments();
    const queue: { type: GraphQLObjectType; open: string; close: string; hops: number }[] = [];
    for (const [root, field] of Object.entries(schema.getQueryType()!.getFields())) {
      const named = getNamedType(field.type);
      if (!isObjectType(named) || !args[root]) continue;
      queue.push({ type: named, open: `{ ${root}${args[root]![0]} { `, close: ' } }', hops: 1 });
    }
    while (queue.length > 0) {
      const current = queue.shift()!;
      if (current.type.name === typeName) found.push({ open: current.open, close: current.close });
      if (current.hops > 5) continue;
      for (const field of objectFieldsOf(current.type)) {
        queue.push({
          type: getNamedType(field.type) as GraphQLObjectType,
          open: `${current.open}${field.name} { `,
          close: ` }${current.close}`,
          hops: current.hops + 1,
        });
      }
    }
    return found;
  }

  it('answers null or [] without an error for a key without its permission, and the data with it', async () => {
    const checked: string[] = [];
    const withPermission = (await makeKey(app.db, { permissions: allPermissions })).key;
    for (const { type, field, permission } of guardedFields(schema)) {
      const paths = pathsTo(type);
      // A mutation payload's graph record is reached only by running the mutation: test/graph-payloads.test.ts
      // checks each of those without the permission.
      if (paths.length === 0 && MUTATION_PAYLOADS.has(type)) continue;
      expect(paths.length, type).toBeGreaterThan(0);
      const without = allPermissions.filter((held) => held !== permission) as Permission[];
      const key = (await makeKey(app.db, { permissions: without })).key;
      const inner = isObjectType(getNamedType(field.type)) ? ' { __typename }' : '';
      // The first path whose root the key may call; a type reached only from roots that need the same
      // permission is answered by the root (403), not by the field.
      let query = '';
      let denied: Awaited<ReturnType<TestApp['graphql']>> | undefined;
      for (const path of paths) {
        query = `${path.open}__typename ${field.name}${inner}${path.close}`;
        denied = await app.graphql(query, undefined, key);
        // A root field refused for want of a permission is FORBIDDEN, or UNAUTHENTICATED where the spec says "unauthorised".
        if (!denied.errors?.some((error) => error.extensions?.code === 'FORBIDDEN' || error.extensions?.code === 'UNAUTHENTICATED')) break;
        denied = undefined;
      }
      if (!denied) continue;
      const allowed = await app.graphql(query, undefined, withPermission);
      expect(denied.errors, query).toBeUndefined();
      const values = (JSON.stringify(denied.data).match(new RegExp(`"${field.name}":(null|\\[\\])`, 'g')) ?? []).length;
      const present = JSON.stringify(denied.data).split(`"${field.name}":`).length - 1;
      expect(present, query).toBeGreaterThan(0);
      expect(values, query).toBe(present);
      // With the permission the same path answers the data the fixtures hold.
      expect(allowed.errors, query).toBeUndefined();
      expect(JSON.stringify(allowed.data), query).not.toMatch(new RegExp(`"${field.name}":(null|\\[\\])[,}]`));
      checked.push(`${type}.${field.name}`);
    }
    expect(checked).toEqual(
      expect.arrayContaining([
        'Car.dealership',
        'Car.leads',
        'Lead.car',
        'Lead.contact',
        'Dealership.cars',
        'Dealership.contacts',
        'Location.contact_detail',
        'ModelVariant.specifications',
        'ModelVariant.availability_matrix',
        'Manufacturer.offers',
      ]),
    );
  });
});
