// Fixed-window counters: the storage under the rate limits (src/rate-limit/policy.ts decides what
// is counted). A counter is named by what it counts and the window it counts in, so a new window is
// a new counter and nothing has to be reset; an old one expires on its own.
//
// One operation, `spend`, checks and adds several counters at once, all or nothing: a request that
// one limit refuses spends nothing from the others. In memory it is one synchronous step; in Redis it
// is one Lua script, which Redis runs atomically, so two instances can never both take the last unit
// (no read-then-write race). While Redis cannot be reached, each instance counts in its own memory
// (limits then hold per instance) and says so in one log line per outage: never an error, never a 429
// caused by the outage itself.
import type { Redis } from 'ioredis';

export interface Spend {
  /** What is counted, e.g. `key:12` (the window is added by the store). */
  name: string;
  /** How much this request adds. */
  amount: number;
  /** The most the counter may reach within one window; Infinity: always added (e.g. failures). */
  limit: number;
  windowMs: number;
}

export interface CounterState {
  /** The counter's total in its window after this spend (before it, when the spend was refused). */
  used: number;
  /** When its window ends, epoch ms. */
  resetAt: number;
}

export interface SpendOutcome {
  /** False when one of the counters had no room: nothing was added to any. */
  allowed: boolean;
  /** One per spend, in order. */
  counters: CounterState[];
}

export interface CounterStore {
  /**
   * Adds every amount if every counter has room for it, else adds none. A counter has room when its
   * total plus the amount stays within its limit; an amount of 0 asks whether the limit is already
   * reached (total below the limit), adding nothing.
   */
  spend(spends: readonly Spend[], now: number): Promise<SpendOutcome>;
}

function windowOf(spend: Spend, now: number): { index: number; resetAt: number } {
  const index = Math.floor(now / spend.windowMs);
  return { index, resetAt: (index + 1) * spend.windowMs };
}

/** Whether `used` leaves room for `amount` (an amount of 0 needs one unit of room: the limit is not reached yet). */
function hasRoom(used: number, amount: number, limit: number): boolean {
  return used + Math.max(amount, 1) <= limit;
}

/**
 * The most counters one instance keeps in memory. Clients with many addresses could otherwise make
 * it keep one per address; beyond this the oldest counters are forgotten (their clients start afresh,
 * which is lenient, never wrong towards a client).
 */
const MAX_MEMORY_COUNTERS = 100_000;

/** Counters in this process's memory: one instance's limits, or the fallback while Redis is down. */
export function memoryCounters(maxCounters = MAX_MEMORY_COUNTERS): CounterStore {
  const counters = new Map<string, { used: number; resetAt: number }>();
  let lastSweep = 0;
  const sweep = (now: number): void => {
    // Windows end often; looking for ended counters once a second keeps memory to the live ones.
    if (now - lastSweep >= 1_000) {
      lastSweep = now;
      for (const [name, counter] of counters) if (counter.resetAt <= now) counters.delete(name);
    }
    // A Map iterates in insertion order: the first names are the oldest counters.
    for (const name of counters.keys()) {
      if (counters.size < maxCounters) break;
      counters.delete(name);
    }
  };
  return {
    spend(spends, now) {
      sweep(now);
      const entries = spends.map((spend) => {
        const window = windowOf(spend, now);
        const name = `${spend.name}:${window.index}`;
        return { spend, name, resetAt: window.resetAt, used: counters.get(name)?.used ?? 0 };
      });
      const allowed = entries.every(({ spend, used }) => spend.limit === Infinity || hasRoom(used, spend.amount, spend.limit));
      if (allowed) {
        for (const entry of entries) {
          entry.used += entry.spend.amount;
          if (entry.spend.amount > 0) counters.set(entry.name, { used: entry.used, resetAt: entry.resetAt });
        }
      }
      return Promise.resolve({ allowed, counters: entries.map(({ used, resetAt }) => ({ used, resetAt })) });
    },
  };
}

/**
 * KEYS: the counters. ARGV: the window length in ms, then per counter its amount and its limit (-1:
 * none). Checks every counter, then adds to all or to none; a counter's expiry is set when it is
 * created (twice its window, so a slightly skewed instance still finds it). Answers [allowed, totals…].
 */
const SPEND_SCRIPT = `
local allowed = 1
local totals = {}
for i, key in ipairs(KEYS) do
  local amount = tonumber(ARGV[i * 3 - 1])
  local limit = tonumber(ARGV[i * 3])
  local used = tonumber(redis.call('GET', key) or '0')
  totals[i] = used
  local need = amount
  if need < 1 then need = 1 end
  if limit >= 0 and used + need > limit then allowed = 0 end
end
if allowed == 1 then
  for i, key in ipairs(KEYS) do
    local amount = tonumber(ARGV[i * 3 - 1])
    if amount > 0 then
      totals[i] = redis.call('INCRBY', key, amount)
      if totals[i] == amount then redis.call('PEXPIRE', key, tonumber(ARGV[i * 3 - 2]) * 2) end
    end
  end
end
table.insert(totals, 1, allowed)
return totals
`;

type SpendCommand = (keys: number, ...args: (string | number)[]) => Promise<number[]>;

/** The counters' names in Redis, after the deployment's prefix (which the client adds: src/redis/client.ts). */
export const RATE_COUNTER_PREFIX = 'rate:';

/**
 * Counters in Redis, shared by every instance using it; `prefix` keeps them apart from other data
 * (and one test's counters from another's). Falls back to `fallback` while Redis fails.
 */
export function redisCounters(redis: Redis, options: { prefix: string; fallback?: CounterStore }): CounterStore {
  const { prefix } = options;
  const fallback = options.fallback ?? memoryCounters();
  if (!('dgwRateLimitSpend' in redis)) redis.defineCommand('dgwRateLimitSpend', { lua: SPEND_SCRIPT });
  const command = (redis as unknown as { dgwRateLimitSpend: SpendCommand }).dgwRateLimitSpend.bind(redis);
  return {
    async spend(spends, now) {
      const windows = spends.map((spend) => windowOf(spend, now));
      const keys = spends.map((spend, index) => `${prefix}${spend.name}:${windows[index]?.index ?? 0}`);
      const args = spends.flatMap((spend) => [spend.windowMs, spend.amount, spend.limit === Infinity ? -1 : spend.limit]);
      try {
        const [allowed, ...totals] = await command(keys.length, ...keys, ...args);
        return {
          allowed: allowed === 1,
          counters: spends.map((_spend, index) => ({ used: totals[index] ?? 0, resetAt: windows[index]?.resetAt ?? now })),
        };
      } catch {
        // Counted in this instance's memory meanwhile (approximate across instances); the Redis
        // circuit breaker logs the outage once (src/redis/client.ts).
        return fallback.spend(spends, now);
      }
    },
  };
}
