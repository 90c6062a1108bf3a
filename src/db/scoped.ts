// The one place dealership scoping is decided: a restricted key's client adds the dealership condition
// to every read and write of a dealership-owned model, at the top level and in nested `include` /
// `select` (any depth, `_count` included), so another dealership's row answers like a missing one.
// How each model belongs to a dealership is data (`dealershipScope`); relations come from the datamodel.
import type PrismaTypes from '../generated/pothos-types.ts';
import { notFound } from '../errors.ts';
import type { Engine } from '../config/index.ts';
import type { Db, Prisma } from './client.ts';
import { RETURNS_ROWS } from './bounded-relations.ts';
import { type Args, countSelection, datamodel, relationsOf } from './datamodel.ts';
import { isPlainObject } from '../lib/json.ts';

export type ModelName = keyof PrismaTypes & string;

type BelongingRule =
  | { kind: 'dealership'; column: string; relation: string }
  | { kind: 'owner'; relation: string }
  | { kind: 'links'; relation: string };

type ScopeRule =
  | BelongingRule
  | { kind: 'dealership-itself' }
  /** Visible when any one holds; catalogue rows no caller writes, so a scoped write is refused. */
  | { kind: 'any'; of: readonly BelongingRule[]; reason: string }
  | { kind: 'global'; reason: string };

const byDealershipId = { kind: 'dealership', column: 'dealership_id', relation: 'dealership' } as const;
const ownedBy = (relation: string) => ({ kind: 'owner', relation }) as const;
const global = (reason: string) => ({ kind: 'global', reason }) as const;

/** The type makes a new model impossible to leave out. */
export const dealershipScope: Record<ModelName, ScopeRule> = {
  Dealership: { kind: 'dealership-itself' },
  Car: byDealershipId,
  Lead: byDealershipId,
  Contact: byDealershipId,
  Location: byDealershipId,
  Website: byDealershipId,
  PaymentProcessor: byDealershipId,
  // A call that matched no tracking number has no dealership: it is no restricted key's row.
  PhoneCall: byDealershipId,
  DealershipUser: byDealershipId,
  DealershipPlugin: byDealershipId,
  DealershipManufacturer: byDealershipId,
  OfferDealership: byDealershipId,
  ApiKeyDealership: byDealershipId,
  RecordEvent: byDealershipId,
  // A key manages only its dealerships' webhooks; the webhook worker (unscoped) reads them all.
  WebhookSubscription: byDealershipId,
  WebhookDelivery: ownedBy('subscription'),
  WebhookAttempt: ownedBy('delivery'),
  CarPhoto: ownedBy('car'),
  CarPriceChange: ownedBy('car'),
  CarViewDay: ownedBy('car'),
  LeadFile: ownedBy('lead'),
  LeadPayment: ownedBy('lead'),
  LeadAddress: ownedBy('lead'),
  LeadEvent: ownedBy('lead'),
  // A message without a lead is no restricted key's row; only the outbox worker (unscoped) reads them.
  OutboxMessage: ownedBy('lead'),
  ContactVehicle: ownedBy('contact'),
  LocationAddress: ownedBy('location'),
  LocationContactDetail: ownedBy('location'),
  WebsiteModel: ownedBy('website'),
  OfferPreferredLocation: ownedBy('location'),
  User: { kind: 'links', relation: 'dealerships' },
  Manufacturer: global('catalogue'),
  Model: global('catalogue'),
  Colour: global('catalogue'),
  ModelVariant: global('catalogue'),
  SpecificationCategory: global('catalogue'),
  SpecificationField: global('catalogue'),
  SpecificationValue: global('catalogue'),
  ConfigurableOption: global('catalogue'),
  VariantAvailability: global('catalogue'),
  OfferImage: ownedBy('offer'),
  Plugin: global('catalogue'),
  Offer: {
    kind: 'any',
    of: [ownedBy('website'), { kind: 'links', relation: 'dealerships' }],
    reason: "a website offer is its website's dealership's; a manufacturer offer runs at the dealerships it is linked to",
  },
  ApiKey: global('access control: a key reads only itself (apikey_details); the CLI manages keys'),
  ApiKeySecret: global('access control: read by the key lookup only'),
  ApiKeyPermission: global('access control'),
  ApiKeyDocumentApp: global('access control: the applications whose trusted documents a key is locked to'),
  TrustedDocument: global("client applications' published documents: read by the gateway before any dealership is involved"),
  DocumentRelease: global("client applications' published versions: written by the documents CLI"),
  DocumentReleaseEntry: global('which documents a release holds and their use: written by the gateway, read by the CLIs'),
  PartnerToken: global('access control: created for a user the key reaches, redeemed by the public sign-on landing'),
  IdempotencyRecord: global('per API key, never per dealership'),
  ApiKeyCall: global('per API key, never per dealership; written by the key call log and read by the keys CLI only'),
  StoredFile: global(
    "attachments' bytes: read and written only by the file storage, under keys the lead's own scoped lead_files row holds",
  ),
  PendingLeadFile: global(
    "storage keys of lead files not committed yet: written and removed by the lead writes around the lead's transaction, read by the file sweep",
  ),
  SharedSetting: global(
    "the instances' shared facts (a fingerprint of the session signing secret, read at start-up) and the file sweep's lease",
  ),
};

