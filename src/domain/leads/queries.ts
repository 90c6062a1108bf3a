import type { Prisma } from '../../db/client.ts';
import type { ScopedDb } from '../../db/scoped.ts';
import { requireDealershipId } from '../dealerships.ts';
import { parseRecord } from '../input-records.ts';
import { leadCategorySchema } from './input-record.ts';

type LeadListFilter = {
  [Column in 'dealership_id' | 'contact_id' | 'car_id' | 'category' | 'lead_state']?: Prisma.LeadModel[Column] | null;
};

export async function leadListWhere(db: ScopedDb, filter: LeadListFilter): Promise<Prisma.LeadWhereInput> {
  return {
    ...(typeof filter.dealership_id === 'number' ? { dealership_id: await requireDealershipId(db, { id: filter.dealership_id }) } : {}),
    ...(typeof filter.contact_id === 'number' ? { contact_id: filter.contact_id } : {}),
    ...(typeof filter.car_id === 'number' ? { car_id: filter.car_id } : {}),
    // A category the spec does not list is a mistake to name, not a filter that matches nothing.
    ...(filter.category ? { category: parseRecord(leadCategorySchema, filter.category, 'category') } : {}),
    ...(filter.lead_state ? { lead_state: filter.lead_state } : {}),
  };
}
