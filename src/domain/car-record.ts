// A PUT of the record: absent leaves a field unchanged, null clears it, and blank optional text counts
// as null, as feeds send "" for an unknown value. Everything the car input derives is read from here.
import { z } from 'zod';
import { calendarDatePattern, parseDayMonthYear } from './dates.ts';
import { HTTP_URL_PATTERN, httpUrl } from './http-url.ts';
import { NON_BLANK, fieldRule } from './input-records.ts';

/** The latest accepted is two years on: models come out early. */
const FIRST_MODEL_YEAR = 1886;

const DATE_TEXT = 'Day/month/year, e.g. "31/12/2026" ("2026-12-31" is accepted too). Null clears it.';

const blankAsNull = (text: string): string | null => (text.trim() === '' ? null : text.trim());

const requiredText = () => z.string().regex(NON_BLANK, 'must not be blank').trim();

const optionalText = () => z.string().transform(blankAsNull).nullish();

const count = () => z.int().min(0, 'must not be negative').nullish();

/** Never null: the column has a default and no "unknown". */
const flag = () => z.boolean().optional();

const calendarDate = fieldRule(parseDayMonthYear);
const DOCUMENTED_DATE_YEARS = [1900, 2099] as const;
const date = () =>
  z
    .string()
    .meta({ pattern: calendarDatePattern(...DOCUMENTED_DATE_YEARS, { blank: true }) })
    .transform((text, context) => (text.trim() === '' ? null : calendarDate(text, context)))
    .nullish()
    .describe(DATE_TEXT);

const absoluteUrl = fieldRule(httpUrl);
const urlText = () => z.string().meta({ pattern: HTTP_URL_PATTERN });

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

/** Each is lockable; the two request instructions are not, being what locks and how the car is found. */
const carFields = z.object({
  rego: optionalText().describe('Registration plate.'),
  rego_expiry: date(),
  rego_state: optionalText(),
  stocknum: requiredText().describe('Stock number, unique within the dealership.'),
  vin: z
    .string()
    .meta({ pattern: '^\\s*\\S*\\s*$' })
    // Stored upper-case: lookup by VIN matches upper-case.
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

export const LOCKABLE_CAR_FIELDS = carFields.keyof().options;

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

export type CarInput = z.input<typeof carRecord>;

export function carRecordAt(now: Date) {
  const latestYear = now.getUTCFullYear() + 2;
  const range = `must be between ${FIRST_MODEL_YEAR} and ${latestYear}`;
  return carRecord.extend({ year: carRecord.shape.year.min(FIRST_MODEL_YEAR, range).max(latestYear, range) });
}
