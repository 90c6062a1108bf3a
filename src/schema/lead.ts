// Spec 4.9 (create lead, POST /api/v1/leads) and 4.8 (update lead, PUT /api/v1/leads/{id}), and the
// lead in the graph. Both writes answer {"lead": LeadRecord}: a plain record type (the REST body is
// every field of it), separate from the graph's `Lead`, which links to the lead's contact, car and the rest.
import { deniedAsUnauthorized } from '../auth/field-access.ts';
import { builder, graphOnly, nodeById, keepNodeIdField, type Types } from './builder.ts';
import { textOrEmpty } from './always-present.ts';
import { personalData } from '../auth/field-guards.ts';
import { requireActor } from '../auth/scope.ts';
import type { Context } from '../context.ts';
import { createLead, type LeadWriteDeps } from '../domain/leads/create.ts';
import { IDEMPOTENCY_HEADER, idempotencyKeyOf } from '../domain/leads/idempotency.ts';
import { leadListWhere } from '../domain/leads/queries.ts';
import { jsonObject, jsonStrings } from '../domain/json-columns.ts';
import type { LeadRecord, LeadRecordAddress, LeadRecordFile, LeadRecordPayment } from '../domain/leads/record.ts';
import { updateLead } from '../domain/leads/update.ts';
import { DOCUMENT_REQUEST, DOCUMENT_TYPES } from '../domain/leads/values.ts';
import { documentTypeSchema, leadCategorySchema, leadFileTypeSchema, leadInputSchema } from '../domain/leads/input-record.ts';
import type { z } from 'zod';
import { inputFromZod, type AnyEnumRef } from './input-from-zod.ts';
import { LeadCategoryEnum, LeadDocumentTypeEnum, LeadFileTypeEnum } from './lead-values.ts';
import { CAPPED_COUNT_TAKE, cappedCountFields } from './field-builders.ts';

// ─────────────── the lead's own fields, for both lead types ───────────────

/**
 * The lead's own fields, defined once for both lead types. LeadRecord reads them from the plain record a
 * retried create replays from its stored JSON, so it cannot be a Prisma object; dates are ISO text there.
 */
type LeadColumns = Omit<LeadRecord, 'payment' | 'address' | 'files' | 'dob' | 'created_at' | 'updated_at' | 'tags' | 'fields'> & {
  dob: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
  /** Free JSON in the column, a list of strings in the record. */
  tags: unknown;
  /** Free JSON in the column, an object in the record. */
  fields: unknown;
};

