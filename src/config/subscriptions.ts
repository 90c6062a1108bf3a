// Live GraphQL subscriptions (docs/subscriptions.md): how often an open stream is sent a heartbeat,
// and how many streams one key, and one instance, may hold open.
import { wholeNumberFrom1, setting, type SettingDeclaration } from './declare.ts';

export const SUBSCRIPTION_SETTINGS = {
  SUBSCRIPTION_HEARTBEAT_MS: setting({
    schema: wholeNumberFrom1(300_000, 'milliseconds'),
    default: '15000',
    meaning:
      'how often an open subscription stream is sent a heartbeat (an SSE comment line), so that proxies and clients see it alive between events',
  }),
  SUBSCRIPTIONS_PER_KEY: setting({
    schema: wholeNumberFrom1(1_000, 'subscriptions'),
    default: '10',
    meaning:
      'how many subscriptions one API key may hold open on one instance; the next is refused (`too_many_subscriptions`) until one closes',
  }),
  SUBSCRIPTIONS_PER_INSTANCE: setting({
    schema: wholeNumberFrom1(100_000, 'subscriptions'),
    default: '500',
    meaning:
      'how many subscriptions one instance holds open, all keys together; the next is refused (`subscriptions_at_capacity`) until one closes. Below `HTTP_MAX_CONNECTIONS`, so that open streams never take every connection from the other requests',
  }),
} as const satisfies Record<string, SettingDeclaration>;
