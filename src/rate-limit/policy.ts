// The rate-limit policy for both doors (docs/rate-limits.md): per key, per dealership, per key's cost,
// and per address for failed keys, sign-on redemptions and keyless requests. An operation is counted
// just before it runs, so once whichever door it came through; a refused request spends nothing.
// Failed keys refuse the address before any key is looked at, so guessing cannot tell keys apart.
import { getOperationAST, type DocumentNode } from 'graphql';
import type { Actor } from '../auth/api-keys.ts';
import { rootFieldNodes } from '../gateway/root-fields.ts';
import { ANONYMOUS_WINDOW_MS, type RateLimitSettings } from '../config/index.ts';
import { rateLimited } from '../errors.ts';
import type { CounterStore, Spend, SpendOutcome } from './counters.ts';

type PolicyName = 'key' | 'dealership' | 'cost' | 'auth-failures' | 'sign-on' | 'anonymous';

export interface PolicyState {
  policy: PolicyName;
  limit: number;
  windowMs: number;
  used: number;
  resetAt: number;
}

export interface Verdict {
  states: PolicyState[];
  refusedBy?: PolicyState;
}

const SIGN_ON_REDEEM_FIELD = 'redeem_partner_token';

interface OperationUse {
  actor: Actor | null;
  cost: number | undefined;
  redeemsSignOnToken: boolean;
  clientAddress: string;
}

interface Counted {
  state: Omit<PolicyState, 'used' | 'resetAt'>;
  spend: Spend;
}

function counted(policy: PolicyName, name: string, amount: number, limit: number, windowMs: number): Counted {
  return { state: { policy, limit, windowMs }, spend: { name, amount, limit, windowMs } };
}

function verdictOf(entries: readonly Counted[], outcome: SpendOutcome): Verdict {
  const all = entries.map(({ state }, index): PolicyState => {
    const counter = outcome.counters[index];
    return { ...state, used: counter?.used ?? 0, resetAt: counter?.resetAt ?? 0 };
  });
  const refusedBy = outcome.allowed
    ? undefined
    : all.find((state, index) => state.used + Math.max(entries[index]?.spend.amount ?? 1, 1) > state.limit);
  // Several dealership counters are reported as the one closest to its limit (or the one that refused).
  const states: PolicyState[] = [];
  for (const state of all) {
    const same = states.findIndex((kept) => kept.policy === state.policy);
    if (same === -1) states.push(state);
    else if (state === refusedBy || (states[same] !== refusedBy && remaining(state) < remaining(states[same] as PolicyState)))
      states[same] = state;
  }
  return outcome.allowed ? { states } : { states, refusedBy: refusedBy ?? states[0] };
}

function remaining(state: PolicyState): number {
  return Math.max(0, state.limit - state.used);
}

export function createRateLimiter(settings: RateLimitSettings, counters: CounterStore, now: () => Date) {
  const authFailures = (address: string, amount: number): Counted =>
    counted('auth-failures', `auth-failures:${address}`, amount, settings.authFailures, settings.addressWindowMs);
  const spend = (entries: readonly Counted[]): Promise<SpendOutcome> =>
    counters.spend(
      entries.map((entry) => entry.spend),
      now().getTime(),
    );
  return {
    async checkAddress(clientAddress: string): Promise<Verdict | null> {
      if (settings.authFailures === 0) return null;
      const entries = [authFailures(clientAddress, 0)];
      const outcome = await spend(entries);
      // Almost every request passes: the verdict's states are built only for a refusal.
      return outcome.allowed ? null : verdictOf(entries, outcome);
    },
    async recordAuthFailure(clientAddress: string): Promise<void> {
      if (settings.authFailures === 0) return;
      // Always added, even past the limit: the address stays refused to the end of its window.
      await counters.spend([{ ...authFailures(clientAddress, 1).spend, limit: Infinity }], now().getTime());
    },
    async spendAnonymous(clientAddress: string): Promise<Verdict | null> {
      if (settings.anonymousRequests === 0) return null;
      const entries = [counted('anonymous', `anonymous:${clientAddress}`, 1, settings.anonymousRequests, ANONYMOUS_WINDOW_MS)];
      return verdictOf(entries, await spend(entries));
    },
    async spendOperation({ actor, cost, redeemsSignOnToken, clientAddress }: OperationUse): Promise<Verdict | null> {
      const entries: Counted[] = [];
      if (actor) {
        if (settings.keyRequests > 0) entries.push(counted('key', `key:${actor.apiKeyId}`, 1, settings.keyRequests, settings.windowMs));
        if (settings.dealershipRequests > 0) {
          for (const dealershipId of actor.dealershipIds ?? []) {
            entries.push(counted('dealership', `dealership:${dealershipId}`, 1, settings.dealershipRequests, settings.windowMs));
          }
        }
        if (settings.keyCost > 0 && cost !== undefined) {
          entries.push(counted('cost', `cost:${actor.apiKeyId}`, cost, settings.keyCost, settings.windowMs));
        }
      }
      if (redeemsSignOnToken && settings.signOnRedemptions > 0) {
        entries.push(counted('sign-on', `sign-on:${clientAddress}`, 1, settings.signOnRedemptions, settings.addressWindowMs));
      }
      if (entries.length === 0) return null;
      return verdictOf(entries, await spend(entries));
    },
  };
}

