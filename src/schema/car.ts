// Cars: performance figures (spec 4.2, record 2.2) and payment processors (4.3) on both doors, and
// the Car graph type with its root fields for front-end teams (GraphQL only). Every car read goes
// through the caller's scoped client, so a car outside the key's dealerships is exactly like a car
// that does not exist.
import { builder, nodeById, keepNodeIdField } from './builder.ts';
import { numberOrZero, textOrEmpty } from './always-present.ts';
import {
  carPerformance,
  loadCarFigures,
  loadCarLeads,
  type CarFigures,
  type CarPerformance,
  type CarPerformanceLead,
  type CarPerformancePriceChange,
} from '../domain/car-performance.ts';
import { truncatedFieldDescription, WHOLE_LIST_BOUND } from '../domain/whole-lists.ts';
import { CAR_LOOKUP_BYS, CAR_LOOKUP_BY_MEANINGS } from '../domain/cars.ts';
import { idOrSlug, recordNamed, recordNameWhere } from '../domain/record-names.ts';
import { jsonAttributes, jsonStrings } from '../domain/json-columns.ts';
import { carPaymentProcessors, processorAuthorizationKey } from '../domain/payment-processors.ts';
import type { ScopedDb } from '../db/scoped.ts';
import { Dealership, Location } from './dealership.ts';
import { CAPPED_COUNT_TAKE, cappedCountFields, type PrismaFieldBuilder } from './field-builders.ts';

// ─── spec 2.2: the performance record ───

const CarPerformanceLeadRef = builder.objectRef<CarPerformanceLead>('CarPerformanceLead').implement({
  variantOf: { record: 'Lead', reason: 'Computed with the performance figures, which `read:car` reads; `Lead` needs `read:lead`.' },
  description: 'A lead about the car, as the performance record lists it.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    source: t.exposeString('source'),
    lead_status: t.exposeString('lead_status'),
    lead_state: t.exposeString('lead_state'),
  }),
});

const CarPerformancePriceChangeRef = builder.objectRef<CarPerformancePriceChange>('CarPerformancePriceChange').implement({
  description: 'One change of the car’s prices.',
  fields: (t) => ({
    updated_at: t.expose('updated_at', { type: 'DateTime', description: 'When the price changed.' }),
    dapprice: t.float({
      description: 'The drive-away price after the change; 0 when the car had none.',
      resolve: (change) => numberOrZero(change.dapprice),
    }),
    egcprice: t.float({
      description: 'The price excluding government charges after the change; 0 when the car had none.',
      resolve: (change) => numberOrZero(change.egcprice),
    }),
  }),
});

/**
 * The record as car_performance answers it (with its leads), or as a page of cars does (figures
 * only: their leads are read when asked, by loadCarLeads).
 */
type PerformanceRecord = CarFigures & Partial<Pick<CarPerformance, 'leads' | 'leads_truncated'>>;

