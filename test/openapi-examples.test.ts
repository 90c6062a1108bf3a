// Every operation on the demo data, with a key holding exactly the operation's permissions and with
// one holding all of them: each answer is a success that matches the OpenAPI document (createTestApp
// validates every REST answer against it), so a documented non-nullable field that comes out null,
// or an answer that fails instead, is caught here. The same answers are the document's examples
// (src/rest/openapi-examples.json): `npm run openapi:examples` rewrites that file from them
// (UPDATE_OPENAPI_EXAMPLES=1), and otherwise this test fails when the file differs from them (it is
// stale) or when an example is missing or no longer matches its schema.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import operationExamples from '../src/rest/openapi-examples.json' with { type: 'json' };
import { accessOfRoute, matchPath, openApiPath, type RestRoute, restRoutes, rootFieldIn, typedParams } from '../src/rest/routes.ts';
import { getSchema } from '../src/schema/index.ts';
import { readPermissionOfEvent } from '../src/domain/webhooks.ts';
import { RECORD_EVENT_TYPES, type RecordEventType } from '../src/domain/record-events.ts';
import { restSchema } from '../src/rest/rest-schema.ts';
import type { TestApp } from './support/app.ts';
import { assertValidAgainst, openApiDocument } from './support/contract.ts';
import { createDemoApp, DEMO_READ_PATHS } from './support/demo.ts';
import { makeKey } from './support/fixtures.ts';

interface Call {
  field: RestRoute['field'];
  path: string;
  body?: Record<string, unknown>;
}

const EXAMPLES_FILE = fileURLToPath(new URL('../src/rest/openapi-examples.json', import.meta.url));
/**
 * The partner token of the examples. A real one is random; the examples show this one (the first
 * ever written) in its place, so that writing them again gives the same file.
 */
const EXAMPLE_PARTNER_TOKEN = '7SRFzW9RpX-zu6fACq9EB8ooGojUw47aX9PE7rWlT1A';

let app: TestApp;
let allKey: string;
let calls: Call[];

/** Examples stay readable: every list is cut to its first two entries (no schema sets a minimum). */
function trimmed(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice(0, 2).map(trimmed);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, trimmed(inner)]));
  return value;
}

function routeOf(field: string): RestRoute {
  const route = restRoutes.find((candidate) => candidate.field === field);
  if (!route) throw new Error(`no route answers ${field}`);
  return route;
}

/**
 * The call's path and query parameters by name, as the document types them: an integer parameter
 * as a number, a boolean as one, a bracketed query parameter (`data[leadId]=…`) as the object it stands for.
 */
function parametersOf(route: RestRoute, target: Call): Record<string, unknown> {
  const url = new URL(target.path, 'http://gateway.test');
  const types = new Map(typedParams(route, rootFieldIn(route, restSchema(getSchema()))!));
  const typed = (name: string, text: string): unknown =>
    types.get(name) === 'integer' ? Number(text) : types.get(name) === 'boolean' ? text === 'true' : text;
  const parameters: Record<string, unknown> = {};
  const match = matchPath(url.pathname).find((candidate) => candidate.route === route);
  for (const [name, text] of Object.entries(match?.params ?? {})) parameters[name] = typed(name, text);
  for (const [key, text] of url.searchParams) {
    const [name = key, ...inner] = key.split(/\]?\[|\]$/).filter((part) => part !== '');
    if (inner.length === 0) {
      parameters[name] = typed(name, text);
      continue;
    }
    parameters[name] ??= {};
    let node = parameters[name] as Record<string, unknown>;
    for (const [index, part] of inner.entries()) {
      if (index === inner.length - 1) node[part] = text;
      else {
        node[part] ??= {};
        node = node[part] as Record<string, unknown>;
      }
    }
  }
  return parameters;
}

async function call(target: Call, key: string): Promise<Response> {
  const route = routeOf(target.field);
  return app.request(target.path, { method: route.method, key, ...(target.body ? { json: target.body } : {}) });
}

