// The REST door reads inputs as the Rails-style service these integrations were written against:
// unknown keys are ignored and named (X-Ignored-Parameters and a log line), integers accept their
// digits as text, booleans "true"/"false"/"1"/"0", a lead arrives as multipart/form-data with
// Rails-style keys and its attachments as files, and every refusal says the field and the reason in
// plain words. GraphQL stays strict.
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainReason } from '../src/rest/errors.ts';
import { createApp } from '../src/gateway/yoga.ts';
import { GRAPHQL_WORDS } from './support/fuzz.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { carInput } from './support/fixtures-cars.ts';
import { makeCar, makeDealership, makeKey } from './support/fixtures.ts';
import { CREATE_LEAD, PDF_BYTES, graphLead, samplePayload, tempStorageDir } from './support/fixtures-leads.ts';

const MAX_FILE_BYTES = 2048;
let app: TestApp;
let storage: ReturnType<typeof tempStorageDir>;
let dealership: { id: number };
let key: string;

beforeAll(async () => {
  storage = tempStorageDir();
  app = await createTestApp({ fileStorageDir: storage.dir, leadFileMaxBytes: MAX_FILE_BYTES, bodyLimitBytes: 64 * 1024 });
  dealership = await makeDealership(app.db);
  ({ key } = await makeKey(app.db, {
    permissions: ['create:lead', 'update:lead', 'read:personal_data', 'update:car', 'read:car'],
  }));
});
afterAll(() => storage.remove());

let emails = 0;
const person = (): { email: string; phone: string } => {
  emails += 1;
  return { email: `lenient.${emails}@example.com`, phone: '0412 345 678' };
};

function postLead(body: unknown, query = ''): Promise<Response> {
  return app.request(`/api/v1/leads${query}`, { method: 'POST', key, json: body });
}

describe('unknown keys', () => {
  it('are ignored at the top level, in the query and inside lead, named in X-Ignored-Parameters, never stored', async () => {
    const lead = { ...samplePayload(dealership.id, person()), favourite_colour: 'red', address_attributes: { city: 'Darwin', unit: '4B' } };
    const response = await postLead({ lead, utm_source: 'feed' }, '?foo=1');
    expect(response.status).toBe(201);
    expect(response.headers.get('x-ignored-parameters')).toBe('foo, utm_source, lead.favourite_colour, lead.address_attributes.unit');
    const { lead: created } = (await response.json()) as { lead: { id: number; address: { city: string } } };
    expect(created.address.city).toBe('Darwin');
    expect(await app.db.lead.count({ where: { id: created.id } })).toBe(1);
  });

  it('sends no header when nothing was ignored', async () => {
    const response = await postLead({ lead: samplePayload(dealership.id, person()) });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-ignored-parameters')).toBeNull();
  });

  it('are named in one log line', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logged = createApp(
      instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { logger: pino({ level: 'info' }, sink) }),
    );
    const response = await logged.fetch('http://gateway.test/api/v1/leads', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lead: { ...samplePayload(dealership.id, person()), bogus: 1 } }),
    });
    expect(response.status).toBe(201);
    const entries = lines.map((line) => JSON.parse(line) as { msg: string; ignored?: string[]; path?: string });
    expect(entries.filter((entry) => entry.ignored)).toEqual([
      expect.objectContaining({ msg: 'ignored parameters the operation does not take', ignored: ['lead.bogus'], path: '/api/v1/leads' }),
    ]);
  });

  it('let a car be sent back as the update answered it (a GET-then-PUT round trip)', async () => {
    const car = await makeCar(app.db, dealership.id);
    const first = await app.request(`/api/cars/${car.id}`, {
      method: 'PUT',
      key,
      json: { car: carInput(dealership.id, { stocknum: `RT-${car.id}` }) },
    });
    expect(first.status).toBe(200);
    const { car: answered } = (await first.json()) as { car: Record<string, unknown> };
    const again = await app.request(`/api/cars/${car.id}`, {
      method: 'PUT',
      key,
      json: { car: { ...answered, dapprice: 31_990 }, skipped_fields: [] },
    });
    expect(again.status).toBe(200);
    const ignored = again.headers.get('x-ignored-parameters')?.split(', ') ?? [];
    expect(ignored).toEqual(expect.arrayContaining(['skipped_fields', 'car.id', 'car.slug', 'car.reserved', 'car.created_at']));
    expect((await app.db.car.findUniqueOrThrow({ where: { id: car.id } })).dapprice).toBe(31_990);
  });

  it('are still refused by GraphQL, which stays strict', async () => {
    const graph = await app.graphql(
      CREATE_LEAD,
      { lead: { ...graphLead(samplePayload(dealership.id, person())), favourite_colour: 'red' } },
      key,
    );
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'lead.favourite_colour' });
  });
});

