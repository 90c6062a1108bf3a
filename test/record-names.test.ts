// "ID, slug or custom slug" is one rule (src/domain/record-names.ts): the record whose id the text is,
// else the one whose slug it is, else the one whose custom slug it is. The rule alone, then every
// caller on every model that is named this way, with records planted so that each caller's former
// tie-break (the newest car, the lowest website id, any row) would pick another record.
import { beforeAll, describe, expect, it } from 'vitest';
import { forDealerships } from '../src/db/scoped.ts';
import { findCar } from '../src/domain/cars.ts';
import { idOrSlug, nameMatch, recordNamed, recordNameWhere, slugOnly } from '../src/domain/record-names.ts';
import { findWebsite } from '../src/domain/websites.ts';
import { getDatamodel } from '../src/generated/pothos-types.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey, makeWebsite } from './support/fixtures.ts';

describe('the rule', () => {
  const row = (id: number, slug: string, custom_slug: string | null = null) => ({ id, slug, custom_slug });

  it('reads text as an id when it is one, and always as a slug; a number only as an id', () => {
    expect(idOrSlug(' 42 ')).toEqual({ id: 42, slug: '42' });
    expect(idOrSlug('red-car')).toEqual({ id: null, slug: 'red-car' });
    // Beyond the database's integer: a slug only, never an overflowing id.
    expect(idOrSlug('99999999999')).toEqual({ id: null, slug: '99999999999' });
    expect(idOrSlug(42)).toEqual({ id: 42, slug: null });
    expect(slugOnly(' 42 ')).toEqual({ id: null, slug: '42' });
  });

  it('finds every candidate in one where', () => {
    expect(recordNameWhere(idOrSlug('42'))).toEqual({ OR: [{ id: 42 }, { slug: '42' }, { custom_slug: '42' }] });
    expect(recordNameWhere(idOrSlug(42))).toEqual({ OR: [{ id: 42 }] });
    expect(recordNameWhere(slugOnly('red'))).toEqual({ OR: [{ slug: 'red' }, { custom_slug: 'red' }] });
  });

  it('picks the id, then the slug, then the custom slug, whatever the order of the rows', () => {
    const byId = row(42, 'first');
    const bySlug = row(7, '42');
    const byCustom = row(3, 'third', '42');
    for (const rows of [
      [byId, bySlug, byCustom],
      [byCustom, bySlug, byId],
      [bySlug, byCustom, byId],
    ]) {
      expect(recordNamed(rows, idOrSlug('42'))).toBe(byId);
      expect(
        recordNamed(
          rows.filter((candidate) => candidate !== byId),
          idOrSlug('42'),
        ),
      ).toBe(bySlug);
      expect(recordNamed([byCustom], idOrSlug('42'))).toBe(byCustom);
    }
    expect(recordNamed([byId, bySlug, byCustom], slugOnly('42'))).toBe(bySlug);
    expect(recordNamed([row(1, 'other')], idOrSlug('42'))).toBeNull();
    expect(nameMatch(row(42, 'x'), slugOnly('42'))).toBeNull();
    expect(nameMatch(row(1, 'x', 'y'), idOrSlug('y'))).toBe(2);
  });
});

let app: TestApp;

beforeAll(async () => {
  app = await createTestApp();
});

/** Models named by "ID, slug or custom slug", with the callers that name them: a new one fails here until it is walked below. */
const CALLERS_BY_MODEL: Record<string, string[]> = {
  Car: ['findCar (src/domain/cars.ts): performance, reservation, updates, processors', 'Query.car (src/schema/car.ts)'],
  Website: [
    'findWebsite (src/domain/websites.ts): processors, offers, models',
    'car_redirect (src/domain/redirects.ts)',
    "a lead's website_slug (src/domain/leads/references.ts)",
  ],
};

