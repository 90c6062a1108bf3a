// Where webhooks may go, walked over the whole class (src/domain/webhook-address.ts): every row of
// SPECIAL_USE_RANGES, its first and its last address, in every spelling the URL parser and a
// resolver accept, is refused when a subscription is made (422 naming subscription.url, in production
// mode, nothing stored) and when a delivery is sent (as the URL's host, and as the answer of a
// resolver the test controls for a name), before any connection; the addresses just outside each
// range are not refused; `localhost` in every spelling and every control character are refused; an
// accepted URL is stored as the parser serialises it. A delivery connects only to the address it
// checked (a name whose answers alternate), and never follows a redirect.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { BlockList, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allowedAddresses,
  checkWebhookUrl,
  parseIpAddress,
  SPECIAL_USE_RANGES,
  type IpAddress,
  type SpecialUseRange,
} from '../src/domain/webhook-address.ts';
import { postWebhook, type WebhookResolver } from '../src/notifications/webhook-sender.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';

let app: TestApp;
let manager: string;
let dealershipId: number;

beforeAll(async () => {
  app = await createTestApp({ mode: 'production', webhookAllowedAddresses: [] });
  dealershipId = (await makeDealership(app.db)).id;
  manager = (await makeKey(app.db, { permissions: ['manage:webhook', 'read:lead'], dealershipIds: [dealershipId] })).key;
});

const create = (url: string) =>
  app.request('/api/v1/webhook_subscriptions', {
    method: 'POST',
    key: manager,
    json: { subscription: { url, events: ['lead.created'] } },
  });

const storedCount = () => app.db.webhookSubscription.count({ where: { dealership_id: dealershipId } });

interface Spelling {
  label: string;
  host: string;
  /** How the refusal names the address (the parser's serialisation), or null when the parser refuses the URL itself. */
  named: string | null;
}

const octets = (value: bigint) => [24n, 16n, 8n, 0n].map((shift) => Number((value >> shift) & 255n));
const dottedOf = (value: bigint) => octets(value).join('.');

/** An IPv4 address as a URL host, in each form the WHATWG parser reads as that address. */
function ipv4Spellings(address: IpAddress): Spelling[] {
  const [a = 0, b = 0, c = 0, d = 0] = octets(address.value);
  const dotted = address.text;
  const mapped = parseIpAddress(`::ffff:${dotted}`)!.text;
  return [
    { label: 'dotted decimal', host: dotted, named: dotted },
    { label: 'trailing dot', host: `${dotted}.`, named: dotted },
    { label: 'one decimal number', host: address.value.toString(10), named: dotted },
    { label: 'one hexadecimal number', host: `0x${address.value.toString(16)}`, named: dotted },
    { label: 'upper-case hexadecimal', host: `0X${address.value.toString(16).toUpperCase()}`, named: dotted },
    { label: 'octal parts', host: [a, b, c, d].map((part) => `0${part.toString(8)}`).join('.'), named: dotted },
    { label: 'hexadecimal parts', host: [a, b, c, d].map((part) => `0x${part.toString(16)}`).join('.'), named: dotted },
    { label: 'three parts', host: `${a}.${b}.${c * 256 + d}`, named: dotted },
    { label: 'two parts', host: `${a}.${b * 65536 + c * 256 + d}`, named: dotted },
    { label: 'percent-encoded', host: [...dotted].map((char) => `%${char.charCodeAt(0).toString(16)}`).join(''), named: dotted },
    {
      label: 'full-width digits and ideographic full stops',
      host: [...dotted].map((char) => (char === '.' ? '\u3002' : String.fromCharCode(0xff10 + Number(char)))).join(''),
      named: dotted,
    },
    { label: 'IPv4-mapped IPv6', host: `[::ffff:${dotted}]`, named: mapped },
  ];
}

const groupsOf = (value: bigint) => [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => Number((value >> shift) & 0xffffn));

/** An IPv6 address as a URL host, in each form the WHATWG parser reads (or refuses, with a zone id). */
function ipv6Spellings(address: IpAddress): Spelling[] {
  const groups = groupsOf(address.value);
  return [
    { label: 'compressed', host: `[${address.text}]`, named: address.text },
    {
      label: 'every group in full',
      host: `[${groups.map((group) => group.toString(16).padStart(4, '0')).join(':')}]`,
      named: address.text,
    },
    { label: 'upper case', host: `[${address.text.toUpperCase()}]`, named: address.text },
    {
      label: 'the last 32 bits as a dotted quad',
      host: `[${groups
        .slice(0, 6)
        .map((group) => group.toString(16))
        .join(':')}:${dottedOf(address.value & 0xffff_ffffn)}]`,
      named: address.text,
    },
    { label: 'with a zone id', host: `[${address.text}%25eth0]`, named: null },
  ];
}

