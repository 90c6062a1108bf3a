// Outbound webhooks (docs/webhooks.md): where they may go, how long they are retried, how long a
// rotated secret keeps signing.
import { isIP } from 'node:net';
import { commaList, positiveWholeNumber, setting, wholeNumberFrom1, type SettingDeclaration } from './declare.ts';

/** A week: a receiver down longer than that is better told by the disabled subscription. */
const MAX_WEBHOOK_RETRY_HOURS = 168;
const MAX_SECRET_GRACE_HOURS = 720;

/** `a.b.c.d`, `::1`, or either with a `/prefix`. */
function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

export const WEBHOOKS_SETTINGS = {
  WEBHOOK_ALLOWED_ADDRESSES: setting({
    schema: commaList.refine(
      (entries) => entries === undefined || entries.every(isAddressOrRange),
      'must be a comma-separated list of IP addresses or CIDR ranges (10.0.0.0/8, ::1)',
    ),
    default: '',
    meaning:
      'private, loopback or link-local addresses (or CIDR ranges) webhooks may nevertheless be sent to; every other such address is refused (docs/webhooks.md, "Where webhooks may go")',
  }),
  WEBHOOK_RETRY_HOURS: setting({
    schema: wholeNumberFrom1(MAX_WEBHOOK_RETRY_HOURS, 'hours'),
    default: '24',
    meaning: `how long a failing webhook delivery is retried (exponential backoff with jitter) before it fails for good and its subscription is disabled (1 to ${MAX_WEBHOOK_RETRY_HOURS})`,
  }),
  WEBHOOK_SECRET_GRACE_HOURS: setting({
    schema: wholeNumberFrom1(MAX_SECRET_GRACE_HOURS, 'hours'),
    default: '24',
    meaning: `after a webhook secret is rotated, how long deliveries are signed with the old secret too (1 to ${MAX_SECRET_GRACE_HOURS})`,
  }),
  WEBHOOK_POLL_INTERVAL_MS: setting({
    schema: positiveWholeNumber,
    default: '2000',
    meaning: 'pause between two rounds of the webhook worker',
  }),
} as const satisfies Record<string, SettingDeclaration>;
