// Spec 4.8 (PUT /api/v1/leads/{id}, Mutation.update_lead) on both doors: a partial update with the
// create rules, the 3-day rule at its boundary, scoping (another dealership's lead is not found),
// permissions, and what changes in the stored rows (and what does not).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey, makeUser } from './support/fixtures.ts';
import {
  CREATE_LEAD,
  PDF_BYTES,
  UPDATE_LEAD,
  graphLead,
  graphRecord,
  makeLeadCatalogue,
  makeStoredLead,
  samplePayload,
  tempStorageDir,
} from './support/fixtures-leads.ts';

const HOUR = 60 * 60 * 1000;

let app: TestApp;
let storage: ReturnType<typeof tempStorageDir>;
let north: { id: number };
let south: { id: number };
let car: { id: number; stocknum: string };
let southCar: { id: number };
let staff: { id: number };
let model: { id: number };
let variant: { id: number };
let colour: { id: number };
let otherVariant: { id: number };
/** create:lead, update:lead, read:personal_data, every dealership. */
let editor: { key: string };
/** update:lead only, north only. */
let blind: { key: string };
/** update:lead + read:personal_data, south only. */
let southEditor: { key: string };
/** create:lead, read:lead: no update:lead. */
let creator: { key: string };

let people = 0;

/** A lead made through the API now, by the editor key. */
async function createLead(overrides: Record<string, unknown> = {}): Promise<Record<string, unknown> & { id: number; contact_id: number }> {
  people += 1;
  const response = await app.request('/api/v1/leads', {
    method: 'POST',
    key: editor.key,
    json: {
      lead: samplePayload(north.id, {
        email: `updatee.${people}@example.com`,
        phone: `0413 000 ${String(people).padStart(3, '0')}`,
        ...overrides,
      }),
    },
  });
  expect(response.status).toBe(201);
  return (await response.json()).lead;
}

function put(id: number | string, lead: unknown, key?: string) {
  return app.request(`/api/v1/leads/${id}`, { method: 'PUT', key, json: { lead } });
}

async function expectInvalid(id: number, lead: Record<string, unknown>, field: string, message?: string) {
  const before = await app.db.lead.findUniqueOrThrow({ where: { id } });
  const response = await put(id, lead, editor.key);
  expect(response.status).toBe(422);
  const body = await response.json();
  expect(body).toMatchObject({ error: 'invalid_input', field });
  if (message) expect(body.message).toBe(message);
  const graph = await app.graphql(UPDATE_LEAD, { id, lead: graphLead(lead) }, editor.key);
  expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
  expect(await app.db.lead.findUniqueOrThrow({ where: { id } })).toEqual(before);
}

beforeAll(async () => {
  storage = tempStorageDir();
  app = await createTestApp({ fileStorage: 'local', fileStorageDir: storage.dir });
  north = await makeDealership(app.db);
  south = await makeDealership(app.db);
  car = await makeCar(app.db, north.id, { stocknum: 'U100' });
  southCar = await makeCar(app.db, south.id, { stocknum: 'U200' });
  staff = await makeUser(app.db, [north.id]);
  ({ model, variant, colour, otherVariant } = await makeLeadCatalogue(app.db));
  editor = await makeKey(app.db, { permissions: ['create:lead', 'update:lead', 'read:personal_data'] });
  blind = await makeKey(app.db, { permissions: ['update:lead'], dealershipIds: [north.id] });
  southEditor = await makeKey(app.db, { permissions: ['update:lead', 'read:personal_data'], dealershipIds: [south.id] });
  creator = await makeKey(app.db, { permissions: ['create:lead', 'read:lead'] });
});

afterAll(() => storage.remove());

