// The app over the full demo data (prisma/seed.ts), with a key holding every permission: what a
// reader of the README has after `npm start` and `npm run keys -- create --all-permissions`.
import { allPermissions } from '../../src/auth/permissions.ts';
import { restRoutes } from '../../src/rest/routes.ts';
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

/** One request per read operation of the REST table, on the demo data: its path with the route's `demo` parameters. */
export const DEMO_READ_PATHS: Readonly<Record<string, string>> = Object.fromEntries(
  restRoutes
    .filter((route) => route.method === 'GET' && route.field.startsWith('Query.'))
    .map((route) => {
      const inPath = new Set<string>();
      const path = route.path.replace(/:(\w+)/g, (_whole, name: string) => {
        const value = route.demo?.[name];
        if (value === undefined) throw new Error(`${route.field}: its route has no demo ${name}`);
        inPath.add(name);
        return encodeURIComponent(String(value));
      });
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(route.demo ?? {})) if (!inPath.has(name)) query.set(name, String(value));
      return [route.field, query.size > 0 ? `${path}?${query}` : path];
    }),
);
