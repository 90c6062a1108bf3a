// The pieces of the schema-driven fuzzer (test/fuzz-rest.test.ts, test/fuzz-graphql.test.ts): a
// seeded random source, hostile values of every kind, values generated from an OpenAPI (JSON) schema
// and then spoiled, and the harness that sends requests and collects every answer that is a 5xx, a
// GraphQL INTERNAL_SERVER_ERROR or gives internal detail away. Seeded, so a failure repeats.
import type { TestApp } from './app.ts';

/** mulberry32: a small, well-mixed 32-bit PRNG; the same seed gives the same run. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (probability) => next() < probability,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)] as T;
    },
  };
}

export interface Random {
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
}

export const LONE_SURROGATES = ['\ud800', '\udfff', 'a\ud83dz', 'Jo\udc00rdan'] as const;

/** Strings that have broken services: surrogates, controls, huge, numeric-looking, markup. */
export function hostileString(random: Random): string {
  return random.pick<() => string>([
    () => random.pick(LONE_SURROGATES),
    () => '',
    () => ' ',
    () => 'x'.repeat(random.pick([255, 1_001, 10_001, 100_000])),
    () => '名前'.repeat(random.int(1, 300)),
    () => '😀🚗',
    () => '\u0000nul',
    () => '\u202eltr',
    () => 'O\'Brien "quoted" \\ back',
    () => '<script>alert(1)</script>',
    () => '2147483648',
    () => '-1',
    () => '1e400',
    () => 'NaN',
    () => '9'.repeat(40),
    () => 'true',
    () => 'null',
    () => '{"a":1}',
    () => '%E0%A4%A',
    () => 'jordan@example.com',
    () => '0412 345 678',
    () => '31/02/2026',
    () => '2026-13-45',
    () => 'richmond-toyota',
    () => 'MEL1002',
  ])();
}

export function hostileNumber(random: Random): number {
  return random.pick([
    // biome-ignore lint/correctness/noPrecisionLoss: past 2^53 on purpose, as a caller's JSON may be.
    0, -1, 1, 2, 7, 2_147_483_647, 2_147_483_648, -2_147_483_649, 4_294_967_296, 1e21, 1.5, -0.5, 9_007_199_254_740_993, 1e308,
  ]);
}

/** {"a":{"a":…"deep"}} or [[…"deep"]]: `depth` objects or lists, one inside the other. */
export function deeplyNested(depth: number, asArray = false): unknown {
  let value: unknown = 'deep';
  for (let level = 0; level < depth; level += 1) value = asArray ? [value] : { a: value };
  return value;
}

/** JSON text nested `depth` levels deep, written out (JSON.stringify recurses and would overflow). */
export function deeplyNestedJson(depth: number): string {
  return `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`;
}

/** A value of any JSON type but the expected one, or null, or something deep or huge. */
export function wrongValue(random: Random): unknown {
  return random.pick<() => unknown>([
    () => null,
    () => true,
    () => false,
    () => hostileNumber(random),
    () => hostileString(random),
    () => [],
    () => [hostileString(random), hostileNumber(random)],
    () => ({}),
    () => ({ unexpected: hostileString(random) }),
    () => deeplyNested(random.pick([50, 200, 2_000]), random.chance(0.5)),
  ])();
}

type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  format?: string;
};

/**
 * A value for a JSON schema: mostly plausible (so the request gets past the first check), often
 * spoiled at some depth (wrong type, null, hostile text, deep nesting, an extra key).
 */
