// Sofa's routes carry no methods per path (405, Allow), typed parameters, bodies or docs: the table of the documented paths does.
import { z } from 'zod';
import { getNamedType, type GraphQLField, type GraphQLSchema } from 'graphql';
import { accessOfField, type FieldAccess } from '../auth/field-access.ts';
import type { RouteDeprecation } from './deprecation.ts';
import { carRecord, carRecordAt } from '../domain/car-record.ts';
import { contactListRequest } from '../domain/contacts.ts';
import { postcodeSearchRequest } from '../domain/dealerships.ts';
import { carRedirectRequest } from '../domain/redirects.ts';
import { INT32, INT32_REASON } from '../domain/input-limits.ts';
import { declaredMeta, withRequired } from '../domain/input-records.ts';
import { leadEventRequest } from '../domain/lead-events.ts';
import { leadRequests } from '../domain/leads/input-record.ts';
import { modelVariantRequest, websiteModelsRequest } from '../domain/model-variants.ts';
import { documentedPartnerTokenRequest } from '../domain/partner-sign-on.ts';
import { phoneCallReport } from '../domain/phone-calls.ts';
import { webhookSubscriptionInput } from '../domain/webhooks.ts';
import { takesIdempotencyKey } from '../schema/idempotent-writes.ts';
import { escapeRegex } from './input-schemas.ts';
import { INTEGER_TEXT, SCALAR_REASONS } from './arguments.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';
/** The parameters read from text by parseParam (Sofa coerces query text loosely), by their argument's type; the others stay text. */
const PARAM_TYPES = { Int: 'integer', Boolean: 'boolean' } as const;
type ParamType = (typeof PARAM_TYPES)[keyof typeof PARAM_TYPES];
const PATH_PARAM = /:([A-Za-z_][A-Za-z0-9_]*)/g;

export interface RestRoute {
  method: HttpMethod;
  /** `:name` is a path parameter (Sofa's URLPattern syntax). */
  path: string;
  /** `Query.<field>` or `Mutation.<field>`: the root field that answers. */
  field: `Query.${string}` | `Mutation.${string}`;
  /** The spec section, for docs/rest.md and the OpenAPI document. */
  spec: string;
  summary: string;
  successStatus?: 200 | 201 | 202 | 302;
  /** A read's path and query parameters in a call that succeeds on the demo data (prisma/seed.ts), for the tests' requests. */
  demo?: Readonly<Record<string, string | number>>;
  /** The query parameters the operation reads (documentation and the OpenAPI document). */
  query?: readonly string[];
  /** The JSON body's wrapper key(s), e.g. ['car'] for {"car": {...}}. */
  body?: readonly string[];
  /** The zod record (src/domain) of the arguments on the day `now`: the OpenAPI document describes those it names from it. */
  input?: (now: Date) => z.ZodObject;
  /** Accept application/x-www-form-urlencoded bodies too (telephony providers post forms). */
  acceptsForm?: boolean;
  /** The key may come as ?token=… instead of the Authorization header (webhook providers). */
  tokenInQuery?: boolean;
  /** The path will go away: its days, which its answers and its OpenAPI operation state (src/rest/deprecation.ts). */
  deprecated?: RouteDeprecation;
  /** The error statuses the operation answers with, when they differ from its shape's and its outcomes'. */
  errors?: readonly number[];
  /** The group the operation is listed under in the OpenAPI document (one of restTags). */
  tag: RestTag;
  /** What its error statuses mean for it, with their `error` codes (the spec's section 7); others get the general description. */
  outcomes?: Partial<Record<number, string>>;
}