const spellingsOf = (address: IpAddress) => (address.family === 4 ? ipv4Spellings(address) : ipv6Spellings(address));

/** The texts a resolver may answer for an address: as the system's resolver writes it, and as others may. */
function resolverSpellings(address: IpAddress): string[] {
  if (address.family === 4) return [address.text, `::ffff:${address.text}`];
  const groups = groupsOf(address.value);
  return [
    address.text,
    address.text.toUpperCase(),
    groups.map((group) => group.toString(16).padStart(4, '0')).join(':'),
    `${address.text}%eth0`,
  ];
}

function rangeBounds(range: SpecialUseRange): { first: IpAddress; last: IpAddress } {
  const [network = '', length = ''] = range.block.split('/');
  const { family, value } = parseIpAddress(network)!;
  const hostBits = (family === 4 ? 32n : 128n) - BigInt(length);
  const first = (value >> hostBits) << hostBits;
  const address = (bits: bigint) =>
    parseIpAddress(
      family === 4
        ? dottedOf(bits)
        : groupsOf(bits)
            .map((group) => group.toString(16))
            .join(':'),
    )!;
  return { first: address(first), last: address(first | ((1n << hostBits) - 1n)) };
}

const bounds = (range: SpecialUseRange) => {
  const { first, last } = rangeBounds(range);
  return [
    ['first', first],
    ['last', last],
  ] as const;
};

const refusedMessage = (named: string) =>
  new RegExp(
    `^subscription\\.url: must not point at ${named.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, which is a private, loopback, link-local or reserved address \\(.+\\)$`,
  );

