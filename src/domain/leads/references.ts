// Checked inside the write's transaction so what is checked is what is linked. `stocknum` and
// `user_email` are soft matches by design: a customer's enquiry is never refused for a stale staff address.
import type { Prisma } from '../../db/client.ts';
import type { ScopedTx } from '../../db/scoped.ts';
import { invalidInput } from '../../errors.ts';
import { NAME_COLUMNS, nameMatch, recordNamed, recordNameWhere, slugOnly } from '../record-names.ts';
import type { LeadColumns, ValidLead } from './validation.ts';

type StoredReferences = Pick<Prisma.LeadModel, 'model_id' | 'model_variant_id' | 'colour_id'>;

const notInDealership = (field: string, thing: string, dealershipId: number) =>
  invalidInput(`lead.${field}`, `is not ${thing} of dealership ${dealershipId}`);

const leadCarFields = { id: true, year: true, make: true, model: true, stocknum: true } as const;
type LeadCar = Prisma.CarGetPayload<{ select: typeof leadCarFields }>;

/** Completes website_id, car_id and model_id from the names the request gave. */
export async function resolveLeadReferences(
  tx: ScopedTx,
  dealership: { id: number; slug: string },
  valid: ValidLead,
  stored?: StoredReferences,
): Promise<{ user_id?: number | null; car?: LeadCar }> {
  const { columns } = valid;
  const dealership_id = dealership.id;

  if (columns.dealership_slug && columns.dealership_slug !== dealership.slug) {
    throw invalidInput('lead.dealership_slug', `is not the slug of dealership ${dealership_id} ("${dealership.slug}")`);
  }

  if (typeof columns.website_id === 'number') {
    const website = await tx.website.findFirst({ where: { id: columns.website_id, dealership_id }, select: NAME_COLUMNS });
    if (!website) throw notInDealership('website_id', 'a website', dealership_id);
    if (columns.website_slug && nameMatch(website, slugOnly(columns.website_slug)) === null) {
      throw invalidInput('lead.website_slug', `is not the slug of website ${columns.website_id}`);
    }
  } else if (columns.website_id === undefined && columns.website_slug) {
    const name = slugOnly(columns.website_slug);
    const candidates = await tx.website.findMany({ where: { dealership_id, ...recordNameWhere(name) }, select: NAME_COLUMNS });
    const website = recordNamed(candidates, name);
    if (!website) throw notInDealership('website_slug', 'a website', dealership_id);
    columns.website_id = website.id;
  }

  if (typeof columns.location_id === 'number') {
    const location = await tx.location.findFirst({ where: { id: columns.location_id, dealership_id }, select: { id: true } });
    if (!location) throw notInDealership('location_id', 'a location', dealership_id);
  }

  let car: LeadCar | null = null;
  if (typeof columns.car_id === 'number') {
    car = await tx.car.findFirst({ where: { id: columns.car_id, dealership_id }, select: leadCarFields });
    if (!car) throw notInDealership('car_id', 'a car', dealership_id);
  } else if (columns.car_id === undefined && columns.stocknum) {
    const where = { dealership_id_stocknum: { dealership_id, stocknum: columns.stocknum } };
    car = await tx.car.findUnique({ where, select: leadCarFields });
    columns.car_id = car?.id ?? null;
  }

  await checkNewVehicle(tx, columns, stored);

  if (typeof columns.team_member_id === 'number') {
    const member = await tx.dealershipUser.findUnique({
      where: { dealership_id_user_id: { dealership_id, user_id: columns.team_member_id } },
      select: { user_id: true },
    });
    if (!member) throw notInDealership('team_member_id', 'a user', dealership_id);
  }

  if (valid.payment) {
    const { car_id, payment_processor_id } = valid.payment;
    if (typeof car_id === 'number' && !(await tx.car.findFirst({ where: { id: car_id, dealership_id }, select: { id: true } }))) {
      throw notInDealership('payment_attributes.car_id', 'a car', dealership_id);
    }
    if (typeof payment_processor_id === 'number') {
      const processor = await tx.paymentProcessor.findFirst({ where: { id: payment_processor_id, dealership_id }, select: { id: true } });
      if (!processor) throw notInDealership('payment_attributes.payment_processor_id', 'a payment processor', dealership_id);
    }
  }

  const linked = car ? { car } : {};
  if (columns.user_email === undefined) return linked;
  if (columns.user_email === null) return { ...linked, user_id: null };
  const user = await tx.user.findFirst({
    where: { email_normalized: columns.user_email.toLowerCase(), dealerships: { some: { dealership_id } } },
    select: { id: true },
  });
  return { ...linked, user_id: user?.id ?? null };
}

/** A mismatch is blamed on a field the request sent. */
async function checkNewVehicle(tx: ScopedTx, columns: LeadColumns, stored?: StoredReferences): Promise<void> {
  // What the request sent, fixed before model_id may be filled in below.
  const sentFields = new Set((['model_id', 'model_variant_id', 'colour_id'] as const).filter((field) => columns[field] !== undefined));
  const sent = (field: 'model_id' | 'model_variant_id' | 'colour_id') => sentFields.has(field);
  if (sentFields.size === 0) return;

  if (typeof columns.model_id === 'number') {
    const model = await tx.model.findUnique({ where: { id: columns.model_id }, select: { id: true } });
    if (!model) throw invalidInput('lead.model_id', `is not a model (no model ${columns.model_id})`);
  }
  const variantId = sent('model_variant_id') ? columns.model_variant_id : stored?.model_variant_id;
  const colourId = sent('colour_id') ? columns.colour_id : stored?.colour_id;
  const variant =
    typeof variantId === 'number' ? await tx.modelVariant.findUnique({ where: { id: variantId }, select: { model_id: true } }) : null;
  if (typeof variantId === 'number' && !variant) {
    throw invalidInput('lead.model_variant_id', `is not a model variant (no model variant ${variantId})`);
  }
  const colour = typeof colourId === 'number' ? await tx.colour.findUnique({ where: { id: colourId }, select: { model_id: true } }) : null;
  if (typeof colourId === 'number' && !colour) throw invalidInput('lead.colour_id', `is not a colour (no colour ${colourId})`);

  let modelId: number | null | undefined;
  if (sent('model_id')) {
    modelId = columns.model_id;
  } else {
    const fromRequest = (sent('model_variant_id') ? variant?.model_id : undefined) ?? (sent('colour_id') ? colour?.model_id : undefined);
    modelId = fromRequest ?? stored?.model_id ?? variant?.model_id ?? colour?.model_id ?? null;
    if (modelId !== (stored?.model_id ?? null)) columns.model_id = modelId;
  }

  const blame = (own: 'model_variant_id' | 'colour_id'): string => {
    const field = sent(own) ? own : sent('model_id') ? 'model_id' : sent('model_variant_id') ? 'model_variant_id' : 'colour_id';
    return `lead.${field}`;
  };
  if (variant && variant.model_id !== modelId) {
    throw invalidInput(
      blame('model_variant_id'),
      `model variant ${variantId} is a variant of model ${variant.model_id}, not of model ${modelId ?? 'none'}`,
    );
  }
  if (colour && colour.model_id !== modelId) {
    throw invalidInput(blame('colour_id'), `colour ${colourId} is a colour of model ${colour.model_id}, not of model ${modelId ?? 'none'}`);
  }
}