/** The OpenAPI document's groups, declared once with what they hold. */
export const restTags = {
  cars: 'Used and demo cars in stock: updates, performance figures, payment processors, reservations and the stock-number redirect.',
  'new vehicles': "The new-vehicle catalogue: a website's models and a model variant with its specifications.",
  offers: "Manufacturers' and websites' offers.",
  'api keys': 'The key used for the call, and the dealerships and locations it reaches.',
  leads: 'Sales leads and the messaging events recorded against them.',
  contacts: "A dealership's contacts (the people its leads came from).",
  dealerships: 'Dealership locations near a postcode, and the plugins a dealership has installed.',
  partner: "Partner integration: dealership mappings and the partner's sign-on handoff.",
  'phone calls': 'Notifications from call-tracking providers.',
  webhooks: "Outbound webhook subscriptions of the key's dealerships: signing secrets, the delivery log, redelivery.",
} as const;

type RestTag = keyof typeof restTags;

/** A route of the webhook subscriptions, `/api/v1/webhook_subscriptions…`: one subscription's (`/:id…`) may not be found. */
function subscriptionRoute(
  method: HttpMethod,
  path: string,
  field: RestRoute['field'],
  summary: string,
  more: Partial<RestRoute> = {},
): RestRoute {
  return {
    method,
    path: `/api/v1/webhook_subscriptions${path}`,
    field,
    spec: 'webhooks',
    summary,
    tag: 'webhooks',
    ...more,
    ...(path.startsWith('/:id') ? { outcomes: { 404: '`webhook_subscription_not_found`.', ...more.outcomes } } : {}),
  };
}

