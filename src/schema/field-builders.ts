// The types a shared field definition is written against: a function that returns part of a
// record's field map takes the `t` of the type(s) it serves, so one declaration of a field can serve
// the graph's type and the thin REST variants of the same record.
import type { PrismaModelTypes, prismaModelName, ShapeFromSelection } from '@pothos/plugin-prisma';
import type PrismaTypes from '../generated/pothos-types.ts';
import type { builder } from './builder.ts';

/** The builder's type parameters. */
export type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The `t` of every prismaObject and prismaNode of a model, whatever its variant. */
export type PrismaFieldBuilder<Model extends keyof PrismaTypes> = PothosSchemaTypes.PrismaObjectFieldBuilder<
  Types,
  PrismaModelTypes & PrismaTypes[Model],
  ShapeFromSelection<Types, PrismaModelTypes & PrismaTypes[Model], { select: unknown; include: unknown }> & {
    [prismaModelName]?: Model;
  }
>;
