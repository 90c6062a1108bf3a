// Relation counts (`_count` in a select or include, at any depth) computed for the rows a query
// answers, never for a whole child table. Prisma writes a relation count as
// `LEFT JOIN (SELECT fk, COUNT(*) FROM child GROUP BY fk)` joined to the page afterwards, on both
// engines: the database counts every child row of the platform to answer one page. Its relation
// joins (`relationLoadStrategy: 'join'`) write a correlated LATERAL count instead, but on PostgreSQL
// only, behind a preview feature, and they change how every relation is loaded.
//
// So every client createDb makes runs each query in two steps when it counts relations:
//   1. the query itself with every `_count` taken out (and the parent's key selected where it was not);
//   2. per level of the answer that counted relations, one read of that level's model for the rows the
//      first step answered, `WHERE id IN (<their ids>)`, whose `_count` is the asked one with
//      `<fk> IN (<the same ids>)` added to each count's `where`: Prisma's own count, bounded by the page.
// The counts are then put back on each row as `_count`, so callers (and Pothos) see Prisma's answer.
//
// The second step runs through the rest of the client's extensions, in the query's own transaction:
// a dealership-scoped client (src/db/scoped.ts) adds its conditions to the counts there, exactly as it
// does to any `_count`, so the tenant boundary stays where it is written. Prisma offers no public way
// for a query extension to run another operation in the query's transaction, so the read is sent
// through the `query` continuation with the operation's request parameters changed (the parameter
// Prisma's own runtime passes along); test/relation-counts.test.ts holds it to the answers, inside a
// transaction included.
import { getDatamodel } from '../generated/pothos-types.ts';

type Args = Record<string, unknown>;

const isObject = (value: unknown): value is Args => typeof value === 'object' && value !== null && !Array.isArray(value);

interface ListRelation {
  target: string;
  /** The target's column that holds this model's key (a lead event's `lead_id`). */
  foreignKey: string;
}

interface ModelShape {
  key: string;
  relations: Map<string, { target: string; isList: boolean }>;
  lists: Map<string, ListRelation>;
}

const datamodel = getDatamodel().datamodel.models as unknown as Record<
  string,
  {
    fields: readonly {
      name: string;
      kind: string;
      type: string;
      isList: boolean;
      isId?: boolean;
      relationName?: string;
      relationFromFields?: readonly string[];
      relationToFields?: readonly string[];
    }[];
  }
>;

/**
 * Each model's key and its list relations' foreign keys, from the datamodel. A list relation this
 * mechanism cannot bound (no single foreign key to the model's single key) fails here, at start-up,
 * rather than being counted over its whole table.
 */
const shapes = new Map<string, ModelShape>();
for (const [model, { fields }] of Object.entries(datamodel)) {
  const key = fields.filter((field) => field.isId).map((field) => field.name);
  const relations = new Map<string, { target: string; isList: boolean }>();
  const lists = new Map<string, ListRelation>();
  for (const field of fields) {
    if (field.kind !== 'object') continue;
    relations.set(field.name, { target: field.type, isList: field.isList });
    if (!field.isList) continue;
    const back = datamodel[field.type]?.fields.find((other) => other.relationName === field.relationName && other !== field);
    const from = back?.relationFromFields ?? [];
    const to = back?.relationToFields ?? [];
    if (key.length !== 1 || from.length !== 1 || (to.length > 0 && (to.length !== 1 || to[0] !== key[0]))) {
      throw new Error(`relation counts: ${model}.${field.name} has no single foreign key to ${model}'s single key`);
    }
    lists.set(field.name, { target: field.type, foreignKey: from[0] as string });
  }
  shapes.set(model, { key: key[0] ?? 'id', relations, lists });
}

/** Where the counts of one level of a query go, and the levels beneath it that count too. */
interface CountPlan {
  model: string;
  key: string;
  /** True when the key was selected only to find the rows' counts (it is removed again). */
  addedKey: boolean;
  /** Counted relation → the count's own arguments (its `where`), or true. */
  counts: Map<string, Args | true>;
  children: Map<string, CountPlan>;
}

/** The relations a `_count` value asks for, with their count arguments. */
function countedRelations(shape: ModelShape, value: unknown): Map<string, Args | true> {
  const counted = new Map<string, Args | true>();
  if (value === true) {
    for (const field of shape.lists.keys()) counted.set(field, true);
  } else if (isObject(value) && isObject(value.select)) {
    for (const [field, spec] of Object.entries(value.select)) {
      if (spec === true || isObject(spec)) counted.set(field, spec);
    }
  }
  return counted;
}

/**
 * Takes every `_count` out of `args` (copying only what it changes) and answers where the counts
 * go, or null when the query counts nothing.
 */