beforeAll(async () => {
  ({ app, key: allKey } = await createDemoApp());
  const car = await app.db.car.findUniqueOrThrow({ where: { id: 1 } });
  const user = await app.db.user.findFirstOrThrow({ where: { dealerships: { some: { dealership_id: 1 } } }, orderBy: { id: 'asc' } });
  const location = await app.db.location.findFirstOrThrow({
    where: { dealership_id: 1, tracking_phone: { not: null } },
    orderBy: { id: 'asc' },
  });
  const newLead = {
    lead: {
      name: 'Jordan Lee',
      email: 'jordan@example.com',
      phone: '0412 345 678',
      dealership_id: 1,
      category: 'Used Vehicle Enquiry',
      source: 'Website',
      stocknum: car.stocknum,
      message: 'Is it still available?',
    },
  };
  const created = await call({ field: 'Mutation.create_lead', path: '/api/v1/leads', body: newLead }, allKey);
  expect(created.status).toBe(201);
  const leadId = ((await created.json()) as { lead: { id: number } }).lead.id;
  calls = [
    {
      field: 'Mutation.update_car',
      path: `/api/cars/${car.id}`,
      body: {
        car: {
          stocknum: car.stocknum,
          dealership_id: car.dealership_id,
          make: car.make,
          model: car.model,
          year: car.year,
          dapprice: 31990,
          odometer: 42150,
        },
      },
    },
    { field: 'Query.car_payment_processors', path: `/api/v1/cars/${car.id}/payment_processors.json?website=richmond-toyota` },
    { field: 'Query.model_variant', path: '/api/v1/model_variants/toyota-corolla-sx-hybrid?website_id=richmond-toyota' },
    { field: 'Query.website_offer', path: '/websites/1/offers/13.json' },
    {
      field: 'Mutation.create_lead',
      path: '/api/v1/leads',
      body: { lead: { ...newLead.lead, email: 'sam.nguyen@example.com', name: 'Sam Nguyen', phone: '0423 456 789' } },
    },
    {
      field: 'Mutation.update_lead',
      path: `/api/v1/leads/${leadId}`,
      body: { lead: { lead_state: 'contacted', message: 'Called back, test drive on Saturday.' } },
    },
    { field: 'Mutation.create_partner_token', path: '/api/v1/partner/tokens', body: { email: user.email } },
    {
      field: 'Mutation.create_lead_event',
      path: `/api/v1/lead_events/sms/create?data[leadId]=${leadId}&data[messageDetail][contactType]=sms&data[messageDetail][description]=${encodeURIComponent('Reminder: test drive Saturday 10am')}&data[messageDetail][sentDate]=2026-11-21T10:15:00`,
    },
    { field: 'Query.contacts', path: '/dealerships/1/contacts?page=1&per_page=20' },
    { field: 'Query.search_dealerships_by_postcode', path: '/manufacturers/1/search_by_postcode?postcode=3000&limit=5' },
    {
      field: 'Mutation.phone_call_webhook',
      path: '/api/v1/webhooks/phone_calls_webhooks/generic',
      body: { called_number: location.tracking_phone, caller_number: '0412 345 678' },
    },
    {
      field: 'Query.car_redirect',
      path: `/api/v1/dealerships/richmond-toyota/redirect_service?website_id=richmond-toyota&stocknum=${car.stocknum}&fbclid=IwAR2xQ7demo`,
    },
    { field: 'Mutation.reserve_car', path: '/api/v1/cars/2/reserve?reserved=true' },
    { field: 'Query.website_models', path: '/api/v1/websites/richmond-toyota/models?version=2' },
    { field: 'Query.webhook_deliveries', path: '/api/v1/webhook_subscriptions/1/deliveries' },
    { field: 'Mutation.rotate_webhook_secret', path: '/api/v1/webhook_subscriptions/1/rotate_secret' },
    { field: 'Mutation.disable_webhook_subscription', path: '/api/v1/webhook_subscriptions/1/disable' },
    { field: 'Mutation.enable_webhook_subscription', path: '/api/v1/webhook_subscriptions/1/enable' },
    { field: 'Mutation.redeliver_webhook', path: '/api/v1/webhook_subscriptions/1/deliveries/1/redeliver' },
    { field: 'Mutation.delete_webhook_subscription', path: '/api/v1/webhook_subscriptions/1' },
  ];
  // First, so the writes below enqueue deliveries for the log and the redelivery to show.
  calls.unshift({
    field: 'Mutation.create_webhook_subscription',
    path: '/api/v1/webhook_subscriptions',
    body: { subscription: { url: 'https://crm.example.com/webhooks', events: ['lead.created', 'car.reserved'], dealership_id: 1 } },
  });
  // Every other read path is called last, with its route's demo parameters: a new one needs no call above. (The sign-on's call is added
  // once the partner token call has handed out its token.)
  for (const route of restRoutes) {
    if (route.method !== 'GET' || route.field === 'Mutation.redeem_partner_token' || calls.some((target) => target.field === route.field))
      continue;
    calls.push({ field: route.field, path: demoPath(route) });
  }
});

