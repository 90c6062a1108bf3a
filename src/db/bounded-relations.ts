// Relations read for the rows a query answers, never for a whole child table. Prisma has two reads of
// a list relation whose work grows with the child table rather than the page:
//   - a relation count (`_count`, at any depth), which it writes as
//     `LEFT JOIN (SELECT fk, COUNT(*) FROM child GROUP BY fk)` joined to the page afterwards;
//   - a page of a list relation (`take`, `skip` or `cursor` inside a `select` / `include`) under more
//     than one parent row, which it reads as `WHERE fk IN (<parents>)` with no LIMIT and cuts in the
//     client (only a single parent gets a LIMIT): a page of dealerships with one lead each read every
//     lead of those dealerships.
// Prisma's relation joins (`relationLoadStrategy: 'join'`) write both per parent, but on PostgreSQL
// only, behind a preview feature, and they change how every relation is loaded.
//
// So every client createDb makes runs a query that counts relations or pages a list relation in steps:
//   1. the query itself with every `_count` and every such page taken out (and the parent's key
//      selected where it was not);
//   2. per level of the answer that counted relations, one read of that level's model for the rows the
//      first step answered, `WHERE id IN (<their ids>)`, whose `_count` is the asked one with
//      `<fk> IN (<the same ids>)` added to each count's `where`: Prisma's own count, bounded by the page;
//   3. per paged relation of a level, one read of the child model for the level's rows,
//      `WHERE <fk> IN (<their ids>) ORDER BY <fk>, <the page's order> LIMIT <rows × the page's size>`,
//      cut into each parent's page; a parent the LIMIT cut short is read alone, with its own LIMIT
//      (fillPages). The work is the pages', whatever the table holds; the rows it answers are a level
//      of their own, with their counts and pages read the same way.
// The counts are put back on each row as `_count` and the pages under their relation, so callers
// (and Pothos) see Prisma's answer.
//
// Steps 2 and 3 run through the rest of the client's extensions, in the query's own transaction: a
// dealership-scoped client (src/db/scoped.ts) adds its conditions to those reads, exactly as it does
// to any `_count` or nested read (its rule for a model is the same at the root and nested), so the
// tenant boundary stays where it is written. Prisma offers no public way for a query extension to run
// another operation in the query's transaction, so the reads are sent through the `query`
// continuation with the operation's request parameters changed (the parameter Prisma's own runtime
// passes along); test/bounded-relations.test.ts holds it to the answers, inside a transaction included.
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
  /** The primary key's columns, the order a page of the model is read in when it names none. */
  primaryKey: readonly string[];
  relations: Map<string, { target: string; isList: boolean }>;
  lists: Map<string, ListRelation>;
}

const datamodel = getDatamodel().datamodel.models as unknown as Record<
  string,
  {
    primaryKey: { fields: readonly string[] } | null;
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
for (const [model, { fields, primaryKey }] of Object.entries(datamodel)) {
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
      throw new Error(`bounded relations: ${model}.${field.name} has no single foreign key to ${model}'s single key`);
    }
    lists.set(field.name, { target: field.type, foreignKey: from[0] as string });
  }
  shapes.set(model, { key: key[0] ?? 'id', primaryKey: primaryKey?.fields ?? key, relations, lists });
}

/** A list relation of the datamodel: the model, its relation, and the child's foreign key and primary key. */
interface ListRelationShape {
  model: string;
  relation: string;
  target: string;
  foreignKey: string;
  primaryKey: readonly string[];
}

/** Every list relation of the datamodel, as this extension reads it (its tests walk them). */
export function listRelations(): ListRelationShape[] {
  return [...shapes].flatMap(([model, shape]) =>
    [...shape.lists].map(([relation, list]) => ({
      model,
      relation,
      target: list.target,
      foreignKey: list.foreignKey,
      primaryKey: shapes.get(list.target)?.primaryKey ?? [],
    })),
  );
}

/** A page of a list relation, read after the query for the rows it answered (step 3). */
interface PagePlan {
  target: string;
  foreignKey: string;
  /** The page's arguments with its own counts and pages taken out. */
  args: Args;
  /** The counts and pages of the page's rows, or null when they have none. */
  plan: LevelPlan | null;
}

