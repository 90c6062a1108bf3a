// A dealership's staff as a Relay connection of User records. Users reach a dealership through the
// DealershipUser link (a user may work for several dealerships), so the connection pages the links of
// this dealership, by user id, and answers each link's user: one statement for the links of every
// dealership of a page, one for their users, and their count in the dealership's own statement.
import { prismaConnectionHelpers } from '@pothos/plugin-prisma';
import { builder } from './builder.ts';
import type { Prisma } from '../db/client.ts';
import { User } from './dealership.ts';

const staffLinks = prismaConnectionHelpers(builder, 'DealershipUser', {
  cursor: 'dealership_id_user_id',
  query: { orderBy: { user_id: 'asc' } },
  // The user's columns beneath `node` are the ones its asked fields need (Pothos' nested selection);
  // `id` keeps that selection non-empty when only the page info or the count is asked, which Prisma
  // refuses otherwise. The type says the row the User type is declared over, as for any Pothos relation.
  select: (nodeSelection) => ({ user: nodeSelection({ select: { id: true } }) }),
  resolveNode: (link) => link.user as Prisma.UserModel,
});

builder.prismaObjectField('Dealership', 'users', (t) =>
  t.connection(
    {
      type: User,
      description: 'The dealership’s staff (platform users), by user id.',
      args: staffLinks.getArgs(),
      select: (args, context, nestedSelection) => ({
        _count: { select: { users: true } },
        users: staffLinks.getQuery(args, context, nestedSelection),
      }),
      resolve: (dealership, args, context) => ({
        ...staffLinks.resolve(dealership.users, args, context),
        totalCount: dealership._count.users,
      }),
    },
    {
      name: 'DealershipUsersConnection',
      fields: (connection) => ({
        totalCount: connection.int({ resolve: (page) => page.totalCount }),
      }),
    },
  ),
);