function leadColumnFields(t: PothosSchemaTypes.ObjectFieldBuilder<Types, LeadColumns>) {
  const int = (name: Parameters<typeof t.exposeInt>[0]) => t.exposeInt(name, { nullable: true });
  const text = (name: Parameters<typeof t.exposeString>[0]) => t.exposeString(name, { nullable: true });
  const personal = (name: Parameters<typeof t.exposeString>[0]) => t.exposeString(name, personalData);
  return {
    databaseId: t.exposeInt('id'),
    dealership_id: t.exposeInt('dealership_id'),
    contact_id: int('contact_id'),
    website_id: int('website_id'),
    location_id: int('location_id'),
    car_id: int('car_id'),
    model_id: int('model_id'),
    model_variant_id: int('model_variant_id'),
    colour_id: int('colour_id'),
    team_member_id: int('team_member_id'),
    user_id: int('user_id'),
    page_id: int('page_id'),
    last_name: personal('last_name'),
    user_email: personal('user_email'),
    customer_address: personal('customer_address'),
    dob: t.expose('dob', { type: 'Date', ...personalData }),
    message: text('message'),
    dealership_slug: text('dealership_slug'),
    website_slug: text('website_slug'),
    category: t.expose('category', {
      type: LeadCategoryEnum,
      description: 'The kind of enquiry (spec list of lead categories, e.g. New Vehicle Enquiry).',
    }),
    source: t.exposeString('source'),
    marketing_source: text('marketing_source'),
    stocknum: text('stocknum'),
    provider: text('provider'),
    provider_id: text('provider_id'),
    certified: t.exposeBoolean('certified'),
    golden: t.exposeBoolean('golden'),
    send_customer_email: t.exposeBoolean('send_customer_email'),
    lead_state: t.exposeString('lead_state'),
    lead_status: t.exposeString('lead_status'),
    sms_verified: t.exposeBoolean('sms_verified'),
    tags: t.stringList({ resolve: (lead) => jsonStrings(lead.tags) }),
    opt_in_to_marketing: t.exposeBoolean('opt_in_to_marketing'),
    delay_customer_email_minutes: int('delay_customer_email_minutes'),
    delay_dealership_notification_minutes: int('delay_dealership_notification_minutes'),
    disable_strict_validation: t.exposeBoolean('disable_strict_validation'),
    time_on_site_seconds: int('time_on_site_seconds'),
    time_to_submit_seconds: int('time_to_submit_seconds'),
    fields: t.field({ type: 'JSONObject', resolve: (lead) => jsonObject(lead.fields) }),
    charge_breakdown: t.expose('charge_breakdown', { type: 'JSON', nullable: true }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
  };
}

// ─────────────── the lead's parts: one type each, for both lead types ───────────────

/**
 * A part as either lead type hands it over: LeadRecord's plain record (dates as ISO text) or the graph
 * Lead's Prisma row (dates as Date), which has these columns and more (lead_id, storage_key). The
 * record's payment has no created_at: it is the spec's REST body, kept as a retried create replays it.
 */
type LeadPaymentPart = LeadRecordPayment & { created_at?: Date };
type LeadFilePart = Omit<LeadRecordFile, 'created_at'> & { created_at: Date | string };

const LeadPaymentRef = builder.objectRef<LeadPaymentPart>('LeadPayment').implement({
  description: 'A payment made with a lead.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    amount: t.exposeFloat('amount'),
    car_id: t.exposeInt('car_id', { nullable: true }),
    payment_processor_id: t.exposeInt('payment_processor_id', { nullable: true }),
    external_transaction_id: t.exposeString('external_transaction_id', { nullable: true }),
    // Graph-only, so the REST body of create/update keeps the spec's payment shape. The graph's Lead
    // hands over the row with its date; a write answer's record has none, so the row is read for it
    // (through the scoped client: the payment is of the lead the key just wrote).
    created_at: t.field({
      type: 'DateTime',
      ...graphOnly,
      resolve: async (payment, _args, context) =>
        payment.created_at ??
        (await context.db.leadPayment.findUniqueOrThrow({ where: { id: payment.id }, select: { created_at: true } })).created_at,
    }),
  }),
});

const LeadAddressRef = builder.objectRef<LeadRecordAddress>('LeadAddress').implement({
  description: 'The customer’s postal address on a lead.',
  fields: (t) => ({
    street: t.exposeString('street', { nullable: true }),
    city: t.exposeString('city', { nullable: true }),
    state: t.exposeString('state', { nullable: true }),
    state_long: t.exposeString('state_long', { nullable: true }),
    country: t.exposeString('country', { nullable: true }),
    postcode: t.exposeInt('postcode', { nullable: true }),
  }),
});

const LeadFileRef = builder.objectRef<LeadFilePart>('LeadFile').implement({
  description: 'An attachment’s facts; the bytes stay in the file storage.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    file_type: t.expose('file_type', { type: LeadFileTypeEnum }),
    byte_size: t.exposeInt('byte_size'),
    content_type: t.exposeString('content_type', { nullable: true, description: 'Read from the bytes, never from the client.' }),
    sha256: t.exposeString('sha256'),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});

// ───────────────────────────── the write answer (REST body) ─────────────────────────────

const LeadRecordRef = builder.objectRef<LeadRecord>('LeadRecord').implement({
  variantOf: {
    record: 'Lead',
    reason: "A write's answer, kept for `Idempotency-Key` replays: name, e-mail and phone are never null; `Lead`'s are personal data.",
  },
  description:
    'A lead as create and update answer it: the stored lead fields (phone in E.164), what it was linked to, and its state. ' +
    'name, email and phone are always sent back to the key that wrote the lead (empty when not stored); the other personal data ' +
    '(last_name, user_email, customer_address, dob, address) is null without read:personal_data.',
  fields: (t) => ({
    ...leadColumnFields(t),
    // The writer's own echo: the fields a lead is identified by, never hidden from the key that wrote them.
    name: t.string({ description: 'The customer’s full name.', resolve: (lead) => textOrEmpty(lead.name) }),
    email: t.string({ description: 'The customer’s e-mail address.', resolve: (lead) => textOrEmpty(lead.email) }),
    phone: t.string({ description: 'E.164.', resolve: (lead) => textOrEmpty(lead.phone) }),
    payment: t.expose('payment', { type: LeadPaymentRef, nullable: true }),
    address: t.expose('address', {
      type: LeadAddressRef,
      ...personalData,
      description: 'The customer’s address, as sent with address_attributes.',
    }),
    files: t.expose('files', { type: [LeadFileRef] }),
  }),
});

