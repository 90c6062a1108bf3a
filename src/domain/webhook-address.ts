// Never to a special-use address (SSRF) unless allow-listed; checked at creation and before every
// delivery, which connects to the address it checked, so DNS rebinding gains nothing. Addresses are
// compared as numbers after the WHATWG URL parser has read them, so every spelling is one.
import { BlockList, isIP } from 'node:net';
import type { Config } from '../config/index.ts';
import { urlTextProblem } from './http-url.ts';
import { parseUrl } from '../lib/parse-url.ts';

export interface SpecialUseRange {
  block: string;
  name: string;
  reference: string;
  /** Refused when the embedded IPv4 address is, allowed otherwise (a NAT64 gateway reaching a public host). */
  embedsIpv4?: (value: bigint) => bigint;
}

const low32 = (value: bigint): bigint => value & 0xffff_ffffn;

// From the IANA special-purpose registries (entries not globally reachable), multicast, the forms
// embedding IPv4, and everything outside 2000::/3; a longer prefix is matched before a shorter one.
export const SPECIAL_USE_RANGES: readonly SpecialUseRange[] = [
  // IPv4 Special-Purpose Address Registry
  { block: '0.0.0.0/8', name: '"This network"', reference: 'RFC 791' },
  { block: '0.0.0.0/32', name: '"This host on this network"', reference: 'RFC 1122' },
  { block: '10.0.0.0/8', name: 'Private-Use', reference: 'RFC 1918' },
  { block: '100.64.0.0/10', name: 'Shared Address Space', reference: 'RFC 6598' },
  { block: '127.0.0.0/8', name: 'Loopback', reference: 'RFC 1122' },
  { block: '169.254.0.0/16', name: 'Link Local', reference: 'RFC 3927' },
  { block: '172.16.0.0/12', name: 'Private-Use', reference: 'RFC 1918' },
  { block: '192.0.0.0/24', name: 'IETF Protocol Assignments', reference: 'RFC 6890' },
  { block: '192.0.0.0/29', name: 'IPv4 Service Continuity Prefix', reference: 'RFC 7335' },
  { block: '192.0.0.8/32', name: 'IPv4 dummy address', reference: 'RFC 7600' },
  { block: '192.0.0.170/32', name: 'NAT64/DNS64 Discovery', reference: 'RFC 8880' },
  { block: '192.0.0.171/32', name: 'NAT64/DNS64 Discovery', reference: 'RFC 8880' },
  { block: '192.0.2.0/24', name: 'Documentation (TEST-NET-1)', reference: 'RFC 5737' },
  { block: '192.88.99.0/24', name: 'Deprecated (6to4 Relay Anycast)', reference: 'RFC 7526' },
  { block: '192.168.0.0/16', name: 'Private-Use', reference: 'RFC 1918' },
  { block: '198.18.0.0/15', name: 'Benchmarking', reference: 'RFC 2544' },
  { block: '198.51.100.0/24', name: 'Documentation (TEST-NET-2)', reference: 'RFC 5737' },
  { block: '203.0.113.0/24', name: 'Documentation (TEST-NET-3)', reference: 'RFC 5737' },
  { block: '240.0.0.0/4', name: 'Reserved', reference: 'RFC 1112' },
  { block: '255.255.255.255/32', name: 'Limited Broadcast', reference: 'RFC 919' },
  // IPv4 Multicast Address Space registry
  { block: '224.0.0.0/4', name: 'Multicast', reference: 'RFC 5771' },
  // IPv6 Special-Purpose Address Registry
  { block: '::1/128', name: 'Loopback Address', reference: 'RFC 4291' },
  { block: '::/128', name: 'Unspecified Address', reference: 'RFC 4291' },
  { block: '::ffff:0:0/96', name: 'IPv4-mapped Address', reference: 'RFC 4291' },
  { block: '64:ff9b::/96', name: 'IPv4-IPv6 Translat.', reference: 'RFC 6052', embedsIpv4: low32 },
  { block: '64:ff9b:1::/48', name: 'Local-use IPv4/IPv6 Translation', reference: 'RFC 8215' },
  { block: '100::/64', name: 'Discard-Only Address Block', reference: 'RFC 6666' },
  { block: '2001::/23', name: 'IETF Protocol Assignments', reference: 'RFC 2928' },
  { block: '2001::/32', name: 'TEREDO', reference: 'RFC 4380' },
  { block: '2001:2::/48', name: 'Benchmarking', reference: 'RFC 5180' },
  { block: '2001:10::/28', name: 'Deprecated (previously ORCHID)', reference: 'RFC 4843' },
  { block: '2001:20::/28', name: 'ORCHIDv2', reference: 'RFC 7343' },
  { block: '2001:db8::/32', name: 'Documentation', reference: 'RFC 3849' },
  { block: '2002::/16', name: '6to4', reference: 'RFC 3056', embedsIpv4: (value) => low32(value >> 80n) },
  { block: '3fff::/20', name: 'Documentation', reference: 'RFC 9637' },
  { block: '5f00::/16', name: 'Segment Routing (SRv6) SIDs', reference: 'RFC 9602' },
  { block: 'fc00::/7', name: 'Unique-Local', reference: 'RFC 4193' },
  { block: 'fe80::/10', name: 'Link-Local Unicast', reference: 'RFC 4291' },
  // Multicast, and the forms embedding an IPv4 address the registry does not list (RFC 4291, RFC 2765)
  { block: 'ff00::/8', name: 'Multicast', reference: 'RFC 4291' },
  { block: '::/96', name: 'IPv4-compatible Address (deprecated)', reference: 'RFC 4291' },
  { block: '::ffff:0:0:0/96', name: 'IPv4-translated Address', reference: 'RFC 2765' },
  // IPv6 Address Space registry: everything outside 2000::/3
  { block: '::/8', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: '100::/8', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: '200::/7', name: 'Reserved by IETF', reference: 'RFC 4048' },
  { block: '400::/6', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: '800::/5', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: '1000::/4', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: '4000::/3', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: '6000::/3', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: '8000::/3', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: 'a000::/3', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: 'c000::/3', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: 'e000::/4', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: 'f000::/5', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: 'f800::/6', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: 'fe00::/9', name: 'Reserved by IETF', reference: 'RFC 4291' },
  { block: 'fec0::/10', name: 'Reserved by IETF (deprecated site-local)', reference: 'RFC 3879' },
];