function planCounts(model: string, args: Args): { args: Args; plan: CountPlan } | null {
  const shape = shapes.get(model);
  if (!shape) return null;
  let copy: Args | null = null;
  const plan: CountPlan = { model, key: shape.key, addedKey: false, counts: new Map(), children: new Map() };
  for (const mode of ['select', 'include'] as const) {
    const selection = args[mode];
    if (!isObject(selection)) continue;
    let changed: Args | null = null;
    for (const [field, value] of Object.entries(selection)) {
      if (field === '_count') {
        if (!value) continue;
        changed ??= { ...selection };
        delete changed._count;
        for (const [relation, spec] of countedRelations(shape, value)) plan.counts.set(relation, spec);
        continue;
      }
      const relation = shape.relations.get(field);
      if (!relation || !isObject(value)) continue;
      const nested = planCounts(relation.target, value);
      if (!nested) continue;
      changed ??= { ...selection };
      changed[field] = nested.args;
      plan.children.set(field, nested.plan);
    }
    if (!changed) continue;
    if (mode === 'select' && plan.counts.size > 0 && !changed[shape.key]) {
      changed[shape.key] = true;
      plan.addedKey = true;
    }
    copy ??= { ...args };
    copy[mode] = changed;
  }
  return copy && (plan.counts.size > 0 || plan.children.size > 0) ? { args: copy, plan } : null;
}

/** The rows of each counting level of an answer, walked along the plan. */
function collectRows(plan: CountPlan, result: unknown, into: Map<CountPlan, Args[]>): void {
  const rows = Array.isArray(result) ? result.filter(isObject) : isObject(result) ? [result] : [];
  if (rows.length === 0) return;
  if (plan.counts.size > 0) {
    const list = into.get(plan) ?? [];
    list.push(...rows);
    into.set(plan, list);
  }
  for (const [field, child] of plan.children) for (const row of rows) collectRows(child, row[field], into);
}

/** Ids per statement: a page is far smaller; a list read whole stays within every engine's bound on parameters. */
const IDS_PER_STATEMENT = 1_000;

/** Reads a model's rows through the rest of the client, in the query's transaction. */
type ReadRows = (model: string, args: Args) => Promise<Args[]>;

/** The count read of one counting level, for a set of ids (chunked by IDS_PER_STATEMENT). */
function countArgs(plan: CountPlan, ids: unknown[]): Args {
  const select: Args = {};
  for (const [relation, spec] of plan.counts) {
    const list = shapes.get(plan.model)?.lists.get(relation);
    // Not a list relation of the model: Prisma refuses the count as it would have.
    if (!list) {
      select[relation] = spec;
      continue;
    }
    const bound = { [list.foreignKey]: { in: ids } };
    const where = isObject(spec) && spec.where !== undefined ? { AND: [spec.where, bound] } : bound;
    select[relation] = { ...(isObject(spec) ? spec : {}), where };
  }
  return { where: { [plan.key]: { in: ids } }, select: { [plan.key]: true, _count: { select } } };
}

/**
 * Count reads asked within one turn of the event loop, merged when they are the same read through
 * the same extensions in the same transaction: Pothos loads a page's parents one findUnique each
 * (Prisma batches those into one statement), and their counts are then one statement too.
 */
interface PendingCounts {
  chain: readonly unknown[];
  transaction: unknown;
  model: string;
  shape: string;
  plan: CountPlan;
  read: ReadRows;
  ids: Set<unknown>;
  waiting: { resolve: (rows: Args[]) => void; reject: (error: unknown) => void }[];
}

let pendingCounts: PendingCounts[] = [];

function sameRead(batch: PendingCounts, request: Omit<PendingCounts, 'ids' | 'waiting' | 'plan' | 'read'>): boolean {
  return (
    batch.model === request.model &&
    batch.shape === request.shape &&
    batch.transaction === request.transaction &&
    batch.chain.length === request.chain.length &&
    batch.chain.every((callback, index) => callback === request.chain[index])
  );
}

async function runCounts(batch: PendingCounts): Promise<Args[]> {
  const ids = [...batch.ids];
  const rows: Args[] = [];
  for (let start = 0; start < ids.length; start += IDS_PER_STATEMENT) {
    rows.push(...(await batch.read(batch.model, countArgs(batch.plan, ids.slice(start, start + IDS_PER_STATEMENT)))));
  }
  return rows;
}

function flushCounts(): void {
  const batches = pendingCounts;
  pendingCounts = [];
  for (const batch of batches) {
    runCounts(batch).then(
      (rows) => {
        for (const { resolve } of batch.waiting) resolve(rows);
      },
      (error: unknown) => {
        for (const { reject } of batch.waiting) reject(error);
      },
    );
  }
}

