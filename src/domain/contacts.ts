// A dealership's contacts (spec 4.12, 4.13). The dealership is checked first, so a dealership the
// key does not reach answers dealership_not_found whatever the contact id; a contact is then looked
// for only inside that dealership, so one dealership's contacts never appear under another.
import type { Db, Prisma } from '../db/client.ts';
import { invalidInput, notFound } from '../errors.ts';
import { requireDealershipId } from './dealerships.ts';

/** Paging of the contact list; the spec leaves it open ("not shown"), so these are ours. */
export const CONTACT_PAGING = { defaultPage: 1, defaultPerPage: 50, maxPerPage: 200 } as const;

export interface ContactPage {
  skip: number;
  take: number;
}

/** page ≥ 1 (default 1), 1 ≤ per_page ≤ 200 (default 50); anything else is 422 naming the parameter. */
export function contactPage(input: { page?: number | null; per_page?: number | null }): ContactPage {
  const page = input.page ?? CONTACT_PAGING.defaultPage;
  const perPage = input.per_page ?? CONTACT_PAGING.defaultPerPage;
  if (!Number.isSafeInteger(page) || page < 1) throw invalidInput('page', 'must be 1 or more');
  if (!Number.isSafeInteger(perPage) || perPage < 1 || perPage > CONTACT_PAGING.maxPerPage) {
    throw invalidInput('per_page', `must be from 1 to ${CONTACT_PAGING.maxPerPage}`);
  }
  return { skip: (page - 1) * perPage, take: perPage };
}

/** The `where` of one contact of a dealership the actor reaches; dealership_not_found otherwise. */
export async function contactWhere(db: Db, dealershipId: number, contactId: number): Promise<Prisma.ContactWhereInput> {
  const dealership_id = await requireDealershipId(db, { id: dealershipId });
  return { id: contactId, dealership_id };
}

/** A page of a reachable dealership's contacts, ordered by id. */
export async function contactListArgs(
  db: Db,
  input: { dealership_id: number; page?: number | null; per_page?: number | null },
): Promise<{ where: Prisma.ContactWhereInput; orderBy: Prisma.ContactOrderByWithRelationInput; skip: number; take: number }> {
  // Paging is checked before the dealership so a bad parameter is reported without a query.
  const { skip, take } = contactPage(input);
  const dealership_id = await requireDealershipId(db, { id: input.dealership_id });
  return { where: { dealership_id }, orderBy: { id: 'asc' }, skip, take };
}

export const contactNotFound = (): Error => notFound('contact');