export function redeemsSignOnToken(document: DocumentNode, operationName: string | null | undefined): boolean {
  const operation = getOperationAST(document, operationName);
  if (operation?.operation !== 'mutation') return false;
  return rootFieldNodes(document, operation).some((field) => field.name.value === SIGN_ON_REDEEM_FIELD);
}

const seconds = (ms: number): number => Math.max(0, Math.ceil(ms / 1_000));

/** draft-ietf-httpapi-ratelimit-headers, plus RateLimit-Limit/-Remaining/-Reset, which most clients still read. */
export function rateLimitHeaders(verdict: Verdict, nowMs: number): Record<string, string> {
  if (verdict.states.length === 0) return {};
  const headers: Record<string, string> = {
    'ratelimit-policy': verdict.states.map((state) => `"${state.policy}";q=${state.limit};w=${seconds(state.windowMs)}`).join(', '),
    ratelimit: verdict.states.map((state) => `"${state.policy}";r=${remaining(state)};t=${seconds(state.resetAt - nowMs)}`).join(', '),
  };
  const reported = verdict.refusedBy ?? [...verdict.states].sort((a, b) => remaining(a) / a.limit - remaining(b) / b.limit)[0];
  if (reported) {
    headers['ratelimit-limit'] = String(reported.limit);
    headers['ratelimit-remaining'] = String(remaining(reported));
    headers['ratelimit-reset'] = String(seconds(reported.resetAt - nowMs));
  }
  if (verdict.refusedBy) headers['retry-after'] = String(Math.max(1, seconds(verdict.refusedBy.resetAt - nowMs)));
  return headers;
}

const refusalReasons: Record<PolicyName, (state: PolicyState) => string> = {
  key: (state) => `This API key has made its ${state.limit} requests allowed per ${seconds(state.windowMs)} s.`,
  dealership: (state) =>
    `The API keys of this dealership have made the ${state.limit} requests allowed together per ${seconds(state.windowMs)} s.`,
  cost: (state) =>
    `This API key has spent its GraphQL cost budget of ${state.limit} per ${seconds(state.windowMs)} s (ask for smaller pages or fewer fields).`,
  'auth-failures': () => 'Too many requests with an API key that is not accepted came from this address.',
  'sign-on': () => 'Too many sign-on links were opened from this address.',
  anonymous: (state) => `This address has made the ${state.limit} requests without an API key allowed per ${seconds(state.windowMs)} s.`,
};

export function mergedVerdict(earlier: Verdict | undefined, later: Verdict): Verdict {
  if (!earlier) return later;
  const policies = new Set(later.states.map((state) => state.policy));
  const states = [...earlier.states.filter((state) => !policies.has(state.policy)), ...later.states];
  const refusedBy = later.refusedBy ?? earlier.refusedBy;
  return refusedBy ? { states, refusedBy } : { states };
}

export function rateLimitedError(verdict: Verdict, nowMs: number) {
  const refusedBy = verdict.refusedBy ?? verdict.states[0];
  const retryAfter = refusedBy ? Math.max(1, seconds(refusedBy.resetAt - nowMs)) : 1;
  return rateLimited(retryAfter, refusedBy && refusalReasons[refusedBy.policy](refusedBy), { policy: refusedBy?.policy });
}
