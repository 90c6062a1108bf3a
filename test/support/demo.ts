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
  return { app, key };
}