const CarPerformanceRef = builder.objectRef<PerformanceRecord>('CarPerformance').implement({
  description: "A car's performance figures, each computed from the stored facts (leads, photos, calls, prices, views) when asked.",
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    car_type: t.exposeString('car_type'),
    status: t.exposeString('status'),
    make: t.exposeString('make'),
    model: t.exposeString('model'),
    vin: t.string({ description: 'Empty for a car recorded without a VIN.', resolve: (performance) => textOrEmpty(performance.vin) }),
    stocknum: t.exposeString('stocknum'),
    slug: t.exposeString('slug'),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
    days_old: t.exposeInt('days_old', { description: 'Whole days since the car was listed, up to its sold date once sold.' }),
    leads_count: t.exposeInt('leads_count'),
    photos_count: t.exposeInt('photos_count'),
    phone_calls: t.exposeInt('phone_calls', { description: 'Phone calls attributed to the car.' }),
    price_changes_count: t.exposeInt('price_changes_count', { description: 'Price changes after the listing price.' }),
    days_to_twenty_photos: t.exposeInt('days_to_twenty_photos', {
      nullable: true,
      description: 'Whole days from listing to the 20th photo; null until the car has 20 photos.',
    }),
    views: t.exposeInt('views'),
    start_price: t.float({
      description: 'The listing price (dapprice, else egcprice); 0 for a car that has never had a price.',
      resolve: (performance) => numberOrZero(performance.start_price),
    }),
    last_price_change: t.expose('last_price_change', {
      type: 'DateTime',
      nullable: true,
      description: 'When the price last changed; null if it never changed.',
    }),
    sold_date: t.expose('sold_date', { type: 'Date', nullable: true, description: 'Year-month-day; null unless sold.' }),
    price_type: t.exposeString('price_type', {
      description: 'advertised_price when set, else the price that is set: dapprice (the default) or egcprice.',
    }),
    leads: t.field({
      type: [CarPerformanceLeadRef],
      description: `The car’s leads, oldest first: at most ${WHOLE_LIST_BOUND} (leads_truncated says when there are more; leads_count counts them all).`,
      resolve: async (performance, _args, context) => performance.leads ?? (await loadCarLeads(context, performance.id))?.entries ?? [],
    }),
    leads_truncated: t.boolean({
      description: truncatedFieldDescription('leads'),
      resolve: async (performance, _args, context) =>
        performance.leads_truncated ?? (await loadCarLeads(context, performance.id))?.truncated ?? false,
    }),
    price_changes: t.expose('price_changes', {
      type: [CarPerformancePriceChangeRef],
      description: 'The changes after the listing price, oldest first.',
    }),
  }),
});

const CarLookupBy = builder.enumType('CarLookupBy', {
  description: 'How car_performance reads its id.',
  values: Object.fromEntries(CAR_LOOKUP_BYS.map((by) => [by, { description: CAR_LOOKUP_BY_MEANINGS[by] }])) as Record<
    (typeof CAR_LOOKUP_BYS)[number],
    { description: string }
  >,
});

builder.queryField('car_performance', (t) =>
  t.field({
    type: CarPerformanceRef,
    description: "A car's performance figures. id is a car ID, slug or custom slug, or a VIN with lookup_by: vin.",
    authScopes: { permission: 'read:car' },
    args: {
      id: t.arg.string({ required: true, description: 'The car’s id.' }),
      lookup_by: t.arg({ type: CarLookupBy, description: 'vin: the id is a VIN. Left out: the id is an ID, slug or custom slug.' }),
    },
    resolve: (_root, args, context) => carPerformance(context, args.id, args.lookup_by, context.now()),
  }),
);

// ─── spec 4.3: payment processors ───

type ProcessorRow = Awaited<ReturnType<ScopedDb['paymentProcessor']['findMany']>>[number];

const CarPaymentProcessor = builder.objectRef<ProcessorRow>('CarPaymentProcessor').implement({
  readPermission: 'show:payment_processor',
  description: 'A payment processor the dealership (or one of its websites) takes payments through.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    authorization_type: t.exposeString('authorization_type'),
    authorization_key: t.string({
      // Always part of the record, and a secret: a key without show:payment_processor_secret is
      // refused the whole answer (403; the REST route checks it up front), never sent a record without it.
      authScopes: { permission: 'show:payment_processor_secret' },
      description: 'A secret: reading it needs show:payment_processor_secret as well (403 without it).',
      resolve: (processor, _args, context) => processorAuthorizationKey(context.config, processor),
    }),
    merchant_id: t.exposeString('merchant_id'),
    google_merchant_id: t.string({
      description: 'Empty when the processor has no Google merchant id.',
      resolve: (processor) => textOrEmpty(processor.google_merchant_id),
    }),
    supports_all_types: t.exposeBoolean('supports_all_types'),
    apple_pay_enabled: t.exposeBoolean('apple_pay_enabled'),
    google_pay_enabled: t.exposeBoolean('google_pay_enabled'),
    types: t.stringList({ resolve: (processor) => jsonStrings(processor.types) }),
    deposit_amount: t.exposeInt('deposit_amount'),
  }),
});

