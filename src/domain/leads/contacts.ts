// A matched contact keeps what it knows (staff curate contacts): the lead only fills its blanks and raises its flags.
import type { Prisma } from '../../db/client.ts';
import type { ScopedTx } from '../../db/scoped.ts';
import { Prisma as PrismaValues } from '../../generated/prisma/sqlite/client.ts';
import { postcodeText } from '../geocoding.ts';
import { normalizePhone } from '../phone.ts';
import type { LeadColumns } from './validation.ts';

type LeadPerson = Pick<LeadColumns, 'name' | 'last_name' | 'email' | 'phone' | 'sms_verified' | 'golden'> & {
  phoneNormalized?: boolean;
  postcode?: number | null;
};

const CANDIDATES_READ = 20;

type Candidate = Pick<
  Prisma.ContactModel,
  'id' | 'first_name' | 'last_name' | 'email_normalized' | 'phone' | 'postcode' | 'sms_verified' | 'high_priority'
>;

type CandidateRow = Omit<Candidate, 'id' | 'sms_verified' | 'high_priority'> & Record<'id' | 'sms_verified' | 'high_priority', unknown>;

/** Raw, since every lead runs it; SQLite answers booleans as 0/1 (and integers maybe as bigint), hence the conversions. */
async function candidateContacts(
  tx: ScopedTx,
  dealership_id: number,
  match: { email_normalized: string | null; phone: string | null },
  take: number,
): Promise<Candidate[]> {
  const conditions = [
    ...(match.email_normalized ? [PrismaValues.sql`email_normalized = ${match.email_normalized}`] : []),
    ...(match.phone ? [PrismaValues.sql`phone = ${match.phone}`] : []),
  ];
  if (conditions.length === 0) return [];
  const rows = await tx.$queryRaw<CandidateRow[]>`
    SELECT id, first_name, last_name, email_normalized, phone, postcode, sms_verified, high_priority FROM contacts
    WHERE dealership_id = ${dealership_id} AND (${PrismaValues.join(conditions, ' OR ')}) ORDER BY id LIMIT ${take}`;
  return rows.map((row) => ({
    ...row,
    id: Number(row.id),
    sms_verified: Boolean(row.sms_verified),
    high_priority: Boolean(row.high_priority),
  }));
}

export async function attachContact(tx: ScopedTx, dealership_id: number, person: LeadPerson, now: Date): Promise<number> {
  const email = person.email?.trim() || null;
  const email_normalized = email?.toLowerCase() ?? null;
  // A number that does not parse (strict validation off) is matched as written.
  const phone = person.phone ? (person.phoneNormalized ? person.phone : (normalizePhone(person.phone) ?? person.phone.trim())) : null;
  const postcode = person.postcode == null ? null : postcodeText(person.postcode);

  // One statement reads both kinds of candidate, oldest first, instead of a look-up by e-mail and another by phone.
  const candidates = await candidateContacts(tx, dealership_id, { email_normalized, phone }, CANDIDATES_READ);
  let contact = (email_normalized && candidates.find((candidate) => candidate.email_normalized === email_normalized)) || null;
  // A full page may end before the e-mail's contact (more older contacts share the phone): look it up.
  if (!contact && email_normalized && phone && candidates.length === CANDIDATES_READ) {
    [contact = null] = await candidateContacts(tx, dealership_id, { email_normalized, phone: null }, 1);
  }
  if (!contact && phone) contact = candidates.find((candidate) => candidate.phone === phone) ?? null;

  if (!contact) {
    const created = await tx.contact.create({
      data: {
        dealership_id,
        first_name: person.name ?? '',
        last_name: person.last_name ?? null,
        email,
        email_normalized,
        phone,
        postcode,
        sms_verified: person.sms_verified ?? false,
        high_priority: person.golden ?? false,
        created_at: now,
        updated_at: now,
      },
      select: { id: true },
    });
    return created.id;
  }

  const data: Prisma.ContactUncheckedUpdateInput = {};
  if (!contact.first_name && person.name) data.first_name = person.name;
  if (!contact.last_name && person.last_name) data.last_name = person.last_name;
  // Matched by phone, so no contact of this dealership has this e-mail yet.
  if (!contact.email_normalized && email) {
    data.email = email;
    data.email_normalized = email_normalized;
  }
  if (!contact.phone && phone) data.phone = phone;
  if (!contact.postcode && postcode) data.postcode = postcode;
  if (person.sms_verified && !contact.sms_verified) data.sms_verified = true;
  if (person.golden && !contact.high_priority) data.high_priority = true;
  if (Object.keys(data).length > 0) await tx.contact.update({ where: { id: contact.id }, data: { ...data, updated_at: now } });
  return contact.id;
}

/** Verified and high priority only ever rise. */
export async function raiseContactFlags(
  tx: ScopedTx,
  contactId: number,
  flags: { sms_verified?: boolean; golden?: boolean },
  now: Date,
): Promise<void> {
  const data: Prisma.ContactUncheckedUpdateManyInput = {};
  if (flags.sms_verified) data.sms_verified = true;
  if (flags.golden) data.high_priority = true;
  if (Object.keys(data).length === 0) return;
  await tx.contact.updateMany({ where: { id: contactId }, data: { ...data, updated_at: now } });
}
