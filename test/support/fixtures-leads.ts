// Test data for the lead tests: new-vehicle catalogue rows, stored leads,
// sample payloads and attachments, and a real local SMTP server that records what it receives.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { Db, Prisma } from '../../src/db/client.ts';
import { makeManufacturer, uniqueNumber } from './fixtures.ts';

export async function makeLeadModel(db: Db, manufacturerId: number, data: Partial<Prisma.ModelUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.model.create({
    data: { manufacturer_id: manufacturerId, name: `Model ${n}`, slug: `lead-model-${n}`, new_slug: `lead-model-${n}`, path: `/models/lead-model-${n}`, ...data },
  });
}

export async function makeLeadVariant(db: Db, modelId: number, data: Partial<Prisma.ModelVariantUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.modelVariant.create({ data: { model_id: modelId, slug: `lead-variant-${n}`, name: `Variant ${n}`, full_name: `Variant ${n} full`, ...data } });
}

export async function makeColour(db: Db, modelId: number, data: Partial<Prisma.ColourUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.colour.create({ data: { model_id: modelId, name: `Colour ${n}`, code: `C${n}`, ...data } });
}

type Row = { id: number };

/**
 * A manufacturer's two models, each with a variant and a colour: what the lead rules on model_id,
 * model_variant_id and colour_id are checked against (`other…` belong to the second model).
 */
export async function makeLeadCatalogue(db: Db): Promise<Record<'model' | 'variant' | 'colour' | 'otherModel' | 'otherVariant' | 'otherColour', Row>> {
  const maker = await makeManufacturer(db);
  const model = await makeLeadModel(db, maker.id);
  const otherModel = await makeLeadModel(db, maker.id);
  const variant = await makeLeadVariant(db, model.id);
  const colour = await makeColour(db, model.id);
  const otherVariant = await makeLeadVariant(db, otherModel.id);
  const otherColour = await makeColour(db, otherModel.id);
  return { model, variant, colour, otherModel, otherVariant, otherColour };
}

/** A lead row written directly (not through the API), e.g. to update or to age. */
export async function makeStoredLead(db: Db, dealershipId: number, data: Partial<Prisma.LeadUncheckedCreateInput> = {}) {
  const n = uniqueNumber();
  return db.lead.create({
    data: {
      dealership_id: dealershipId,
      category: 'General Enquiry',
      source: 'Website',
      email: `customer.${n}@example.com`,
      phone: '+61412345678',
      name: `Customer ${n}`,
      ...data,
    },
  });
}

/** The fields of spec 2.7's sample, for one dealership: valid as they are. */
export function samplePayload(dealershipId: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Jane',
    last_name: 'Citizen',
    email: 'Jane.Citizen@example.com',
    phone: '0412 345 678',
    message: 'Is this car still available?',
    dealership_id: dealershipId,
    category: 'Used Vehicle Enquiry',
    source: 'Website',
    ...overrides,
  };
}

// Smallest real files of each kind the sniffer recognises.
export const PDF_BYTES = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
export const PNG_BYTES = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
export const EXE_BYTES = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(64, 0x90), Buffer.from([0x00, 0x01, 0xff])]);

/** A fresh directory for the file storage, and what it holds. */
export function tempStorageDir(): { dir: string; files(): string[]; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'lead-files-'));
  const walk = (folder: string): string[] =>
    readdirSync(folder).flatMap((entry) => {
      const full = path.join(folder, entry);
      return statSync(full).isDirectory() ? walk(full) : [path.relative(dir, full).split(path.sep).join('/')];
    });
  return { dir, files: () => walk(dir), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  text: string;
  /** The Message-ID header, as sent. */
  messageId: string;
}

export interface TestSmtpServer {
  url: string;
  /** Messages accepted: the server answered 250 on a connection that was still open. */
  received: ReceivedMail[];
  /** Every message whose content arrived, accepted or not (its sender may have died before the reply). */
  arrived: ReceivedMail[];
  /** When set, the server refuses every recipient with this reply. */
  rejectWith: string | null;
  /** A slow server: each message's reply waits this long after its content arrived. */
  replyDelayMs: number;
  /** When set, replies also wait for this (a test holds a message in flight). */
  holdReplies: Promise<void> | null;
  /** Called when a message's content has arrived, before the reply. */
  onArrival: ((mail: ReceivedMail) => void) | null;
  close(): Promise<void>;
}