describe('every special-use range, at creation', () => {
  it.each(SPECIAL_USE_RANGES.map((range) => [range.block, range] as const))(
    '%s: its first and last address in every spelling are refused naming subscription.url',
    async (_block, range) => {
      const before = await storedCount();
      for (const [bound, address] of bounds(range)) {
        for (const spelling of spellingsOf(address)) {
          const url = `https://${spelling.host}/hooks`;
          const label = `${range.block} ${bound} ${spelling.label}: ${url}`;
          const response = await create(url);
          expect(response.status, label).toBe(422);
          const body = await response.json();
          expect(body, label).toMatchObject({ error: 'invalid_input', field: 'subscription.url' });
          expect(body.message, label).toMatch(
            spelling.named === null ? /^subscription\.url: must be an absolute URL$/ : refusedMessage(spelling.named),
          );
        }
      }
      expect(await storedCount()).toBe(before);
    },
  );

  it('refuses no address just outside a range, unless another range holds it', () => {
    // Node's BlockList, an independent matcher, says which neighbours another row holds.
    // One list per family: a BlockList matches an IPv4 address against IPv6 rules through its mapped form.
    const others = { ipv4: new BlockList(), ipv6: new BlockList() };
    for (const range of SPECIAL_USE_RANGES.filter((candidate) => !candidate.embedsIpv4)) {
      const [network = '', prefix] = range.block.split('/');
      const family = network.includes(':') ? 'ipv6' : 'ipv4';
      others[family].addSubnet(network, Number(prefix), family);
    }
    const rules = { mode: 'production' as const, allowed: allowedAddresses([]) };
    let checked = 0;
    for (const range of SPECIAL_USE_RANGES) {
      const { first, last } = rangeBounds(range);
      const max = first.family === 4 ? 2n ** 32n : 2n ** 128n;
      for (const value of [first.value - 1n, last.value + 1n].filter((candidate) => candidate >= 0n && candidate < max)) {
        const text =
          first.family === 4
            ? dottedOf(value)
            : parseIpAddress(
                groupsOf(value)
                  .map((group) => group.toString(16))
                  .join(':'),
              )!.text;
        const host = first.family === 4 ? text : `[${text}]`;
        const held = first.family === 4 ? others.ipv4.check(text, 'ipv4') : others.ipv6.check(text, 'ipv6');
        expect(checkWebhookUrl(`https://${host}/`, rules).problem !== null, `${range.block}: ${text}`).toBe(held);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(SPECIAL_USE_RANGES.length);
  });

  it('accepts a translation prefix carrying a public IPv4 address, and the registry entries that are globally reachable', async () => {
    const rules = { mode: 'production' as const, allowed: allowedAddresses([]) };
    for (const host of ['192.31.196.1', '192.52.193.1', '192.175.48.1', '[2620:4f:8000::1]', '8.8.8.8', '[2606:4700::1111]']) {
      expect(checkWebhookUrl(`https://${host}/`, rules).problem, host).toBeNull();
    }
    for (const [url, stored] of [
      ['https://[64:ff9b::8.8.8.8]/hooks', 'https://[64:ff9b::808:808]/hooks'],
      ['https://[2002:808:808::1]/hooks', 'https://[2002:808:808::1]/hooks'],
    ] as const) {
      const response = await create(url);
      expect(response.status, url).toBe(201);
      expect((await response.json()).subscription.url).toBe(stored);
    }
  });

  it('refuses localhost in every spelling: case, any number of trailing dots, names under it, IDN forms', async () => {
    const before = await storedCount();
    for (const host of [
      'localhost',
      'LOCALHOST',
      'LocalHost.',
      'localhost.',
      'localhost..',
      'localhost...',
      'a.localhost',
      'a.localhost.',
      'a.b.localhost..',
      'localhost%2E',
      '%6Cocalhost',
      '\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54',
      'local\u00adhost',
      'a\u3002localhost',
      'localhost:8443',
    ]) {
      const response = await create(`https://${host}/hooks`);
      expect(response.status, host).toBe(422);
      expect(await response.json(), host).toMatchObject({
        field: 'subscription.url',
        message: 'subscription.url: must not be a loopback host (localhost or a name under it)',
      });
    }
    expect(await storedCount()).toBe(before);
  });

  it('refuses every control character anywhere in the URL (the parser would drop or change it)', async () => {
    const before = await storedCount();
    const controls = [...Array.from({ length: 0x20 }, (_, code) => code), 0x7f, ...Array.from({ length: 0x20 }, (_, code) => 0x80 + code)];
    for (const code of controls) {
      const char = String.fromCharCode(code);
      for (const url of [
        `https://crm.example/x${char}Host: evil`,
        `https://crm.example/hooks${char}`,
        `${char}https://crm.example/hooks`,
        `https://crm${char}.example/hooks`,
        `https://crm.example/hooks?a=${char}`,
      ]) {
        const response = await create(url);
        const label = `U+${code.toString(16).padStart(4, '0')} in ${JSON.stringify(url)}`;
        expect(response.status, label).toBe(422);
        const body = await response.json();
        expect(body.field, label).toBe('subscription.url');
        // U+0000 is refused by the input checks of every text argument before the URL's own check.
        expect(body.message, label).toMatch(
          code === 0 ? /NUL character/ : /^subscription\.url: must not contain control characters \(U\+[0-9A-F]{4} at position \d+\)$/,
        );
      }
    }
    expect(await storedCount()).toBe(before);
  });

  it('stores an accepted URL as the URL parser serialises it, so what is stored is what is called', async () => {
    for (const text of [
      'https://crm.example',
      'https://Hooks.Partner-CRM.io:443/in/./a/../webhooks?tenant=42&kind=a b#latest',
      '  https://crm.example/padded  ',
      'https://b\u00fccher.example/hooks',
      'https://\uff43\uff52\uff4d.example/hooks',
    ]) {
      const response = await create(text);
      expect(response.status, text).toBe(201);
      const { subscription } = await response.json();
      const href = new URL(text.trim()).href;
      expect(subscription.url, text).toBe(href);
      const row = await app.db.webhookSubscription.findUniqueOrThrow({ where: { id: subscription.id } });
      expect(row.url, text).toBe(href);
      expect(new URL(row.url).href).toBe(row.url);
    }
  });
});

describe('every special-use range, at delivery', () => {
  const production = { mode: 'production' as const, allowed: allowedAddresses([]), timeoutMs: 2_000 };
  const post = (url: string) => ({ url, headers: {}, body: '{}' });

  it.each(SPECIAL_USE_RANGES.map((range) => [range.block, range] as const))(
    '%s: refused as the URL’s host and as a resolver’s answer for a name, before any connection',
    async (_block, range) => {
      for (const [bound, address] of bounds(range)) {
        for (const spelling of spellingsOf(address)) {
          const url = `https://${spelling.host}/hooks`;
          await expect(postWebhook(post(url), production), `${range.block} ${bound} ${spelling.label}`).rejects.toThrow(
            /^refused: the URL /,
          );
        }
        for (const answer of resolverSpellings(address)) {
          const asked: string[] = [];
          const resolve: WebhookResolver = async (hostname) => {
            asked.push(hostname);
            // A public address beside it: every answer must pass, not only the first.
            return [
              { address: '8.8.8.8', family: 4 },
              { address: answer, family: answer.includes(':') ? 6 : 4 },
            ];
          };
          const named = answer.includes(':') ? parseIpAddress(answer)!.text : answer;
          await expect(
            postWebhook(post('https://receiver.hooks.test/hooks'), { ...production, resolve }),
            `${range.block} ${bound} answered as ${answer}`,
          ).rejects.toThrow(`refused: receiver.hooks.test resolves to ${named} is a private, loopback, link-local or reserved address (`);
          expect(asked).toEqual(['receiver.hooks.test']);
        }
      }
    },
  );

  it('refuses a stored URL that would not be created today: localhost, control characters', async () => {
    const resolve: WebhookResolver = async () => [{ address: '8.8.8.8', family: 4 }];
    for (const [url, reason] of [
      ['https://localhost../hooks', 'refused: the URL must not be a loopback host (localhost or a name under it)'],
      ['https://a.localhost./hooks', 'refused: the URL must not be a loopback host (localhost or a name under it)'],
      ['https://crm.example/x\r\nHost: evil', 'refused: the URL must not contain control characters (U+000D at position 22)'],
    ] as const) {
      await expect(postWebhook(post(url), { ...production, resolve }), url).rejects.toThrow(reason);
    }
  });
});

interface Received {
  host: string | undefined;
  localAddress: string | undefined;
  headers: IncomingHttpHeaders;
}

async function listen(
  address: string,
  answer: (received: Received[]) => [number, Record<string, string>],
  port = 0,
): Promise<{
  server: Server;
  port: number;
  received: Received[];
}> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    received.push({ host: request.headers.host, localAddress: request.socket.localAddress, headers: request.headers });
    request.resume();
    request.on('end', () => {
      const [status, headers] = answer(received);
      response.writeHead(status, headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, address, resolve));
  return { server, port: (server.address() as AddressInfo).port, received };
}

describe('the connection goes to the address checked', () => {
  let receiver: Awaited<ReturnType<typeof listen>>;
  /** The receiver's port on a loopback address outside the allow-list: a connection here is one to an address not checked. */
  let trap: Awaited<ReturnType<typeof listen>>;
  const allowed = allowedAddresses(['127.0.0.1']);

  beforeAll(async () => {
    receiver = await listen('127.0.0.1', () => [204, {}]);
    trap = await listen('127.0.0.2', () => [204, {}], receiver.port);
  });

  afterAll(async () => {
    for (const { server } of [receiver, trap]) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a name whose answers alternate between an allowed and a refused address connects only to the one it checked', async () => {
    let calls = 0;
    const resolve: WebhookResolver = async () => {
      calls += 1;
      return [{ address: calls % 2 === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    };
    const url = `http://rebind.hooks.test:${receiver.port}/hooks`;
    const rules = { mode: 'development' as const, allowed, resolve, timeoutMs: 2_000 };
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < 6; attempt += 1) {
      outcomes.push(
        await postWebhook({ url, headers: {}, body: '{}' }, rules).then(
          (answer) => `answered ${answer.status}`,
          (error: Error) => error.message,
        ),
      );
    }
    expect(calls, 'one resolution per delivery: the client does not resolve again').toBe(6);
    expect(outcomes).toEqual(
      Array.from({ length: 3 }, () => [
        'answered 204',
        'refused: rebind.hooks.test resolves to 127.0.0.2 is a private, loopback, link-local or reserved address (127.0.0.0/8 Loopback, RFC 1122)',
      ]).flat(),
    );
    expect(receiver.received.map((received) => [received.localAddress, received.host])).toEqual(
      Array.from({ length: 3 }, () => ['127.0.0.1', `rebind.hooks.test:${receiver.port}`]),
    );
    expect(trap.received).toEqual([]);
  });

  it('refuses a name with one refused answer among allowed ones, and never follows a redirect', async () => {
    const mixed: WebhookResolver = async () => [
      { address: '127.0.0.1', family: 4 },
      { address: '127.0.0.2', family: 4 },
    ];
    const rules = { mode: 'development' as const, allowed, timeoutMs: 2_000 };
    await expect(
      postWebhook({ url: `http://mixed.hooks.test:${receiver.port}/`, headers: {}, body: '{}' }, { ...rules, resolve: mixed }),
    ).rejects.toThrow('refused: mixed.hooks.test resolves to 127.0.0.2 is');
    const redirecting = await listen('127.0.0.1', () => [302, { location: `http://127.0.0.2:${trap.port}/hooks` }]);
    try {
      const answer = await postWebhook({ url: `http://127.0.0.1:${redirecting.port}/hooks`, headers: {}, body: '{}' }, rules);
      expect(answer.status).toBe(302);
      expect(redirecting.received).toHaveLength(1);
      expect(trap.received).toEqual([]);
    } finally {
      redirecting.server.close();
    }
  });
});
