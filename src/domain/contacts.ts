// A dealership's contacts (spec 4.12, 4.13). The dealership is checked first, so a dealership the
// key does not reach answers dealership_not_found whatever the contact id; a contact is then looked
// for only inside that dealership, so one dealership's contacts never appear under another.
import { z } from 'zod';
import type { Prisma } from '../db/client.ts';
import type { ScopedDb } from '../db/scoped.ts';
import { notFound } from '../errors.ts';
import { requireDealershipId } from './dealerships.ts';
import { parseRecord } from './input-records.ts';

/** Paging of the contact list; the spec leaves it open ("not shown"), so these are ours. */
export const CONTACT_PAGING = { defaultPage: 1, defaultPerPage: 50, maxPerPage: 200 } as const;

interface ContactPage {
  skip: number;
  take: number;
}

const PER_PAGE_RANGE = `must be from 1 to ${CONTACT_PAGING.maxPerPage}`;

/** The arguments of the contact list (spec 4.13), declared once: contactPage checks them, the OpenAPI document states them. */
export const contactListRequest = z.object({
  dealership_id: z.int().describe('The dealership id.'),
  page: z.int().min(1, 'must be 1 or more').nullish().describe(`The page, from 1 (default ${CONTACT_PAGING.defaultPage}).`),
  per_page: z
    .int()
    .min(1, PER_PAGE_RANGE)
    .max(CONTACT_PAGING.maxPerPage, PER_PAGE_RANGE)
    .nullish()
    .describe(`Contacts per page, 1 to ${CONTACT_PAGING.maxPerPage} (default ${CONTACT_PAGING.defaultPerPage}).`),
});

/** page ≥ 1 (default 1), 1 ≤ per_page ≤ 200 (default 50); anything else is 422 naming the parameter. */
function contactPage(input: { page?: number | null; per_page?: number | null }): ContactPage {
  const { page, per_page } = parseRecord(contactListRequest.pick({ page: true, per_page: true }), input, '');
  const perPage = per_page ?? CONTACT_PAGING.defaultPerPage;
  return { skip: ((page ?? CONTACT_PAGING.defaultPage) - 1) * perPage, take: perPage };
}

/** The `where` of one contact of a dealership the actor reaches; dealership_not_found otherwise. */
export async function contactWhere(db: ScopedDb, dealershipId: number, contactId: number): Promise<Prisma.ContactWhereInput> {
  const dealership_id = await requireDealershipId(db, { id: dealershipId });
  return { id: contactId, dealership_id };
}

/** A page of a reachable dealership's contacts, ordered by id. */
export async function contactListArgs(
  db: ScopedDb,
  input: { dealership_id: number; page?: number | null; per_page?: number | null },
): Promise<{ where: Prisma.ContactWhereInput; orderBy: Prisma.ContactOrderByWithRelationInput; skip: number; take: number }> {
  // Paging is checked before the dealership so a bad parameter is reported without a query.
  const { skip, take } = contactPage(input);
  const dealership_id = await requireDealershipId(db, { id: input.dealership_id });
  return { where: { dealership_id }, orderBy: { id: 'asc' }, skip, take };
}

export const contactNotFound = (): Error => notFound('contact');
