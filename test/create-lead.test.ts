// Spec 4.9 (POST /api/v1/leads, Mutation.create_lead) on both doors: the answer, every field rule of
// 2.7 with a deliberate mistake, matching (car, model, user, contact), attachments, scoping and
// permissions, and that a failure leaves nothing behind — no rows, no files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createTestApp, instanceDeps, testSettings, type TestApp } from './support/app.ts';
import { loadConfig } from '../src/config/index.ts';
import { createApp } from '../src/gateway/yoga.ts';
import { testEngine } from './support/database.ts';
import { makePaymentProcessor } from './support/fixtures-catalogue.ts';
import { makeCar, makeContact, makeDealership, makeKey, makeLocation, makeUser, makeWebsite } from './support/fixtures.ts';
import { DEFAULT_THIRD_PARTY_MARKETING_SOURCES, DEFAULT_THIRD_PARTY_SOURCES, LEAD_CATEGORIES } from '../src/domain/leads/values.ts';
import {
  CREATE_LEAD,
  EXE_BYTES,
  PDF_BYTES,
  PNG_BYTES,
  emptyRecord,
  graphLead,
  graphRecord,
  makeLeadCatalogue,
  samplePayload,
  tempStorageDir,
} from './support/fixtures-leads.ts';

const PATH = '/api/v1/leads';
const MAX_FILE_BYTES = 2048;

let app: TestApp;
let storage: ReturnType<typeof tempStorageDir>;
let north: { id: number; slug: string; name: string };
let south: { id: number; slug: string };
let northSite: { id: number; slug: string };
let southSite: { id: number; slug: string };
let northYard: { id: number };
let southYard: { id: number };
let car: { id: number; stocknum: string };
let southCar: { id: number; stocknum: string };
let staff: { id: number; email: string };
let southStaff: { id: number; email: string };
let model: { id: number };
let variant: { id: number };
let colour: { id: number };
let otherVariant: { id: number };
let otherColour: { id: number };
let processor: { id: number };
let southProcessor: { id: number };
/** create:lead + read:personal_data, every dealership. */
let writer: { key: string };
/** create:lead only, north only. */
let blind: { key: string };
/** create:lead + read:personal_data, south only. */
let southOnly: { key: string };
/** read:lead + read:personal_data: may read leads, not create them. */
let reader: { key: string };

let emailCount = 0;
/** A customer no earlier test has used, so contact matching starts clean. */
function person(): { email: string; phone: string } {
  emailCount += 1;
  return {
    email: `customer.${emailCount}@example.com`,
    phone: `0412 ${String(100000 + emailCount).slice(0, 3)} ${String(emailCount).padStart(3, '0')}`,
  };
}

function post(payload: unknown, key?: string, headers?: Record<string, string>) {
  return app.request(PATH, { method: 'POST', key, json: { lead: payload }, headers });
}

async function counts() {
  const [leads, contacts, payments, addresses, files, outbox, idempotency] = await Promise.all([
    app.db.lead.count(),
    app.db.contact.count(),
    app.db.leadPayment.count(),
    app.db.leadAddress.count(),
    app.db.leadFile.count(),
    app.db.outboxMessage.count(),
    app.db.idempotencyRecord.count(),
  ]);
  return { leads, contacts, payments, addresses, files, outbox, idempotency };
}

beforeAll(async () => {
  storage = tempStorageDir();
  app = await createTestApp({ fileStorage: 'local', fileStorageDir: storage.dir, leadFileMaxBytes: MAX_FILE_BYTES });
  north = await makeDealership(app.db, { name: 'Northside Motors', slug: 'northside-motors' });
  south = await makeDealership(app.db, { slug: 'southside-motors' });
  northSite = await makeWebsite(app.db, north.id, { custom_slug: 'northside' });
  southSite = await makeWebsite(app.db, south.id);
  northYard = await makeLocation(app.db, north.id);
  southYard = await makeLocation(app.db, south.id);
  car = await makeCar(app.db, north.id, { stocknum: 'N100' });
  southCar = await makeCar(app.db, south.id, { stocknum: 'S100' });
  staff = await makeUser(app.db, [north.id], { email: 'Sam.Sales@Northside.example.com' });
  southStaff = await makeUser(app.db, [south.id]);
  ({ model, variant, colour, otherVariant, otherColour } = await makeLeadCatalogue(app.db));
  processor = await makePaymentProcessor(app.db, north.id);
  southProcessor = await makePaymentProcessor(app.db, south.id);
  writer = await makeKey(app.db, { permissions: ['create:lead', 'read:personal_data'] });
  blind = await makeKey(app.db, { permissions: ['create:lead'], dealershipIds: [north.id] });
  southOnly = await makeKey(app.db, { permissions: ['create:lead', 'read:personal_data'], dealershipIds: [south.id] });
  reader = await makeKey(app.db, { permissions: ['read:lead', 'read:personal_data'] });
});

afterAll(() => storage.remove());

