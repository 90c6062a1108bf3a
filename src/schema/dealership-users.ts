// A dealership's staff: a connection paging its DealershipUser links by user id, answering each link's user.
import { prismaConnectionHelpers } from '@pothos/plugin-prisma';
import { builder } from './builder.ts';
import type { Prisma } from '../db/client.ts';
import { User } from './dealership.ts';

const staffLinks = prismaConnectionHelpers(builder, 'DealershipUser', {
  cursor: 'dealership_id_user_id',
  query: { orderBy: { user_id: 'asc' } },
  // `id` keeps the nested selection non-empty when only the page info or the count is asked: Prisma refuses an empty one.
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