describe('PUT /api/v1/leads/{id}: a partial update', () => {
  it('changes only the fields sent and answers 200 with {"lead": ...}', async () => {
    const created = await createLead({ tags: ['new'], stocknum: 'U100', marketing_source: 'Email' });
    app.clock.advance(HOUR);
    const outboxBefore = await app.db.outboxMessage.count();
    const response = await put(created.id, { lead_state: 'contacted' }, editor.key);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ lead: { ...created, lead_state: 'contacted', updated_at: app.clock.now().toISOString() } });
    const stored = await app.db.lead.findUniqueOrThrow({ where: { id: created.id } });
    expect(stored).toMatchObject({ lead_state: 'contacted', email: created.email, car_id: car.id, marketing_source: 'Email' });
    expect(stored.updated_at.toISOString()).toBe(app.clock.now().toISOString());
    // An update sends no notification.
    expect(await app.db.outboxMessage.count()).toBe(outboxBefore);
  });

  it('answers GraphQL with the same record as REST', async () => {
    const created = await createLead();
    const rest = await (await put(created.id, { lead_state: 'qualified', message: 'Call after 5' }, editor.key)).json();
    const graph = await app.graphql<{ update_lead: unknown }>(
      UPDATE_LEAD,
      { id: created.id, lead: { lead_state: 'qualified', message: 'Call after 5' } },
      editor.key,
    );
    expect(graph.errors).toBeUndefined();
    expect(graph.data?.update_lead).toEqual({ lead: graphRecord(rest.lead) });
  });

  it('applies the create rules to what it changes: phone in E.164, tags, fields, charge_breakdown', async () => {
    const created = await createLead({ charge_breakdown: { total: { amount: 10 } }, fields: { a: 1 } });
    const response = await put(
      created.id,
      {
        phone: '(02) 9876 5432',
        email: 'changed@example.com',
        category: 'Finance Enquiry',
        source: 'Chatbot',
        tags: ['hot', 'hot', ' finance'],
        fields: { b: 2 },
        charge_breakdown: { charges: [{ name: 'Fee', amount: 5, waived: false }] },
        dob: '1990-02-28',
      },
      editor.key,
    );
    expect(response.status).toBe(200);
    const { lead } = await response.json();
    expect(lead).toMatchObject({
      phone: '+61298765432',
      email: 'changed@example.com',
      category: 'Finance Enquiry',
      source: 'Chatbot',
      tags: ['hot', 'finance'],
      fields: { b: 2 },
      charge_breakdown: { charges: [{ name: 'Fee', amount: 5, waived: false }] },
      dob: '1990-02-28',
    });
    // The lead keeps its contact, which the update does not edit.
    expect(lead.contact_id).toBe(created.contact_id);
    const contact = await app.db.contact.findUniqueOrThrow({ where: { id: created.contact_id } });
    expect(contact.email).toBe(created.email);
  });

  it('null clears an optional field (charge_breakdown, message, marketing_source, dob)', async () => {
    const created = await createLead({ charge_breakdown: { total: { amount: 10 } }, marketing_source: 'SMS', dob: '01/01/1980' });
    const response = await put(created.id, { charge_breakdown: null, message: null, marketing_source: null, dob: null }, editor.key);
    expect(response.status).toBe(200);
    expect((await response.json()).lead).toMatchObject({ charge_breakdown: null, message: null, marketing_source: null, dob: null });
    const stored = await app.db.lead.findUniqueOrThrow({ where: { id: created.id } });
    expect(stored).toMatchObject({ charge_breakdown: null, message: null, marketing_source: null, dob: null });
  });

  it('disable_strict_validation lets an unchecked phone through and is remembered', async () => {
    const created = await createLead();
    const response = await put(created.id, { phone: 'reception desk', disable_strict_validation: true }, editor.key);
    expect(response.status).toBe(200);
    expect((await response.json()).lead).toMatchObject({ phone: 'reception desk', disable_strict_validation: true });
  });

  it('re-links the car by a new stocknum, and an unknown one unlinks it', async () => {
    const created = await createLead({ stocknum: 'U100' });
    expect(created.car_id).toBe(car.id);
    const other = await makeCar(app.db, north.id, { stocknum: 'U101' });
    expect((await (await put(created.id, { stocknum: 'U101' }, editor.key)).json()).lead).toMatchObject({
      car_id: other.id,
      stocknum: 'U101',
    });
    expect((await (await put(created.id, { stocknum: 'SOLD' }, editor.key)).json()).lead).toMatchObject({ car_id: null, stocknum: 'SOLD' });
  });

  it('adds, changes and removes the payment and the address', async () => {
    const created = await createLead();
    await expectInvalid(created.id, { payment_attributes: { external_transaction_id: 'x' } }, 'lead.payment_attributes.amount');
    let lead = (
      await (
        await put(created.id, { payment_attributes: { amount: 99.5 }, address_attributes: { city: 'Perth', postcode: 6000 } }, editor.key)
      ).json()
    ).lead;
    expect(lead.payment).toEqual({
      id: expect.any(Number),
      amount: 99.5,
      car_id: null,
      payment_processor_id: null,
      external_transaction_id: null,
    });
    expect(lead.address).toEqual({ street: null, city: 'Perth', state: null, state_long: null, country: null, postcode: 6000 });
    lead = (
      await (
        await put(created.id, { payment_attributes: { external_transaction_id: 'txn_9' }, address_attributes: { state: 'WA' } }, editor.key)
      ).json()
    ).lead;
    expect(lead.payment).toMatchObject({ amount: 99.5, external_transaction_id: 'txn_9' });
    expect(lead.address).toMatchObject({ city: 'Perth', state: 'WA', postcode: 6000 });
    lead = (await (await put(created.id, { payment_attributes: null, address_attributes: null }, editor.key)).json()).lead;
    expect(lead).toMatchObject({ payment: null, address: null });
    expect(await app.db.leadPayment.count({ where: { lead_id: created.id } })).toBe(0);
    expect(await app.db.leadAddress.count({ where: { lead_id: created.id } })).toBe(0);
  });

  it('adds files to the lead’s files, at most 5 in all', async () => {
    const file = { file_type: 'resume', file: PDF_BYTES.toString('base64') };
    const created = await createLead({ lead_files_attributes: [file, file, file] });
    expect((created.files as unknown[]).length).toBe(3);
    const before = storage.files().length;
    await expectInvalid(created.id, { lead_files_attributes: [file, file, file] }, 'lead.lead_files_attributes');
    expect(storage.files().length).toBe(before);
    const { lead } = await (await put(created.id, { lead_files_attributes: [file, file] }, editor.key)).json();
    expect(lead.files).toHaveLength(5);
    expect(storage.files().length).toBe(before + 2);
  });

  it('raises the contact’s flags for golden and sms_verified', async () => {
    const created = await createLead();
    await put(created.id, { golden: true, sms_verified: true }, editor.key);
    expect(await app.db.contact.findUniqueOrThrow({ where: { id: created.contact_id } })).toMatchObject({
      high_priority: true,
      sms_verified: true,
    });
  });

  it('answers a key without read:personal_data the lead’s name, e-mail and phone (always in the record), and null for the rest', async () => {
    const created = await createLead();
    const stored = await app.db.lead.findUniqueOrThrow({ where: { id: created.id } });
    const { lead } = await (await put(created.id, { lead_state: 'seen' }, blind.key)).json();
    expect(lead).toMatchObject({
      lead_state: 'seen',
      name: stored.name ?? '',
      email: stored.email ?? '',
      phone: stored.phone ?? '',
      last_name: null,
    });
  });
});

