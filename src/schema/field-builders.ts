import type { PrismaModelTypes, prismaModelName, ShapeFromSelection } from '@pothos/plugin-prisma';
import type PrismaTypes from '../generated/pothos-types.ts';
import type { Types } from './builder.ts';
import { TOTAL_COUNT_CAP } from './record-plugin.ts';

export type PrismaFieldBuilder<Model extends keyof PrismaTypes> = PothosSchemaTypes.PrismaObjectFieldBuilder<
  Types,
  PrismaModelTypes & PrismaTypes[Model],
  ShapeFromSelection<Types, PrismaModelTypes & PrismaTypes[Model], { select: unknown; include: unknown }> & {
    [prismaModelName]?: Model;
  }
>;

/** One more than the cap, so that a list of exactly the cap is told apart from a longer one: a root list's `take` for its count. */
export const CAPPED_COUNT_TAKE = TOTAL_COUNT_CAP + 1;

export const idOrder = { orderBy: { id: 'asc' } } as const;

export const pagedById = { cursor: 'id', query: idOrder, totalCount: true } as const;

const countsByConnection = new WeakMap<object, Promise<number>>();

/** Pothos hands the connection its count as a function; both count fields share one call of it. */
function countOf(connection: object): Promise<number> {
  let counted = countsByConnection.get(connection);
  if (!counted) {
    counted = Promise.resolve((connection as { totalCount: () => number | Promise<number> }).totalCount());
    countsByConnection.set(connection, counted);
  }
  return counted;
}

/** A root list's count fields, in place of Pothos' totalCount: its count, taken with CAPPED_COUNT_TAKE, is shown up to the cap. */
export function cappedCountFields<Shape extends object>(t: PothosSchemaTypes.ObjectFieldBuilder<Types, Shape>) {
  const cap = TOTAL_COUNT_CAP.toLocaleString('en');
  return {
    // The extension tells Pothos that a page asking only for counts needs no rows.
    totalCount: t.int({
      extensions: { pothosPrismaTotalCount: true },
      resolve: async (page) => Math.min(await countOf(page), TOTAL_COUNT_CAP),
    }),
    totalCountCapped: t.boolean({
      description: `True when the list holds more records than totalCount says: the count stops at ${cap}, and totalCount is then ${cap}. The cursors page through every record all the same.`,
      resolve: async (page) => (await countOf(page)) > TOTAL_COUNT_CAP,
    }),
  };
}