const CarPaymentProcessors = builder.objectRef<{ payment_processors: ProcessorRow[] }>('CarPaymentProcessors').implement({
  description: 'The payment processors a website can take a car’s payments with.',
  fields: (t) => ({ payment_processors: t.expose('payment_processors', { type: [CarPaymentProcessor] }) }),
});

builder.queryField('car_payment_processors', (t) =>
  t.field({
    type: CarPaymentProcessors,
    description:
      "The payment processors of the car's dealership, by id; with `website` (ID, slug or custom slug of a website of that dealership), that website's own processors, else the dealership defaults.",
    authScopes: { permission: 'show:payment_processor' },
    args: {
      id: t.arg.string({ required: true, description: 'The car’s id.' }),
      website: t.arg.string({ description: 'The website (id, slug or custom slug) the car is sold through.' }),
    },
    resolve: async (_root, args, context) => ({ payment_processors: await carPaymentProcessors(context.db, args.id, args.website) }),
  }),
);

// ─── the graph for front-end teams ───

builder.prismaObject('CarPhoto', {
  description: 'A photo of a car.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    url: t.exposeString('url'),
    position: t.exposeInt('position'),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});

builder.prismaObject('CarPriceChange', {
  description: 'One row per change of either price; the first row is the listing price.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    dapprice: t.exposeInt('dapprice', { nullable: true }),
    egcprice: t.exposeInt('egcprice', { nullable: true }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});

const CarCustomAttribute = builder.objectRef<{ name: string; value: string }>('CarCustomAttribute').implement({
  description: 'A name/value pair the dealership records for a car.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The attribute’s name.' }),
    value: t.exposeString('value', { description: 'The attribute’s value.' }),
  }),
});