export type IpAddress = { family: 4 | 6; value: bigint; text: string };

const BITS = { 4: 32n, 6: 128n } as const;

/** The zone does not change which range the address is in. */
export function parseIpAddress(text: string): IpAddress | null {
  const bare = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) {
    const value = bare.split('.').reduce((sum, part) => (sum << 8n) | BigInt(part), 0n);
    return { family, value, text: bare };
  }
  if (family !== 6) return null;
  const serialised = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  const [head = '', tail] = serialised.split('::');
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':'));
  const groups =
    tail === undefined
      ? groupsOf(head)
      : [...groupsOf(head), ...Array<string>(8 - groupsOf(head).length - groupsOf(tail).length).fill('0'), ...groupsOf(tail)];
  const value = groups.reduce((sum, group) => (sum << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
  return { family, value, text: serialised };
}

function ipv4Text(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 255n)).join('.');
}

function rowOf(range: SpecialUseRange) {
  const [address = '', length = ''] = range.block.split('/');
  const parsed = parseIpAddress(address);
  if (!parsed) throw new Error(`${range.block} is not a range`);
  return { range, family: parsed.family, prefix: BigInt(length), network: parsed.value };
}

const TABLE = SPECIAL_USE_RANGES.map(rowOf).sort((a, b) => Number(b.prefix - a.prefix));

function inRow(address: IpAddress, row: ReturnType<typeof rowOf>): boolean {
  const shift = BITS[row.family] - row.prefix;
  return row.family === address.family && address.value >> shift === row.network >> shift;
}

function specialUse(address: IpAddress): string | null {
  const row = TABLE.find((candidate) => inRow(address, candidate));
  if (!row) return null;
  const { block, name, reference, embedsIpv4 } = row.range;
  if (!embedsIpv4) return `${block} ${name}, ${reference}`;
  const embedded = embedsIpv4(address.value);
  const refusal = specialUse({ family: 4, value: embedded, text: ipv4Text(embedded) });
  return refusal ? `${block} ${name}, ${reference}, carrying ${ipv4Text(embedded)}: ${refusal}` : null;
}

export function allowedAddresses(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return list;
}

export function refusedAddress(address: string, allowed: BlockList): string | null {
  const parsed = parseIpAddress(address);
  if (!parsed) return `${address} is not an IP address`;
  const refusal = specialUse(parsed);
  if (!refusal) return null;
  // A BlockList matches an IPv4 rule against the IPv4-mapped form too.
  if (allowed.check(parsed.text, parsed.family === 4 ? 'ipv4' : 'ipv6')) return null;
  return `${parsed.text} is a private, loopback, link-local or reserved address (${refusal})`;
}

export type WebhookUrlRules = { mode: Config['mode']; allowed: BlockList };

type CheckedWebhookUrl = { url: URL; problem: null } | { url: null; problem: string };

/** The stored URL is the parser's serialisation, so what is stored is what is called; where a name points is checked per delivery. */
export function checkWebhookUrl(text: string, rules: WebhookUrlRules): CheckedWebhookUrl {
  const refuse = (problem: string): CheckedWebhookUrl => ({ url: null, problem });
  const textProblem = urlTextProblem(text);
  if (textProblem) return refuse(textProblem);
  const trimmed = text.trim();
  const url = parseUrl(trimmed);
  if (!url) return refuse('must be an absolute URL');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && rules.mode === 'development')) {
    return refuse(rules.mode === 'development' ? 'must be an http or https URL' : 'must be an https URL');
  }
  if (url.username || url.password) return refuse('must not carry credentials');
  if (url.hostname === '') return refuse('must name a host');
  const name = url.hostname.replace(/\.+$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) {
    return refusedAddress('127.0.0.1', rules.allowed)
      ? refuse('must not be a loopback host (localhost or a name under it)')
      : { url, problem: null };
  }
  if (url.hostname.startsWith('[') || isIP(url.hostname) === 4) {
    const refusal = refusedAddress(url.hostname, rules.allowed);
    if (refusal) return refuse(`must not point at ${refusal.replace(/ is /, ', which is ')}`);
  }
  return { url, problem: null };
}