describe('field rules on update', () => {
  it('refuses what create refuses, naming the field, and changes nothing', async () => {
    const created = await createLead();
    await expectInvalid(created.id, { email: 'not-an-address' }, 'lead.email');
    await expectInvalid(created.id, { phone: '123' }, 'lead.phone');
    await expectInvalid(created.id, { category: 'Complaint' }, 'lead.category');
    await expectInvalid(created.id, { source: 'Fax' }, 'lead.source');
    await expectInvalid(created.id, { marketing_source: 'Radio' }, 'lead.marketing_source');
    await expectInvalid(created.id, { charge_breakdown: { charges: [{ name: 'Fee' }] } }, 'lead.charge_breakdown.charges[0].amount');
    await expectInvalid(created.id, { charge_breakdown: {} }, 'lead.charge_breakdown');
    await expectInvalid(created.id, { car_id: southCar.id }, 'lead.car_id');
    await expectInvalid(created.id, { dob: '30/02/1990' }, 'lead.dob');
    await expectInvalid(created.id, { lead_state: '' }, 'lead.lead_state');
    await expectInvalid(created.id, { delay_customer_email_minutes: -1 }, 'lead.delay_customer_email_minutes');
  });

  it('refuses clearing a required field or a flag', async () => {
    const created = await createLead();
    await expectInvalid(created.id, { email: null }, 'lead.email', 'lead.email: is required and cannot be removed');
    await expectInvalid(created.id, { source: null }, 'lead.source', 'lead.source: is required and cannot be removed');
    await expectInvalid(created.id, { golden: null }, 'lead.golden');
    await expectInvalid(created.id, { lead_state: null }, 'lead.lead_state');
  });

  it('keeps the lead with its dealership', async () => {
    const created = await createLead();
    await expectInvalid(created.id, { dealership_id: south.id }, 'lead.dealership_id');
    expect((await put(created.id, { dealership_id: north.id, lead_state: 'same-dealer' }, editor.key)).status).toBe(200);
  });

  it('checks team_member_id against the category as it will be', async () => {
    const created = await createLead({ category: 'Team Member Enquiry', team_member_id: staff.id });
    await expectInvalid(created.id, { category: 'General Enquiry' }, 'lead.team_member_id');
    const response = await put(created.id, { category: 'General Enquiry', team_member_id: null }, editor.key);
    expect(response.status).toBe(200);
    expect((await response.json()).lead).toMatchObject({ category: 'General Enquiry', team_member_id: null });
    await expectInvalid(created.id, { team_member_id: staff.id }, 'lead.team_member_id');
  });

  it('checks a Document Request’s document_type against the fields as they will be', async () => {
    const request = await createLead({ category: 'Document Request', fields: { document_type: 'ppsr' } });
    await expectInvalid(request.id, { fields: { vin: 'ABC' } }, 'lead.fields.document_type');
    expect((await put(request.id, { fields: { document_type: 'equifax' } }, editor.key)).status).toBe(200);
    const general = await createLead();
    await expectInvalid(general.id, { category: 'Document Request' }, 'lead.fields.document_type');
  });

  it('keeps model, variant and colour consistent with what is stored', async () => {
    const created = await createLead({ model_variant_id: variant.id, colour_id: colour.id });
    expect(created).toMatchObject({ model_id: model.id });
    // A variant of another model would leave the stored colour on the wrong model.
    await expectInvalid(created.id, { model_variant_id: otherVariant.id }, 'lead.model_variant_id');
    const response = await put(created.id, { model_variant_id: otherVariant.id, colour_id: null }, editor.key);
    expect(response.status).toBe(200);
    const { lead } = await response.json();
    expect(lead.model_variant_id).toBe(otherVariant.id);
    expect(lead.model_id).not.toBe(model.id);
  });
});