export const modelNames = Object.keys(datamodel) as ModelName[];

function ruleOf(model: string): ScopeRule {
  return dealershipScope[model as ModelName] ?? global('not a model');
}

export function isScoped(model: string): boolean {
  return ruleOf(model).kind !== 'global';
}

// A relation to the row's own owner, or to rows owned by or linked through it, stays in scope by
// induction (everything the scoped client returns is in scope); every other relation gets a condition.
function inScopeByConstruction(model: string, field: string): boolean {
  const relation = relationsOf(model).get(field);
  if (!relation) return true;
  const targetRule = ruleOf(relation.target);
  const rule = ruleOf(model);
  return (
    targetRule.kind === 'global' ||
    ((rule.kind === 'dealership' || rule.kind === 'owner') && rule.relation === field) ||
    ((targetRule.kind === 'dealership' || targetRule.kind === 'owner' || targetRule.kind === 'links') &&
      targetRule.relation === relation.back?.name)
  );
}

type Probe = { select: Args; check: (row: Args) => boolean };

type ResultPlan = Map<string, { check?: Probe['check']; strip: string[]; plan?: ResultPlan }>;

class Scope {
  private readonly wheres = new Map<string, Args | null>();
  private readonly allowed: ReadonlySet<number>;

  constructor(readonly dealershipIds: readonly number[]) {
    this.allowed = new Set(dealershipIds);
  }

  reaches(dealershipId: unknown): boolean {
    return typeof dealershipId === 'number' && this.allowed.has(dealershipId);
  }

  where(model: string): Args | null {
    if (!this.wheres.has(model)) this.wheres.set(model, this.whereOfRule(model, ruleOf(model)));
    return this.wheres.get(model) ?? null;
  }

  private whereOfRule(model: string, rule: ScopeRule): Args | null {
    switch (rule.kind) {
      case 'dealership-itself':
        return { id: { in: [...this.dealershipIds] } };
      case 'any':
        return { OR: rule.of.map((way) => this.whereOfRule(model, way)) };
      case 'global':
        return null;
      case 'dealership':
        return { [rule.column]: { in: [...this.dealershipIds] } };
      case 'owner':
      case 'links': {
        const target = relationsOf(model).get(rule.relation)?.target;
        const where = target ? this.where(target) : null;
        if (!where) throw new Error(`dealership scope of ${model}: its owner must be a scoped model`);
        return { [rule.relation]: { [rule.kind === 'owner' ? 'is' : 'some']: where } };
      }
    }
  }

  private probe(model: string, rule = ruleOf(model)): Probe {
    switch (rule.kind) {
      case 'dealership':
        return { select: { [rule.column]: true }, check: (row) => this.reaches(row[rule.column]) };
      case 'dealership-itself':
        return { select: { id: true }, check: (row) => this.reaches(row.id) };
      case 'owner': {
        const owner = this.probe(relationsOf(model).get(rule.relation)?.target ?? '');
        return {
          select: { [rule.relation]: { select: owner.select } },
          check: (row) => isPlainObject(row[rule.relation]) && owner.check(row[rule.relation] as Args),
        };
      }
      case 'links': {
        const link = relationsOf(model).get(rule.relation)?.target ?? '';
        return {
          select: { [rule.relation]: { where: this.where(link), select: this.probe(link).select, take: 1 } },
          check: (row) => Array.isArray(row[rule.relation]) && (row[rule.relation] as unknown[]).length > 0,
        };
      }
      case 'any': {
        const ways = rule.of.map((way) => this.probe(model, way));
        return {
          select: Object.assign({}, ...ways.map((way) => way.select)),
          check: (row) => ways.some((way) => way.check(row)),
        };
      }
      case 'global':
        return { select: {}, check: () => true };
    }
  }

