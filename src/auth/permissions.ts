// The closed list of permissions. A key holds some of these; every root field and every guarded
// field names the one it needs. Adding an operation means adding its permission here first.

export const permissionCatalogue = {
  'read:car': 'Read cars and their performance figures (GET /api/v1/cars/{id}/performance.json).',
  'update:car': 'Update a car (PUT /api/cars/{id}).',
  'reserve:car': "Set a car's reserved flag (PUT /api/v1/cars/{id}/reserve).",
  'show:payment_processor': "Read a car's payment processors (GET /api/v1/cars/{id}/payment_processors.json).",
  'show:payment_processor_secret':
    "See a payment processor's authorization_key; every payment processor record carries it, so reading processors needs this too (403 without it).",
  'show:model_variant': 'Read a model variant (GET /api/v1/model_variants/{slug}).',
  'index:model': "List a website's models (GET /api/v1/websites/{website_id}/models).",
  'index:offer': 'Read manufacturer and website offers (GET /manufacturers/{id}/offers.json, GET /websites/{website_id}/offers/{id}.json).',
  'create:lead': 'Create leads (POST /api/v1/leads).',
  'update:lead': 'Update leads of up to 3 days old (PUT /api/v1/leads/{id}).',
  'read:lead': 'Read leads, their events and phone calls through GraphQL.',
  'create:lead_event': 'Record messaging events against leads (POST /api/v1/lead_events/{service}/create).',
  'read:contact': "Read a dealership's contacts (GET /dealerships/{dealership_id}/contacts[/{id}]).",
  'read:personal_data':
    "See customers' personal data that a record may leave out: contacts' postcodes; in GraphQL, leads' names, e-mails, phones, addresses and birth dates, and phone calls' caller numbers (null without it).",
  'index:dealership': 'List partner dealership mappings (GET /api/v1/partner/dealerships) and read dealerships in GraphQL.',
  'search:location': "Search a manufacturer's dealership locations by postcode (GET /manufacturers/{id}/search_by_postcode).",
  'index:plugin': "List a dealership's plugins (GET /api/v1/dealerships/{dealership_slug}/plugins).",
  'create:partner_token': 'Create partner sign-on tokens (POST /api/v1/partner/tokens).',
  'create:phone_call': 'Deliver phone call notifications (POST /api/v1/webhooks/phone_calls_webhooks/generic).',
  'manage:webhook':
    "Manage the dealership's outbound webhook subscriptions: create, list, rotate secrets, disable, delete, read the delivery log and redeliver (/api/v1/webhook_subscriptions).",
  'read:schema': 'Introspect the GraphQL schema (__schema, __type) when the service runs in production; anyone may in development.',
} as const;

export type Permission = keyof typeof permissionCatalogue;

export const allPermissions = Object.keys(permissionCatalogue) as Permission[];

export function isPermission(value: string): value is Permission {
  return Object.hasOwn(permissionCatalogue, value);
}
