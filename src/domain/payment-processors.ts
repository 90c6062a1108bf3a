import type { Config } from '../config/index.ts';
import type { ScopedDb } from '../db/scoped.ts';
import { notFound } from '../errors.ts';
import { findCar } from './cars.ts';
import { openProcessorKey } from './stored-secrets.ts';
import { findWebsite } from './websites.ts';

type ProcessorRow = Awaited<ReturnType<ScopedDb['paymentProcessor']['findMany']>>[number];

/** A website of another dealership than the car's is website_not_found, like one that does not exist. */
export async function carPaymentProcessors(
  db: ScopedDb,
  carIdentifier: string,
  websiteIdentifier: string | null | undefined,
): Promise<ProcessorRow[]> {
  const car = await findCar(db, carIdentifier, null, { id: true, dealership_id: true });
  const wanted = websiteIdentifier?.trim();
  if (!wanted) return db.paymentProcessor.findMany({ where: { dealership_id: car.dealership_id }, orderBy: { id: 'asc' } });
  const website = await findWebsite(db, wanted);
  if (!website || website.dealership_id !== car.dealership_id) throw notFound('website');
  const candidates = await db.paymentProcessor.findMany({
    where: { dealership_id: car.dealership_id, OR: [{ website_id: website.id }, { website_id: null }] },
    orderBy: { id: 'asc' },
  });
  const own = candidates.filter((processor) => processor.website_id === website.id);
  return own.length > 0 ? own : candidates;
}

/** Stored encrypted and decrypted only here, for a key allowed to see it. */
export function processorAuthorizationKey(
  config: Pick<Config, 'secretsKeyring'>,
  processor: Pick<ProcessorRow, 'authorization_key'>,
): string {
  return openProcessorKey(config.secretsKeyring, processor.authorization_key);
}