/** What is read after the query for one level of its answer, and the levels beneath it that need reads too. */
interface LevelPlan {
  model: string;
  key: string;
  /** True when the key was selected only to read the rows' counts or pages (it is removed again). */
  addedKey: boolean;
  /** Counted relation → the count's own arguments (its `where`), or true. */
  counts: Map<string, Args | true>;
  /** Paged list relation → how its page is read. */
  pages: Map<string, PagePlan>;
  children: Map<string, LevelPlan>;
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

/** A list relation's arguments that page it: Prisma reads these whole under several parents. */
const isPage = (value: unknown): value is Args =>
  isObject(value) && (value.take !== undefined || value.skip !== undefined || value.cursor !== undefined);

/**
 * Takes every `_count` and every page of a list relation out of `args` (copying only what it
 * changes) and answers what is read after the query, or null when nothing is.
 */
function planLevel(model: string, args: Args): { args: Args; plan: LevelPlan } | null {
  const shape = shapes.get(model);
  if (!shape) return null;
  let copy: Args | null = null;
  const plan: LevelPlan = { model, key: shape.key, addedKey: false, counts: new Map(), pages: new Map(), children: new Map() };
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
      const list = shape.lists.get(field);
      if (list && isPage(value)) {
        changed ??= { ...selection };
        delete changed[field];
        const nested = planLevel(list.target, value);
        plan.pages.set(field, { ...list, args: nested?.args ?? value, plan: nested?.plan ?? null });
        continue;
      }
      const nested = planLevel(relation.target, value);
      if (!nested) continue;
      changed ??= { ...selection };
      changed[field] = nested.args;
      plan.children.set(field, nested.plan);
    }
    if (!changed) continue;
    if (mode === 'select' && (plan.counts.size > 0 || plan.pages.size > 0) && !changed[shape.key]) {
      changed[shape.key] = true;
      plan.addedKey = true;
    }
    copy ??= { ...args };
    copy[mode] = changed;
  }
  return copy && (plan.counts.size > 0 || plan.pages.size > 0 || plan.children.size > 0) ? { args: copy, plan } : null;
}