describe('scalars as text', () => {
  it('reads integers from digits and booleans from true/false/1/0', async () => {
    const lead = {
      ...samplePayload(dealership.id, person()),
      dealership_id: String(dealership.id),
      golden: '1',
      certified: 'true',
      send_customer_email: '0',
      opt_in_to_marketing: 'FALSE',
      delay_dealership_notification_minutes: ' 15 ',
      payment_attributes: { amount: '99.5' },
      address_attributes: { city: 'Darwin', postcode: '0800' },
    };
    const response = await postLead({ lead });
    expect(response.status).toBe(201);
    const { lead: created } = (await response.json()) as { lead: Record<string, unknown> & { id: number } };
    expect(created).toMatchObject({
      dealership_id: dealership.id,
      golden: true,
      certified: true,
      send_customer_email: false,
      opt_in_to_marketing: false,
      payment: expect.objectContaining({ amount: 99.5 }),
      // The spec types an address postcode as an integer: 0800 is 800 (docs/decisions.md, "decisions").
      address: expect.objectContaining({ postcode: 800 }),
    });
  });

  it.each([
    ['dealership_id', '1a', 'must be a whole number'],
    ['dealership_id', '99999999999', 'must be a whole number from -2147483648 to 2147483647'],
    ['golden', 'maybe', 'must be true or false'],
    ['email', 12345, 'must be text'],
    ['address_attributes', 'Darwin', 'must be an object'],
  ])('refuses %s = %j in plain words naming the field', async (field, value, reason) => {
    const before = await app.db.lead.count();
    const response = await postLead({ lead: { ...samplePayload(dealership.id, person()), [field]: value } });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: 'invalid_input', field: `lead.${field}`, message: `lead.${field}: ${reason}` });
    expect(await app.db.lead.count()).toBe(before);
  });

  it("names an enum parameter's values in plain words", async () => {
    const response = await app.request('/api/v1/cars/1/performance.json?lookup_by=stock', { key });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: 'invalid_input', field: 'lookup_by', message: 'lookup_by: must be one of: vin' });
  });

  it('stays strict on GraphQL: an integer as text is refused there', async () => {
    const graph = await app.graphql(
      CREATE_LEAD,
      { lead: { ...graphLead(samplePayload(dealership.id, person())), dealership_id: String(dealership.id) } },
      key,
    );
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'lead.dealership_id' });
  });
});