  /** Keeps the unique fields of a unique `where` at the top level. */
  restrict(model: string, where: unknown): Args | undefined {
    const scope = this.where(model);
    if (!scope) return where as Args | undefined;
    if (!isPlainObject(where)) return scope;
    const and = where.AND === undefined ? [] : Array.isArray(where.AND) ? where.AND : [where.AND];
    return { ...where, AND: [...and, scope] };
  }

  nested(model: string, args: Args): ResultPlan | null {
    const plan: ResultPlan = new Map();
    for (const key of ['select', 'include'] as const) {
      const selection = args[key];
      if (!isPlainObject(selection)) continue;
      const scoped: Args = { ...selection };
      args[key] = scoped;
      for (const [field, value] of Object.entries(selection)) {
        if (field === '_count') {
          scoped._count = this.count(model, value);
          continue;
        }
        const relation = relationsOf(model).get(field);
        if (!relation || !value) continue;
        const relationArgs: Args = isPlainObject(value) ? { ...value } : {};
        const childPlan = this.nested(relation.target, relationArgs);
        const needsScope = !inScopeByConstruction(model, field);
        let check: Probe['check'] | undefined;
        let strip: string[] = [];
        if (needsScope && relation.isList) {
          relationArgs.where = this.restrict(relation.target, relationArgs.where);
        } else if (needsScope) {
          // Prisma cannot filter a to-one include: the related row's scope columns are selected and
          // a row of another dealership is replaced by null in the result.
          const probe = this.probe(relation.target);
          strip = addProbe(relationArgs, probe.select, `${model}.${field}`);
          check = probe.check;
        }
        scoped[field] = value === true && Object.keys(relationArgs).length === 0 ? true : relationArgs;
        if (childPlan || check) plan.set(field, { check, strip, plan: childPlan ?? undefined });
      }
    }
    return plan.size > 0 ? plan : null;
  }

  private count(model: string, value: unknown): unknown {
    const counted = countSelection(model, value);
    if (!counted) return value;
    const select: Args = {};
    for (const [field, spec] of Object.entries(counted)) {
      const relation = relationsOf(model).get(field);
      if (!relation || !spec || inScopeByConstruction(model, field)) {
        select[field] = spec;
        continue;
      }
      const countArgs: Args = isPlainObject(spec) ? { ...spec } : {};
      countArgs.where = this.restrict(relation.target, countArgs.where);
      select[field] = countArgs;
    }
    return { select };
  }

  // A row owned through another row is written under an owner found through this client, so in scope.
  checkData(model: string, data: unknown): void {
    const rule = ruleOf(model);
    if (Array.isArray(data)) {
      for (const row of data) this.checkData(model, row);
      return;
    }
    if (!isPlainObject(data)) return;
    if (rule.kind === 'dealership-itself') throw notFound('dealership');
    if (rule.kind === 'any') throw new Error(`dealership scope: ${model} rows are not written through a caller's client`);
    if (rule.kind !== 'dealership') return;
    const column = data[rule.column];
    const named = isPlainObject(column) && 'set' in column ? column.set : column;
    if (named !== undefined && named !== null && !this.reaches(named)) throw notFound('dealership');
    const relation = data[rule.relation];
    if (isPlainObject(relation)) {
      const connect = relation.connect;
      if (!isPlainObject(connect) || !this.reaches(connect.id) || Object.keys(relation).length !== 1) throw notFound('dealership');
    }
  }
}

function addProbe(relationArgs: Args, probe: Args, where: string): string[] {
  // Without `select` every scalar is in the row already; relations the check goes through are included.
  const mode = isPlainObject(relationArgs.select) ? 'select' : 'include';
  const needed = Object.entries(probe).filter(([, value]) => mode === 'select' || value !== true);
  if (needed.length === 0) return [];
  const merged: Args = isPlainObject(relationArgs[mode]) ? { ...relationArgs[mode] } : {};
  const added: string[] = [];
  for (const [key, value] of needed) {
    if (merged[key] === undefined || merged[key] === false) {
      merged[key] = value;
      added.push(key);
    } else if (value !== true) {
      // The relation the check goes through is already selected for another purpose.
      throw new Error(`dealership scope: ${where} ${mode}s ${key}; ${mode} it through its own relation field instead`);
    }
  }
  relationArgs[mode] = merged;
  return added;
}

