// Fixed-window counters named by what they count and their window, so nothing is reset. A spend is
// all or nothing, atomic in Redis (one Lua script); while Redis is down each instance counts in memory.
import type { Redis } from 'ioredis';

export interface Spend {
  name: string;
  amount: number;
  /** Infinity: always added (failures). */
  limit: number;
  windowMs: number;
}

export interface SpendOutcome {
  allowed: boolean;
  counters: { used: number; resetAt: number }[];
}

export interface CounterStore {
  /** All or nothing; an amount of 0 asks whether the limit is reached yet, adding nothing. */
  spend(spends: readonly Spend[], now: number): Promise<SpendOutcome>;
}

function windowOf(spend: Spend, now: number): { index: number; resetAt: number } {
  const index = Math.floor(now / spend.windowMs);
  return { index, resetAt: (index + 1) * spend.windowMs };
}

// Beyond this the oldest counters are forgotten: lenient, never wrong towards a client.
const MAX_MEMORY_COUNTERS = 100_000;

export function memoryCounters(maxCounters = MAX_MEMORY_COUNTERS): CounterStore {
  const counters = new Map<string, { used: number; resetAt: number }>();
  let lastSweep = 0;
  const sweep = (now: number): void => {
    if (now - lastSweep >= 1_000) {
      lastSweep = now;
      for (const [name, counter] of counters) if (counter.resetAt <= now) counters.delete(name);
    }
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
      const allowed = entries.every(({ spend, used }) => spend.limit === Infinity || used + Math.max(spend.amount, 1) <= spend.limit);
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

// ARGV: window ms, then per counter amount and limit (-1: none); expiry twice the window for skewed clocks.
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

export const RATE_COUNTER_PREFIX = 'rate:';

export function redisCounters(redis: Redis, options: { prefix: string; fallback?: CounterStore }): CounterStore {
  const fallback = options.fallback ?? memoryCounters();
  if (!('dgwRateLimitSpend' in redis)) redis.defineCommand('dgwRateLimitSpend', { lua: SPEND_SCRIPT });
  const command = (redis as unknown as { dgwRateLimitSpend: SpendCommand }).dgwRateLimitSpend.bind(redis);
  return {
    async spend(spends, now) {
      const windows = spends.map((spend) => windowOf(spend, now));
      const keys = spends.map((spend, index) => `${options.prefix}${spend.name}:${windows[index]?.index ?? 0}`);
      const args = spends.flatMap((spend) => [spend.windowMs, spend.amount, spend.limit === Infinity ? -1 : spend.limit]);
      try {
        const [allowed, ...totals] = await command(keys.length, ...keys, ...args);
        return {
          allowed: allowed === 1,
          counters: spends.map((_spend, index) => ({ used: totals[index] ?? 0, resetAt: windows[index]?.resetAt ?? now })),
        };
      } catch {
        // Approximate across instances meanwhile; the Redis client logs the outage once.
        return fallback.spend(spends, now);
      }
    },
  };
}
