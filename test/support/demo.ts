// The app over the full demo data (prisma/seed.ts), with a key holding every permission: what a
// reader of the README has after `npm start` and `npm run keys -- create --all-permissions`.
import { allPermissions } from '../../src/auth/permissions.ts';
import { seedDemoData } from '../../prisma/seed.ts';
import { createTestApp, type TestApp } from './app.ts';
import { makeKey } from './fixtures.ts';

export async function createDemoApp(): Promise<{ app: TestApp; key: string }> {
  const app = await createTestApp();
  await seedDemoData(app.db, { now: app.clock.now(), keyring: app.config.secretsKeyring });
  const { key } = await makeKey(app.db, { permissions: allPermissions });
  await subscribeDemoWebhook(app, key);
  return { app, key };
}

/**
 * Webhook subscription 1, of dealership 1, with one delivery in its log (lead 1 created): the demo
 * data has no subscription, since one belongs to a key and the demo data makes none.
 */
async function subscribeDemoWebhook(app: TestApp, key: string): Promise<void> {
  const response = await app.request('/api/v1/webhook_subscriptions', {
    method: 'POST',
    key,
    json: { subscription: { url: 'https://crm.example/hooks', events: ['lead.created'], dealership_id: 1 } },
  });
  if (response.status !== 201) throw new Error(`the demo webhook subscription was refused: ${response.status}`);
  const { subscription } = (await response.json()) as { subscription: { id: number } };
  const now = app.clock.now();
  const event = await app.db.recordEvent.create({
    data: { event_id: 'evt_demo1', type: 'lead.created', dealership_id: 1, subject: 'lead', record_id: 1, occurred_at: now },
  });
  await app.db.webhookDelivery.create({
    data: {
      subscription_id: subscription.id,
      record_event_id: event.id,
      record_key: 'lead:1',
      message_id: 'msg_demo1',
      due_at: now,
      created_at: now,
    },
  });
}

/** One request per read operation of the REST table, on the demo data (the car redirect's own query aside). */
export const DEMO_READ_PATHS: Readonly<Record<string, string>> = {
  'Query.car_performance': '/api/v1/cars/1/performance.json',
  'Query.car_payment_processors': '/api/v1/cars/1/payment_processors.json?website=richmond-toyota',
  'Query.model_variant': '/api/v1/model_variants/toyota-corolla-sx-hybrid?website_id=1',
  'Query.manufacturer_offers': '/manufacturers/1/offers.json',
  'Query.website_offer': '/websites/1/offers/13.json',
  'Query.apikey_details': '/api/v1/apikeys/apikey_details.json',
  'Query.contact': '/dealerships/1/contacts/1',
  'Query.contacts': '/dealerships/1/contacts?per_page=5',
  'Query.partner_dealerships': '/api/v1/partner/dealerships',
  'Query.search_dealerships_by_postcode': '/manufacturers/1/search_by_postcode?postcode=3000',
  'Query.dealership_plugins': '/api/v1/dealerships/richmond-toyota/plugins',
  'Query.car_redirect': '/api/v1/dealerships/richmond-toyota/redirect_service?website_id=1&stocknum=MEL1002',
  'Query.website_models': '/api/v1/websites/richmond-toyota/models?version=2',
  'Query.webhook_subscriptions': '/api/v1/webhook_subscriptions',
  'Query.webhook_deliveries': '/api/v1/webhook_subscriptions/1/deliveries',
};
