// Spec 4.11 (deprecated) on both doors: `data` as qs-nested text and as JSON text, the recorded
// event, every 422 naming its field, no_lead_found (also for another dealership's lead), 401/403,
// the Deprecation/Sunset headers and the GraphQL deprecation.
import { beforeAll, describe, expect, it } from 'vitest';
import { parseSentDate } from '../src/domain/lead-events.ts';
import { INT32_REASON } from '../src/domain/input-limits.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { makeLead } from './support/fixtures-events.ts';

// RFC 9745's structured-field date of 2026-11-21 00:00 UTC (the day 4.11 was deprecated) and RFC
// 8594's HTTP date of its sunset, 2027-06-30.
const DEPRECATION = '@1795219200';
/** Why `data` in the query string is not an object the REST door can read (src/rest/arguments.ts). */
const NOT_AN_OBJECT = 'must be an object: data[key]=… (nested as data[key][key]=…) or JSON text';
const SUNSET = 'Wed, 30 Jun 2027 00:00:00 GMT';
const CREATE = `mutation ($service: String!, $data: LeadEventData!) {
  create_lead_event(service: $service, data: $data) {
    id: databaseId lead_id service contact_type description sent_date sent_by link_stop_communication link_reply_as_assistant created_at
  }
}`;

let app: TestApp;
let north: { id: number };
let south: { id: number };
let northLead: { id: number };
let southLead: { id: number };
let writerKey: string;
let northWriterKey: string;
let otherKey: string;

beforeAll(async () => {
  app = await createTestApp();
  north = await makeDealership(app.db);
  south = await makeDealership(app.db);
  northLead = await makeLead(app.db, north.id);
  southLead = await makeLead(app.db, south.id);
  writerKey = (await makeKey(app.db, { permissions: ['create:lead_event'] })).key;
  northWriterKey = (await makeKey(app.db, { permissions: ['create:lead_event'], dealershipIds: [north.id] })).key;
  otherKey = (await makeKey(app.db, { permissions: ['create:lead', 'update:lead', 'read:lead'] })).key;
});

/** The documented call: `data` nested in the query string, as qs reads it. */
function nestedPath(service: string, data: Record<string, string>): string {
  const query = Object.entries(data)
    .map(([name, value]) => `data${name}=${encodeURIComponent(value)}`)
    .join('&');
  return `/api/v1/lead_events/${service}/create?${query}`;
}

function jsonPath(service: string, data: unknown): string {
  return `/api/v1/lead_events/${service}/create?data=${encodeURIComponent(typeof data === 'string' ? data : JSON.stringify(data))}`;
}

const fullDetail = {
  contactType: 'sms',
  description: 'Hi Sam, your test drive is confirmed.',
  sentDate: '2026-11-20 14:30:00',
  sentBy: 'Ana (Sales)',
  linkStopCommunication: 'https://msg.example.com/stop/abc',
  linkReplyAsAssistant: 'https://msg.example.com/reply/abc',
};