describe('POST /api/v1/leads: a valid lead', () => {
  it('stores the spec sample and answers 201 with {"lead": ...}, the phone in E.164', async () => {
    const before = await counts();
    const response = await post(samplePayload(north.id), writer.key);
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = await response.json();
    const now = app.clock.now().toISOString();
    expect(body).toEqual({
      lead: emptyRecord({
        id: expect.any(Number),
        dealership_id: north.id,
        contact_id: expect.any(Number),
        name: 'Jane',
        last_name: 'Citizen',
        email: 'Jane.Citizen@example.com',
        phone: '+61412345678',
        message: 'Is this car still available?',
        category: 'Used Vehicle Enquiry',
        source: 'Website',
        created_at: now,
        updated_at: now,
      }),
    });
    const stored = await app.db.lead.findUniqueOrThrow({ where: { id: body.lead.id } });
    expect(stored).toMatchObject({ dealership_id: north.id, email: 'Jane.Citizen@example.com', phone: '+61412345678', lead_state: 'new' });
    expect(stored.created_at.toISOString()).toBe(now);
    const contact = await app.db.contact.findUniqueOrThrow({ where: { id: body.lead.contact_id } });
    expect(contact).toMatchObject({
      dealership_id: north.id,
      first_name: 'Jane',
      last_name: 'Citizen',
      email: 'Jane.Citizen@example.com',
      email_normalized: 'jane.citizen@example.com',
      phone: '+61412345678',
      postcode: null,
      sms_verified: false,
      high_priority: false,
    });
    expect(await counts()).toEqual({ ...before, leads: before.leads + 1, contacts: before.contacts + 1, outbox: before.outbox + 2 });
  });

  it('stores every field of 2.7 and the sample-only ones, linking what they name', async () => {
    const { email } = person();
    const payload = samplePayload(north.id, {
      name: 'Priya',
      last_name: 'Shah',
      email,
      phone: '(03) 9123 4567',
      dealership_slug: 'northside-motors',
      category: 'New Vehicle Enquiry',
      marketing_source: 'Email',
      website_slug: 'northside',
      page_id: 77,
      stocknum: 'N100',
      provider: 'AutoForms',
      provider_id: 'af-991',
      certified: true,
      golden: true,
      location_id: northYard.id,
      send_customer_email: false,
      model_variant_id: variant.id,
      colour_id: colour.id,
      user_email: 'SAM.SALES@northside.example.com',
      lead_state: 'contacted',
      sms_verified: true,
      tags: ['finance', ' ', 'finance', 'hot '],
      opt_in_to_marketing: true,
      delay_customer_email_minutes: 10,
      delay_dealership_notification_minutes: 5,
      time_on_site_seconds: 340,
      time_to_submit_seconds: 45,
      payment_attributes: { amount: 500.5, car_id: car.id, payment_processor_id: processor.id, external_transaction_id: 'txn_123' },
      address_attributes: {
        street: '1 Smith St',
        city: 'Darwin',
        state: 'NT',
        state_long: 'Northern Territory',
        country: 'Australia',
        postcode: 800,
      },
      fields: { preferred_contact: 'phone', trade_in: true },
      charge_breakdown: { total: { amount: 45990, currency: 'AUD' }, charges: [{ name: 'Stamp duty', amount: 1200.5, state: 'NT' }] },
      customer_address: '1 Smith St, Darwin NT 0800',
      dob: '28/02/1990',
    });
    const response = await post(payload, writer.key);
    expect(response.status).toBe(201);
    const { lead } = await response.json();
    const now = app.clock.now().toISOString();
    expect(lead).toEqual(
      emptyRecord({
        id: expect.any(Number),
        dealership_id: north.id,
        contact_id: expect.any(Number),
        website_id: northSite.id,
        location_id: northYard.id,
        car_id: car.id,
        model_id: model.id,
        model_variant_id: variant.id,
        colour_id: colour.id,
        user_id: staff.id,
        page_id: 77,
        name: 'Priya',
        last_name: 'Shah',
        email,
        phone: '+61391234567',
        user_email: 'SAM.SALES@northside.example.com',
        customer_address: '1 Smith St, Darwin NT 0800',
        dob: '1990-02-28',
        message: 'Is this car still available?',
        dealership_slug: 'northside-motors',
        website_slug: 'northside',
        category: 'New Vehicle Enquiry',
        source: 'Website',
        marketing_source: 'Email',
        stocknum: 'N100',
        provider: 'AutoForms',
        provider_id: 'af-991',
        certified: true,
        golden: true,
        send_customer_email: false,
        lead_state: 'contacted',
        sms_verified: true,
        tags: ['finance', 'hot'],
        opt_in_to_marketing: true,
        delay_customer_email_minutes: 10,
        delay_dealership_notification_minutes: 5,
        time_on_site_seconds: 340,
        time_to_submit_seconds: 45,
        fields: { preferred_contact: 'phone', trade_in: true },
        charge_breakdown: { total: { amount: 45990, currency: 'AUD' }, charges: [{ name: 'Stamp duty', amount: 1200.5, state: 'NT' }] },
        created_at: now,
        updated_at: now,
        payment: {
          id: expect.any(Number),
          amount: 500.5,
          car_id: car.id,
          payment_processor_id: processor.id,
          external_transaction_id: 'txn_123',
        },
        address: {
          street: '1 Smith St',
          city: 'Darwin',
          state: 'NT',
          state_long: 'Northern Territory',
          country: 'Australia',
          postcode: 800,
        },
      }),
    );
    const stored = await app.db.lead.findUniqueOrThrow({ where: { id: lead.id }, include: { payment: true, address: true } });
    expect(stored.dob?.toISOString()).toBe('1990-02-28T00:00:00.000Z');
    expect(stored.payment).toMatchObject({
      amount: 500.5,
      car_id: car.id,
      payment_processor_id: processor.id,
      external_transaction_id: 'txn_123',
    });
    expect(stored.address).toMatchObject({ city: 'Darwin', postcode: 800 });
    const contact = await app.db.contact.findUniqueOrThrow({ where: { id: lead.contact_id } });
    expect(contact).toMatchObject({
      first_name: 'Priya',
      last_name: 'Shah',
      phone: '+61391234567',
      postcode: '0800',
      sms_verified: true,
      high_priority: true,
    });
  });

  it('echoes name, e-mail and phone to the key that created the lead, hides the rest of the personal data without read:personal_data, and stores it all', async () => {
    const { email } = person();
    const response = await post(
      samplePayload(north.id, {
        email,
        dob: '1/2/1985',
        customer_address: '2 Rose Ave',
        user_email: staff.email,
        address_attributes: { city: 'Darwin' },
      }),
      blind.key,
    );
    expect(response.status).toBe(201);
    const { lead } = await response.json();
    expect(lead).toMatchObject({
      name: 'Jane',
      last_name: null,
      email,
      phone: '+61412345678',
      dob: null,
      customer_address: null,
      user_email: null,
      address: null,
    });
    expect(lead.user_id).toBe(staff.id);
    const stored = await app.db.lead.findUniqueOrThrow({ where: { id: lead.id }, include: { address: true } });
    expect(stored).toMatchObject({ name: 'Jane', email, phone: '+61412345678', customer_address: '2 Rose Ave', user_email: staff.email });
    expect(stored.dob?.toISOString()).toBe('1985-02-01T00:00:00.000Z');
    expect(stored.address?.city).toBe('Darwin');
  });

  it('answers GraphQL with the same record as REST', async () => {
    const { email, phone } = person();
    const payload = samplePayload(north.id, { email, phone, tags: ['a'], fields: { x: 1 } });
    const rest = (await (await post(payload, writer.key)).json()).lead;
    const graph = await app.graphql<{ create_lead: { lead: Record<string, unknown> } }>(
      CREATE_LEAD,
      { lead: graphLead(payload) },
      writer.key,
    );
    expect(graph.errors).toBeUndefined();
    const created = graph.data?.create_lead.lead;
    expect(created?.id).toBe(rest.id + 1);
    // The same person: the second lead joins the first one's contact.
    expect(created).toEqual(graphRecord({ ...rest, id: rest.id + 1 }));
    expect(created?.category).toBe('USED_VEHICLE_ENQUIRY');
  });
});

