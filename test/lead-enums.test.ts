// The lead's value lists as enums in the graph (LeadCategory, LeadFileType, LeadDocumentType) and as
// the spec's text on the REST door: a round trip on each door, the graph's filter refusing an
// unlisted value, and the OpenAPI document still listing the values.
import { beforeAll, describe, expect, it } from 'vitest';
import { LEAD_CATEGORIES } from '../src/domain/leads/values.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { CREATE_LEAD, PDF_BYTES, UPDATE_LEAD, samplePayload } from './support/fixtures-leads.ts';

let app: TestApp;
let dealership: { id: number };
let other: { id: number };
let key: string;
let count = 0;

/** A customer no earlier call used. */
function person(): { email: string; phone: string } {
  count += 1;
  return { email: `enum.${count}@example.com`, phone: `0412 000 ${String(count).padStart(3, '0')}` };
}

const READ = `query ($id: Int!) { lead(id: $id) { category document_type files { file_type } } }`;
const LIST = `query ($category: LeadCategory, $dealership_id: Int) {
  leads(category: $category, dealership_id: $dealership_id, first: 50) { edges { node { id: databaseId category } } } }`;

beforeAll(async () => {
  app = await createTestApp();
  dealership = await makeDealership(app.db);
  other = await makeDealership(app.db);
  ({ key } = await makeKey(app.db, {
    permissions: ['create:lead', 'update:lead', 'read:lead', 'read:personal_data'],
    dealershipIds: [dealership.id],
  }));
});

describe('the graph door: enum names in, enum names out, the spec text stored', () => {
  it('creates, reads and lists a lead by LeadCategory, LeadFileType and LeadDocumentType', async () => {
    const lead = {
      ...samplePayload(dealership.id, person()),
      category: 'DOCUMENT_REQUEST',
      fields: { document_type: 'ppsr' },
      lead_files_attributes: [{ file_type: 'COVER_LETTER', file: PDF_BYTES.toString('base64') }],
    };
    const created = await app.graphql<{ create_lead: { lead: { id: number; category: string; files: { file_type: string }[] } } }>(
      CREATE_LEAD,
      { lead },
      key,
    );
    expect(created.errors).toBeUndefined();
    const answer = created.data!.create_lead.lead;
    expect(answer.category).toBe('DOCUMENT_REQUEST');
    expect(answer.files.map((file) => file.file_type)).toEqual(['COVER_LETTER']);
    const stored = await app.db.lead.findUniqueOrThrow({ where: { id: answer.id }, include: { files: true } });
    expect(stored.category).toBe('Document Request');
    expect(stored.files.map((file) => file.file_type)).toEqual(['cover_letter']);

    const read = await app.graphql(READ, { id: answer.id }, key);
    expect(read.data).toEqual({ lead: { category: 'DOCUMENT_REQUEST', document_type: 'PPSR', files: [{ file_type: 'COVER_LETTER' }] } });

    const updated = await app.graphql<{ update_lead: { lead: { category: string } } }>(
      UPDATE_LEAD,
      { id: answer.id, lead: { category: 'TRADE_IN_ENQUIRY' } },
      key,
    );
    expect(updated.errors).toBeUndefined();
    expect(updated.data?.update_lead.lead.category).toBe('TRADE_IN_ENQUIRY');
    expect((await app.db.lead.findUniqueOrThrow({ where: { id: answer.id } })).category).toBe('Trade-in Enquiry');
    expect((await app.graphql(READ, { id: answer.id }, key)).data).toMatchObject({
      lead: { category: 'TRADE_IN_ENQUIRY', document_type: null },
    });

    const listed = await app.graphql<{ leads: { edges: { node: { id: number; category: string } }[] } }>(
      LIST,
      { category: 'TRADE_IN_ENQUIRY' },
      key,
    );
    expect(listed.errors).toBeUndefined();
    expect(listed.data?.leads.edges.map((edge) => edge.node)).toEqual([{ id: answer.id, category: 'TRADE_IN_ENQUIRY' }]);
    const none = await app.graphql<{ leads: { edges: unknown[] } }>(LIST, { category: 'SURVEY' }, key);
    expect(none.data?.leads.edges).toEqual([]);
  });

  it('names every one of the 25 categories in GraphQL style', async () => {
    const result = await app.graphql<{ __type: { enumValues: { name: string }[] } }>(
      `{ __type(name: "LeadCategory") { enumValues { name } } }`,
      undefined,
      key,
    );
    const names = result.data?.__type.enumValues.map((value) => value.name);
    expect(names).toHaveLength(LEAD_CATEGORIES.length);
    expect(names).toEqual(
      expect.arrayContaining(['NEW_VEHICLE_ENQUIRY', 'TRADE_IN_ENQUIRY', 'SELL_MY_CAR_ENQUIRY', 'TEAM_MEMBER_ENQUIRY']),
    );
  });

  it('refuses a value the enum does not list: in the filter, and the spec’s text in an input', async () => {
    const bogus = await app.graphql(LIST, { category: 'bogus' }, key);
    expect(bogus.data).toBeUndefined();
    expect(bogus.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'category' });
    const inline = await app.graphql(`{ leads(category: "New Vehicle Enquiry") { totalCount } }`, undefined, key);
    expect(inline.errors?.[0]?.message).toContain('Enum "LeadCategory" cannot represent non-enum value');
    const text = await app.graphql(CREATE_LEAD, { lead: samplePayload(dealership.id, person()) }, key);
    expect(text.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'lead.category' });
  });

  it('filters within the key’s dealerships only', async () => {
    const result = await app.graphql(LIST, { category: 'USED_VEHICLE_ENQUIRY', dealership_id: other.id }, key);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'dealership_not_found' });
  });
});

