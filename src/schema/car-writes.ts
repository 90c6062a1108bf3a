// Spec 4.1 (update car, PUT /api/cars/{id}) and 4.19 (reserve flag, PUT /api/v1/cars/{id}/reserve).
// The REST body is every field of these answers: variants of the car with the graph Car's columns, plus
// what the REST answer adds (images) and without its relations.
import { answeredByItsRoot } from '../auth/record-access.ts';
import { builder, graphOnly } from './builder.ts';
import { requireActor } from '../auth/scope.ts';
import { setCarReserved } from '../domain/car-reservations.ts';
import { carRecord } from '../domain/car-record.ts';
import { updateCar, type UpdateCarResult } from '../domain/car-updates.ts';
import { carColumnFields } from './car.ts';
import { inputFromZod } from './input-from-zod.ts';
import type { Context } from '../context.ts';

const CarInput = inputFromZod(builder, 'CarInput', carRecord);

/** The graph's Car beside a write's answer, so a normalised client cache updates the Car it holds. */
function carNode<Parent>(what: string, idOf: (parent: Parent) => number) {
  return {
    type: 'Car',
    nullable: true,
    ...graphOnly,
    description: `${what} as the graph’s Car (with its global id), so a normalised client cache updates the Car it holds.`,
    resolve: (query: { include?: object; select?: object }, parent: Parent, _args: object, context: Context) =>
      context.db.car.findUniqueOrThrow({ ...query, where: { id: idOf(parent) } }),
  } as const;
}

/** The stored car as written by update_car: the fields of 2.1 (dates as year-month-day) and the record's own. */
const CarRecord = builder.prismaObject('Car', {
  variant: 'CarRecord',
  variantOf: { record: 'Car', reason: "`update_car`'s answer is the stored row as the spec writes it: `images` as URL strings." },
  description: 'The stored car as update_car writes it: the fields of the car record, dates as year-month-day.',
  ...answeredByItsRoot('update_car answers the car it wrote to a key holding update:car'),
  fields: (t) => ({
    ...carColumnFields(t),
    images: t.stringList({
      description: 'Photo URLs in display order.',
      select: { photos: { select: { url: true }, orderBy: [{ position: 'asc' }, { id: 'asc' }] } },
      resolve: (car) => car.photos.map((photo) => photo.url),
    }),
  }),
});

const UpdateCarPayload = builder.objectRef<UpdateCarResult>('UpdateCarPayload').implement({
  description: 'The answer of update_car: the stored car after the update, and the supplied fields its locks left unchanged.',
  fields: (t) => ({
    car: t.prismaField({
      type: CarRecord,
      description: 'The stored car after the update, with the record’s own fields.',
      resolve: (query, result, _args, context) => context.db.car.findUniqueOrThrow({ ...query, where: { id: result.carId } }),
    }),
    skipped_fields: t.exposeStringList('skippedFields', {
      description: 'Fields of the request left unchanged because the car has them in locked_fields.',
    }),
    node: t.prismaField(carNode('The updated car', (result) => result.carId)),
  }),
});

builder.mutationField('update_car', (t) =>
  t.field({
    type: UpdateCarPayload,
    description: 'Update a car record (PUT /api/cars/{id} with {"car": {...}}), in one transaction.',
    authScopes: { permission: 'update:car' },
    args: {
      id: t.arg.int({ required: true, description: 'Car id (ignored when car.match_existing_car_by_stocknum is true).' }),
      car: t.arg({
        type: CarInput,
        required: true,
        description: 'The car fields, sent under "car": {"car": {"stocknum": "…", "dealership_id": 1, …}}.',
      }),
    },
    resolve: (_root, { id, car }, context) => updateCar(context.db, requireActor(context), { id, car }, context.now(), context.events),
  }),
);

const CarReservation = builder.prismaObject('Car', {
  variant: 'CarReservation',
  variantOf: { record: 'Car', reason: "`reserve_car`'s answer: the reservation fields, plus the graph's `node`." },
  description: 'A car’s reservation state, as reserve_car leaves it.',
  ...answeredByItsRoot('reserve_car answers the reservation it made to a key holding reserve:car'),
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    slug: t.exposeString('slug'),
    stocknum: t.exposeString('stocknum'),
    reserved: t.exposeBoolean('reserved'),
    reserved_at: t.expose('reserved_at', { type: 'DateTime', nullable: true }),
    node: t.prismaField(carNode('The car', (car) => car.id)),
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