describe('required fields', () => {
  it.each(['email', 'phone', 'dealership_id', 'category', 'source'])(
    'a lead without %s is 422 naming lead.%s, on both doors',
    async (field) => {
      const before = await counts();
      const payload: Record<string, unknown> = samplePayload(north.id, person());
      delete payload[field];
      const response = await post(payload, writer.key);
      expect(response.status).toBe(422);
      expect(await response.json()).toEqual({ error: 'invalid_input', message: `lead.${field}: is required`, field: `lead.${field}` });
      const graph = await app.graphql(CREATE_LEAD, { lead: graphLead(payload) }, writer.key);
      expect(graph.data).toBeNull();
      expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', error: 'invalid_input', field: `lead.${field}` });
      expect(await counts()).toEqual(before);
    },
  );

  it('a body without the "lead" wrapper is 422 naming lead', async () => {
    const response = await app.request(PATH, { method: 'POST', key: writer.key, json: samplePayload(north.id) });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ error: 'invalid_input', field: 'lead' });
  });

  it('null for a required field is the same as leaving it out; blank text is refused', async () => {
    const nulled = await post(samplePayload(north.id, { ...person(), email: null }), writer.key);
    expect(await nulled.json()).toEqual({ error: 'invalid_input', message: 'lead.email: is required', field: 'lead.email' });
    const blank = await post(samplePayload(north.id, { ...person(), category: '   ' }), writer.key);
    expect(blank.status).toBe(422);
    expect(await blank.json()).toEqual({ error: 'invalid_input', message: 'lead.category: must not be empty', field: 'lead.category' });
  });
});