const LeadPayload = builder.objectRef<{ lead: LeadRecord }>('LeadPayload').implement({
  description: 'The answer of create_lead and update_lead: {"lead": {...}}.',
  fields: (t) => ({
    lead: t.expose('lead', { type: LeadRecordRef, description: 'The lead as stored, in the REST shape.' }),
    node: t.prismaField({
      type: 'Lead',
      nullable: true,
      ...graphOnly,
      description: 'The lead as the graph’s Lead (with its global id), so a normalised client cache updates the Lead it holds.',
      resolve: (query, payload, _args, context) => context.db.lead.findUniqueOrThrow({ ...query, where: { id: payload.lead.id } }),
    }),
  }),
});

// The inputs, from the lead's one zod declaration. Every field may be left out: what is required is the
// domain's rule, so a missing field is a 422 naming it on both doors.
const enums = new Map<z.core.$ZodType, AnyEnumRef<Types>>([
  [leadCategorySchema, LeadCategoryEnum],
  [leadFileTypeSchema, LeadFileTypeEnum],
  [documentTypeSchema, LeadDocumentTypeEnum],
]);

const LeadInput = inputFromZod(builder, 'LeadInput', leadInputSchema, {
  enums,
  description: 'A new lead: email, phone, dealership_id, category and source are required.',
});

const LeadUpdateInput = inputFromZod(builder, 'LeadUpdateInput', leadInputSchema, {
  enums,
  description:
    'Changes to a lead (the names and rules of a new lead): a field left out keeps its value, null clears an optional one ' +
    '(payment_attributes / address_attributes: null removes them); email, phone, category and source cannot be cleared. ' +
    'Files sent are added to the lead’s files.',
});

function writeDeps(context: Context): LeadWriteDeps {
  return {
    db: context.db,
    actor: requireActor(context),
    now: context.now(),
    storage: context.files,
    maxFileBytes: context.config.leadFileMaxBytes,
    leadSources: context.config.leadSources,
    idempotencyTtlMs: context.config.idempotencyTtlMs,
    // Read only when a file has to be cleaned up: the request's logger is made on first use.
    get logger() {
      return context.logger;
    },
    events: context.events,
  };
}

builder.mutationFields((t) => ({
  create_lead: t.field({
    type: LeadPayload,
    description:
      `Creates a lead, its contact link and its notifications in one transaction. 404 dealership_not_found for a dealership the key cannot use. ` +
      `An ${IDEMPOTENCY_HEADER} header makes retries safe: the same key and body answer the first result; the same key with another body is 422 idempotency_key_reused.`,
    authScopes: { permission: 'create:lead' },
    extensions: deniedAsUnauthorized,
    args: { lead: t.arg({ type: LeadInput, required: true, description: 'The lead’s fields, sent under "lead".' }) },
    resolve: async (_root, args, context) => {
      const idempotencyKey = idempotencyKeyOf(context.request);
      return { lead: await createLead(writeDeps(context), args.lead, idempotencyKey) };
    },
  }),
  update_lead: t.field({
    type: LeadPayload,
    description:
      'Updates a lead of up to 3 days (72 hours) old; only the fields sent change. ' +
      '404 lead_not_found (also for another dealership’s lead); 409 lead_too_old after 72 hours.',
    authScopes: { permission: 'update:lead' },
    extensions: deniedAsUnauthorized,
    args: {
      id: t.arg.int({ required: true, description: 'The lead’s id.' }),
      lead: t.arg({ type: LeadUpdateInput, required: true, description: 'The changes, sent under "lead".' }),
    },
    resolve: async (_root, args, context) => ({ lead: await updateLead(writeDeps(context), args.id, args.lead) }),
  }),
}));

