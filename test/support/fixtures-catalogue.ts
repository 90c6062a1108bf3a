// Factories for cars' facts, payment processors, new-vehicle catalogue and offers: each makes valid
// rows with unique slugs and takes overrides.
import type { Db, Prisma } from '../../src/db/client.ts';
import { offerDescriptionColumns } from '../../src/domain/offers.ts';
import { sealProcessorKey } from '../../src/domain/stored-secrets.ts';
import { testKeyring } from './app.ts';
import { uniqueNumber } from './fixtures.ts';

const DAY_MS = 86_400_000;
export const daysAfter = (date: Date, days: number): Date => new Date(date.getTime() + days * DAY_MS);

// ─── facts about a car ───

export async function makeCarLead(db: Db, dealershipId: number, carId: number, data: Partial<Prisma.LeadUncheckedCreateInput> = {}) {
  return db.lead.create({
    data: { dealership_id: dealershipId, car_id: carId, category: 'Used Vehicle Enquiry', source: 'Website', ...data },
  });
}

/** `count` photos, the i-th created `spacingDays * i` days after `start`. */
export async function makePhotos(db: Db, carId: number, count: number, start: Date, spacingDays = 0) {
  await db.carPhoto.createMany({
    data: Array.from({ length: count }, (_, index) => ({
      car_id: carId,
      url: `https://img.example.com/${carId}/${index + 1}.jpg`,
      position: index + 1,
      created_at: daysAfter(start, spacingDays * index),
    })),
  });
}

export async function makePriceChange(db: Db, carId: number, data: Partial<Prisma.CarPriceChangeUncheckedCreateInput> = {}) {
  return db.carPriceChange.create({ data: { car_id: carId, ...data } });
}

export async function makeViewDay(db: Db, carId: number, day: Date, views: number) {
  return db.carViewDay.create({ data: { car_id: carId, day, views } });
}

export async function makePhoneCall(db: Db, carId: number | null, data: Partial<Prisma.PhoneCallUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.phoneCall.create({
    data: {
      dedupe_key: `call-${n}`,
      called_number: '+61390000000',
      caller_number: `+6140000${String(n).padStart(4, '0')}`,
      car_id: carId,
      ...data,
    },
  });
}

/** `authorization_key` is given in clear and stored encrypted, as the service stores it. */
export async function makePaymentProcessor(db: Db, dealershipId: number, data: Partial<Prisma.PaymentProcessorUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  const { authorization_key: authorizationKey = `sk_live_${n}`, ...rest } = data;
  return db.paymentProcessor.create({
    data: {
      dealership_id: dealershipId,
      authorization_type: 'api_key',
      authorization_key: sealProcessorKey(testKeyring, authorizationKey),
      merchant_id: `merchant-${n}`,
      ...rest,
    },
  });
}

// ─── the new-vehicle catalogue ───

export async function makeModel(db: Db, manufacturerId: number, data: Partial<Prisma.ModelUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.model.create({
    data: {
      manufacturer_id: manufacturerId,
      name: `Model ${n}`,
      slug: `model-${n}`,
      new_slug: `new-model-${n}`,
      path: `/new/model-${n}`,
      ...data,
    },
  });
}

export async function makeVariant(db: Db, modelId: number, data: Partial<Prisma.ModelVariantUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.modelVariant.create({
    data: { model_id: modelId, slug: `variant-${n}`, name: `Variant ${n}`, full_name: `Full Variant ${n}`, ...data },
  });
}

export async function showModel(db: Db, websiteId: number, modelId: number, position: number, overrideUrl: string | null = null) {
  return db.websiteModel.create({ data: { website_id: websiteId, model_id: modelId, position, override_url: overrideUrl } });
}

export async function makeSpecCategory(db: Db, data: Partial<Prisma.SpecificationCategoryUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.specificationCategory.create({ data: { name: `Category ${n}`, slug: `category-${n}`, position: n, ...data } });
}

export async function makeSpecField(db: Db, categoryId: number, data: Partial<Prisma.SpecificationFieldUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.specificationField.create({ data: { category_id: categoryId, name: `Field ${n}`, slug: `field-${n}`, position: n, ...data } });
}

export async function setSpecValue(db: Db, variantId: number, fieldId: number, value: string) {
  return db.specificationValue.create({ data: { variant_id: variantId, field_id: fieldId, value } });
}

export async function makeOption(db: Db, categoryId: number, data: Partial<Prisma.ConfigurableOptionUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.configurableOption.create({ data: { category_id: categoryId, code: `OPT${n}`, position: n, ...data } });
}

export async function setAvailability(db: Db, variantId: number, optionId: number, availability: 'standard' | 'optional' | 'unavailable') {
  return db.variantAvailability.create({ data: { variant_id: variantId, option_id: optionId, availability } });
}

// ─── offers ───

export async function makeOffer(
  db: Db,
  data: Pick<Prisma.OfferUncheckedCreateInput, 'manufacturer_id' | 'model_id'> & Partial<Prisma.OfferUncheckedCreateInput>,
  dealershipIds: readonly number[] = [],
) {
  const n = uniqueNumber();
  return db.offer.create({
    data: {
      kind: 'manufacturer',
      name: `Offer ${n}`,
      expires_at: new Date('2027-01-31T00:00:00.000Z'),
      // Written as every offer write writes it: with its sanitised description (unless data says otherwise).
      ...(await offerDescriptionColumns(data.description ?? `<p>Offer ${n}</p>`)),
      ...data,
      dealerships: { create: dealershipIds.map((dealership_id) => ({ dealership_id })) },
    },
  });
}