describe('field rules: each mistake is a 422 naming the field and stores nothing', () => {
  const TME = 'Team Member Enquiry';
  const cases: [string, () => Record<string, unknown>, string][] = [
    ['an e-mail that is not an address', () => ({ email: 'jane-at-example.com' }), 'lead.email'],
    ['an e-mail with a space', () => ({ email: 'jane citizen@example.com' }), 'lead.email'],
    ['a phone that is too short', () => ({ phone: '12345' }), 'lead.phone'],
    ['a phone that is words', () => ({ phone: 'call me maybe' }), 'lead.phone'],
    ['a category in other letter case', () => ({ category: 'used vehicle enquiry' }), 'lead.category'],
    ['a category not in 2.7.1', () => ({ category: 'Complaint' }), 'lead.category'],
    ['a source not in 2.7.2', () => ({ source: 'Carrier Pigeon' }), 'lead.source'],
    ['a marketing_source not in 2.7.3', () => ({ marketing_source: 'Billboard' }), 'lead.marketing_source'],
    ['a charge_breakdown that is a list', () => ({ charge_breakdown: [{ name: 'x', amount: 1 }] }), 'lead.charge_breakdown'],
    ['a charge_breakdown with neither total nor charges', () => ({ charge_breakdown: { subtotal: 1 } }), 'lead.charge_breakdown'],
    ['a total that is a number', () => ({ charge_breakdown: { total: 45990 } }), 'lead.charge_breakdown.total'],
    ['a total without amount', () => ({ charge_breakdown: { total: { currency: 'AUD' } } }), 'lead.charge_breakdown.total.amount'],
    ['a total amount written as text', () => ({ charge_breakdown: { total: { amount: '45990' } } }), 'lead.charge_breakdown.total.amount'],
    ['charges that are an object', () => ({ charge_breakdown: { charges: { name: 'Duty', amount: 1 } } }), 'lead.charge_breakdown.charges'],
    ['a charge that is text', () => ({ charge_breakdown: { charges: ['Duty'] } }), 'lead.charge_breakdown.charges[0]'],
    [
      'a second charge without name',
      () => ({ charge_breakdown: { total: { amount: 3 }, charges: [{ name: 'Duty', amount: 1 }, { amount: 2 }] } }),
      'lead.charge_breakdown.charges[1].name',
    ],
    [
      'a second charge without amount',
      () => ({ charge_breakdown: { charges: [{ name: 'Duty', amount: 1 }, { name: 'Rego' }] } }),
      'lead.charge_breakdown.charges[1].amount',
    ],
    [
      'a charge amount that is null',
      () => ({ charge_breakdown: { charges: [{ name: 'Duty', amount: null }] } }),
      'lead.charge_breakdown.charges[0].amount',
    ],
    ['fields that are text', () => ({ fields: 'document_type=ppsr' }), 'lead.fields'],
    [
      'a Document Request without document_type',
      () => ({ category: 'Document Request', fields: { vin: 'X' } }),
      'lead.fields.document_type',
    ],
    [
      'a Document Request with another document_type',
      () => ({ category: 'Document Request', fields: { document_type: 'rego_check' } }),
      'lead.fields.document_type',
    ],
    ['a team member on another category', () => ({ team_member_id: staff.id }), 'lead.team_member_id'],
    ['a team member of another dealership', () => ({ category: TME, team_member_id: southStaff.id }), 'lead.team_member_id'],
    ['an unknown car_id', () => ({ car_id: 999_999 }), 'lead.car_id'],
    ['a car_id of another dealership', () => ({ car_id: southCar.id }), 'lead.car_id'],
    ['an unknown model_id', () => ({ model_id: 999_999 }), 'lead.model_id'],
    ['an unknown model_variant_id', () => ({ model_variant_id: 999_999 }), 'lead.model_variant_id'],
    ['an unknown colour_id', () => ({ colour_id: 999_999 }), 'lead.colour_id'],
    ['a variant of another model', () => ({ model_id: model.id, model_variant_id: otherVariant.id }), 'lead.model_variant_id'],
    ['a colour of another model', () => ({ model_id: model.id, colour_id: otherColour.id }), 'lead.colour_id'],
    ['a colour of another model than the variant', () => ({ model_variant_id: variant.id, colour_id: otherColour.id }), 'lead.colour_id'],
    ['a website of another dealership', () => ({ website_id: southSite.id }), 'lead.website_id'],
    ['an unknown website_slug', () => ({ website_slug: 'no-such-site' }), 'lead.website_slug'],
    ['a website_slug of another website', () => ({ website_id: northSite.id, website_slug: southSite.slug }), 'lead.website_slug'],
    ['a location of another dealership', () => ({ location_id: southYard.id }), 'lead.location_id'],
    ['a dealership_slug of another dealership', () => ({ dealership_slug: south.slug }), 'lead.dealership_slug'],
    ['a payment without amount', () => ({ payment_attributes: { car_id: car.id } }), 'lead.payment_attributes.amount'],
    ['a negative payment amount', () => ({ payment_attributes: { amount: -1 } }), 'lead.payment_attributes.amount'],
    [
      'a payment for another dealership’s car',
      () => ({ payment_attributes: { amount: 1, car_id: southCar.id } }),
      'lead.payment_attributes.car_id',
    ],
    [
      'a payment processor of another dealership',
      () => ({ payment_attributes: { amount: 1, payment_processor_id: southProcessor.id } }),
      'lead.payment_attributes.payment_processor_id',
    ],
    ['a negative postcode', () => ({ address_attributes: { postcode: -800 } }), 'lead.address_attributes.postcode'],
    ['a dob that is not a real date', () => ({ dob: '31/02/1990' }), 'lead.dob'],
    ['a dob written year first with slashes', () => ({ dob: '1990/02/28' }), 'lead.dob'],
    ['a dob in the future', () => ({ dob: '01/01/2030' }), 'lead.dob'],
    ['a negative customer e-mail delay', () => ({ delay_customer_email_minutes: -5 }), 'lead.delay_customer_email_minutes'],
    [
      'a dealership notification delay over a week',
      () => ({ delay_dealership_notification_minutes: 10_081 }),
      'lead.delay_dealership_notification_minutes',
    ],
    ['a negative time on site', () => ({ time_on_site_seconds: -1 }), 'lead.time_on_site_seconds'],
    ['a blank lead_state', () => ({ lead_state: '   ' }), 'lead.lead_state'],
    ['a lead_state over 64 characters', () => ({ lead_state: 'x'.repeat(65) }), 'lead.lead_state'],
  ];

  it.each(cases)('%s', async (_label, overrides, field) => {
    const before = await counts();
    const payload = samplePayload(north.id, { ...person(), ...overrides() });
    const response = await post(payload, writer.key);
    expect(response.status).toBe(422);
    const body = await response.json();
    expect(body).toEqual({
      error: 'invalid_input',
      message: expect.stringMatching(new RegExp(`^${field.replace(/[.[\]]/g, '\\$&')}: `)),
      field,
    });
    const graph = await app.graphql(CREATE_LEAD, { lead: graphLead(payload) }, writer.key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
    if (typeof payload.category === 'string' && !(LEAD_CATEGORIES as readonly string[]).includes(payload.category)) {
      // The graph's LeadCategory enum refuses a value it does not list before the resolver runs.
      expect(graph.errors?.[0]?.message).toContain(`Value "${payload.category}" does not exist in "LeadCategory" enum.`);
    } else {
      expect(graph.errors?.[0]?.message).toBe(body.message);
    }
    expect(await counts()).toEqual(before);
    expect(storage.files()).toEqual([]);
  });

  it('a value of the wrong JSON type is refused by the schema, naming its path on both doors', async () => {
    const before = await counts();
    const graph = await app.graphql(
      CREATE_LEAD,
      { lead: graphLead(samplePayload(north.id, { ...person(), dealership_id: 'north' })) },
      writer.key,
    );
    expect(graph.errors?.[0]?.message).toContain('at "lead.dealership_id"');
    const response = await post(samplePayload(north.id, { ...person(), dealership_id: 'north' }), writer.key);
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      error: 'invalid_input',
      field: 'lead.dealership_id',
      message: 'lead.dealership_id: must be a whole number',
    });
    const nested = await post(samplePayload(north.id, { ...person(), payment_attributes: { amount: 'ten' } }), writer.key);
    expect(nested.status).toBe(422);
    expect(await nested.json()).toEqual({
      error: 'invalid_input',
      field: 'lead.payment_attributes.amount',
      message: 'lead.payment_attributes.amount: must be a number',
    });
    // GraphQL stays strict about keys; the REST door ignores them (test/rest-leniency.test.ts).
    const unknown = await app.graphql(
      CREATE_LEAD,
      { lead: graphLead(samplePayload(north.id, { ...person(), favourite_colour: 'red' })) },
      writer.key,
    );
    expect(unknown.errors?.[0]?.message).toContain('Field "favourite_colour" is not defined by type "LeadInput".');
    expect(await counts()).toEqual(before);
  });

  it('accepts every documented value of 2.7.1, 2.7.2 and 2.7.3 and a Document Request with each document type', async () => {
    const { LEAD_CATEGORIES, DOCUMENTED_LEAD_SOURCES, DOCUMENTED_MARKETING_SOURCES, DOCUMENT_TYPES } = await import(
      '../src/domain/leads/values.ts'
    );
    expect(LEAD_CATEGORIES).toHaveLength(25);
    expect(DOCUMENTED_LEAD_SOURCES).toHaveLength(14);
    expect(DOCUMENTED_MARKETING_SOURCES).toHaveLength(7);
    for (const category of LEAD_CATEGORIES.filter((c) => c !== 'Document Request' && c !== 'Team Member Enquiry')) {
      expect((await post(samplePayload(north.id, { ...person(), category, send_customer_email: false }), writer.key)).status).toBe(201);
    }
    for (const source of DOCUMENTED_LEAD_SOURCES) {
      expect((await post(samplePayload(north.id, { ...person(), source, send_customer_email: false }), writer.key)).status).toBe(201);
    }
    for (const marketing_source of DOCUMENTED_MARKETING_SOURCES) {
      expect((await post(samplePayload(north.id, { ...person(), marketing_source, send_customer_email: false }), writer.key)).status).toBe(
        201,
      );
    }
    for (const document_type of DOCUMENT_TYPES) {
      const response = await post(
        samplePayload(north.id, { ...person(), category: 'Document Request', fields: { document_type } }),
        writer.key,
      );
      expect(response.status).toBe(201);
      expect((await response.json()).lead.fields).toEqual({ document_type });
    }
    const member = await post(
      samplePayload(north.id, { ...person(), category: 'Team Member Enquiry', team_member_id: staff.id }),
      writer.key,
    );
    expect(member.status).toBe(201);
    expect((await member.json()).lead.team_member_id).toBe(staff.id);
  });

  /** Another instance over the same database, started with these settings (the lists are read by loadConfig). */
  function postToInstanceWith(settings: Record<string, string>) {
    const config = { ...app.config, leadSources: loadConfig({ ...testSettings, ...settings }).leadSources };
    const yoga = createApp(instanceDeps({ config, db: app.db, now: app.clock.now }));
    return (payload: unknown, key: string) =>
      Promise.resolve(
        yoga.fetch(`http://gateway.test${PATH}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ lead: payload }),
        }),
      );
  }

  describe('third-party sources ship with a default list of Australian channels', () => {
    it('accepts every default channel, in any case, stored in the list spelling', async () => {
      expect(DEFAULT_THIRD_PARTY_SOURCES).toHaveLength(16);
      expect(DEFAULT_THIRD_PARTY_MARKETING_SOURCES).toHaveLength(10);
      for (const source of DEFAULT_THIRD_PARTY_SOURCES) {
        const response = await post(samplePayload(north.id, { ...person(), source, send_customer_email: false }), writer.key);
        expect(response.status, source).toBe(201);
      }
      for (const marketing_source of DEFAULT_THIRD_PARTY_MARKETING_SOURCES) {
        const response = await post(samplePayload(north.id, { ...person(), marketing_source, send_customer_email: false }), writer.key);
        expect(response.status, marketing_source).toBe(201);
      }
      const shouted = await post(samplePayload(north.id, { ...person(), source: 'CarSales', marketing_source: 'FACEBOOK' }), writer.key);
      expect(shouted.status).toBe(201);
      expect((await shouted.json()).lead).toMatchObject({ source: 'carsales', marketing_source: 'facebook' });
    });

    it('is replaced, not extended, by the settings (an empty setting leaves only the documented values)', async () => {
      const postWithoutExtras = postToInstanceWith({ LEAD_EXTRA_SOURCES: '' });
      const refused = await postWithoutExtras(samplePayload(north.id, { ...person(), source: 'carsales' }), writer.key);
      expect(refused.status).toBe(422);
      expect((await refused.json()).field).toBe('lead.source');
      expect((await postWithoutExtras(samplePayload(north.id, { ...person(), source: 'Website' }), writer.key)).status).toBe(201);
    });
  });

  describe('third-party sources come from the settings', () => {
    it('accepts a configured source and marketing source, and still refuses others', async () => {
      const postWithExtras = postToInstanceWith({ LEAD_EXTRA_SOURCES: 'CarHub, DriveNow ,', LEAD_EXTRA_MARKETING_SOURCES: 'SocialAds' });
      const ok = await postWithExtras(
        samplePayload(north.id, { ...person(), source: 'DriveNow', marketing_source: 'SocialAds' }),
        writer.key,
      );
      expect(ok.status).toBe(201);
      expect((await ok.json()).lead).toMatchObject({ source: 'DriveNow', marketing_source: 'SocialAds' });
      const refused = await postWithExtras(samplePayload(north.id, { ...person(), source: 'CarHubX' }), writer.key);
      expect(refused.status).toBe(422);
      expect((await refused.json()).field).toBe('lead.source');
      const replaced = await postWithExtras(samplePayload(north.id, { ...person(), source: 'carsales' }), writer.key);
      expect(replaced.status).toBe(422);
    });
  });
});

describe('email and phone', () => {
  it.each([
    ['0412 345 678', '+61412345678'],
    ['+61 412 345 678', '+61412345678'],
    ['0412-345-678', '+61412345678'],
    ['(03) 9123 4567', '+61391234567'],
    ['1300 655 506', '+611300655506'],
    [' 0412345678 ', '+61412345678'],
  ])('stores the Australian number %s as %s', async (phone, stored) => {
    const response = await post(samplePayload(north.id, { email: person().email, phone }), writer.key);
    expect(response.status).toBe(201);
    const { lead } = await response.json();
    expect(lead.phone).toBe(stored);
    expect((await app.db.lead.findUniqueOrThrow({ where: { id: lead.id } })).phone).toBe(stored);
  });

  it('with disable_strict_validation stores email and phone as sent (trimmed), unchecked', async () => {
    const response = await post(
      samplePayload(north.id, { email: ' not-an-address ', phone: ' ask for Bob ', disable_strict_validation: true }),
      writer.key,
    );
    expect(response.status).toBe(201);
    const { lead } = await response.json();
    expect(lead).toMatchObject({ email: 'not-an-address', phone: 'ask for Bob', disable_strict_validation: true });
    const contact = await app.db.contact.findUniqueOrThrow({ where: { id: lead.contact_id } });
    expect(contact).toMatchObject({ email: 'not-an-address', email_normalized: 'not-an-address', phone: 'ask for Bob' });
  });

  it('disable_strict_validation: false checks as usual', async () => {
    const response = await post(samplePayload(north.id, { email: 'nope', disable_strict_validation: false }), writer.key);
    expect(response.status).toBe(422);
    expect((await response.json()).field).toBe('lead.email');
  });
});

describe('matching', () => {
  it('links the dealership’s car by stocknum, and stores an unknown stocknum without a car', async () => {
    const known = await (await post(samplePayload(north.id, { ...person(), stocknum: 'N100' }), writer.key)).json();
    expect(known.lead).toMatchObject({ car_id: car.id, stocknum: 'N100' });
    const unknown = await (await post(samplePayload(north.id, { ...person(), stocknum: 'GONE-1' }), writer.key)).json();
    expect(unknown.lead).toMatchObject({ car_id: null, stocknum: 'GONE-1' });
    // Another dealership's stock number is not this dealership's car.
    const elsewhere = await (await post(samplePayload(north.id, { ...person(), stocknum: 'S100' }), writer.key)).json();
    expect(elsewhere.lead).toMatchObject({ car_id: null, stocknum: 'S100' });
  });

  it('car_id wins over stocknum', async () => {
    const other = await makeCar(app.db, north.id, { stocknum: 'N200' });
    const { lead } = await (await post(samplePayload(north.id, { ...person(), car_id: other.id, stocknum: 'N100' }), writer.key)).json();
    expect(lead).toMatchObject({ car_id: other.id, stocknum: 'N100' });
  });

  it('links user_email to a user of the dealership (any case), and stores other addresses unlinked', async () => {
    const linked = await (
      await post(samplePayload(north.id, { ...person(), user_email: 'sam.sales@NORTHSIDE.example.com' }), writer.key)
    ).json();
    expect(linked.lead).toMatchObject({ user_id: staff.id, user_email: 'sam.sales@NORTHSIDE.example.com' });
    const otherDealer = await (await post(samplePayload(north.id, { ...person(), user_email: southStaff.email }), writer.key)).json();
    expect(otherDealer.lead).toMatchObject({ user_id: null, user_email: southStaff.email });
    const unknown = await (
      await post(samplePayload(north.id, { ...person(), user_email: 'left.years.ago@example.com' }), writer.key)
    ).json();
    expect(unknown.lead).toMatchObject({ user_id: null, user_email: 'left.years.ago@example.com' });
  });

  it('takes the model from the variant or the colour, and accepts a consistent trio', async () => {
    const fromColour = await (await post(samplePayload(north.id, { ...person(), colour_id: colour.id }), writer.key)).json();
    expect(fromColour.lead).toMatchObject({ model_id: model.id, colour_id: colour.id, model_variant_id: null });
    const trio = await (
      await post(
        samplePayload(north.id, { ...person(), model_id: model.id, model_variant_id: variant.id, colour_id: colour.id }),
        writer.key,
      )
    ).json();
    expect(trio.lead).toMatchObject({ model_id: model.id, model_variant_id: variant.id, colour_id: colour.id });
  });

  it('sets website_id from a website’s custom slug', async () => {
    const { lead } = await (await post(samplePayload(north.id, { ...person(), website_slug: 'northside' }), writer.key)).json();
    expect(lead).toMatchObject({ website_id: northSite.id, website_slug: 'northside' });
  });
});

describe('the contact', () => {
  it('joins the contact with the same e-mail (any case), fills its blanks and keeps what it knows', async () => {
    const known = await makeContact(app.db, north.id, {
      first_name: 'Kim',
      email: 'Kim.Known@Example.com',
      email_normalized: 'kim.known@example.com',
    });
    const before = await app.db.contact.count();
    const { lead } = await (
      await post(
        samplePayload(north.id, { name: 'Kimberly', email: 'KIM.KNOWN@example.com', phone: '0412 000 111', golden: true }),
        writer.key,
      )
    ).json();
    expect(lead.contact_id).toBe(known.id);
    expect(await app.db.contact.count()).toBe(before);
    const contact = await app.db.contact.findUniqueOrThrow({ where: { id: known.id } });
    expect(contact).toMatchObject({
      first_name: 'Kim',
      last_name: 'Citizen',
      email: 'Kim.Known@Example.com',
      phone: '+61412000111',
      high_priority: true,
    });
  });

  it('else joins the oldest contact with the same phone and records the e-mail on it', async () => {
    const first = await makeContact(app.db, north.id, { phone: '+61412000222' });
    await makeContact(app.db, north.id, { phone: '+61412000222' });
    const { lead } = await (
      await post(samplePayload(north.id, { email: 'phone.match@example.com', phone: '0412 000 222', sms_verified: true }), writer.key)
    ).json();
    expect(lead.contact_id).toBe(first.id);
    const contact = await app.db.contact.findUniqueOrThrow({ where: { id: first.id } });
    expect(contact).toMatchObject({ email: 'phone.match@example.com', email_normalized: 'phone.match@example.com', sms_verified: true });
  });

  it('prefers the contact with the same e-mail to older ones with the same phone, however many there are', async () => {
    // 25 older contacts share the phone: more than one look-up reads (src/domain/leads/contacts.ts).
    for (const count of [1, 25]) {
      const phone = `+6141200${String(3000 + count).padStart(4, '0')}`;
      for (let index = 0; index < count; index += 1) await makeContact(app.db, north.id, { phone });
      const email = `email.first.${count}@example.com`;
      const byEmail = await makeContact(app.db, north.id, { email, email_normalized: email, phone: '+61412999999' });
      const response = await post(samplePayload(north.id, { email, phone: `0${phone.slice(3)}` }), writer.key);
      expect(response.status).toBe(201);
      expect((await response.json()).lead.contact_id, `${count} older contact(s) with the phone`).toBe(byEmail.id);
    }
  });

  it('is the dealership’s own: the same person at another dealership gets that dealership’s contact', async () => {
    const { email, phone } = person();
    const atNorth = (await (await post(samplePayload(north.id, { email, phone }), writer.key)).json()).lead;
    const atSouth = (await (await post(samplePayload(south.id, { email, phone }), writer.key)).json()).lead;
    expect(atSouth.contact_id).not.toBe(atNorth.contact_id);
    expect((await app.db.contact.findUniqueOrThrow({ where: { id: atSouth.contact_id } })).dealership_id).toBe(south.id);
    // And a second lead of the person at north joins north's contact.
    const again = (await (await post(samplePayload(north.id, { email, phone }), writer.key)).json()).lead;
    expect(again.contact_id).toBe(atNorth.contact_id);
  });

  it('concurrent first leads of one new person make one contact', async () => {
    const { email, phone } = person();
    const before = await counts();
    const responses = await Promise.all(Array.from({ length: 4 }, () => post(samplePayload(north.id, { email, phone }), writer.key)));
    expect(responses.map((response) => response.status)).toEqual([201, 201, 201, 201]);
    const leads = await Promise.all(responses.map(async (response) => (await response.json()).lead));
    expect(new Set(leads.map((lead) => lead.contact_id)).size).toBe(1);
    expect(new Set(leads.map((lead) => lead.id)).size).toBe(4);
    expect(await counts()).toMatchObject({ leads: before.leads + 4, contacts: before.contacts + 1 });
  });

  it('a new contact without a name has an empty first name', async () => {
    const payload = samplePayload(north.id, person());
    delete payload.name;
    delete payload.last_name;
    const { lead } = await (await post(payload, writer.key)).json();
    expect(await app.db.contact.findUniqueOrThrow({ where: { id: lead.contact_id } })).toMatchObject({ first_name: '', last_name: null });
  });
});

describe('dealership scoping and permissions', () => {
  it('a dealership the key cannot use answers exactly like one that does not exist, and stores nothing', async () => {
    const before = await counts();
    const foreign = await app.request(PATH, { method: 'POST', key: southOnly.key, json: { lead: samplePayload(north.id, person()) } });
    const missing = await app.request(PATH, { method: 'POST', key: southOnly.key, json: { lead: samplePayload(999_999, person()) } });
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    const body = await foreign.json();
    expect(body).toEqual({ error: 'dealership_not_found', message: 'No dealership with that identifier.' });
    expect(await missing.json()).toEqual(body);
    const graph = await app.graphql(CREATE_LEAD, { lead: graphLead(samplePayload(north.id, person())) }, southOnly.key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'dealership_not_found' });
    expect(await counts()).toEqual(before);
    // Its own dealership works.
    expect((await post(samplePayload(south.id, person()), southOnly.key)).status).toBe(201);
  });

  // The spec's error table: insufficient permission on lead creation is "unauthorised".
  it('a key without create:lead is 401 unauthorized on both doors', async () => {
    const response = await post(samplePayload(north.id, person()), reader.key);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: 'unauthorized',
      message: 'This API key does not have the permission this operation needs.',
    });
    const graph = await app.graphql(CREATE_LEAD, { lead: graphLead(samplePayload(north.id, person())) }, reader.key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', error: 'unauthorized' });
  });

  it.each([
    ['no key', undefined],
    ['a malformed key', 'not-a-key'],
    ['a key with a bad checksum', 'dlr_AAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBCCCCCC'],
  ])('%s is 401 unauthorized on both doors', async (_label, key) => {
    const before = await counts();
    const response = await post(samplePayload(north.id, person()), key);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: 'unauthorized',
      message: 'A valid API key is required: send "Authorization: Bearer <key>".',
    });
    const graph = await app.graphql(CREATE_LEAD, { lead: graphLead(samplePayload(north.id, person())) }, key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(await counts()).toEqual(before);
  });
});

describe('attachments', () => {
  it('stores each file’s bytes under a fresh key and its size, hash and sniffed type in LeadFile', async () => {
    const response = await post(
      samplePayload(north.id, {
        ...person(),
        lead_files_attributes: [
          { file_type: 'resume', file: PDF_BYTES.toString('base64') },
          // A data: URL's declared type is ignored; the bytes say PNG.
          { file_type: 'other', file: `data:application/pdf;base64,${PNG_BYTES.toString('base64')}` },
        ],
      }),
      writer.key,
    );
    expect(response.status).toBe(201);
    const { lead } = await response.json();
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    const now = app.clock.now().toISOString();
    expect(lead.files).toEqual([
      {
        id: expect.any(Number),
        file_type: 'resume',
        byte_size: PDF_BYTES.length,
        content_type: 'application/pdf',
        sha256: sha(PDF_BYTES),
        created_at: now,
      },
      {
        id: expect.any(Number),
        file_type: 'other',
        byte_size: PNG_BYTES.length,
        content_type: 'image/png',
        sha256: sha(PNG_BYTES),
        created_at: now,
      },
    ]);
    const rows = await app.db.leadFile.findMany({ where: { lead_id: lead.id }, orderBy: { id: 'asc' } });
    expect(rows).toHaveLength(2);
    for (const [row, bytes] of [
      [rows[0], PDF_BYTES],
      [rows[1], PNG_BYTES],
    ] as const) {
      expect(row?.storage_key).toMatch(/^leads\/2026\/11\/[0-9a-f-]{36}$/);
      expect(readFileSync(path.join(storage.dir, ...(row?.storage_key ?? '').split('/')))).toEqual(bytes);
    }
    expect(storage.files().sort()).toEqual(rows.map((row) => row.storage_key).sort());
    // Clean up so later tests can check that failures leave the directory empty.
    const { LocalDirectoryStorage } = await import('../src/storage/file-storage.ts');
    for (const row of rows) await new LocalDirectoryStorage(storage.dir).delete(row.storage_key);
  });

  const text = (bytes: number) => Buffer.alloc(bytes, 'a').toString('base64');
  const fileCases: [string, () => unknown[], string][] = [
    [
      'a file over the size limit',
      () => [
        { file_type: 'resume', file: text(10) },
        { file_type: 'resume', file: text(MAX_FILE_BYTES + 1) },
      ],
      'lead.lead_files_attributes[1].file',
    ],
    ['a file that is not base64', () => [{ file_type: 'resume', file: 'this is not base64!' }], 'lead.lead_files_attributes[0].file'],
    ['an empty file', () => [{ file_type: 'resume', file: '' }], 'lead.lead_files_attributes[0].file'],
    ['a file left out', () => [{ file_type: 'resume' }], 'lead.lead_files_attributes[0].file'],
    ['an executable', () => [{ file_type: 'other', file: EXE_BYTES.toString('base64') }], 'lead.lead_files_attributes[0].file'],
    ['an unknown file_type', () => [{ file_type: 'photo', file: PDF_BYTES.toString('base64') }], 'lead.lead_files_attributes[0].file_type'],
    ['a file without file_type', () => [{ file: PDF_BYTES.toString('base64') }], 'lead.lead_files_attributes[0].file_type'],
    [
      'six files',
      () => Array.from({ length: 6 }, () => ({ file_type: 'other', file: PDF_BYTES.toString('base64') })),
      'lead.lead_files_attributes',
    ],
  ];

  it.each(fileCases)('%s is 422 naming it, and leaves no file and no row', async (_label, files, field) => {
    const before = await counts();
    const response = await post(samplePayload(north.id, { ...person(), lead_files_attributes: files() }), writer.key);
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ error: 'invalid_input', field });
    expect(await counts()).toEqual(before);
    expect(storage.files()).toEqual([]);
  });

  it('accepts a file of exactly the size limit', async () => {
    const response = await post(
      samplePayload(north.id, { ...person(), lead_files_attributes: [{ file_type: 'cover_letter', file: text(MAX_FILE_BYTES) }] }),
      writer.key,
    );
    expect(response.status).toBe(201);
    const { lead } = await response.json();
    expect(lead.files[0]).toMatchObject({ byte_size: MAX_FILE_BYTES, content_type: 'text/plain', file_type: 'cover_letter' });
    const { LocalDirectoryStorage } = await import('../src/storage/file-storage.ts');
    const row = await app.db.leadFile.findFirstOrThrow({ where: { lead_id: lead.id } });
    await new LocalDirectoryStorage(storage.dir).delete(row.storage_key);
  });
});

describe('one transaction: a failure leaves nothing behind', () => {
  it('a reference error found after the files were written removes them again', async () => {
    const before = await counts();
    const response = await post(
      samplePayload(north.id, {
        ...person(),
        car_id: 999_999,
        payment_attributes: { amount: 10 },
        address_attributes: { postcode: 3000 },
        lead_files_attributes: [{ file_type: 'resume', file: PDF_BYTES.toString('base64') }],
      }),
      writer.key,
    );
    expect(response.status).toBe(422);
    expect((await response.json()).field).toBe('lead.car_id');
    expect(await counts()).toEqual(before);
    expect(storage.files()).toEqual([]);
  });

  it('a database failure after the contact and lead were written rolls all of it back, files included', async () => {
    // The outbox insert comes after the contact, lead, payment, address and file rows: make it fail.
    if (testEngine === 'postgresql') {
      await app.db.$executeRawUnsafe(
        `CREATE FUNCTION fail_outbox() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'outbox unavailable'; END $$ LANGUAGE plpgsql`,
      );
      await app.db.$executeRawUnsafe(
        'CREATE TRIGGER fail_outbox BEFORE INSERT ON outbox_messages FOR EACH ROW EXECUTE FUNCTION fail_outbox()',
      );
    } else {
      await app.db.$executeRawUnsafe(
        `CREATE TRIGGER fail_outbox BEFORE INSERT ON outbox_messages BEGIN SELECT RAISE(ABORT, 'outbox unavailable'); END`,
      );
    }
    try {
      const before = await counts();
      // Through GraphQL: a 500 is never part of the REST contract, which app.request checks.
      const response = await app.request('/graphql', {
        method: 'POST',
        key: writer.key,
        headers: { 'idempotency-key': 'rollback-1' },
        json: {
          query: CREATE_LEAD,
          variables: {
            lead: graphLead(
              samplePayload(north.id, {
                email: 'rollback.person@example.com',
                phone: '0412 999 000',
                payment_attributes: { amount: 10 },
                address_attributes: { postcode: 3000 },
                lead_files_attributes: [{ file_type: 'resume', file: PDF_BYTES.toString('base64') }],
              }),
            ),
          },
        },
      });
      const result = await response.json();
      expect(result.data).toBeNull();
      expect(result.errors).toEqual([expect.objectContaining({ message: 'Unexpected error.' })]);
      expect(await counts()).toEqual(before);
      expect(await app.db.contact.findFirst({ where: { email_normalized: 'rollback.person@example.com' } })).toBeNull();
      expect(storage.files()).toEqual([]);
    } finally {
      await app.db.$executeRawUnsafe(
        testEngine === 'postgresql' ? 'DROP TRIGGER fail_outbox ON outbox_messages' : 'DROP TRIGGER fail_outbox',
      );
      if (testEngine === 'postgresql') await app.db.$executeRawUnsafe('DROP FUNCTION fail_outbox()');
    }
    // The same request succeeds once the database does, the idempotency key being free again.
    const retried = await post(samplePayload(north.id, { email: 'rollback.person@example.com', phone: '0412 999 000' }), writer.key, {
      'idempotency-key': 'rollback-1',
    });
    expect(retried.status).toBe(201);
  });
});
