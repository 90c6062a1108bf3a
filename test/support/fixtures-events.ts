// Factories for the inbound events (lead events, phone calls) and the partner sign-on tests.
import { createHash } from 'node:crypto';
import type { Db, Prisma } from '../../src/db/client.ts';
import { uniqueNumber } from './fixtures.ts';

/** A lead with only what the data model requires, so these tests do not depend on lead creation rules. */
export async function makeLead(db: Db, dealershipId: number, data: Partial<Prisma.LeadUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.lead.create({
    data: {
      dealership_id: dealershipId,
      name: `Customer ${n}`,
      email: `customer.${n}@example.com`,
      category: 'Used Vehicle Enquiry',
      source: 'Website',
      ...data,
    },
  });
}

/** A partner token row as createPartnerToken stores it (hash only), for expiry and reuse cases. */
export async function makePartnerToken(
  db: Db,
  userId: number,
  token: string,
  data: Partial<Prisma.PartnerTokenUncheckedCreateInput> & { expires_at: Date },
) {
  return db.partnerToken.create({
    data: { token_hash: createHash('sha256').update(token).digest('hex'), user_id: userId, ...data },
  });
}