describe('POST /api/v1/lead_events/:service/create', () => {
  it('records the event from nested query parameters and answers 201 with it, with the deprecation headers', async () => {
    const response = await app.request(
      nestedPath('sms-hub', {
        '[leadId]': String(northLead.id),
        ...Object.fromEntries(Object.entries(fullDetail).map(([name, value]) => [`[messageDetail][${name}]`, value])),
      }),
      { method: 'POST', key: writerKey },
    );
    expect(response.status).toBe(201);
    expect(response.headers.get('deprecation')).toBe(DEPRECATION);
    expect(response.headers.get('sunset')).toBe(SUNSET);
    const body = await response.json();
    expect(body).toEqual({
      id: expect.any(Number),
      lead_id: northLead.id,
      service: 'sms-hub',
      contact_type: 'sms',
      description: 'Hi Sam, your test drive is confirmed.',
      // 14:30 in Sydney in November is daylight saving time, UTC+11.
      sent_date: '2026-11-20T03:30:00.000Z',
      sent_by: 'Ana (Sales)',
      link_stop_communication: 'https://msg.example.com/stop/abc',
      link_reply_as_assistant: 'https://msg.example.com/reply/abc',
      created_at: app.clock.now().toISOString(),
    });

    const row = await app.db.leadEvent.findUniqueOrThrow({ where: { id: body.id } });
    expect(row).toEqual({
      id: body.id,
      lead_id: northLead.id,
      service: 'sms-hub',
      contact_type: 'sms',
      description: 'Hi Sam, your test drive is confirmed.',
      sent_date: new Date('2026-11-20T03:30:00.000Z'),
      sent_by: 'Ana (Sales)',
      link_stop_communication: 'https://msg.example.com/stop/abc',
      link_reply_as_assistant: 'https://msg.example.com/reply/abc',
      created_at: app.clock.now(),
    });
  });

  it('accepts data as JSON text, with leadId a number', async () => {
    const response = await app.request(
      jsonPath('sms-hub', { leadId: northLead.id, messageDetail: { ...fullDetail, sentDate: '2026-06-20T14:30' } }),
      {
        method: 'POST',
        key: writerKey,
      },
    );
    expect(response.status).toBe(201);
    const body = await response.json();
    expect(body).toMatchObject({ lead_id: northLead.id, contact_type: 'sms', sent_date: '2026-06-20T04:30:00.000Z' });
  });

  it('accepts an empty messageDetail, stores blanks as null and lower-cases the service', async () => {
    const empty = await app.request(jsonPath('Chat_Service-2', { leadId: String(northLead.id), messageDetail: {} }), {
      method: 'POST',
      key: writerKey,
    });
    expect(empty.status).toBe(201);
    expect(await empty.json()).toMatchObject({
      service: 'chat_service-2',
      contact_type: null,
      description: null,
      sent_date: null,
      sent_by: null,
      link_stop_communication: null,
      link_reply_as_assistant: null,
    });
    const blanks = await app.request(
      nestedPath('chat', { '[leadId]': ` ${northLead.id} `, '[messageDetail][sentBy]': '  ', '[messageDetail][sentDate]': '' }),
      {
        method: 'POST',
        key: writerKey,
      },
    );
    expect(blanks.status).toBe(201);
    expect(await blanks.json()).toMatchObject({ sent_by: null, sent_date: null });
  });

  it('ignores messageDetail fields it does not know', async () => {
    const response = await app.request(
      jsonPath('sms-hub', { leadId: northLead.id, messageDetail: { sentBy: 'Ana', channel: 'whatsapp' }, extra: 1 }),
      {
        method: 'POST',
        key: writerKey,
      },
    );
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ sent_by: 'Ana' });
  });

  it('honours a zone when sentDate carries one', async () => {
    const utc = await app.request(jsonPath('sms', { leadId: northLead.id, messageDetail: { sentDate: '2026-11-20T14:30:00Z' } }), {
      method: 'POST',
      key: writerKey,
    });
    const perth = await app.request(jsonPath('sms', { leadId: northLead.id, messageDetail: { sentDate: '2026-11-20T14:30:00+08:00' } }), {
      method: 'POST',
      key: writerKey,
    });
    expect((await utc.json()).sent_date).toBe('2026-11-20T14:30:00.000Z');
    expect((await perth.json()).sent_date).toBe('2026-11-20T06:30:00.000Z');
  });

  const invalid: [string, string, string, string][] = [
    ['no data', '/api/v1/lead_events/sms/create', 'data', 'data: is required'],
    ['data that is not JSON', `/api/v1/lead_events/sms/create?data=${encodeURIComponent('{leadId: 1')}`, 'data', `data: ${NOT_AN_OBJECT}`],
    ['data that is a JSON array', jsonPath('sms', [1]), 'data', `data: ${NOT_AN_OBJECT}`],
    [
      'data both nested and as JSON text',
      `${nestedPath('sms', { '[leadId]': '1' })}&data=${encodeURIComponent('{}')}`,
      'data',
      `data: ${NOT_AN_OBJECT}, not both`,
    ],
    ['a nested key given twice', `${nestedPath('sms', { '[leadId]': '1' })}&data[leadId]=2`, 'data.leadId', 'data.leadId: is sent twice'],
    ['no leadId', nestedPath('sms', { '[messageDetail][sentBy]': 'Ana' }), 'data.leadId', 'data.leadId: is required'],
    [
      'a leadId that is not a number',
      nestedPath('sms', { '[leadId]': 'abc', '[messageDetail][sentBy]': 'Ana' }),
      'data.leadId',
      'data.leadId: must be a whole number',
    ],
    [
      'a leadId of 0',
      jsonPath('sms', { leadId: 0, messageDetail: {} }),
      'data.leadId',
      'data.leadId: must be a lead id (a positive whole number)',
    ],
    ['a fractional leadId', jsonPath('sms', { leadId: 1.5, messageDetail: {} }), 'data.leadId', 'data.leadId: must be a whole number'],
    [
      'a leadId beyond the id range',
      jsonPath('sms', { leadId: 2 ** 31, messageDetail: {} }),
      'data.leadId',
      `data.leadId: ${INT32_REASON}`,
    ],
    ['a leadId that is a list', jsonPath('sms', { leadId: [1], messageDetail: {} }), 'data.leadId', 'data.leadId: must be a whole number'],
    ['no messageDetail', nestedPath('sms', { '[leadId]': '1' }), 'data.messageDetail', 'data.messageDetail: is required'],
    [
      'a messageDetail that is text',
      nestedPath('sms', { '[leadId]': '1', '[messageDetail]': 'hello' }),
      'data.messageDetail',
      'data.messageDetail: must be an object',
    ],
    [
      'a description that is a number',
      jsonPath('sms', { leadId: 1, messageDetail: { description: 5 } }),
      'data.messageDetail.description',
      'data.messageDetail.description: must be text',
    ],
    [
      'a description that is too long',
      jsonPath('sms', { leadId: 1, messageDetail: { description: 'x'.repeat(10_001) } }),
      'data.messageDetail.description',
      'data.messageDetail.description: must be at most 10000 characters',
    ],
    [
      'a stop link that is not http(s)',
      nestedPath('sms', { '[leadId]': '1', '[messageDetail][linkStopCommunication]': 'javascript:alert(1)' }),
      'data.messageDetail.linkStopCommunication',
      'data.messageDetail.linkStopCommunication: must be an http(s) URL',
    ],
    [
      'a reply link that is not a URL',
      nestedPath('sms', { '[leadId]': '1', '[messageDetail][linkReplyAsAssistant]': 'reply here' }),
      'data.messageDetail.linkReplyAsAssistant',
      'data.messageDetail.linkReplyAsAssistant: must be an http(s) URL',
    ],
    [
      'a sentDate in day/month/year',
      nestedPath('sms', { '[leadId]': '1', '[messageDetail][sentDate]': '20/11/2026 14:30' }),
      'data.messageDetail.sentDate',
      'data.messageDetail.sentDate: must be a date-time such as 2026-11-20 14:30:00 (Sydney time unless a zone is given)',
    ],
    [
      'a sentDate that does not exist',
      nestedPath('sms', { '[leadId]': '1', '[messageDetail][sentDate]': '2026-02-30 10:00' }),
      'data.messageDetail.sentDate',
      'data.messageDetail.sentDate: must be a date-time such as 2026-11-20 14:30:00 (Sydney time unless a zone is given)',
    ],
    [
      'a service name with other characters',
      nestedPath('sms%20hub!', { '[leadId]': '1', '[messageDetail][sentBy]': 'Ana' }),
      'service',
      'service: must be a service name of 1 to 40 letters, digits, "-" or "_"',
    ],
    [
      'a service name that is too long',
      nestedPath('s'.repeat(41), { '[leadId]': '1', '[messageDetail][sentBy]': 'Ana' }),
      'service',
      'service: must be a service name of 1 to 40 letters, digits, "-" or "_"',
    ],
  ];

  it.each(invalid)('answers 422 naming the field for %s, and records nothing', async (_label, path, field, message) => {
    const before = await app.db.leadEvent.count();
    const response = await app.request(path, { method: 'POST', key: writerKey });
    expect(response.status).toBe(422);
    expect(response.headers.get('deprecation')).toBe(DEPRECATION);
    expect(response.headers.get('sunset')).toBe(SUNSET);
    expect(await response.json()).toEqual({ error: 'invalid_input', message, field });
    expect(await app.db.leadEvent.count()).toBe(before);
  });

  it('answers 404 no_lead_found for a lead that does not exist', async () => {
    const response = await app.request(nestedPath('sms', { '[leadId]': '999999', '[messageDetail][sentBy]': 'Ana' }), {
      method: 'POST',
      key: writerKey,
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'no_lead_found', message: 'No lead found with that leadId.' });
  });

  it('answers a key restricted to other dealerships exactly as if the lead did not exist', async () => {
    const before = await app.db.leadEvent.count({ where: { lead_id: southLead.id } });
    const other = await app.request(nestedPath('sms', { '[leadId]': String(southLead.id), '[messageDetail][sentBy]': 'Ana' }), {
      method: 'POST',
      key: northWriterKey,
    });
    const missing = await app.request(nestedPath('sms', { '[leadId]': '999999', '[messageDetail][sentBy]': 'Ana' }), {
      method: 'POST',
      key: northWriterKey,
    });
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual(await missing.json());
    expect(await app.db.leadEvent.count({ where: { lead_id: southLead.id } })).toBe(before);
    // Its own dealership's lead is fine.
    const own = await app.request(nestedPath('sms', { '[leadId]': String(northLead.id), '[messageDetail][sentBy]': 'Ana' }), {
      method: 'POST',
      key: northWriterKey,
    });
    expect(own.status).toBe(201);
  });

  // The spec's error table: "key has another permission" is "unauthorised".
  it('answers 401 unauthorized to a key with other permissions only', async () => {
    const response = await app.request(nestedPath('sms', { '[leadId]': String(northLead.id), '[messageDetail][sentBy]': 'Ana' }), {
      method: 'POST',
      key: otherKey,
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: 'unauthorized',
      message: 'This API key does not have the permission this operation needs.',
    });
  });

  it.each([
    ['no key', {}],
    ['an invalid key', { authorization: 'Bearer dlr_not_a_real_key' }],
  ])('answers 401 unauthorized with %s', async (_label, headers) => {
    const response = await app.request(nestedPath('sms', { '[leadId]': String(northLead.id), '[messageDetail][sentBy]': 'Ana' }), {
      method: 'POST',
      headers,
    });
    expect(response.status).toBe(401);
    expect((await response.json()).error).toBe('unauthorized');
  });
});