describe('every caller, on every model named this way', () => {
  it('walks every model that has a slug and a custom slug', () => {
    const models = getDatamodel().datamodel.models as Record<string, { fields: readonly { name: string }[] }>;
    const named = Object.entries(models)
      .filter(([, model]) => ['id', 'slug', 'custom_slug'].every((column) => model.fields.some((field) => field.name === column)))
      .map(([name]) => name);
    expect(named.sort()).toEqual(Object.keys(CALLERS_BY_MODEL).sort());
  });

  it('Car: the id, then the slug, then the custom slug, though the newer car matches too', async () => {
    const dealer = await makeDealership(app.db);
    // Oldest first: the former rule (the newest match) would pick the last car every time.
    const byId = await makeCar(app.db, dealer.id, { created_at: new Date('2026-01-01T00:00:00.000Z') });
    const bySlug = await makeCar(app.db, dealer.id, { slug: String(byId.id), created_at: new Date('2026-02-01T00:00:00.000Z') });
    const byCustom = await makeCar(app.db, dealer.id, { custom_slug: String(byId.id), created_at: new Date('2026-03-01T00:00:00.000Z') });
    const slugOfOne = await makeCar(app.db, dealer.id, { slug: 'shared-name', created_at: new Date('2026-04-01T00:00:00.000Z') });
    await makeCar(app.db, dealer.id, { custom_slug: 'shared-name', created_at: new Date('2026-05-01T00:00:00.000Z') });
    const onlyCustom = await makeCar(app.db, dealer.id, { custom_slug: 'only-custom' });
    const key = (await makeKey(app.db, { permissions: ['read:car'] })).key;
    const cases: [string, number][] = [
      [String(byId.id), byId.id],
      ['shared-name', slugOfOne.id],
      ['only-custom', onlyCustom.id],
    ];
    for (const [text, expected] of cases) {
      expect((await findCar(forDealerships(app.db, null), text, null, { id: true })).id, text).toBe(expected);
      const graph = await app.graphql<{ car: { id: number } | null }>(
        'query ($id: String!) { car(id: $id) { id: databaseId } }',
        { id: text },
        key,
      );
      expect(graph.errors, text).toBeUndefined();
      expect(graph.data?.car?.id, text).toBe(expected);
    }
    // The REST door's by-name read goes through findCar as well.
    const performance = await app.request(`/api/v1/cars/${byId.id}/performance.json`, { key });
    expect(((await performance.json()) as { id: number }).id).toBe(byId.id);
    expect([bySlug.slug, byCustom.custom_slug]).toEqual([String(byId.id), String(byId.id)]);
  });

  it('Website: the id, then the slug, then the custom slug, though a lower id matches too', async () => {
    const dealer = await makeDealership(app.db);
    // Lowest id first: the former rule (the lowest id after an id match) would pick the custom slug's website.
    const customOfOther = await makeWebsite(app.db, dealer.id, { custom_slug: 'shared-site', url: 'https://custom.example.com.au' });
    const slugOfOne = await makeWebsite(app.db, dealer.id, { slug: 'shared-site', url: 'https://slug.example.com.au' });
    const byId = await makeWebsite(app.db, dealer.id, { url: 'https://by-id.example.com.au' });
    await app.db.website.update({ where: { id: customOfOther.id }, data: { slug: String(byId.id) } });

    expect((await findWebsite(app.db, String(byId.id)))?.id).toBe(byId.id);
    expect((await findWebsite(app.db, 'shared-site'))?.id).toBe(slugOfOne.id);
    expect((await findWebsite(app.db, byId.id))?.id).toBe(byId.id);
    expect(await findWebsite(app.db, 'no-such-site')).toBeNull();

    const redirect = async (websiteId: string) => {
      const response = await app.request(`/api/v1/dealerships/${dealer.slug}/redirect_service?website_id=${websiteId}&stocknum=NONE`);
      expect(response.status).toBe(302);
      return new URL(response.headers.get('location') ?? '').origin;
    };
    expect(await redirect(String(byId.id))).toBe('https://by-id.example.com.au');
    expect(await redirect('shared-site')).toBe('https://slug.example.com.au');

    // A lead's website_slug is a slug or custom slug only: the slug wins, and digits are never an id.
    const writer = (await makeKey(app.db, { permissions: ['create:lead'] })).key;
    const lead = async (fields: Record<string, unknown>) =>
      app.request('/api/v1/leads', {
        method: 'POST',
        key: writer,
        json: {
          lead: {
            email: 'names@example.com',
            phone: '0412 345 678',
            dealership_id: dealer.id,
            category: 'General Enquiry',
            source: 'Website',
            disable_strict_validation: true,
            ...fields,
          },
        },
      });
    const bySlugLead = await lead({ website_slug: 'shared-site' });
    expect(bySlugLead.status).toBe(201);
    expect(((await bySlugLead.json()) as { lead: { website_id: number } }).lead.website_id).toBe(slugOfOne.id);
    const digits = await lead({ website_slug: String(byId.id) });
    expect(digits.status).toBe(201);
    expect(((await digits.json()) as { lead: { website_id: number } }).lead.website_id).toBe(customOfOther.id);
    const agrees = await lead({ website_id: customOfOther.id, website_slug: 'shared-site' });
    expect(agrees.status).toBe(201);
    const disagrees = await lead({ website_id: byId.id, website_slug: 'shared-site' });
    expect(disagrees.status).toBe(422);
    expect(((await disagrees.json()) as { field: string }).field).toBe('lead.website_slug');
  });
});
