// Where a webhook may be sent (docs/webhooks.md, "Where webhooks may go"): never to an address of the
// service's own networks (SSRF), unless WEBHOOK_ALLOWED_ADDRESSES lists it. The worker resolves the
// host, checks every address here and connects to the address it checked (src/notifications/webhook-worker.ts),
// so a name that resolves differently a moment later (DNS rebinding) gains nothing.
import { BlockList, isIP } from 'node:net';

/** Loopback, private, shared, link-local, documentation-adjacent, multicast and reserved space. */
const REFUSED_IPV4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
/** Unspecified, loopback, IPv4-compatible, NAT64, unique-local, link-local and multicast. */
const REFUSED_IPV6 = ['::/96', '::1/128', '64:ff9b::/96', '64:ff9b:1::/48', 'fc00::/7', 'fe80::/10', 'ff00::/8'];

const refused = new BlockList();
for (const range of REFUSED_IPV4) addRange(refused, range);
for (const range of REFUSED_IPV6) addRange(refused, range);

function addRange(list: BlockList, entry: string): void {
  const [address = '', prefix] = entry.split('/');
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  if (prefix === undefined) list.addAddress(address, family);
  else list.addSubnet(address, Number(prefix), family);
}

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `::ffff:7f00:1`) stands for, else null. */
function mappedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted?.[1] && isIP(dotted[1]) === 4) return dotted[1];
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex?.[1] || !hex[2]) return null;
  const high = Number.parseInt(hex[1], 16);
  const low = Number.parseInt(hex[2], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** The allow-list of WEBHOOK_ALLOWED_ADDRESSES, built once per worker. */
export function allowedAddresses(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) addRange(list, entry);
  return list;
}

/** Why a webhook may not go to `address` (an IP address), or null when it may. */
export function refusedAddress(address: string, allowed: BlockList): string | null {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 0) return 'is not an IP address';
  const mapped = family === 6 ? mappedIpv4(bare) : null;
  const [checked, type] = mapped ? [mapped, 'ipv4' as const] : [bare, family === 4 ? ('ipv4' as const) : ('ipv6' as const)];
  if (!refused.check(checked, type)) return null;
  if (allowed.check(checked, type) || allowed.check(bare, family === 4 ? 'ipv4' : 'ipv6')) return null;
  return `${bare} is a private, loopback, link-local or reserved address`;
}