export const restRoutes: readonly RestRoute[] = [
  {
    method: 'PUT',
    path: '/api/cars/:id',
    field: 'Mutation.update_car',
    spec: '4.1',
    summary: 'Update a car',
    tag: 'cars',
    outcomes: {
      404: "`car_not_found`: no car with that id (or, with `match_existing_car_by_stocknum`, that stock number) among the key's dealerships.",
      409: '`stocknum_taken`: another car of the dealership has that stock number.',
      422: '`invalid_input`: `field` names the value at fault, including a `car.dealership_id` the key cannot use.',
    },
    body: ['car'],
    input: (now) =>
      z.object({
        id: z.int().describe('Car id (ignored when car.match_existing_car_by_stocknum is true).'),
        car: carRecordAt(now).meta({ id: 'CarInput', description: declaredMeta(carRecord).description ?? '' }),
      }),
  },
  {
    method: 'GET',
    path: '/api/v1/cars/:id/performance.json',
    field: 'Query.car_performance',
    demo: { id: 1 },
    spec: '4.2',
    tag: 'cars',
    outcomes: {
      403: '`forbidden`: the key lacks `read:car`; or `invalid_dealership`: the car belongs to a dealership the key cannot use.',
      404: '`car_not_found`: no car has that id, slug, custom slug (or VIN).',
    },
    summary: "Get a car's performance figures",
    query: ['lookup_by'],
  },
  {
    method: 'GET',
    path: '/api/v1/cars/:id/payment_processors.json',
    field: 'Query.car_payment_processors',
    demo: { id: 1, website: 'richmond-toyota' },
    spec: '4.3',
    tag: 'cars',
    outcomes: {
      403: "`forbidden`: the key lacks `show:payment_processor`, or `show:payment_processor_secret`, which every record's `authorization_key` needs.",
      404: "`car_not_found`: no car with that id, slug or custom slug among the key's dealerships; `website_not_found`.",
    },
    summary: "Get a car's payment processors",
    query: ['website'],
  },
  {
    method: 'GET',
    path: '/api/v1/model_variants/:slug',
    field: 'Query.model_variant',
    demo: { slug: 'toyota-corolla-sx-hybrid', website_id: 1 },
    spec: '4.4',
    tag: 'new vehicles',
    outcomes: {
      403: '`forbidden`: the key is not authorised for the website.',
      404: '`website_not_found`; `model_variant_not_found`: no variant with that slug on the website.',
    },
    summary: 'Get a model variant by slug',
    query: ['website_id'],
    input: () => modelVariantRequest,
  },
  {
    method: 'GET',
    path: '/manufacturers/:id/offers.json',
    field: 'Query.manufacturer_offers',
    demo: { id: 1 },
    spec: '4.5',
    tag: 'offers',
    outcomes: { 404: '`manufacturer_not_found`.' },
    summary: "List a manufacturer's offers",
  },
  {
    method: 'GET',
    path: '/websites/:website_id/offers/:id.json',
    field: 'Query.website_offer',
    demo: { website_id: 1, id: 13 },
    spec: '4.6',
    tag: 'offers',
    outcomes: {
      403: '`forbidden`: the key lacks `index:offer`, or is not authorised for the website.',
      404: '`website_not_found`; `offer_not_found`: no offer with that id on the website.',
    },
    summary: 'Show a website offer',
  },
  {
    method: 'GET',
    path: '/api/v1/apikeys/apikey_details.json',
    field: 'Query.apikey_details',
    spec: '4.7',
    tag: 'api keys',
    summary: 'Show the API key used for the call',
  },
  {
    method: 'PUT',
    path: '/api/v1/leads/:id',
    field: 'Mutation.update_lead',
    spec: '4.8',
    summary: 'Update a lead',
    tag: 'leads',
    outcomes: {
      404: "`lead_not_found`: no lead with that id among the key's dealerships.",
      409: '`lead_too_old`: the lead is more than 3 days (72 hours) old.',
    },
    body: ['lead'],
    input: (now) => leadRequests(now).update,
  },
  {
    method: 'POST',
    path: '/api/v1/leads',
    field: 'Mutation.create_lead',
    spec: '4.9',
    summary: 'Create a lead',
    tag: 'leads',
    outcomes: {
      404: '`dealership_not_found`: the dealership does not exist or the key cannot use it.',
      422: '`invalid_input`: `field` names the value at fault; `idempotency_key_reused`: the `Idempotency-Key` was used with another body.',
    },
    successStatus: 201,
    body: ['lead'],
    input: (now) => leadRequests(now).create,
  },
  {
    method: 'POST',
    path: '/api/v1/partner/tokens',
    field: 'Mutation.create_partner_token',
    spec: '4.10',
    tag: 'partner',
    outcomes: {
      404: "`no_platform_account`: no platform user has that e-mail among the key's dealerships.",
      422: '`email_required`: `email` is missing or empty; `invalid_input` for another problem.',
    },
    summary: 'Generate a partner sign-on token',
    successStatus: 201,
    body: ['email'],
    input: () => documentedPartnerTokenRequest,
  },
  {
    method: 'POST',
    path: '/api/v1/lead_events/:service/create',
    field: 'Mutation.create_lead_event',
    spec: '4.11',
    tag: 'leads',
    outcomes: {
      404: "`no_lead_found`: no lead with `data[leadId]` among the key's dealerships.",
    },
    summary: 'Record a messaging event against a lead (deprecated)',
    successStatus: 201,
    query: ['data'],
    input: () => leadEventRequest,
    deprecated: { since: '2026-11-21', sunset: '2027-06-30' },
  },
  {
    method: 'GET',
    path: '/dealerships/:dealership_id/contacts/:id',
    field: 'Query.contact',
    demo: { dealership_id: 1, id: 1 },
    spec: '4.12',
    summary: 'Show a contact',
    tag: 'contacts',
    outcomes: { 404: '`dealership_not_found`; `contact_not_found`.' },
  },
  {
    method: 'GET',
    path: '/dealerships/:dealership_id/contacts',
    field: 'Query.contacts',
    demo: { dealership_id: 1, per_page: 5 },
    spec: '4.13',
    summary: "List a dealership's contacts",
    tag: 'contacts',
    outcomes: { 404: '`dealership_not_found`.' },
    query: ['page', 'per_page', 'after_id'],
    input: () => contactListRequest,
  },
  {
    method: 'GET',
    path: '/api/v1/partner/dealerships',
    field: 'Query.partner_dealerships',
    spec: '4.14',
    tag: 'partner',
    summary: 'List partner dealership mappings',
  },
  {
    method: 'GET',
    path: '/manufacturers/:id/search_by_postcode',
    field: 'Query.search_dealerships_by_postcode',
    demo: { id: 1, postcode: '3000' },
    spec: '4.15',
    tag: 'dealerships',
    outcomes: {
      404: '`manufacturer_not_found`.',
      422: '`geolocation_error`: the postcode is not a known Australian postcode; `invalid_input` for another parameter (such as a `limit` outside 1–20).',
    },
    summary: "Search a manufacturer's sales locations by postcode",
    query: ['postcode', 'limit'],
    // The search's own rule (not the graph) requires the postcode: see postcodeSearchRequest.
    input: () => withRequired(postcodeSearchRequest, ['postcode']),
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/phone_calls_webhooks/generic',
    field: 'Mutation.phone_call_webhook',
    spec: '4.16',
    tag: 'phone calls',
    outcomes: { 401: '`unauthorized`: no key, neither in `Authorization` nor in `?token=`, or an invalid one.' },
    summary: 'Receive a phone call notification',
    successStatus: 202,
    body: ['called_number', 'caller_number'],
    input: () => phoneCallReport,
    acceptsForm: true,
    tokenInQuery: true,
  },
  {
    method: 'GET',
    path: '/api/v1/dealerships/:dealership_slug/plugins',
    field: 'Query.dealership_plugins',
    demo: { dealership_slug: 'richmond-toyota' },
    spec: '4.17',
    tag: 'dealerships',
    outcomes: { 404: '`dealership_not_found`.' },
    summary: "List a dealership's plugins",
  },
  {
    method: 'GET',
    path: '/api/v1/dealerships/:dealership_slug/redirect_service',
    field: 'Query.car_redirect',
    demo: { dealership_slug: 'richmond-toyota', website_id: 1, stocknum: 'MEL1002' },
    spec: '4.18',
    tag: 'cars',
    outcomes: { 404: "`dealership_not_found`; `website_not_found`: the website is not one of that dealership's." },
    summary: "Redirect to a car's page by stock number",
    successStatus: 302,
    query: ['website_id', 'stocknum', 'fbclid'],
    input: () => carRedirectRequest,
  },
  {
    // Not in the spec: the other half of the 4.10 handoff. The partner sends the user's browser to
    // the redirect_url, which lands here; no API key (a browser has none), the token is the credential.
    method: 'GET',
    path: '/api/v1/partner/sign_on',
    field: 'Mutation.redeem_partner_token',
    spec: '4.10 (handoff)',
    tag: 'partner',
    outcomes: { 404: '`token_not_found`.', 410: '`token_expired` (older than 10 minutes) or `token_used`.' },
    summary: 'Consume a partner sign-on token and hand the user to the platform',
    successStatus: 302,
    query: ['token'],
  },
  {
    method: 'PUT',
    path: '/api/v1/cars/:id/reserve',
    field: 'Mutation.reserve_car',
    spec: '4.19',
    summary: "Update a car's reserved flag",
    tag: 'cars',
    outcomes: {
      403: '`forbidden`: the key lacks `reserve:car`; or `invalid_dealership`: the car belongs to a dealership the key cannot use.',
      404: '`car_not_found`: no car has that id, slug or custom slug.',
      409: '`car_already_reserved`.',
    },
    query: ['reserved'],
  },
  {
    method: 'GET',
    path: '/api/v1/websites/:website_id/models',
    field: 'Query.website_models',
    demo: { website_id: 'richmond-toyota', version: 2 },
    spec: '4.20',
    summary: "List a website's models",
    tag: 'new vehicles',
    outcomes: { 403: '`forbidden`: the key lacks `index:model`, or is not authorised for the website.', 404: '`website_not_found`.' },
    query: ['version'],
    input: () => websiteModelsRequest,
  },
  subscriptionRoute('GET', '', 'Query.webhook_subscriptions', "List the webhook subscriptions of the key's dealerships"),
  subscriptionRoute('POST', '', 'Mutation.create_webhook_subscription', 'Subscribe a URL to events; answers the signing secret once', {
    successStatus: 201,
    body: ['subscription'],
    input: () => z.object({ subscription: webhookSubscriptionInput }),
    outcomes: {
      409: '`too_many_webhook_subscriptions`: the dealership has 20 already.',
      422: '`invalid_input`: `field` names the value at fault (a URL that is not https, or points at a private address; an event type the key cannot read).',
    },
    errors: [400, 401, 403, 409, 422],
  }),
  subscriptionRoute('GET', '/:id/deliveries', 'Query.webhook_deliveries', "A subscription's delivery log, newest first", {
    demo: { id: 1 },
  }),
  subscriptionRoute(
    'POST',
    '/:id/rotate_secret',
    'Mutation.rotate_webhook_secret',
    'Rotate the signing secret; the old one signs too for a grace period',
    { outcomes: { 409: '`webhook_secret_rotated_meanwhile`.' } },
  ),
  subscriptionRoute('POST', '/:id/disable', 'Mutation.disable_webhook_subscription', 'Stop deliveries'),
  subscriptionRoute('POST', '/:id/enable', 'Mutation.enable_webhook_subscription', 'Start deliveries again'),
  subscriptionRoute('DELETE', '/:id', 'Mutation.delete_webhook_subscription', 'Remove a subscription with its delivery log'),
  subscriptionRoute(
    'POST',
    '/:id/deliveries/:delivery_id/redeliver',
    'Mutation.redeliver_webhook',
    'Send a delivery again, with the same webhook-id',
    {
      outcomes: {
        404: '`webhook_subscription_not_found` or `webhook_delivery_not_found`.',
        409: '`webhook_subscription_disabled`: enable it first.',
      },
    },
  ),
];

