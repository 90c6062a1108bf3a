// The types a shared field definition is written against, so it serves every variant of a record.
import type { PrismaModelTypes, prismaModelName, ShapeFromSelection } from '@pothos/plugin-prisma';
import type PrismaTypes from '../generated/pothos-types.ts';
import type { builder } from './builder.ts';
import { type GraphQLResolveInfo, responsePathAsArray } from 'graphql';
import { TOTAL_COUNT_CAP } from './record-plugin.ts';

export type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The `t` of every prismaObject and prismaNode of a model, whatever its variant. */
export type PrismaFieldBuilder<Model extends keyof PrismaTypes> = PothosSchemaTypes.PrismaObjectFieldBuilder<
  Types,
  PrismaModelTypes & PrismaTypes[Model],
  ShapeFromSelection<Types, PrismaModelTypes & PrismaTypes[Model], { select: unknown; include: unknown }> & {
    [prismaModelName]?: Model;
  }
>;

interface CappedCount {
  totalCount: number;
  capped: boolean;
}

const cappedCountsByContext = new WeakMap<object, Map<string, Promise<CappedCount>>>();

const connectionKey = (path: GraphQLResolveInfo['path'] | undefined) => (path ? responsePathAsArray(path).join('.') : '');

/** One more than the cap, so that a list of exactly the cap is told apart from a longer one. */
export function cappedTotalCount(context: object, info: GraphQLResolveInfo, count: (take: number) => Promise<number>): Promise<number> {
  let counts = cappedCountsByContext.get(context);
  if (!counts) {
    counts = new Map();
    cappedCountsByContext.set(context, counts);
  }
  const key = connectionKey(info.path);
  let counted = counts.get(key);
  if (!counted) {
    counted = count(TOTAL_COUNT_CAP + 1).then((rows) => ({ totalCount: Math.min(rows, TOTAL_COUNT_CAP), capped: rows > TOTAL_COUNT_CAP }));
    counts.set(key, counted);
  }
  return counted.then(({ totalCount }) => totalCount);
}

export function totalCountCappedField<Shape extends object>(t: PothosSchemaTypes.ObjectFieldBuilder<Types, Shape>) {
  return t.boolean({
    description: `True when the list holds more records than totalCount says: the count stops at ${TOTAL_COUNT_CAP.toLocaleString('en')}, and totalCount is then ${TOTAL_COUNT_CAP.toLocaleString('en')}. The cursors page through every record all the same.`,
    resolve: async (connection, _args, context, info) => {
      // Pothos hands the connection its count as a function; calling it counts once per connection.
      await (connection as { totalCount?: () => unknown }).totalCount?.();
      const counted = cappedCountsByContext.get(context)?.get(connectionKey(info.path.prev));
      return counted ? (await counted).capped : false;
    },
  });
}