describe('Mutation.create_lead_event', () => {
  it('answers what REST answers for the same event', async () => {
    const data = { leadId: northLead.id, messageDetail: fullDetail };
    const rest = await (await app.request(jsonPath('sms-hub', data), { method: 'POST', key: writerKey })).json();
    const graph = await app.graphql<{ create_lead_event: Record<string, unknown> }>(CREATE, { service: 'sms-hub', data }, writerKey);
    expect(graph.errors).toBeUndefined();
    const event = graph.data!.create_lead_event;
    expect(event.id).not.toBe(rest.id);
    expect({ ...event, id: rest.id }).toEqual(rest);
  });

  it('takes data as an input object written inline, and refuses leadId as text, which only the REST door reads', async () => {
    const graph = await app.graphql<{ create_lead_event: { lead_id: number; sent_by: string } }>(
      `mutation { create_lead_event(service: "sms", data: { leadId: ${northLead.id}, messageDetail: { sentBy: "Ana" } }) { lead_id sent_by } }`,
      {},
      writerKey,
    );
    expect(graph.errors).toBeUndefined();
    expect(graph.data!.create_lead_event).toEqual({ lead_id: northLead.id, sent_by: 'Ana' });
    const before = await app.db.leadEvent.count();
    const text = await app.graphql(
      `mutation { create_lead_event(service: "sms", data: { leadId: "${northLead.id}", messageDetail: { sentBy: "Ana" } }) { lead_id } }`,
      {},
      writerKey,
    );
    expect(text.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED' });
    expect(await app.db.leadEvent.count()).toBe(before);
  });

  it('answers the same errors with their codes', async () => {
    const noData = await app.graphql(CREATE, { service: 'sms' }, writerKey);
    expect(noData.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', error: 'invalid_input', field: 'data' });
    const invalid = await app.graphql(CREATE, { service: 'sms', data: { messageDetail: {} } }, writerKey);
    expect(invalid.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', error: 'invalid_input', field: 'data.leadId' });
    const missing = await app.graphql(CREATE, { service: 'sms', data: { leadId: southLead.id, messageDetail: {} } }, northWriterKey);
    expect(missing.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'no_lead_found' });
    const forbidden = await app.graphql(CREATE, { service: 'sms', data: { leadId: northLead.id, messageDetail: {} } }, otherKey);
    expect(forbidden.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const anonymous = await app.graphql(CREATE, { service: 'sms', data: { leadId: northLead.id, messageDetail: {} } });
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('is marked deprecated in the schema', async () => {
    const result = await app.graphql<{ __type: { fields: { name: string; isDeprecated: boolean; deprecationReason: string | null }[] } }>(
      `{ __type(name: "Mutation") { fields(includeDeprecated: true) { name isDeprecated deprecationReason } } }`,
    );
    const field = result.data!.__type.fields.find((candidate) => candidate.name === 'create_lead_event');
    expect(field).toEqual({
      name: 'create_lead_event',
      isDeprecated: true,
      deprecationReason: 'Kept only for existing messaging integrations, like its REST path. Removal after 2027-06-30.',
    });
  });
});

describe('Lead.events', () => {
  it('lists the events recorded against the lead, oldest first', async () => {
    const reader = (await makeKey(app.db, { permissions: ['read:lead'] })).key;
    const lead = await makeLead(app.db, north.id);
    const first = await (
      await app.request(
        nestedPath('sms-hub', { '[leadId]': String(lead.id), '[messageDetail][sentBy]': 'Ana', '[messageDetail][contactType]': 'sms' }),
        {
          method: 'POST',
          key: writerKey,
        },
      )
    ).json();
    app.clock.advance(60_000);
    const second = await (
      await app.request(jsonPath('mail', { leadId: lead.id, messageDetail: { description: 'Brochure sent' } }), {
        method: 'POST',
        key: writerKey,
      })
    ).json();

    const graph = await app.graphql<{ lead: { id: number; events: { totalCount: number; edges: { node: unknown }[] } } }>(
      `query ($id: Int!) { lead(id: $id) { id: databaseId events { totalCount edges { node { id: databaseId lead_id service contact_type description sent_date sent_by link_stop_communication link_reply_as_assistant created_at } } } } }`,
      { id: lead.id },
      reader,
    );
    expect(graph.errors).toBeUndefined();
    expect(graph.data!.lead).toEqual({ id: lead.id, events: { totalCount: 2, edges: [{ node: first }, { node: second }] } });
  });

  it('costs the same number of SQL statements for 2 leads as for 8', async () => {
    const reader = (await makeKey(app.db, { permissions: ['read:lead'] })).key;
    const dealership = await makeDealership(app.db);
    const statementsFor = async () => {
      app.queries.length = 0;
      const graph = await app.graphql<{ leads: { edges: { node: { events: { totalCount: number } } }[] } }>(
        `query ($dealership: Int) { leads(dealership_id: $dealership, first: 50) { edges { node { id: databaseId events { totalCount edges { node { id: databaseId service } } } } } } }`,
        { dealership: dealership.id },
        reader,
      );
      expect(graph.errors).toBeUndefined();
      return { statements: app.queries.length, leads: graph.data!.leads.edges.length };
    };
    const addLeads = async (count: number) => {
      for (let i = 0; i < count; i += 1) {
        const lead = await makeLead(app.db, dealership.id);
        await app.db.leadEvent.createMany({
          data: [
            { lead_id: lead.id, service: 'sms', created_at: app.clock.now() },
            { lead_id: lead.id, service: 'mail', created_at: app.clock.now() },
          ],
        });
      }
    };
    // The key's first use also records last_used_at: keep that statement out of the comparison.
    await statementsFor();
    await addLeads(2);
    const few = await statementsFor();
    await addLeads(6);
    const many = await statementsFor();
    expect([few.leads, many.leads]).toEqual([2, 8]);
    expect(many.statements).toBe(few.statements);
  });
});

describe('parseSentDate', () => {
  it.each([
    ['2026-11-20 14:30', '2026-11-20T03:30:00.000Z'],
    ['2026-11-20T14:30:05.25', '2026-11-20T03:30:05.250Z'],
    ['2026-06-20 09:00:00', '2026-06-19T23:00:00.000Z'],
    // Daylight saving ends 5 April 2026 at 03:00: 02:30 happens twice; the first (UTC+11) is taken.
    ['2026-04-05 02:30', '2026-04-04T15:30:00.000Z'],
    // It starts 4 October 2026 at 02:00: 02:30 does not exist and moves forward to 03:30 (UTC+11).
    ['2026-10-04 02:30', '2026-10-03T16:30:00.000Z'],
    ['2026-11-20T14:30:00z', '2026-11-20T14:30:00.000Z'],
    ['2026-11-20 14:30 -0500', '2026-11-20T19:30:00.000Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(parseSentDate(text)?.toISOString()).toBe(iso);
  });

  it.each(['2026-11-20', '20/11/2026 14:30', '2026-13-01 10:00', '2026-11-20 24:00', '2026-11-20 14:60', 'yesterday'])(
    'refuses %s',
    (text) => {
      expect(parseSentDate(text)).toBeNull();
    },
  );
});