/** Whether the route takes an Idempotency-Key header: every write but those src/schema/idempotent-writes.ts lists. */
export function routeTakesIdempotencyKey(route: RestRoute): boolean {
  const [operation, name] = route.field.split('.') as ['Query' | 'Mutation', string];
  return operation === 'Mutation' && takesIdempotencyKey(name);
}

/** The root field a route answers with in `schema` (the graph's or the REST door's), if it has it. */
export function rootFieldIn(route: RestRoute, schema: GraphQLSchema): GraphQLField<unknown, unknown> | undefined {
  const [operation, name] = route.field.split('.') as ['Query' | 'Mutation', string];
  return (operation === 'Query' ? schema.getQueryType() : schema.getMutationType())?.getFields()[name];
}

/** The OpenAPI path of a route: `/cars/:id/performance.json` → `/cars/{id}/performance.json`. */
export function openApiPath(path: string): string {
  return path.replace(PATH_PARAM, '{$1}');
}

/** The `:name` parameters of a path, in order. */
export const pathParamNames = (path: string): string[] => [...path.matchAll(PATH_PARAM)].map((match) => match[1] ?? '');

/** The path and query parameters that are not plain text, in the route's order: a 422 names the first that does not parse. */
export function typedParams(route: RestRoute, field: GraphQLField<unknown, unknown>): [string, ParamType][] {
  const types = new Map(field.args.map((arg) => [arg.name, PARAM_TYPES[getNamedType(arg.type).name as keyof typeof PARAM_TYPES]]));
  return [...pathParamNames(route.path), ...(route.query ?? [])].flatMap((name) => {
    const type = types.get(name);
    return type ? [[name, type] as [string, ParamType]] : [];
  });
}