/** A read path on the demo data, as its route declares it (`demo`). */
function demoPath(route: RestRoute): string {
  const path = DEMO_READ_PATHS[route.field];
  if (!path) throw new Error(`${route.field}: no demo read path`);
  return path;
}

describe('every operation on the demo data', () => {
  it('answers a key holding exactly its permissions with the whole documented record, as the examples show', async () => {
    const answers: Record<string, { parameters?: Record<string, unknown>; request?: unknown; response?: unknown }> = {};
    let partnerToken: string | null = null;
    for (const target of calls) {
      const route = routeOf(target.field);
      // A subscription's event types, and a delivery's, need their records' read permissions too (docs/webhooks.md).
      const readsDeliveries = target.field === 'Query.webhook_deliveries' || target.field === 'Mutation.redeliver_webhook';
      const events = readsDeliveries
        ? [...RECORD_EVENT_TYPES]
        : ((target.body as { subscription?: { events?: RecordEventType[] } } | undefined)?.subscription?.events ?? []);
      const permissions = [...accessOfRoute(route, getSchema()).permissions, ...events.map((type) => readPermissionOfEvent(type))];
      const { key } = await makeKey(app.db, { permissions: [...new Set(permissions)] });
      // Writes run once, with the narrow key: a second reservation or lead would answer otherwise.
      const response = await call(target, key);
      expect(response.status, `${route.method} ${target.path}: ${await response.clone().text()}`).toBe(route.successStatus ?? 200);
      const parameters = parametersOf(route, target);
      const body: unknown = route.successStatus === 302 ? undefined : await response.json();
      answers[target.field] = {
        ...(Object.keys(parameters).length > 0 ? { parameters } : {}),
        ...(target.body ? { request: target.body } : {}),
        ...(body === undefined ? {} : { response: trimmed(body) }),
      };
      if (target.field === 'Mutation.create_partner_token') {
        // The token handed out is the one the partner's user brings to the sign-on.
        partnerToken = new URL((body as { redirect_url: string }).redirect_url).searchParams.get('token');
        calls.push({ field: 'Mutation.redeem_partner_token', path: `/api/v1/partner/sign_on?token=${partnerToken}` });
      }
    }
    if (partnerToken === null) throw new Error('the partner token call handed out no token');
    // Random ids and secrets are written as fixed examples, so the file changes only when an answer does.
    const written = `${JSON.stringify(answers, null, 2)}\n`
      .replaceAll(partnerToken, EXAMPLE_PARTNER_TOKEN)
      .replace(/whsec_[A-Za-z0-9+/=]{32}/g, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')
      .replace(/msg_[0-9a-f]{32}/g, 'msg_2f1c6a0e9b7d4c3a8e5f1b2d3c4a5e6f')
      .replace(/evt_[0-9a-f]{32}/g, 'evt_7a3e1c9b5d2f4a6e8c0b1d3f5a7c9e2b');
    if (process.env.UPDATE_OPENAPI_EXAMPLES) writeFileSync(EXAMPLES_FILE, written);
    else
      expect(readFileSync(EXAMPLES_FILE, 'utf8'), 'src/rest/openapi-examples.json is stale: npm run openapi:examples rewrites it').toBe(
        written,
      );
  });

  it("answers every car, every dealership's payment processors and every contact with no null where the document says never", async () => {
    const cars = await app.db.car.findMany({ select: { id: true }, orderBy: { id: 'asc' }, take: 60 });
    for (const { id } of cars) {
      expect((await app.request(`/api/v1/cars/${id}/performance.json`, { key: allKey })).status).toBe(200);
    }
    const firstCars = await app.db.car.findMany({ distinct: ['dealership_id'], select: { id: true }, orderBy: { id: 'asc' } });
    for (const { id } of firstCars) {
      expect((await app.request(`/api/v1/cars/${id}/payment_processors.json`, { key: allKey })).status).toBe(200);
    }
    const dealerships = await app.db.dealership.findMany({ select: { id: true } });
    for (const { id } of dealerships) {
      expect((await app.request(`/dealerships/${id}/contacts?per_page=200`, { key: allKey })).status).toBe(200);
    }
  });
});

describe('fields the spec types as always present', () => {
  // Component → fields the document must declare required and never null (docs/decisions.md, "Fields that are never null").
  const neverNull: Record<string, string[]> = {
    CarPerformance: ['vin', 'start_price'],
    CarPerformancePriceChange: ['dapprice', 'egcprice'],
    CarPaymentProcessor: ['authorization_key', 'google_merchant_id'],
    WebsiteOffer: ['category'],
    User: ['email'],
    Contact: ['first_name'],
    ContactListEntry: ['first_name'],
    ContactVehicle: ['rego'],
    ContactListVehicle: ['rego'],
    LeadRecord: ['name', 'email', 'phone'],
  };

  it('are required and non-nullable in the document', () => {
    const schemas = (
      openApiDocument().components as { schemas: Record<string, { required?: string[]; properties?: Record<string, unknown> }> }
    ).schemas;
    for (const [component, fields] of Object.entries(neverNull)) {
      for (const name of fields) {
        expect(schemas[component]?.required, `${component}.${name}`).toContain(name);
        expect(JSON.stringify(schemas[component]?.properties?.[name]), `${component}.${name}`).not.toContain('"null"');
      }
    }
  });

  it('are stored empty in the demo data, so the walk above meets them', async () => {
    expect(await app.db.carPriceChange.count({ where: { egcprice: null } })).toBeGreaterThan(0);
    expect(await app.db.paymentProcessor.count({ where: { google_merchant_id: null } })).toBeGreaterThan(0);
  });
});

describe('the examples of the OpenAPI document', () => {
  it('cover every operation with a JSON body, request and answer', () => {
    for (const route of restRoutes) {
      if (route.successStatus === 302) continue;
      const example = (operationExamples as Record<string, { request?: unknown; response?: unknown }>)[route.field];
      expect(example?.response, `${route.field}: answer example`).toBeDefined();
      if (route.body) expect(example?.request, `${route.field}: request example`).toBeDefined();
    }
  });

  it('match the schemas they illustrate, in the served document', () => {
    type Content = { content?: Record<string, { example?: unknown }> };
    const paths = openApiDocument().paths as Record<string, Record<string, { requestBody?: Content; responses: Record<string, Content> }>>;
    let checked = 0;
    for (const route of restRoutes) {
      const method = route.method.toLowerCase();
      const operation = paths[openApiPath(route.path)]?.[method];
      const escapedPath = openApiPath(route.path).replace(/~/g, '~0').replace(/\//g, '~1');
      const requestExample = operation?.requestBody?.content?.['application/json']?.example;
      if (requestExample !== undefined) {
        assertValidAgainst(
          `/paths/${escapedPath}/${method}/requestBody/content/application~1json/schema`,
          requestExample,
          `${route.field} request`,
        );
        checked += 1;
      }
      for (const [status, response] of Object.entries(operation?.responses ?? {})) {
        const example = response.content?.['application/json']?.example;
        if (example === undefined) continue;
        assertValidAgainst(
          `/paths/${escapedPath}/${method}/responses/${status}/content/application~1json/schema`,
          example,
          `${route.field} ${status}`,
        );
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(restRoutes.length * 3);
  });
});
