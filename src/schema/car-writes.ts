// Spec 4.1 (update car, PUT /api/cars/{id}) and 4.19 (reserve flag, PUT /api/v1/cars/{id}/reserve).
// The REST body is every field of these return types, so they are the documented write answers
// exactly, kept apart from the graph `Car` type of src/schema/car.ts.
import { builder, graphOnly } from '../builder.ts';
import { requireActor } from '../auth/scope.ts';
import { setCarReserved } from '../domain/car-reservations.ts';
import { carRecord } from '../domain/car-record.ts';
import { updateCar, type CarCustomAttribute, type UpdateCarResult } from '../domain/car-updates.ts';
import { jsonAttributes, jsonStrings } from '../domain/json-columns.ts';
import { inputFromZod } from './input-from-zod.ts';

/** The car record's input type, read from its one declaration (src/domain/car-record.ts). */
const CarInput = inputFromZod(builder, 'CarInput', carRecord);

const CarRecordCustomAttribute = builder.objectRef<CarCustomAttribute>('CarRecordCustomAttribute').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
    value: t.exposeString('value'),
  }),
});

/** The stored car as written by update_car: the fields of 2.1 (dates as year-month-day) and the record's own. */
const CarRecord = builder.prismaObject('Car', {
  variant: 'CarRecord',
  fields: (t) => ({
    id: t.exposeInt('id'),
    slug: t.exposeString('slug'),
    stocknum: t.exposeString('stocknum'),
    dealership_id: t.exposeInt('dealership_id'),
    location_id: t.exposeInt('location_id', { nullable: true }),
    rego: t.exposeString('rego', { nullable: true }),
    rego_expiry: t.expose('rego_expiry', { type: 'Date', nullable: true }),
    rego_state: t.exposeString('rego_state', { nullable: true }),
    vin: t.exposeString('vin', { nullable: true }),
    odometer: t.exposeInt('odometer', { nullable: true }),
    dapprice: t.exposeInt('dapprice', { nullable: true }),
    egcprice: t.exposeInt('egcprice', { nullable: true }),
    advertised_price: t.exposeString('advertised_price', { nullable: true }),
    make: t.exposeString('make'),
    model: t.exposeString('model'),
    badge: t.exposeString('badge', { nullable: true }),
    series: t.exposeString('series', { nullable: true }),
    year: t.exposeInt('year'),
    body: t.exposeString('body', { nullable: true }),
    colour: t.exposeString('colour', { nullable: true }),
    interior_colour: t.exposeString('interior_colour', { nullable: true }),
    transmission: t.exposeString('transmission', { nullable: true }),
    fuel: t.exposeString('fuel', { nullable: true }),
    drive: t.exposeString('drive', { nullable: true }),
    doors: t.exposeInt('doors', { nullable: true }),
    seats: t.exposeInt('seats', { nullable: true }),
    redbook_code: t.exposeString('redbook_code', { nullable: true }),
    nvic_code: t.exposeString('nvic_code', { nullable: true }),
    dealercomments: t.exposeString('dealercomments', { nullable: true }),
    features: t.stringList({ resolve: (car) => jsonStrings(car.features) }),
    status: t.exposeString('status'),
    car_type: t.exposeString('car_type'),
    item_type: t.exposeString('item_type'),
    compliance_date: t.expose('compliance_date', { type: 'Date', nullable: true }),
    build_date: t.expose('build_date', { type: 'Date', nullable: true }),
    external_video_url: t.exposeString('external_video_url', { nullable: true }),
    show_on_dealer_website: t.exposeBoolean('show_on_dealer_website'),
    load_to_carsales: t.exposeBoolean('load_to_carsales'),
    load_to_autotrader: t.exposeBoolean('load_to_autotrader'),
    load_to_drive: t.exposeBoolean('load_to_drive'),
    grey_market_import: t.exposeBoolean('grey_market_import'),
    subscription_plan_id: t.exposeString('subscription_plan_id', { nullable: true }),
    certified: t.exposeBoolean('certified'),
    custom_attributes: t.field({ type: [CarRecordCustomAttribute], resolve: (car) => jsonAttributes(car.custom_attributes) }),
    locked_fields: t.stringList({ resolve: (car) => jsonStrings(car.locked_fields) }),
    images: t.stringList({
      description: 'Photo URLs in display order.',
      select: { photos: { select: { url: true }, orderBy: [{ position: 'asc' }, { id: 'asc' }] } },
      resolve: (car) => car.photos.map((photo) => photo.url),
    }),
    reserved: t.exposeBoolean('reserved'),
    reserved_at: t.expose('reserved_at', { type: 'DateTime', nullable: true }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
  }),
});

const UpdateCarPayload = builder.objectRef<UpdateCarResult>('UpdateCarPayload').implement({
  description: 'The answer of update_car: the stored car after the update, and the supplied fields its locks left unchanged.',
  fields: (t) => ({
    car: t.prismaField({
      type: CarRecord,
      resolve: (query, result, _args, context) => context.db.car.findUniqueOrThrow({ ...query, where: { id: result.carId } }),
    }),
    skipped_fields: t.stringList({
      description: 'Fields of the request left unchanged because the car has them in locked_fields.',
      resolve: (result) => result.skippedFields,
    }),
    node: t.prismaField({
      type: 'Car',
      nullable: true,
      ...graphOnly,
      description: 'The updated car as the graph’s Car (with its node_id), so a normalised client cache updates the Car it holds.',
      resolve: (query, result, _args, context) => context.db.car.findUniqueOrThrow({ ...query, where: { id: result.carId } }),
    }),
  }),
});

builder.mutationField('update_car', (t) =>
  t.field({
    type: UpdateCarPayload,
    description: 'Update a car record (PUT /api/cars/{id} with {"car": {...}}), in one transaction.',
    authScopes: { permission: 'update:car' },
    args: {
      id: t.arg.int({ required: true, description: 'Car id (ignored when car.match_existing_car_by_stocknum is true).' }),
      car: t.arg({ type: CarInput, required: true, description: 'The car fields, sent under "car": {"car": {"stocknum": "…", "dealership_id": 1, …}}.' }),
    },
    resolve: (_root, { id, car }, context) => updateCar(context.db, requireActor(context), { id, car }, context.now()),
  }),
);

const CarReservation = builder.prismaObject('Car', {
  variant: 'CarReservation',
  description: 'A car’s reservation state, as reserve_car leaves it.',
  fields: (t) => ({
    id: t.exposeInt('id'),
    slug: t.exposeString('slug'),
    stocknum: t.exposeString('stocknum'),
    reserved: t.exposeBoolean('reserved'),
    reserved_at: t.expose('reserved_at', { type: 'DateTime', nullable: true }),
    node: t.prismaField({
      type: 'Car',
      nullable: true,
      ...graphOnly,
      description: 'The car as the graph’s Car (with its node_id), so a normalised client cache updates the Car it holds.',
      resolve: (query, car, _args, context) => context.db.car.findUniqueOrThrow({ ...query, where: { id: car.id } }),
    }),
  }),
});

builder.mutationField('reserve_car', (t) =>
  t.prismaField({
    type: CarReservation,
    description:
      'Reserve a free car (reserved: true; 409 car_already_reserved when it is reserved) or release it (reserved: false, ' +
      'idempotent) (PUT /api/v1/cars/{id}/reserve?reserved=true|false). 403 invalid_dealership for a car of a dealership the key cannot use; 404 car_not_found.',
    authScopes: { permission: 'reserve:car' },
    args: {
      id: t.arg.string({ required: true, description: 'Car id, slug or custom slug.' }),
      reserved: t.arg.boolean({ required: true, description: 'true reserves the car, false releases it.' }),
    },
    resolve: async (query, _root, args, context) => {
      const id = await setCarReserved(context, { id: args.id, reserved: args.reserved }, context.now());
      return context.db.car.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
);
