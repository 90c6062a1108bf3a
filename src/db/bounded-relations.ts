// Relations read for the rows a query answers, never for a whole child table. Prisma reads a `_count`
// as a GROUP BY over the whole child table, and a page of a list relation under several parents as
// `WHERE fk IN (<parents>)` with no LIMIT, cut in the client; its relation joins fix both only on
// PostgreSQL, behind a preview feature. So a query runs in steps: itself with those taken out; per
// level, one count read `WHERE id IN (<its rows>)` with the same ids added to each count's `where`;
// per paged relation, one read `ORDER BY fk, <order> LIMIT <rows × page size>` cut into pages (a
// parent cut short is read alone). The answer is put back together as Prisma's.
// The extra reads go through the `query` continuation with changed request parameters (Prisma has no
// public way for an extension to run another operation in the query's transaction), so the scoped
// client's conditions and the transaction apply to them as to any nested read.
import { type Args, countSelection, datamodel, relationsOf } from './datamodel.ts';
import { isPlainObject } from '../lib/json.ts';
import { groupBy } from '../lib/group-by.ts';

type ListRelation = { target: string; foreignKey: string };

interface ModelShape {
  key: string;
  primaryKey: readonly string[];
  lists: Map<string, ListRelation>;
}

// A list relation that cannot be bounded (no single foreign key to a single key) fails at start-up.
const shapes = new Map<string, ModelShape>();
for (const [model, { fields, primaryKey }] of Object.entries(datamodel)) {
  const key = fields.filter((field) => field.isId).map((field) => field.name);
  const lists = new Map<string, ListRelation>();
  for (const [name, { target, isList, back }] of relationsOf(model)) {
    if (!isList) continue;
    const from = back?.relationFromFields ?? [];
    const to = back?.relationToFields ?? [];
    if (key.length !== 1 || from.length !== 1 || (to.length > 0 && (to.length !== 1 || to[0] !== key[0]))) {
      throw new Error(`bounded relations: ${model}.${name} has no single foreign key to ${model}'s single key`);
    }
    lists.set(name, { target, foreignKey: from[0] as string });
  }
  shapes.set(model, { key: key[0] ?? 'id', primaryKey: primaryKey?.fields ?? key, lists });
}

export function listRelations() {
  return [...shapes].flatMap(([model, shape]) =>
    [...shape.lists].map(([relation, list]) => ({
      model,
      // The parent's key, which the foreign key refers to.
      key: shape.key,
      relation,
      target: list.target,
      foreignKey: list.foreignKey,
      primaryKey: shapes.get(list.target)?.primaryKey ?? [],
    })),
  );
}

type PagePlan = ListRelation & { args: Args; plan: LevelPlan | null };

interface LevelPlan {
  model: string;
  key: string;
  /** The key was selected only for these reads, and is removed again. */
  addedKey: boolean;
  counts: Map<string, Args | true>;
  pages: Map<string, PagePlan>;
  children: Map<string, LevelPlan>;
}

const isPage = (value: unknown): value is Args =>
  isPlainObject(value) && (value.take !== undefined || value.skip !== undefined || value.cursor !== undefined);