describe('the 3-day rule', () => {
  it('updates a lead exactly 72 hours old and refuses it one millisecond later with 409 lead_too_old', async () => {
    const created = await createLead();
    const createdAt = new Date(created.created_at as string).getTime();
    app.clock.set(new Date(createdAt + 72 * HOUR));
    expect((await put(created.id, { lead_state: 'day-three' }, editor.key)).status).toBe(200);

    app.clock.set(new Date(createdAt + 72 * HOUR + 1));
    const before = await app.db.lead.findUniqueOrThrow({ where: { id: created.id } });
    const response = await put(created.id, { lead_state: 'too-late' }, editor.key);
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual({
      error: 'lead_too_old',
      message: 'This lead is more than 3 days old and can no longer be updated through the API.',
    });
    const graph = await app.graphql(UPDATE_LEAD, { id: created.id, lead: { lead_state: 'too-late' } }, editor.key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', error: 'lead_too_old' });
    expect(await app.db.lead.findUniqueOrThrow({ where: { id: created.id } })).toEqual(before);
  });

  it('refuses an old lead before looking at the body', async () => {
    const old = await makeStoredLead(app.db, north.id, { created_at: new Date(app.clock.now().getTime() - 100 * HOUR) });
    const response = await put(old.id, { email: 'not-an-address' }, editor.key);
    expect(response.status).toBe(409);
    expect((await response.json()).error).toBe('lead_too_old');
  });

  it('measures age from the lead’s created_at, not from its last update', async () => {
    const now = app.clock.now().getTime();
    const young = await makeStoredLead(app.db, north.id, { created_at: new Date(now - 71 * HOUR), updated_at: new Date(now - 71 * HOUR) });
    expect((await put(young.id, { lead_state: 'a' }, editor.key)).status).toBe(200);
    const old = await makeStoredLead(app.db, north.id, { created_at: new Date(now - 73 * HOUR), updated_at: new Date(now) });
    expect((await put(old.id, { lead_state: 'a' }, editor.key)).status).toBe(409);
  });
});

describe('not found, scoping and permissions', () => {
  it('an unknown lead is 404 lead_not_found; another dealership’s lead answers exactly the same', async () => {
    const created = await createLead();
    const foreign = await put(created.id, { lead_state: 'x' }, southEditor.key);
    const missing = await put(999_999, { lead_state: 'x' }, southEditor.key);
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    const body = await foreign.json();
    expect(body).toEqual({ error: 'lead_not_found', message: 'No lead with that identifier.' });
    expect(await missing.json()).toEqual(body);
    const graph = await app.graphql(UPDATE_LEAD, { id: created.id, lead: { lead_state: 'x' } }, southEditor.key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'lead_not_found' });
    expect((await app.db.lead.findUniqueOrThrow({ where: { id: created.id } })).lead_state).toBe('new');
    // The south key does update a south lead.
    const southLead = await makeStoredLead(app.db, south.id, { created_at: app.clock.now() });
    expect((await put(southLead.id, { lead_state: 'x' }, southEditor.key)).status).toBe(200);
  });

  // The spec's error table: insufficient permission on lead update is "unauthorised".
  it('a key without update:lead is 401 unauthorized on both doors', async () => {
    const created = await createLead();
    const response = await put(created.id, { lead_state: 'x' }, creator.key);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: 'unauthorized',
      message: 'This API key does not have the permission this operation needs.',
    });
    const graph = await app.graphql(UPDATE_LEAD, { id: created.id, lead: { lead_state: 'x' } }, creator.key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', error: 'unauthorized' });
  });

  it.each([
    ['no key', undefined],
    ['a malformed key', 'dlr_nope'],
  ])('%s is 401 unauthorized on both doors', async (_label, key) => {
    const created = await createLead();
    const response = await put(created.id, { lead_state: 'x' }, key);
    expect(response.status).toBe(401);
    expect((await response.json()).error).toBe('unauthorized');
    const graph = await app.graphql(UPDATE_LEAD, { id: created.id, lead: { lead_state: 'x' } }, key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('a path id that is not a whole number is 422 naming id', async () => {
    const response = await put('abc', { lead_state: 'x' }, editor.key);
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: 'invalid_input', message: 'id: must be a whole number, got "abc"', field: 'id' });
  });

  it('a body without the "lead" wrapper is 422 naming lead', async () => {
    const created = await createLead();
    const response = await app.request(`/api/v1/leads/${created.id}`, { method: 'PUT', key: editor.key, json: { lead_state: 'x' } });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ error: 'invalid_input', field: 'lead' });
  });

  it('creating through GraphQL and updating through REST meet the same lead', async () => {
    const graph = await app.graphql<{ create_lead: { lead: { id: number } } }>(
      CREATE_LEAD,
      { lead: graphLead(samplePayload(north.id, { email: 'both.doors@example.com', phone: '0413 999 999' })) },
      editor.key,
    );
    const id = graph.data?.create_lead.lead.id as number;
    const response = await put(id, { lead_state: 'via-rest' }, editor.key);
    expect((await response.json()).lead).toMatchObject({ id, lead_state: 'via-rest', email: 'both.doors@example.com' });
  });
});