/** Who may call the route: what its root field declares (src/auth/field-access.ts), the only declaration. */
export function accessOfRoute(route: RestRoute, schema: GraphQLSchema): FieldAccess {
  const field = rootFieldIn(route, schema);
  if (!field) throw new Error(`${route.field} is not a field of the schema`);
  return accessOfField(field);
}

export interface MatchedRoute {
  route: RestRoute;
  /** The route's path as OpenAPI writes it: the label of its metrics and spans. */
  template: string;
  params: Record<string, string>;
  /** A path parameter whose percent-escapes do not decode to UTF-8 text (`%E0%A4%A`), if any. */
  malformedParam?: string;
}

const compiled = restRoutes.map((route) => ({
  route,
  template: openApiPath(route.path),
  names: pathParamNames(route.path),
  pattern: new RegExp(`^${escapeRegex(route.path).replace(PATH_PARAM, '([^/]+?)')}$`),
}));

// A request's path is matched by several plugins in turn (the door, its limits, its log and telemetry): the
// recent paths' matches are kept, read-only, so the route table is walked once per path, not once per plugin.
const recentMatches = new Map<string, readonly MatchedRoute[]>();
const RECENT_PATHS = 256;
const RECENT_PATH_MAX_LENGTH = 256;

/** The routes whose path matches, whatever their method (for 405 and Allow). */
export function matchPath(pathname: string): readonly MatchedRoute[] {
  const recent = recentMatches.get(pathname);
  if (recent) return recent;
  const matches: MatchedRoute[] = [];
  for (const { route, template, names, pattern } of compiled) {
    const found = pattern.exec(pathname);
    if (!found) continue;
    const params: Record<string, string> = {};
    let malformedParam: string | undefined;
    names.forEach((name, index) => {
      try {
        params[name] = decodeURIComponent(found[index + 1] ?? '');
      } catch {
        malformedParam ??= name;
      }
    });
    matches.push({ route, template, params, ...(malformedParam ? { malformedParam } : {}) });
  }
  if (pathname.length <= RECENT_PATH_MAX_LENGTH) {
    if (recentMatches.size >= RECENT_PATHS) recentMatches.clear();
    recentMatches.set(pathname, matches);
  }
  return matches;
}