export function valueForSchema(schema: JsonSchema, components: Record<string, JsonSchema>, random: Random, depth = 0): unknown {
  if (random.chance(0.08)) return wrongValue(random);
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop() ?? '';
    const target = components[name];
    return target && depth < 6 ? valueForSchema(target, components, random, depth + 1) : {};
  }
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return valueForSchema(random.pick(alternatives), components, random, depth);
  if (schema.enum) return random.chance(0.85) ? random.pick(schema.enum) : hostileString(random);
  const type = Array.isArray(schema.type) ? random.pick(schema.type) : schema.type;
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return random.chance(0.5);
    case 'integer':
      return random.chance(0.6) ? random.int(1, 12) : hostileNumber(random);
    case 'number':
      return random.chance(0.6) ? random.int(1, 50_000) / 10 : hostileNumber(random);
    case 'string':
      if (schema.format === 'date') return random.pick(['2026-11-30', '31/12/2026', '2026-02-30']);
      if (schema.format === 'date-time') return random.pick(['2026-11-21T09:00:00Z', 'yesterday']);
      return random.chance(0.4)
        ? random.pick(['1', 'MEL1002', 'richmond-toyota', 'jordan@example.com', '0412 345 678', 'Website'])
        : hostileString(random);
    case 'array': {
      const length = random.int(0, 3);
      return Array.from({ length }, () => valueForSchema(schema.items ?? {}, components, random, depth + 1));
    }
    case 'object': {
      const result: Record<string, unknown> = {};
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        const required = schema.required?.includes(name) ?? false;
        if (required || random.chance(0.5)) result[name] = valueForSchema(property, components, random, depth + 1);
      }
      if (random.chance(0.1)) result[`extra_${random.int(0, 9)}`] = wrongValue(random);
      return result;
    }
    default:
      // {} (any JSON): the free-form columns, e.g. lead.fields.
      return random.pick<() => unknown>([
        () => ({ note: hostileString(random) }),
        () => deeplyNested(random.pick([10, 200]), random.chance(0.5)),
        () => wrongValue(random),
      ])();
  }
}

/** Path parameter text as sent on the wire (already percent-encoded where it is meant to be). */
export function hostilePathSegment(random: Random): string {
  return random.pick([
    '1',
    '2',
    '3',
    'richmond-toyota',
    'toyota-corolla-sx-hybrid',
    '%E0%A4%A',
    '%',
    '%zz',
    '%ED%A0%80',
    '%C0%AF',
    '%F0%9F%98%80',
    '%00',
    '2147483647',
    '2147483648',
    '4294967296',
    '99999999999999999999',
    '-1',
    '0',
    '1.5',
    '+7',
    '%E5%90%8D%E5%89%8D',
    'a'.repeat(3_000),
    '%2F',
    '..',
    'JTEL9WSVWBZR388DY',
  ]);
}

/** Query-string pairs for a parameter: plain, repeated, bracketed, badly escaped, huge. */
export function hostileQuery(name: string, random: Random): string {
  const value = (): string =>
    random.chance(0.3) ? hostilePathSegment(random) : encodeURIComponent(hostileString(random).replace(/[\ud800-\udfff]/g, ''));
  return random.pick<() => string>([
    () => `${name}=${value()}`,
    () => `${name}=${value()}&${name}=${value()}`,
    () => `${name}[]=${value()}`,
    () => `${name}[a][b]=${value()}`,
    () => `${name}=`,
    () => name,
    () => `${name}=%E0%A4%A`,
    () => `${name}=%ED%A0%80`,
    () => `${name}=${random.pick(['true', 'false', 'yes', '1', '2', 'vin', '3000', '0000', 'richmond-toyota'])}`,
  ])();
}

/** What no answer may contain: stack frames, engine or SQL text, file paths, an unexpected error's detail. */
export const INTERNAL_DETAIL =
  /prisma|\bsql\b|sqlite|postgres|SELECT\s|INSERT\s|UPDATE\s+"|\bat\s+[\w.<>]+\s+\(|\.ts:\d+|\.js:\d+|node_modules|\/work\/|\/src\/|\/tmp\/|Unexpected error(?!\.")/i;

/**
 * GraphQL's vocabulary, which a REST error body never carries: its type names and coercion phrases
 * (`Int cannot represent…`, `Field "x" is not defined by type "LeadInput"`, `Enum "CarLookupBy"`,
 * `Variable "$lead"`, `of required type "Int!"`). Kept apart from the service's own list on purpose.
 */
