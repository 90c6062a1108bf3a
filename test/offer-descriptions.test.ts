// An offer's sanitised description is made once: stored when the offer is written (through
// offerDescriptionColumns), and for a row written before the column (NULL) on its first read, then
// stored, so that later reads answer the stored text without sanitising again. Both doors answer the same.
import { beforeAll, describe, expect, it } from 'vitest';
import { offerDescriptionColumns } from '../src/domain/offers.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeModel, makeOffer } from './support/fixtures-catalogue.ts';
import { makeDealership, makeKey, makeManufacturer } from './support/fixtures.ts';

const DIRTY = '<p onclick="steal()">Low <strong>rate</strong></p><script>alert(1)</script><a href="javascript:x()">x</a>';
const CLEAN = '<p>Low <strong>rate</strong></p><a>x</a>';

let app: TestApp;
let manufacturerId: number;
let modelId: number;
let dealershipId: number;
let key: string;

beforeAll(async () => {
  app = await createTestApp();
  manufacturerId = (await makeManufacturer(app.db)).id;
  modelId = (await makeModel(app.db, manufacturerId)).id;
  dealershipId = (await makeDealership(app.db)).id;
  key = (await makeKey(app.db, { permissions: ['index:offer'], dealershipIds: [dealershipId] })).key;
});

interface ListedOffer {
  id: number;
  sanitized_description: string;
  description: string;
  updated_at: string;
}

async function listed(offerId: number): Promise<{ rest: ListedOffer | undefined; graph: ListedOffer | undefined }> {
  const response = await app.request(`/manufacturers/${manufacturerId}/offers.json`, { key });
  expect(response.status).toBe(200);
  const rest = ((await response.json()) as ListedOffer[]).find((offer) => offer.id === offerId);
  const answer = await app.graphql<{ manufacturer_offers: ListedOffer[] }>(
    `{ manufacturer_offers(id: ${manufacturerId}) { id: databaseId sanitized_description description updated_at } }`,
    {},
    key,
  );
  expect(answer.errors).toBeUndefined();
  return { rest, graph: answer.data?.manufacturer_offers.find((offer) => offer.id === offerId) };
}

const storedOf = async (offerId: number) =>
  (await app.db.offer.findUniqueOrThrow({ where: { id: offerId }, select: { sanitized_description: true } })).sanitized_description;

/** The statements that write an offer, among those sent since the last reset. */
const offerWrites = () => app.queries.filter((sql) => /^UPDATE\b[\s\S]*\boffers\b/i.test(sql.trim()));

describe("an offer's sanitised description", () => {
  it('is stored by the write: the column holds the sanitised text, which both doors answer without writing', async () => {
    expect(await offerDescriptionColumns(DIRTY)).toEqual({ description: DIRTY, sanitized_description: CLEAN });
    const offer = await makeOffer(app.db, { manufacturer_id: manufacturerId, model_id: modelId, description: DIRTY }, [dealershipId]);
    expect(await storedOf(offer.id)).toBe(CLEAN);
    app.queries.length = 0;
    const { rest, graph } = await listed(offer.id);
    expect(rest).toMatchObject({ sanitized_description: CLEAN, description: DIRTY });
    expect(graph).toEqual(rest && { id: rest.id, sanitized_description: CLEAN, description: DIRTY, updated_at: rest.updated_at });
    expect(offerWrites()).toEqual([]);
  });

  it('is answered from the stored column, not sanitised again from the description', async () => {
    const offer = await makeOffer(app.db, { manufacturer_id: manufacturerId, model_id: modelId, description: DIRTY }, [dealershipId]);
    // A stored value that sanitising the description would not give: the answer is the column's.
    await app.db.offer.update({ where: { id: offer.id }, data: { sanitized_description: '<p>stored</p>' } });
    const { rest, graph } = await listed(offer.id);
    expect(rest?.sanitized_description).toBe('<p>stored</p>');
    expect(graph?.sanitized_description).toBe('<p>stored</p>');
  });

  it('of a row written before the column (NULL) is sanitised on the first read and stored, updated_at unchanged; the next read writes nothing', async () => {
    const offer = await makeOffer(
      app.db,
      { manufacturer_id: manufacturerId, model_id: modelId, description: DIRTY, sanitized_description: null },
      [dealershipId],
    );
    expect(await storedOf(offer.id)).toBeNull();
    app.queries.length = 0;
    const first = await app.request(`/manufacturers/${manufacturerId}/offers.json`, { key });
    const firstOffer = ((await first.json()) as ListedOffer[]).find((entry) => entry.id === offer.id);
    expect(firstOffer?.sanitized_description).toBe(CLEAN);
    expect(offerWrites()).toHaveLength(1);
    expect(await storedOf(offer.id)).toBe(CLEAN);
    const after = await app.db.offer.findUniqueOrThrow({ where: { id: offer.id }, select: { updated_at: true } });
    expect(after.updated_at).toEqual(offer.updated_at);

    app.queries.length = 0;
    const { rest, graph } = await listed(offer.id);
    expect(rest).toEqual(firstOffer && { ...firstOffer });
    expect(graph?.sanitized_description).toBe(CLEAN);
    expect(offerWrites()).toEqual([]);
  });
});
