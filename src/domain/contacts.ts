// The dealership is checked first, so an unreachable one answers dealership_not_found whatever the contact id.
import { z } from 'zod';
import type { Prisma } from '../db/client.ts';
import type { ScopedDb } from '../db/scoped.ts';
import { notFound } from '../errors.ts';
import { requireDealershipId } from './dealerships.ts';
import { parseRecord } from './input-records.ts';

// The spec leaves paging open, so these bounds are ours; `after_id` pages by keyset at the same cost at any depth.
export const CONTACT_PAGING = { defaultPage: 1, defaultPerPage: 50, maxPerPage: 200 } as const;

const PER_PAGE_RANGE = `must be from 1 to ${CONTACT_PAGING.maxPerPage}`;

export const contactListRequest = z.object({
  dealership_id: z.int().describe('The dealership id.'),
  page: z
    .int()
    .min(1, 'must be 1 or more')
    .nullish()
    .describe(
      `The page, from 1 (default ${CONTACT_PAGING.defaultPage}); with after_id, the page counted from that id ` +
        '(deep pages cost less with after_id).',
    ),
  per_page: z
    .int()
    .min(1, PER_PAGE_RANGE)
    .max(CONTACT_PAGING.maxPerPage, PER_PAGE_RANGE)
    .nullish()
    .describe(`Contacts per page, 1 to ${CONTACT_PAGING.maxPerPage} (default ${CONTACT_PAGING.defaultPerPage}).`),
  after_id: z
    .int()
    .min(0, 'must be 0 or more')
    .nullish()
    .describe(
      'The contacts whose id is greater than this, by id (the next page is after the last id of this one), at any depth; ' +
        'page then counts pages from there.',
    ),
});

export async function contactWhere(db: ScopedDb, dealershipId: number, contactId: number): Promise<Prisma.ContactWhereInput> {
  const dealership_id = await requireDealershipId(db, { id: dealershipId });
  return { id: contactId, dealership_id };
}

export async function contactListArgs(db: ScopedDb, input: z.input<typeof contactListRequest>) {
  // Paging is checked before the dealership so a bad parameter is reported without a query.
  const paging = parseRecord(contactListRequest.pick({ page: true, per_page: true, after_id: true }), input, '');
  const take = paging.per_page ?? CONTACT_PAGING.defaultPerPage;
  const dealership_id = await requireDealershipId(db, { id: input.dealership_id });
  const where = paging.after_id == null ? { dealership_id } : { dealership_id, id: { gt: paging.after_id } };
  return { where, orderBy: { id: 'asc' as const }, skip: ((paging.page ?? CONTACT_PAGING.defaultPage) - 1) * take, take };
}

export const contactNotFound = (): Error => notFound('contact');