/** The route that answers the request: a HEAD is answered as the GET (useHttpConventions). */
export function routeFor(method: string, pathname: string): MatchedRoute | undefined {
  const wanted = method === 'HEAD' ? 'GET' : method;
  return matchPath(pathname).find((match) => match.route.method === wanted);
}

/** The methods the matched routes answer: HEAD wherever GET is (useHttpConventions answers it as the GET). */
export function methodsOf(matches: readonly MatchedRoute[]): Set<string> {
  const methods = new Set<string>(matches.map(({ route }) => route.method));
  if (methods.has('GET')) methods.add('HEAD');
  return methods;
}

/** Whether the request presents an API key: the sign-on handoff's ?token= is a sign-on token, so that request is keyless. */
export function carriesApiKey(headers: Headers, url: URL): boolean {
  if (headers.has('authorization')) return true;
  return url.searchParams.has('token') && matchPath(url.pathname).some(({ route }) => route.tokenInQuery === true);
}

const TRUE_SPELLINGS = new Set(['true', '1', 'yes', 'on', 't', 'y']);
const FALSE_SPELLINGS = new Set(['false', '0', 'no', 'off', 'f', 'n']);

/** A parameter's text in its canonical spelling, or an error reason; booleans in any case of the usual spellings. */
export function parseParam(type: ParamType, raw: string): { value: string } | { reason: string } {
  const text = raw.trim();
  if (type === 'boolean') {
    const lower = text.toLowerCase();
    if (TRUE_SPELLINGS.has(lower)) return { value: 'true' };
    if (FALSE_SPELLINGS.has(lower)) return { value: 'false' };
    return { reason: `${SCALAR_REASONS.Boolean}, got "${raw}"` };
  }
  // Integer parameters are GraphQL Ints: 32-bit signed, so a larger number is refused here, by name.
  if (!INTEGER_TEXT.test(text)) return { reason: `${SCALAR_REASONS.Int}, got "${raw}"` };
  const value = Number(text);
  if (value < INT32.min || value > INT32.max) return { reason: INT32_REASON };
  return { value: String(value) };
}