/** The counts of `ids` at one level, read with the other calls of this turn that read the same. */
function readCounts(plan: CountPlan, ids: unknown[], read: ReadRows, chain: readonly unknown[], transaction: unknown): Promise<Args[]> {
  let shape: string;
  try {
    shape = JSON.stringify([...plan.counts]);
  } catch {
    shape = '';
  }
  const request = { chain, transaction, model: plan.model, shape };
  // A count whose arguments cannot be compared (or no chain to compare) is read on its own.
  let batch = shape && chain.length > 0 ? pendingCounts.find((pending) => sameRead(pending, request)) : undefined;
  if (!batch) {
    batch = { ...request, plan, read, ids: new Set(), waiting: [] };
    if (shape && chain.length > 0) {
      if (pendingCounts.length === 0) setImmediate(flushCounts);
      pendingCounts.push(batch);
    } else {
      for (const id of ids) batch.ids.add(id);
      return runCounts(batch);
    }
  }
  for (const id of ids) batch.ids.add(id);
  const joined = batch;
  return new Promise((resolve, reject) => joined.waiting.push({ resolve, reject }));
}

async function fillCounts(plan: CountPlan, rows: Args[], read: ReadRows, chain: readonly unknown[], transaction: unknown): Promise<void> {
  const ids = [...new Set(rows.map((row) => row[plan.key]).filter((id) => id !== null && id !== undefined))];
  const countsById = new Map<unknown, Args>();
  if (ids.length > 0) {
    for (const row of await readCounts(plan, ids, read, chain, transaction)) {
      if (isObject(row._count)) countsById.set(row[plan.key], row._count);
    }
  }
  const none = Object.fromEntries([...plan.counts.keys()].map((relation) => [relation, 0]));
  for (const row of rows) {
    row._count = countsById.get(row[plan.key]) ?? { ...none };
    if (plan.addedKey) delete row[plan.key];
  }
}

/** Operations whose answer is rows: their nested relations are counted here and scoped by src/db/scoped.ts. */
export const RETURNS_ROWS: ReadonlySet<string> = new Set([
  'findUnique',
  'findUniqueOrThrow',
  'findFirst',
  'findFirstOrThrow',
  'findMany',
  'create',
  'createManyAndReturn',
  'update',
  'updateManyAndReturn',
  'upsert',
  'delete',
]);

/** The request parameters Prisma passes a query extension (not in its public types). */
interface RequestParameters {
  transaction?: { kind?: string; id?: unknown };
  [parameter: string]: unknown;
}

type Continue = (args: unknown, parameters?: RequestParameters) => Promise<unknown>;

const lowerFirst = (name: string) => `${name.charAt(0).toLowerCase()}${name.slice(1)}`;

/**
 * Answers one query with its relation counts bounded by its rows (see the top of the file). Prisma
 * calls it with `this` bound to the client's list of query extensions: the same list means the same
 * client (the same dealership scope), the one condition under which two calls' counts are read together.
 */
async function answerWithBoundedCounts(
  this: unknown,
  call: {
    model?: string;
    operation: string;
    args: unknown;
    query: Continue;
    __internalParams?: RequestParameters;
  },
): Promise<unknown> {
  const planned = call.model && RETURNS_ROWS.has(call.operation) && isObject(call.args) ? planCounts(call.model, call.args) : null;
  if (!planned) return call.query(call.args);
  const result = await call.query(planned.args);
  const levels = new Map<CountPlan, Args[]>();
  collectRows(planned.plan, result, levels);
  if (levels.size === 0) return result;
  const parameters = call.__internalParams ?? {};
  // A batch transaction ($transaction([...])) has run every one of its statements by now.
  const transaction = parameters.transaction?.kind === 'itx' ? parameters.transaction : undefined;
  const read: ReadRows = async (model, args) => {
    const jsModelName = lowerFirst(model);
    const rows = await call.query(args, {
      ...parameters,
      args,
      model,
      jsModelName,
      action: 'findMany',
      clientMethod: `${jsModelName}.findMany`,
      dataPath: [],
      transaction,
      customDataProxyFetch: undefined,
      unpacker: undefined,
      argsMapper: undefined,
    });
    return Array.isArray(rows) ? rows.filter(isObject) : [];
  };
  const chain: readonly unknown[] = Array.isArray(this) ? this : [];
  await Promise.all([...levels].map(([plan, rows]) => fillCounts(plan, rows, read, chain, transaction?.id)));
  return result;
}

/** The extension createDb applies to every client (src/db/client.ts). */
export const boundedRelationCounts = {
  name: 'bounded-relation-counts',
  query: {
    $allModels: {
      $allOperations: answerWithBoundedCounts,
    },
  },
} as const;