describe('the REST door: the spec’s text in and out', () => {
  it('creates and updates with the spec’s text and answers it', async () => {
    const created = await app.request('/api/v1/leads', {
      method: 'POST',
      key,
      json: {
        lead: {
          ...samplePayload(dealership.id, person()),
          category: 'Sell My Car Enquiry',
          lead_files_attributes: [{ file_type: 'resume', file: PDF_BYTES.toString('base64') }],
        },
      },
    });
    expect(created.status).toBe(201);
    const { lead } = await created.json();
    expect(lead).toMatchObject({ category: 'Sell My Car Enquiry', files: [{ file_type: 'resume' }] });
    const updated = await app.request(`/api/v1/leads/${lead.id}`, { method: 'PUT', key, json: { lead: { category: 'Parts Enquiry' } } });
    expect(updated.status).toBe(200);
    expect((await updated.json()).lead.category).toBe('Parts Enquiry');
  });

  it('refuses the graph’s enum names with the spec’s list, naming the field', async () => {
    const response = await app.request('/api/v1/leads', {
      method: 'POST',
      key,
      json: { lead: { ...samplePayload(dealership.id, person()), category: 'NEW_VEHICLE_ENQUIRY' } },
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      error: 'invalid_input',
      field: 'lead.category',
      message: `lead.category: must be one of: ${LEAD_CATEGORIES.join('; ')}. Got "NEW_VEHICLE_ENQUIRY"`,
    });
    const file = await app.request('/api/v1/leads', {
      method: 'POST',
      key,
      json: {
        lead: {
          ...samplePayload(dealership.id, person()),
          lead_files_attributes: [{ file_type: 'RESUME', file: PDF_BYTES.toString('base64') }],
        },
      },
    });
    expect(await file.json()).toMatchObject({ error: 'invalid_input', field: 'lead.lead_files_attributes[0].file_type' });
  });

  it("documents the values as the spec's text in the OpenAPI document", async () => {
    const document = (await (await app.request('/openapi.json')).json()) as {
      components: {
        schemas: Record<
          string,
          { properties: Record<string, { description?: string; anyOf?: unknown[]; type?: string; enum?: string[] }> }
        >;
      };
    };
    const { schemas } = document.components;
    for (const [type, field, values] of [
      ['LeadInput', 'category', LEAD_CATEGORIES],
      ['LeadUpdateInput', 'category', LEAD_CATEGORIES],
      ['LeadRecord', 'category', LEAD_CATEGORIES],
      ['LeadFileInput', 'file_type', ['resume', 'cover_letter', 'other']],
      ['LeadFile', 'file_type', ['resume', 'cover_letter', 'other']],
    ] as const) {
      const property = schemas[type]?.properties[field];
      // Inputs list the spec's texts as an enum (derived from the zod records that check them),
      // answers in their description; never the graph's enum names.
      const listed = property?.enum ?? /One of: (.*)\.$/.exec(property?.description ?? '')?.[1]?.split('; ');
      expect([...(listed ?? [])].sort(), `${type}.${field}`).toEqual([...values].sort());
      expect(JSON.stringify(property), `${type}.${field}`).not.toMatch(/\b[A-Z]+_[A-Z_]+\b/);
    }
    expect(Object.keys(schemas)).not.toContain('LeadCategory');
  });
});