/** The rows of each level of an answer that has counts or pages to read, walked along the plan. */
function collectRows(plan: LevelPlan, result: unknown, into: Map<LevelPlan, Args[]>): void {
  const rows = Array.isArray(result) ? result.filter(isObject) : isObject(result) ? [result] : [];
  if (rows.length === 0) return;
  if (plan.counts.size > 0 || plan.pages.size > 0) {
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
function countArgs(plan: LevelPlan, ids: unknown[]): Args {
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
  plan: LevelPlan;
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
function readCounts(plan: LevelPlan, ids: unknown[], read: ReadRows, chain: readonly unknown[], transaction: unknown): Promise<Args[]> {
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

async function fillCounts(plan: LevelPlan, rows: Args[], read: ReadRows, chain: readonly unknown[], transaction: unknown): Promise<void> {
  const ids = [...new Set(rows.map((row) => row[plan.key]).filter((id) => id !== null && id !== undefined))];
  const countsById = new Map<unknown, Args>();
  if (ids.length > 0) {
    for (const row of await readCounts(plan, ids, read, chain, transaction)) {
      if (isObject(row._count)) countsById.set(row[plan.key], row._count);
    }
  }
  const none = Object.fromEntries([...plan.counts.keys()].map((relation) => [relation, 0]));
  for (const row of rows) row._count = countsById.get(row[plan.key]) ?? { ...none };
}

/**
 * The fewest rows the shared read of a level's pages asks for: a LIMIT this small costs what a LIMIT of
 * a few rows costs, and it lets parents with a few children each (a model's variants, an offer's
 * dealerships) share one statement instead of one each.
 */
export const PAGE_ROWS_AT_LEAST = 100;

/** An `orderBy` as a list of its terms. */
const orderTerms = (orderBy: unknown): unknown[] => (Array.isArray(orderBy) ? orderBy : orderBy === undefined ? [] : [orderBy]);

/**
 * The page of `relation` for each of `rows`: one statement for all the parents, their children ordered
 * by parent and then by the page's order, at most (parents × the rows a page needs, or
 * PAGE_ROWS_AT_LEAST) of them, cut into each parent's page. A parent the LIMIT cut short (one after a
 * parent with more children than that) is read alone, with the page's own LIMIT. Either way a
 * statement reads at most the rows of the pages it answers, whatever the table holds; with an index on
 * the foreign key (and the order) it stops at its LIMIT. A page with a cursor, a backwards `take` or
 * `distinct` is read per parent: those pages do not share one ordered read.
 */
async function fillPages(
  parent: LevelPlan,
  relation: string,
  page: PagePlan,
  rows: Args[],
  read: ReadRows,
  batching: CountBatching,
): Promise<void> {
  const rowsByParent = new Map<unknown, Args[]>();
  for (const row of rows) {
    const id = row[parent.key];
    if (id === null || id === undefined) {
      row[relation] = [];
      continue;
    }
    const siblings = rowsByParent.get(id);
    if (siblings) siblings.push(row);
    else rowsByParent.set(id, [row]);
  }
  const { take, skip, cursor, distinct, where, orderBy, ...rest } = page.args;
  // The order Prisma pages a relation by when none is given: the child's primary key.
  const order =
    orderBy !== undefined ? orderTerms(orderBy) : (shapes.get(page.target)?.primaryKey.map((column) => ({ [column]: 'asc' })) ?? []);
  const children: Args[] = [];
  const answer = (id: unknown, pageRows: Args[]) => {
    for (const row of rowsByParent.get(id) ?? []) row[relation] = pageRows;
    children.push(...pageRows);
  };
  const within = (bound: Args): Args => (where !== undefined ? { AND: [where, bound] } : bound);
  const forward = typeof take === 'number' && take >= 0 && (skip === undefined || typeof skip === 'number');
  if (!forward || cursor !== undefined || distinct !== undefined) {
    for (const id of rowsByParent.keys()) {
      answer(id, await read(page.target, { ...page.args, where: within({ [page.foreignKey]: id }), orderBy: order }));
    }
  } else {
    const skipped = typeof skip === 'number' ? skip : 0;
    const need = skipped + take;
    // The rows are told apart by their parent: its key is read with them where the page does not select it.
    const addedForeignKey = isObject(rest.select) && !rest.select[page.foreignKey];
    const select = addedForeignKey && isObject(rest.select) ? { select: { ...rest.select, [page.foreignKey]: true } } : {};
    const parents = [...rowsByParent.keys()];
    const cutShort: unknown[] = [];
    for (let start = 0; start < parents.length; start += IDS_PER_STATEMENT) {
      const round = parents.slice(start, start + IDS_PER_STATEMENT);
      const budget = Math.max(PAGE_ROWS_AT_LEAST, round.length * need);
      const found = await read(page.target, {
        ...rest,
        ...select,
        where: within({ [page.foreignKey]: { in: round } }),
        orderBy: [{ [page.foreignKey]: 'asc' }, ...order],
        take: budget,
      });
      const byParent = new Map<unknown, Args[]>();
      for (const child of found) {
        const own = byParent.get(child[page.foreignKey]);
        if (own) own.push(child);
        else byParent.set(child[page.foreignKey], [child]);
      }
      // Fewer rows than the LIMIT: every parent's children were read. Otherwise the parents before the
      // last one read are whole, and the last is when it got a whole page.
      const whole = found.length < budget;
      const last = found.at(-1)?.[page.foreignKey];
      if (addedForeignKey) for (const child of found) delete child[page.foreignKey];
      for (const id of round) {
        const own = byParent.get(id) ?? [];
        const before = typeof id === 'number' && typeof last === 'number' && id < last;
        if (whole || before || own.length >= need) answer(id, own.slice(skipped, need));
        else cutShort.push(id);
      }
    }
    // The parents after a large one, which took the LIMIT: one read each, with the page's own LIMIT.
    for (const id of cutShort) {
      answer(id, await read(page.target, { ...rest, where: within({ [page.foreignKey]: id }), orderBy: order, take, skip }));
    }
  }
  if (page.plan) await completeLevels(page.plan, children, read, batching);
}

/** What lets count reads of the same client and transaction be merged (see PendingCounts). */
interface CountBatching {
  chain: readonly unknown[];
  transaction: unknown;
}

/** Reads the counts and pages of every level of `result` that has them, then drops the keys only they needed. */
async function completeLevels(plan: LevelPlan, result: unknown, read: ReadRows, batching: CountBatching): Promise<void> {
  const levels = new Map<LevelPlan, Args[]>();
  collectRows(plan, result, levels);
  await Promise.all(
    [...levels].map(async ([level, rows]) => {
      await Promise.all([
        level.counts.size > 0 ? fillCounts(level, rows, read, batching.chain, batching.transaction) : undefined,
        ...[...level.pages].map(([relation, page]) => fillPages(level, relation, page, rows, read, batching)),
      ]);
      if (level.addedKey) for (const row of rows) delete row[level.key];
    }),
  );
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
 * Answers one query with its relation counts and pages bounded by its rows (see the top of the file). Prisma
 * calls it with `this` bound to the client's list of query extensions: the same list means the same
 * client (the same dealership scope), the one condition under which two calls' counts are read together.
 */
async function answerWithBoundedRelations(
  this: unknown,
  call: {
    model?: string;
    operation: string;
    args: unknown;
    query: Continue;
    __internalParams?: RequestParameters;
  },
): Promise<unknown> {
  const planned = call.model && RETURNS_ROWS.has(call.operation) && isObject(call.args) ? planLevel(call.model, call.args) : null;
  if (!planned) return call.query(call.args);
  const result = await call.query(planned.args);
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
  await completeLevels(planned.plan, result, read, { chain, transaction: transaction?.id });
  return result;
}

/** The extension createDb applies to every client (src/db/client.ts). */
export const boundedRelations = {
  name: 'bounded-relations',
  query: {
    $allModels: {
      $allOperations: answerWithBoundedRelations,
    },
  },
} as const;