function applyPlan(plan: ResultPlan, result: unknown): void {
  if (Array.isArray(result)) {
    for (const row of result) applyPlan(plan, row);
    return;
  }
  if (!isPlainObject(result)) return;
  for (const [field, { check, strip, plan: child }] of plan) {
    const related = result[field];
    if (related === null || related === undefined) continue;
    if (check && isPlainObject(related) && !check(related)) {
      result[field] = null;
      continue;
    }
    if (child) applyPlan(child, related);
    if (isPlainObject(related)) for (const key of strip) delete related[key];
  }
}

const READS = new Set(['findUnique', 'findUniqueOrThrow', 'findFirst', 'findFirstOrThrow', 'findMany', 'count', 'aggregate', 'groupBy']);
const FILTERED_WRITES = new Set(['update', 'updateMany', 'updateManyAndReturn', 'delete', 'deleteMany', 'upsert']);
const WRITES_DATA = new Set(['create', 'createMany', 'createManyAndReturn', 'update', 'updateMany', 'updateManyAndReturn']);

function scopedClient(db: Db, scope: Scope): Db {
  const extended = db.$extends({
    name: 'dealership-scope',
    query: {
      $allModels: {
        async $allOperations({ model, operation, args, query }) {
          const scopedArgs: Args = isPlainObject(args) ? { ...args } : {};
          if (READS.has(operation) || FILTERED_WRITES.has(operation)) {
            const where = scope.restrict(model, scopedArgs.where);
            if (where !== undefined) scopedArgs.where = where;
          }
          if (WRITES_DATA.has(operation)) scope.checkData(model, scopedArgs.data);
          if (operation === 'upsert') {
            scope.checkData(model, scopedArgs.create);
            scope.checkData(model, scopedArgs.update);
          }
          const plan = RETURNS_ROWS.has(operation) ? scope.nested(model, scopedArgs) : null;
          const result = await query(scopedArgs as typeof args);
          if (plan) applyPlan(plan, result);
          return result;
        },
      },
    },
  });
  // A query-only extension leaves every model's API as it was, so the client keeps the base type.
  return extended as unknown as Db;
}

declare const scopedBrand: unique symbol;
type Scoped<Client> = Client & { readonly [scopedBrand]: 'scoped' };

/** A transaction opened from a caller's client: Prisma runs it through the same extension, so the same scope. */
export type ScopedTx = Scoped<Prisma.TransactionClient>;

/** A caller's client: handing domain functions the service's own (`Db`) is a compile error. */
export type ScopedDb = {
  $transaction<R>(fn: (tx: ScopedTx) => Promise<R>, options?: Parameters<Db['$transaction']>[1]): Promise<R>;
} & Scoped<Db>;

const WRITE_LOCKS = { dealershipWebhooks: 1 } as const;

/** A check and its write (a count under a limit) after every other holder of the lock, where no row it writes can be locked. */
// PostgreSQL: a two-key advisory lock (Prisma has no SELECT … FOR UPDATE); SQLite runs one transaction at a time.
export function lockedTransaction<R>(
  db: ScopedDb,
  engine: Engine,
  lock: { kind: keyof typeof WRITE_LOCKS; id: number },
  run: (tx: ScopedTx) => Promise<R>,
): Promise<R> {
  return db.$transaction(async (tx) => {
    if (engine === 'postgresql') await tx.$executeRaw`SELECT pg_advisory_xact_lock(${WRITE_LOCKS[lock.kind]}::int, ${lock.id}::int)`;
    return run(tx);
  });
}

/** For the one lookup that tells "not yours" (403) from "missing". */
export interface DbClients {
  db: ScopedDb;
  unscopedDb: Db;
}

const clientsByDb = new WeakMap<Db, Map<string, ScopedDb>>();
const MAX_CACHED_SCOPES = 1000;

/** null: every dealership, said on purpose; an empty list reaches nothing. */
export function forDealerships(db: Db, dealershipIds: readonly number[] | null): ScopedDb {
  if (dealershipIds === null) return db as ScopedDb;
  const ids = [...new Set(dealershipIds)].sort((a, b) => a - b);
  const cacheKey = ids.join(',');
  const clients = clientsByDb.get(db) ?? new Map<string, ScopedDb>();
  clientsByDb.set(db, clients);
  let client = clients.get(cacheKey);
  if (!client) {
    if (clients.size >= MAX_CACHED_SCOPES) clients.delete(clients.keys().next().value as string);
    client = scopedClient(db, new Scope(ids)) as ScopedDb;
    clients.set(cacheKey, client);
  }
  return client;
}

export function forActor(db: Db, actor: { dealershipIds: readonly number[] | null } | null): ScopedDb {
  return forDealerships(db, actor ? actor.dealershipIds : []);
}