export const GRAPHQL_WORDS =
  /cannot represent|not defined by (input )?type|\bEnum "|\benum\b|Variable "\$|required type|non-null type|Expected (value of )?type|"[A-Z]\w*(Input|By)"|\b(Int|Float|String|Boolean|ID)!|\bGraphQL\b|Did you mean/;

/** FUZZ_SEED tries another run; the default is the one the suite runs. */
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261123);

/** FUZZ_SCALE multiplies how many requests a fuzzer sends (a longer local run); the suite runs 1. */
export const FUZZ_SCALE = Math.max(1, Number(process.env.FUZZ_SCALE ?? 1) || 1);

export interface Finding {
  request: string;
  status: number;
  body: string;
}

export interface FuzzHarness {
  /** Sends one request with yoga.fetch and records the answer if it is a finding. */
  send(label: string, url: string, init: RequestInit): Promise<void>;
  /** The Authorization header of one request: usually the all-permissions key, else none or a broken one. */
  authorization(random: Random): Record<string, string>;
  readonly sent: number;
  readonly findings: readonly Finding[];
  /** Findings grouped by status and operation, with one example each: what a failing assertion prints. */
  summary(): string[];
  /** One line for the run's log: requests sent, 5xx answers, other findings. */
  tally(label: string): string;
}

/** `restDoor`: also a finding, any error body in GraphQL's words (GRAPHQL_WORDS). */
export function createFuzzHarness(app: TestApp, allPermissionsKey: string, options: { restDoor?: boolean } = {}): FuzzHarness {
  const findings: Finding[] = [];
  let sent = 0;
  return {
    async send(label, url, init) {
      sent += 1;
      let response: Response;
      try {
        response = await app.yoga.fetch(`http://gateway.test${url}`, init);
      } catch (error) {
        // The server adapter answers a request whose handling throws with a bare 500.
        findings.push({ request: `${label} ${url.slice(0, 160)}`, status: 500, body: `threw ${String(error).slice(0, 200)}` });
        return;
      }
      const body = await response.text();
      const graphqlWords = options.restDoor === true && response.status >= 400 && GRAPHQL_WORDS.test(body);
      if (response.status >= 500 || /INTERNAL_SERVER_ERROR/.test(body) || INTERNAL_DETAIL.test(body) || graphqlWords) {
        findings.push({ request: `${label} ${url.slice(0, 160)}`, status: response.status, body: body.slice(0, 300) });
      }
    },
    authorization(random): Record<string, string> {
      const roll = random.next();
      if (roll < 0.75) return { authorization: `Bearer ${allPermissionsKey}` };
      if (roll < 0.9) return {} as Record<string, string>;
      return { authorization: random.pick(['Bearer dlr_short', 'Basic Zm9vOmJhcg==', `Bearer ${allPermissionsKey}x`, 'Bearer']) };
    },
    get sent() {
      return sent;
    },
    get findings() {
      return findings;
    },
    tally(label) {
      const serverErrors = findings.filter((finding) => finding.status >= 500).length;
      return `${label}: ${sent} requests, ${serverErrors} answered 5xx, ${findings.length - serverErrors} other findings (INTERNAL_SERVER_ERROR, internal detail, or GraphQL words on the REST door)`;
    },
    summary() {
      const groups = new Map<string, { count: number; example: Finding }>();
      for (const finding of findings) {
        const key = `${finding.status} ${finding.request
          .split(' ')
          .slice(0, 2)
          .join(' ')
          .replace(/\?.*/, '')
          .replace(/%[^/]*/g, '%…')}`;
        const group = groups.get(key);
        if (group) group.count += 1;
        else groups.set(key, { count: 1, example: finding });
      }
      return [...groups.entries()].map(([key, { count, example }]) => `${count} × ${key} :: ${example.request} → ${example.body}`);
    },
  };
}