/** A car's stored fields, declared once for the graph's Car and update_car's answer. */
export function carColumnFields(t: PrismaFieldBuilder<'Car'>) {
  const text = (name: Parameters<typeof t.exposeString>[0]) => t.exposeString(name, { nullable: true });
  const int = (name: Parameters<typeof t.exposeInt>[0]) => t.exposeInt(name, { nullable: true });
  const date = (name: 'rego_expiry' | 'compliance_date' | 'build_date') => t.expose(name, { type: 'Date', nullable: true });
  return {
    databaseId: t.exposeInt('id'),
    dealership_id: t.exposeInt('dealership_id'),
    location_id: int('location_id'),
    slug: t.exposeString('slug'),
    stocknum: t.exposeString('stocknum'),
    vin: text('vin'),
    rego: text('rego'),
    rego_expiry: date('rego_expiry'),
    rego_state: text('rego_state'),
    odometer: int('odometer'),
    dapprice: int('dapprice'),
    egcprice: int('egcprice'),
    advertised_price: text('advertised_price'),
    make: t.exposeString('make'),
    model: t.exposeString('model'),
    badge: text('badge'),
    series: text('series'),
    year: t.exposeInt('year'),
    body: text('body'),
    colour: text('colour'),
    interior_colour: text('interior_colour'),
    transmission: text('transmission'),
    fuel: text('fuel'),
    drive: text('drive'),
    doors: int('doors'),
    seats: int('seats'),
    redbook_code: text('redbook_code'),
    nvic_code: text('nvic_code'),
    dealercomments: text('dealercomments'),
    features: t.stringList({ select: { features: true }, resolve: (car) => jsonStrings(car.features) }),
    status: t.exposeString('status'),
    car_type: t.exposeString('car_type'),
    item_type: t.exposeString('item_type'),
    compliance_date: date('compliance_date'),
    build_date: date('build_date'),
    external_video_url: text('external_video_url'),
    show_on_dealer_website: t.exposeBoolean('show_on_dealer_website'),
    load_to_carsales: t.exposeBoolean('load_to_carsales'),
    load_to_autotrader: t.exposeBoolean('load_to_autotrader'),
    load_to_drive: t.exposeBoolean('load_to_drive'),
    grey_market_import: t.exposeBoolean('grey_market_import'),
    locked_fields: t.stringList({ select: { locked_fields: true }, resolve: (car) => jsonStrings(car.locked_fields) }),
    subscription_plan_id: text('subscription_plan_id'),
    certified: t.exposeBoolean('certified'),
    custom_attributes: t.field({
      type: [CarCustomAttribute],
      select: { custom_attributes: true },
      resolve: (car) => jsonAttributes(car.custom_attributes),
    }),
    reserved: t.exposeBoolean('reserved'),
    reserved_at: t.expose('reserved_at', { type: 'DateTime', nullable: true }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
  };
}

const CarNode = builder.prismaNode('Car', {
  readPermission: 'read:car',
  ...nodeById,
  fields: (t) => ({
    ...carColumnFields(t),
    model_variant_id: t.exposeInt('model_variant_id', { nullable: true }),
    custom_slug: t.exposeString('custom_slug', { nullable: true }),
    sold_date: t.expose('sold_date', { type: 'Date', nullable: true }),
    dealership: t.relation('dealership', { type: Dealership, nullable: true }),
    // Any reader of the car sees where it is; the location's other fields need index:dealership.
    location: t.relation('location', { type: Location, nullable: true, description: 'The dealership location the car is at.' }),
    model_variant: t.relation('model_variant', { nullable: true }),
    photos: t.relation('photos', { query: { orderBy: [{ position: 'asc' }, { id: 'asc' }] } }),
    price_changes: t.relation('price_changes', {
      description: 'Every price row, oldest first: the listing price, then each change.',
      query: { orderBy: [{ created_at: 'asc' }, { id: 'asc' }] },
    }),
    performance: t.field({
      type: CarPerformanceRef,
      description: 'The figures of GET /api/v1/cars/{id}/performance.json; batched across a page of cars.',
      resolve: async (car, _args, context) => {
        const performance = await loadCarFigures(context, car.id);
        if (!performance) throw new Error(`car ${car.id} disappeared while its performance was computed`);
        return performance;
      },
    }),
  }),
});
keepNodeIdField(CarNode);

/** The `cars` filters, for the page and for its totalCount alike: Prisma leaves out an undefined filter. */
function carListWhere(args: { dealership_id?: number | null; make?: string | null; status?: string | null }) {
  return { dealership_id: args.dealership_id ?? undefined, make: args.make || undefined, status: args.status || undefined };
}

builder.queryFields((t) => ({
  car: t.prismaField({
    type: 'Car',
    nullable: true,
    description: 'A car by ID, slug or custom slug; null when there is none among the dealerships the key reaches.',
    authScopes: { permission: 'read:car' },
    args: { id: t.arg.string({ required: true, description: 'The car’s id.' }) },
    resolve: async (query, _root, args, context) => {
      const name = idOrSlug(args.id);
      // The Car type loads whole rows (no select of its own), so the naming columns are there to pick by.
      return recordNamed(await context.db.car.findMany({ ...query, where: recordNameWhere(name) }), name);
    },
  }),
  cars: t.prismaConnection(
    {
      type: 'Car',
      cursor: 'id',
      description: "The cars of the key's dealerships, by id; filters are exact matches.",
      authScopes: { permission: 'read:car' },
      args: {
        dealership_id: t.arg.int({ description: 'Only this dealership’s cars.' }),
        make: t.arg.string({ description: 'Only cars of this make, as written on the car (e.g. Toyota).' }),
        status: t.arg.string({ description: 'Only cars with this stock status, as the dealership writes it (e.g. available, sold).' }),
      },
      // Capped (TOTAL_COUNT_CAP): a platform-wide key's count would otherwise read every car.
      totalCount: (_connection, args, context) => context.db.car.count({ where: carListWhere(args), take: CAPPED_COUNT_TAKE }),
      resolve: (query, _root, args, context) => context.db.car.findMany({ ...query, where: carListWhere(args), orderBy: { id: 'asc' } }),
    },
    { fields: cappedCountFields },
  ),
}));