function planLevel(model: string, args: Args): { args: Args; plan: LevelPlan } | null {
  const shape = shapes.get(model);
  if (!shape) return null;
  let copy: Args | null = null;
  const plan: LevelPlan = { model, key: shape.key, addedKey: false, counts: new Map(), pages: new Map(), children: new Map() };
  for (const mode of ['select', 'include'] as const) {
    const selection = args[mode];
    if (!isPlainObject(selection)) continue;
    let changed: Args | null = null;
    for (const [field, value] of Object.entries(selection)) {
      if (field === '_count') {
        if (!value) continue;
        changed ??= { ...selection };
        delete changed._count;
        for (const [relation, spec] of Object.entries(countSelection(model, value) ?? {})) {
          if (spec === true || isPlainObject(spec)) plan.counts.set(relation, spec);
        }
        continue;
      }
      const relation = relationsOf(model).get(field);
      if (!relation || !isPlainObject(value)) continue;
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

function collectRows(plan: LevelPlan, result: unknown, into: Map<LevelPlan, Args[]>): void {
  const rows = Array.isArray(result) ? result.filter(isPlainObject) : isPlainObject(result) ? [result] : [];
  if (rows.length === 0) return;
  if (plan.counts.size > 0 || plan.pages.size > 0) {
    const list = into.get(plan) ?? [];
    list.push(...rows);
    into.set(plan, list);
  }
  for (const [field, child] of plan.children) for (const row of rows) collectRows(child, row[field], into);
}

/** Within every engine's bound on parameters. */
const IDS_PER_STATEMENT = 1_000;

type ReadRows = (model: string, args: Args) => Promise<Args[]>;

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
    const where = isPlainObject(spec) && spec.where !== undefined ? { AND: [spec.where, bound] } : bound;
    select[relation] = { ...(isPlainObject(spec) ? spec : {}), where };
  }
  return { where: { [plan.key]: { in: ids } }, select: { [plan.key]: true, _count: { select } } };
}

// Pothos loads a page's parents one findUnique each (Prisma batches them), so the same count reads of
// one turn, client and transaction are merged into one statement too.
interface PendingCounts {
  chain: readonly unknown[];
  transaction: unknown;
  model: string;
  shape: string;
  plan: LevelPlan;
  read: ReadRows;
  ids: Set<unknown>;
  rows: Promise<Args[]>;
  /** Called once the turn ends, with the read of every id added meanwhile. */
  settle: (rows: Promise<Args[]>) => void;
}

let pendingCounts: PendingCounts[] = [];

async function runCounts({ plan, read, ids }: Pick<PendingCounts, 'plan' | 'read' | 'ids'>): Promise<Args[]> {
  const all = [...ids];
  const rows: Args[] = [];
  for (let start = 0; start < all.length; start += IDS_PER_STATEMENT) {
    rows.push(...(await read(plan.model, countArgs(plan, all.slice(start, start + IDS_PER_STATEMENT)))));
  }
  return rows;
}

function flushCounts(): void {
  const batches = pendingCounts;
  pendingCounts = [];
  for (const batch of batches) batch.settle(runCounts(batch));
}

function readCounts(plan: LevelPlan, ids: unknown[], read: ReadRows, { chain, transaction }: CountBatching): Promise<Args[]> {
  let shape: string;
  try {
    shape = JSON.stringify([...plan.counts]);
  } catch {
    shape = '';
  }
  // A count whose arguments cannot be compared (or no chain to compare) is read on its own.
  if (!shape || chain.length === 0) return runCounts({ plan, read, ids: new Set(ids) });
  let batch = pendingCounts.find(
    (pending) =>
      pending.model === plan.model &&
      pending.shape === shape &&
      pending.transaction === transaction &&
      pending.chain.length === chain.length &&
      pending.chain.every((callback, index) => callback === chain[index]),
  );
  if (!batch) {
    let settle: PendingCounts['settle'] = () => undefined;
    const rows = new Promise<Args[]>((resolve) => (settle = resolve));
    batch = { chain, transaction, model: plan.model, shape, plan, read, ids: new Set(), rows, settle };
    if (pendingCounts.length === 0) setImmediate(flushCounts);
    pendingCounts.push(batch);
  }
  for (const id of ids) batch.ids.add(id);
  return batch.rows;
}

async function fillCounts(plan: LevelPlan, rows: Args[], read: ReadRows, batching: CountBatching): Promise<void> {
  const ids = [...new Set(rows.map((row) => row[plan.key]).filter((id) => id !== null && id !== undefined))];
  const countsById = new Map<unknown, Args>();
  if (ids.length > 0) {
    for (const row of await readCounts(plan, ids, read, batching)) {
      if (isPlainObject(row._count)) countsById.set(row[plan.key], row._count);
    }
  }
  const none = Object.fromEntries([...plan.counts.keys()].map((relation) => [relation, 0]));
  for (const row of rows) row._count = countsById.get(row[plan.key]) ?? { ...none };
}

/** Lets parents with a few children each share one statement, at the cost of a few rows. */
export const PAGE_ROWS_AT_LEAST = 100;

const orderTerms = (orderBy: unknown): unknown[] => (Array.isArray(orderBy) ? orderBy : orderBy === undefined ? [] : [orderBy]);

/** A page with a cursor, a backwards `take` or `distinct` is read per parent: those share no ordered read. */
async function fillPages(
  parent: LevelPlan,
  relation: string,
  page: PagePlan,
  rows: Args[],
  read: ReadRows,
  batching: CountBatching,
): Promise<void> {
  // A parent without a key has no children; every other parent's list is replaced below.
  for (const row of rows) row[relation] = [];
  const rowsByParent = groupBy<Args, unknown>(rows, (row) => row[parent.key] ?? null);
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
    const addedForeignKey = isPlainObject(rest.select) && !rest.select[page.foreignKey];
    const select = addedForeignKey && isPlainObject(rest.select) ? { select: { ...rest.select, [page.foreignKey]: true } } : {};
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
      const byParent = groupBy<Args, unknown>(found, (child) => child[page.foreignKey]);
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

type CountBatching = Pick<PendingCounts, 'chain' | 'transaction'>;

async function completeLevels(plan: LevelPlan, result: unknown, read: ReadRows, batching: CountBatching): Promise<void> {
  const levels = new Map<LevelPlan, Args[]>();
  collectRows(plan, result, levels);
  await Promise.all(
    [...levels].map(async ([level, rows]) => {
      await Promise.all([
        level.counts.size > 0 ? fillCounts(level, rows, read, batching) : undefined,
        ...[...level.pages].map(([relation, page]) => fillPages(level, relation, page, rows, read, batching)),
      ]);
      if (level.addedKey) for (const row of rows) delete row[level.key];
    }),
  );
}

const FINDS = ['findUnique', 'findUniqueOrThrow', 'findFirst', 'findFirstOrThrow', 'findMany'];
const WRITES_RETURNING_ROWS = ['create', 'createManyAndReturn', 'update', 'updateManyAndReturn', 'upsert', 'delete'];
export const RETURNS_ROWS: ReadonlySet<string> = new Set([...FINDS, ...WRITES_RETURNING_ROWS]);

/** The request parameters Prisma passes a query extension (not in its public types). */
interface RequestParameters {
  transaction?: { kind?: string; id?: unknown };
  [parameter: string]: unknown;
}

type Continue = (args: unknown, parameters?: RequestParameters) => Promise<unknown>;

/** From this many rows skipped, a root page reads its keys first; below, a second statement costs more than it saves. */
export const KEYS_FIRST_SKIP = 200;

// An OFFSET walks every skipped row, and PostgreSQL reads them whole (sorting them, past work_mem, on disk)
// unless the statement asks for the key alone, which an index on the filter and the key answers by itself.
function deepPage(model: string, args: Args) {
  if (typeof args.skip !== 'number' || args.skip < KEYS_FIRST_SKIP || args.distinct !== undefined) return null;
  const key = shapes.get(model)?.primaryKey;
  if (key?.length !== 1) return null;
  const column = key[0] as string;
  if (isPlainObject(args.omit) && args.omit[column]) return null;
  const { select, include: _include, omit: _omit, ...page } = args;
  const { skip: _skip, take: _take, cursor: _cursor, ...rows } = args;
  // The key selected only to put the rows in the keys' order is removed again.
  const addedKey = isPlainObject(select) && !select[column];
  if (addedKey) rows.select = { ...select, [column]: true };
  return {
    column,
    addedKey,
    keys: { ...page, select: { [column]: true } },
    rows: (keys: unknown[]) => ({ ...rows, where: { AND: [rows.where ?? {}, { [column]: { in: keys } }] } }),
  };
}

// Prisma binds `this` to the client's query extensions: the same list is the same dealership scope.
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
  const deep = call.model && call.operation === 'findMany' && isPlainObject(call.args) ? deepPage(call.model, call.args) : null;
  if (deep) {
    const { column } = deep;
    const keys = ((await call.query(deep.keys)) as Args[]).map((row) => row[column]);
    const rows = (await answerWithBoundedRelations.call(this, { ...call, args: deep.rows(keys) })) as Args[];
    const byKey = new Map(rows.map((row) => [row[column], row]));
    if (deep.addedKey) for (const row of rows) delete row[column];
    return keys.flatMap((key) => byKey.get(key) ?? []);
  }
  const planned = call.model && RETURNS_ROWS.has(call.operation) && isPlainObject(call.args) ? planLevel(call.model, call.args) : null;
  if (!planned) return call.query(call.args);
  const result = await call.query(planned.args);
  const parameters = call.__internalParams ?? {};
  // A batch transaction ($transaction([...])) has run every one of its statements by now.
  const transaction = parameters.transaction?.kind === 'itx' ? parameters.transaction : undefined;
  const read: ReadRows = async (model, args) => {
    const jsModelName = `${model.charAt(0).toLowerCase()}${model.slice(1)}`;
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
    return Array.isArray(rows) ? rows.filter(isPlainObject) : [];
  };
  const chain: readonly unknown[] = Array.isArray(this) ? this : [];
  await completeLevels(planned.plan, result, read, { chain, transaction: transaction?.id });
  return result;
}

export const boundedRelations = {
  name: 'bounded-relations',
  query: {
    $allModels: {
      $allOperations: answerWithBoundedRelations,
    },
  },
} as const;
