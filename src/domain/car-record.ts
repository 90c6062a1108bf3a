// The car input record of update_car (spec 2.1 and the sample-only fields, wire names), declared
// once: each field's kind, nullability, description and rules. Its TypeScript type (CarInput), the
// lockable fields, the validation (parseCarRecord) and the GraphQL `CarInput` (src/schema/car-writes.ts,
// and through Sofa the OpenAPI request body) are all read from this declaration.
//
// A PUT of the record: stocknum, dealership_id, make, model and year are required; any other field
// absent is left unchanged (absent from the parsed record), null clears it (an empty list for
// lists), and blank optional text counts as null, as feeds send "" for an unknown value. The
// flags, status, car_type and item_type cannot be null.
import { z } from 'zod';
import { calendarDatePattern, parseDayMonthYear } from './dates.ts';
import { HTTP_URL_PATTERN, httpUrl } from './http-url.ts';
import { NON_BLANK, fieldRule, parseRecord } from './input-records.ts';

/** The first model year of a motor car; the latest accepted is two years on (models come out early). */
const FIRST_MODEL_YEAR = 1886;

const DATE_TEXT = 'Day/month/year, e.g. "31/12/2026" ("2026-12-31" is accepted too). Null clears it.';

const blankAsNull = (text: string): string | null => (text.trim() === '' ? null : text.trim());

/** Text that must have a value: trimmed, and never blank. */
const requiredText = () => z.string().regex(NON_BLANK, 'must not be blank').trim();

/** Text that may be cleared: trimmed; blank or null stores null. */
const optionalText = () => z.string().transform(blankAsNull).nullish();

/** A whole number of something (kilometres, dollars, doors): never negative; null clears it. */
const count = () => z.int().min(0, 'must not be negative').nullish();

/** A flag: true or false, never null (the column has a default and no "unknown"). */
const flag = () => z.boolean().optional();

const calendarDate = fieldRule(parseDayMonthYear);
/** The years the document's date pattern covers; the parser takes any four-digit year. */
const DOCUMENTED_DATE_YEARS = [1900, 2099] as const;
/** A date written day/month/year or year-month-day (src/domain/dates.ts); blank or null clears it. */
const date = () =>
  z
    .string()
    .meta({ pattern: calendarDatePattern(...DOCUMENTED_DATE_YEARS, { blank: true }) })
    .transform((text, context) => (text.trim() === '' ? null : calendarDate(text, context)))
    .nullish()
    .describe(DATE_TEXT);

const absoluteUrl = fieldRule(httpUrl);
/** Text that httpUrl reads as an absolute URL; the pattern shows the document's reader the form it keeps as sent. */
const urlText = () => z.string().meta({ pattern: HTTP_URL_PATTERN });

/** A list that null empties: the stored list is replaced by what is sent. */
const list = <Item extends z.ZodType>(item: Item) =>
  z
    .array(item)
    .nullable()
    .transform((items): z.output<Item>[] => items ?? []);

const customAttribute = z
  .object({
    name: requiredText().describe('The attribute’s name; names are distinct within a car.'),
    value: z.string().describe('The attribute’s value.'),
  })
  .meta({ id: 'CarCustomAttributeInput', description: 'A name/value pair to record for a car.' });

/**
 * The car's own fields, in the order of spec 2.1: each is lockable (a later API update leaves a
 * locked one unchanged). The two request instructions of carRecord below are not, being what locks
 * and how the car is found.
 */