describe('multipart/form-data with Rails-style keys', () => {
  function leadForm(fields: Record<string, string>, files: { type: string; bytes: Buffer }[] = []): FormData {
    const form = new FormData();
    const { email, phone } = person();
    const base: Record<string, string> = {
      'lead[name]': 'Jordan Lee',
      'lead[email]': email,
      'lead[phone]': phone,
      'lead[dealership_id]': String(dealership.id),
      'lead[category]': 'Used Vehicle Enquiry',
      'lead[source]': 'carsales',
      'lead[send_customer_email]': 'false',
      ...fields,
    };
    for (const [name, value] of Object.entries(base)) form.append(name, value);
    files.forEach(({ type, bytes }, index) => {
      form.append(`lead[lead_files_attributes][${index}][file_type]`, type);
      form.append(`lead[lead_files_attributes][${index}][file]`, new Blob([new Uint8Array(bytes)]), `file-${index}.pdf`);
    });
    return form;
  }
  const postForm = (form: FormData): Promise<Response> => app.request('/api/v1/leads', { method: 'POST', key, body: form });

  it('creates the lead with its fields, lists and attachments', async () => {
    const form = leadForm({ 'lead[golden]': '1' }, [
      { type: 'resume', bytes: PDF_BYTES },
      { type: 'other', bytes: Buffer.from('plain notes') },
    ]);
    form.append('lead[tags][]', 'vip');
    form.append('lead[tags][]', 'finance');
    const response = await postForm(form);
    expect(response.status).toBe(201);
    const { lead } = (await response.json()) as {
      lead: Record<string, unknown> & { files: { sha256: string; byte_size: number; file_type: string; content_type: string }[] };
    };
    expect(lead).toMatchObject({
      name: 'Jordan Lee',
      dealership_id: dealership.id,
      source: 'carsales',
      golden: true,
      tags: ['vip', 'finance'],
    });
    expect(lead.files).toEqual([
      expect.objectContaining({
        file_type: 'resume',
        content_type: 'application/pdf',
        byte_size: PDF_BYTES.length,
        sha256: createHash('sha256').update(PDF_BYTES).digest('hex'),
      }),
      expect.objectContaining({ file_type: 'other', content_type: 'text/plain', byte_size: 11 }),
    ]);
  });

  it('keeps the attachment limits: size per file and count per lead, storing nothing', async () => {
    const before = { leads: await app.db.lead.count(), files: storage.files().length };
    const big = await postForm(leadForm({}, [{ type: 'resume', bytes: Buffer.alloc(MAX_FILE_BYTES + 1, 'a') }]));
    expect(big.status).toBe(422);
    expect((await big.json()).field).toBe('lead.lead_files_attributes[0].file');
    const many = await postForm(
      leadForm(
        {},
        Array.from({ length: 6 }, () => ({ type: 'other', bytes: Buffer.from('note') })),
      ),
    );
    expect(many.status).toBe(422);
    expect((await many.json()).field).toBe('lead.lead_files_attributes');
    expect({ leads: await app.db.lead.count(), files: storage.files().length }).toEqual(before);
  });

  it('keeps the body limit', async () => {
    // Sent as the bytes a client would put on the wire, with their length.
    const encoded = new Response(leadForm({}, [{ type: 'other', bytes: Buffer.alloc(70 * 1024, 'a') }]));
    const bytes = new Uint8Array(await encoded.arrayBuffer());
    const response = await app.request('/api/v1/leads', {
      method: 'POST',
      key,
      headers: { 'content-type': encoded.headers.get('content-type') ?? '', 'content-length': String(bytes.byteLength) },
      body: bytes,
    });
    expect(response.status).toBe(413);
    expect((await response.json()).error).toBe('payload_too_large');
  });

  it('refuses a body that is not multipart, and keys that cannot be a field, in plain words', async () => {
    const broken = await app.request('/api/v1/leads', {
      method: 'POST',
      key,
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
      body: 'no parts here',
    });
    expect(broken.status).toBe(400);
    expect((await broken.json()).error).toBe('malformed_request');
    const twice = leadForm({});
    twice.append('lead[name]', 'again');
    const response = await postForm(twice);
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: 'invalid_input', field: 'lead[name]', message: 'lead[name]: is sent twice' });
  });
});

describe('GraphQL messages translated for the REST door', () => {
  it.each([
    ['Int cannot represent non-integer value: "abc"', 'must be a whole number'],
    ['Int cannot represent non 32-bit signed integer value: 99999999999', 'must be a whole number from -2147483648 to 2147483647'],
    ['Float cannot represent non numeric value: "ten"', 'must be a number'],
    ['String cannot represent a non string value: 12345', 'must be text'],
    ['Boolean cannot represent a non boolean value: "maybe"', 'must be true or false'],
    ['Enum "CarLookupBy" cannot represent non-string value: 5.', 'must be text'],
    ['Value "stock" does not exist in "CarLookupBy" enum.', 'is not one of the accepted values'],
    ['Expected type "LeadInput" to be an object.', 'must be an object'],
    ['Field "bogus" is not defined by type "LeadInput". Did you mean "tags"?', 'is not a field this operation takes'],
    ['Date cannot represent an invalid date-string 2026-13-45.', 'must be a date, yyyy-mm-dd'],
    ['Something new about Variable "$lead" of required type "LeadInput!"', 'is not valid'],
  ])('words "%s" as "%s"', (message, reason) => {
    expect(GRAPHQL_WORDS.test(message)).toBe(true);
    expect(plainReason(message)).toBe(reason);
    expect(GRAPHQL_WORDS.test(plainReason(message))).toBe(false);
  });

  it("leaves the service's own reasons as they are", () => {
    expect(plainReason('must be at most 200 characters')).toBe('must be at most 200 characters');
  });
});