// ───────────────────────────── the graph ─────────────────────────────

const LeadRef = builder.prismaNode('Lead', {
  readPermission: 'read:lead',
  ...nodeById,
  description:
    'A sales lead. Personal data is null without read:personal_data; the contact and the car need read:contact and read:car ' +
    '(null without), so read:lead does not open them.',
  fields: (t) => ({
    contact: t.relation('contact', { nullable: true }),
    car: t.relation('car', { nullable: true }),
    // The parts are LeadRecord's types too; the Prisma rows have their fields (see LeadPaymentPart).
    payment: t.field({ type: LeadPaymentRef, nullable: true, select: { payment: true }, resolve: (lead) => lead.payment }),
    address: t.field({
      type: LeadAddressRef,
      ...personalData,
      description: 'The customer’s address, as sent with address_attributes.',
      select: { address: true },
      resolve: (lead) => lead.address,
    }),
    files: t.field({ type: [LeadFileRef], select: { files: { orderBy: { id: 'asc' } } }, resolve: (lead) => lead.files }),
    name: t.exposeString('name', { ...personalData, description: 'The customer’s full name.' }),
    email: t.exposeString('email', { ...personalData, description: 'The customer’s e-mail address.' }),
    phone: t.exposeString('phone', { ...personalData, description: 'The customer’s phone number.' }),
    document_type: t.field({
      type: LeadDocumentTypeEnum,
      nullable: true,
      description: 'What a Document Request lead asks for (its fields.document_type); null for other categories.',
      resolve: (lead) => {
        const requested = jsonObject(lead.fields).document_type;
        return lead.category === DOCUMENT_REQUEST && (DOCUMENT_TYPES as readonly unknown[]).includes(requested) ? String(requested) : null;
      },
    }),
  }),
});
keepNodeIdField(LeadRef);

builder.objectFields(LeadRef, leadColumnFields);

builder.prismaObjectField('Car', 'leads', (t) =>
  t.relatedConnection('leads', {
    // Lead is guarded by read:lead wherever it is reached, so without it the
    // connection is null; rows and count are the scoped client's, so only the key's dealerships' leads.
    cursor: 'id',
    nullable: true,
    totalCount: true,
    description: 'The car’s leads, newest first; null without read:lead.',
    query: { orderBy: [{ created_at: 'desc' }, { id: 'desc' }] },
  }),
);

builder.queryFields((t) => ({
  lead: t.prismaField({
    type: 'Lead',
    nullable: true,
    description:
      'A lead by id; null when there is none among the dealerships the key reaches (so one missing lead does not fail the rest of the answer).',
    authScopes: { permission: 'read:lead' },
    args: { id: t.arg.int({ required: true, description: 'The lead id.' }) },
    resolve: (query, _root, args, context) => context.db.lead.findUnique({ ...query, where: { id: args.id } }),
  }),
  leads: t.prismaConnection(
    {
      type: 'Lead',
      cursor: 'id',
      description:
        'The leads of the key’s dealerships, newest first; filters are exact matches. 404 dealership_not_found for a dealership the key cannot use.',
      authScopes: { permission: 'read:lead' },
      args: {
        dealership_id: t.arg.int({ description: 'Only leads of this dealership.' }),
        contact_id: t.arg.int({ description: 'Only leads of this contact.' }),
        car_id: t.arg.int({ description: 'Only leads about this car.' }),
        category: t.arg({ type: LeadCategoryEnum, description: 'Only leads of this category.' }),
        lead_state: t.arg.string({ description: 'Only leads in this state.' }),
      },
      // Capped (TOTAL_COUNT_CAP): a platform-wide key's count would otherwise read every lead.
      totalCount: async (_connection, args, context) =>
        context.db.lead.count({ where: await leadListWhere(context.db, args), take: CAPPED_COUNT_TAKE }),
      resolve: async (query, _root, args, context) =>
        context.db.lead.findMany({ ...query, where: await leadListWhere(context.db, args), orderBy: { id: 'desc' } }),
    },
    { fields: cappedCountFields },
  ),
}));