function headerValue(raw: string, name: string): string {
  const match = new RegExp(`^${name}:\\s*((?:.*)(?:\\r?\\n[ \\t].*)*)`, 'im').exec(raw);
  return (match?.[1] ?? '').replace(/\r?\n[ \t]/g, ' ').trim();
}

function bodyText(raw: string): string {
  const body = raw.split(/\r?\n\r?\n/).slice(1).join('\n\n');
  // nodemailer sends plain text as quoted-printable when lines are long or non-ASCII.
  if (/content-transfer-encoding:\s*quoted-printable/i.test(raw)) {
    return Buffer.from(
      body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_all, hex: string) => String.fromCharCode(parseInt(hex, 16))),
      'latin1',
    ).toString('utf8');
  }
  if (/content-transfer-encoding:\s*base64/i.test(raw)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/** A real SMTP server on 127.0.0.1 (a free port), no TLS, no auth. */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const closedSessions = new Set<string>();
  const state: TestSmtpServer = {
    url: '',
    received,
    arrived: [],
    rejectWith: null,
    replyDelayMs: 0,
    holdReplies: null,
    onArrival: null,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const options: SMTPServerOptions = {
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (state.rejectWith) {
        const error = new Error(state.rejectWith) as Error & { responseCode: number };
        error.responseCode = 550;
        callback(error);
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw,
          subject: headerValue(raw, 'Subject'),
          text: bodyText(raw),
          messageId: headerValue(raw, 'Message-ID'),
        };
        state.arrived.push(mail);
        state.onArrival?.(mail);
        const reply = (): void => {
          // A reply to a sender that is gone was never received: the message was not delivered.
          if (!closedSessions.has(session.id)) received.push(mail);
          callback();
        };
        if (state.replyDelayMs === 0 && !state.holdReplies) {
          reply();
          return;
        }
        const held = state.holdReplies ?? Promise.resolve();
        void Promise.all([held, new Promise((resolve) => setTimeout(resolve, state.replyDelayMs))]).then(reply);
      });
    },
    onClose(session) {
      closedSessions.add(session.id);
    },
  };
  const server = new SMTPServer(options);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  state.url = `smtp://127.0.0.1:${port}`;
  return state;
}

/** Every field of LeadRecord, for GraphQL selections that must equal the REST body. */
export const LEAD_RECORD_SELECTION = `
  id dealership_id contact_id website_id location_id car_id model_id model_variant_id colour_id team_member_id user_id page_id
  name last_name email phone user_email customer_address dob message dealership_slug website_slug category source marketing_source
  stocknum provider provider_id certified golden send_customer_email lead_state lead_status sms_verified tags opt_in_to_marketing
  delay_customer_email_minutes delay_dealership_notification_minutes disable_strict_validation time_on_site_seconds time_to_submit_seconds
  fields charge_breakdown created_at updated_at
  payment { id amount car_id payment_processor_id external_transaction_id }
  address { street city state state_long country postcode }
  files { id file_type byte_size content_type sha256 created_at }`;

export const CREATE_LEAD = `mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { ${LEAD_RECORD_SELECTION} } } }`;
export const UPDATE_LEAD = `mutation ($id: Int!, $lead: LeadUpdateInput!) { update_lead(id: $id, lead: $lead) { lead { ${LEAD_RECORD_SELECTION} } } }`;

/** A LeadRecord with every optional field empty; tests spread what they expect on top. */
export function emptyRecord(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    contact_id: null, website_id: null, location_id: null, car_id: null, model_id: null, model_variant_id: null, colour_id: null,
    team_member_id: null, user_id: null, page_id: null, name: null, last_name: null, email: null, phone: null, user_email: null,
    customer_address: null, dob: null, message: null, dealership_slug: null, website_slug: null, marketing_source: null, stocknum: null,
    provider: null, provider_id: null, certified: false, golden: false, send_customer_email: true, lead_state: 'new', lead_status: 'open',
    sms_verified: false, tags: [], opt_in_to_marketing: false, delay_customer_email_minutes: null, delay_dealership_notification_minutes: null,
    disable_strict_validation: false, time_on_site_seconds: null, time_to_submit_seconds: null, fields: {}, charge_breakdown: null,
    payment: null, address: null, files: [],
    ...fields,
  };
}

