// Spec 4.3: a car's payment processors. A processor belongs to a dealership and is either a
// website's own (website_id set) or the dealership's default (website_id null), which every website
// without its own uses.
import type { Config } from '../config/index.ts';
import type { ScopedDb } from '../db/scoped.ts';
import { notFound } from '../errors.ts';
import { findCar } from './cars.ts';
import { openProcessorKey } from './stored-secrets.ts';
import { findWebsite } from './websites.ts';

type ProcessorRow = Awaited<ReturnType<ScopedDb['paymentProcessor']['findMany']>>[number];

/**
 * Without `website`: every processor of the car's dealership, by id. With `website` (ID, slug or
 * custom slug): that website's own processors, else the dealership's defaults. A website of another
 * dealership than the car's is website_not_found, like one that does not exist.
 */
export async function carPaymentProcessors(
  db: ScopedDb,
  carIdentifier: string,
  websiteIdentifier: string | null | undefined,
): Promise<ProcessorRow[]> {
  // Named like every car (src/domain/record-names.ts): car_not_found when nothing matches.
  const car = await findCar(db, carIdentifier, null, { id: true, dealership_id: true });
  const wanted = websiteIdentifier?.trim();
  if (!wanted) {
    return db.paymentProcessor.findMany({ where: { dealership_id: car.dealership_id }, orderBy: { id: 'asc' } });
  }
  const website = await findWebsite(db, wanted);
  if (!website || website.dealership_id !== car.dealership_id) throw notFound('website');
  const candidates = await db.paymentProcessor.findMany({
    where: { dealership_id: car.dealership_id, OR: [{ website_id: website.id }, { website_id: null }] },
    orderBy: { id: 'asc' },
  });
  const own = candidates.filter((processor) => processor.website_id === website.id);
  return own.length > 0 ? own : candidates;
}

/**
 * The processor's authorization_key in clear. It is stored encrypted and decrypted only here, when a
 * key allowed to see it (show:payment_processor_secret) asks for the field.
 */
export function processorAuthorizationKey(
  config: Pick<Config, 'secretsKeyring'>,
  processor: Pick<ProcessorRow, 'authorization_key'>,
): string {
  return openProcessorKey(config.secretsKeyring, processor.authorization_key);
}