const carFields = z.object({
  rego: optionalText().describe('Registration plate.'),
  rego_expiry: date(),
  rego_state: optionalText(),
  stocknum: requiredText().describe('Stock number, unique within the dealership.'),
  vin: z
    .string()
    .meta({ pattern: '^\\s*\\S*\\s*$' })
    // Stored upper-case: lookup_by=vin (src/domain/cars.ts) matches upper-case.
    .transform((text) => text.trim().toUpperCase())
    .refine((vin) => !/\s/.test(vin), 'must not contain spaces')
    .transform((vin) => (vin === '' ? null : vin))
    .nullish()
    .describe('Stored upper-case.'),
  dealership_id: z
    .int()
    .min(1, 'must be a dealership id')
    .meta({ 'x-references': 'a dealership the key can use' })
    .describe('A dealership the key can access; the car may move to it.'),
  location_id: z
    .int()
    .meta({ 'x-references': 'a location of the car’s dealership' })
    .nullish()
    .describe('A location of the car’s dealership.'),
  odometer: count(),
  dapprice: count().describe('Driveaway price. A change is recorded in the price history.'),
  egcprice: count().describe('Excluding government charges price. A change is recorded in the price history.'),
  advertised_price: optionalText().describe('When both prices exist, says which one to use.'),
  make: requiredText(),
  model: requiredText(),
  badge: optionalText(),
  series: optionalText(),
  // Its range depends on the day of the update: see carRecordAt.
  year: z.int(),
  body: optionalText(),
  colour: optionalText(),
  interior_colour: optionalText(),
  transmission: optionalText(),
  fuel: optionalText(),
  drive: optionalText(),
  doors: count(),
  seats: count(),
  redbook_code: optionalText(),
  nvic_code: optionalText(),
  dealercomments: optionalText(),
  features: list(requiredText()).optional(),
  status: requiredText().optional().describe('Cannot be null.'),
  car_type: requiredText().optional().describe('Cannot be null.'),
  item_type: requiredText().optional().describe('Cannot be null.'),
  compliance_date: date(),
  build_date: date(),
  external_video_url: urlText()
    .transform((text, context) => (text.trim() === '' ? null : absoluteUrl(text, context)))
    .nullish()
    .describe('An absolute http(s) URL; never fetched by the service.'),
  show_on_dealer_website: flag(),
  load_to_carsales: flag().describe('List the car on the carsales channel.'),
  load_to_autotrader: flag().describe('List the car on the autotrader channel.'),
  load_to_drive: flag().describe('List the car on the drive channel.'),
  grey_market_import: flag(),
  subscription_plan_id: optionalText(),
  certified: flag(),
  custom_attributes: list(customAttribute)
    .superRefine((attributes, context) => {
      const seen = new Set<string>();
      for (const [index, { name }] of attributes.entries()) {
        if (seen.has(name)) context.addIssue({ code: 'custom', path: [index, 'name'], message: `repeats the attribute "${name}"` });
        seen.add(name);
      }
    })
    .optional()
    // JSON Schema cannot say "unique by name"; the document names the key for generators that read it.
    .meta({ 'x-unique-by': 'name' })
    .describe('Names must be distinct.'),
  images: list(urlText().transform(absoluteUrl))
    .superRefine((urls, context) => {
      const seen = new Map<string, number>();
      for (const [index, url] of urls.entries()) {
        const first = seen.get(url);
        if (first !== undefined) context.addIssue({ code: 'custom', path: [index], message: `repeats images[${first}]` });
        else seen.set(url, index);
      }
    })
    .optional()
    .meta({ uniqueItems: true })
    .describe('Absolute http(s) image URLs, in display order, replacing the car’s photos; never fetched by the service.'),
});

/** The car fields a dealership can lock, in the order of spec 2.1. */
export const LOCKABLE_CAR_FIELDS = carFields.keyof().options;
export type LockableCarField = (typeof LOCKABLE_CAR_FIELDS)[number];

const LOCKABLE_LIST = LOCKABLE_CAR_FIELDS.join(', ');
const lockable = new Set<string>(LOCKABLE_CAR_FIELDS);

export const carRecord = carFields
  .extend({
    // Names are text on the wire (a client may send any), checked against the list here.
    locked_fields: list(
      z
        .string()
        .meta({ enum: [...LOCKABLE_CAR_FIELDS] })
        .superRefine((name, context) => {
          if (!lockable.has(name))
            context.addIssue({ code: 'custom', message: `"${name}" is not a car field that can be locked (one of: ${LOCKABLE_LIST})` });
        }),
    )
      .transform((names) => [...new Set(names)])
      .optional()
      .describe(`Car fields that later updates through the API leave unchanged (listed in skipped_fields). One of: ${LOCKABLE_LIST}.`),
    match_existing_car_by_stocknum: z
      .boolean()
      .nullish()
      .describe('When true, the car updated is the one with this stocknum in this dealership_id, whatever the id says.'),
  })
  .describe(
    'The car record, replacing the stored one (a PUT): stocknum, dealership_id, make, model and year are required; ' +
      'any other field left out stays as it is, and null clears it (an empty list for lists). Fields the car has locked are left unchanged.',
  );

/** The `car` of update_car as a client sends it. */
export type CarInput = z.input<typeof carRecord>;
/** The same record checked: trimmed, dates as Dates, URLs canonical, lists deduplicated; absent fields absent. */
type CarRecord = z.output<typeof carRecord>;

/** The record with the year range of the day `now`: from the first motor car to two years on. */
export function carRecordAt(now: Date) {
  const latestYear = now.getUTCFullYear() + 2;
  const range = `must be between ${FIRST_MODEL_YEAR} and ${latestYear}`;
  return carRecord.extend({ year: carRecord.shape.year.min(FIRST_MODEL_YEAR, range).max(latestYear, range) });
}

/** The car checked without touching the database, or a 422 naming `car.<field>`. */
export function parseCarRecord(car: unknown, now: Date): CarRecord {
  return parseRecord(carRecordAt(now), car, 'car');
}
