// The car input record's rules (src/domain/car-record.ts), without HTTP or a database: what each
// field accepts, what it stores, and the 422 (field and message) for what it refuses.
import { describe, expect, it } from 'vitest';
import { LOCKABLE_CAR_FIELDS, carRecordAt, type CarInput } from '../src/domain/car-record.ts';
import { parseRecord } from '../src/domain/input-records.ts';

/** As updateCar parses the body. */
const parseCarRecord = (car: unknown, now: Date) => parseRecord(carRecordAt(now), car, 'car');

const now = new Date('2026-06-15T00:00:00Z');
const minimal: CarInput = { stocknum: 'U1', dealership_id: 3, make: 'Mazda', model: 'CX-5', year: 2021 };

/** The 422 for `car`, as { field, message }. */
function refusal(car: Record<string, unknown>): { field: unknown; message: string } {
  try {
    parseCarRecord({ ...minimal, ...car }, now);
  } catch (error) {
    return { field: (error as { extensions: { field?: unknown } }).extensions.field, message: (error as Error).message };
  }
  throw new Error(`expected ${JSON.stringify(car)} to be refused`);
}

describe('the car record', () => {
  it('stores only what is sent: absent fields are absent, required text trimmed', () => {
    expect(parseCarRecord({ ...minimal, stocknum: '  U1 ', make: ' Mazda' }, now)).toEqual({
      stocknum: 'U1',
      dealership_id: 3,
      make: 'Mazda',
      model: 'CX-5',
      year: 2021,
    });
  });

  it('clears with null or blank text, and empties lists with null', () => {
    const parsed = parseCarRecord(
      {
        ...minimal,
        rego: '  ',
        colour: null,
        vin: '',
        rego_expiry: ' ',
        external_video_url: '',
        features: null,
        images: null,
        custom_attributes: null,
        locked_fields: null,
      },
      now,
    );
    expect(parsed).toMatchObject({
      rego: null,
      colour: null,
      vin: null,
      rego_expiry: null,
      external_video_url: null,
      features: [],
      images: [],
      custom_attributes: [],
      locked_fields: [],
    });
  });

  it('upper-cases the VIN, reads day/month/year dates, canonicalises URLs and stores each lock once', () => {
    const parsed = parseCarRecord(
      {
        ...minimal,
        vin: ' jm0kf4 ',
        build_date: '1/2/2020',
        compliance_date: '2020-02-29',
        images: ['HTTPS://I.example.com/a b.jpg'],
        locked_fields: ['rego', 'images', 'rego'],
      },
      now,
    );
    expect(parsed).toMatchObject({
      vin: 'JM0KF4',
      build_date: new Date('2020-02-01T00:00:00Z'),
      compliance_date: new Date('2020-02-29T00:00:00Z'),
      images: ['https://i.example.com/a%20b.jpg'],
      locked_fields: ['rego', 'images'],
    });
  });

  it('accepts model years from the first motor car to two years after the day of the update', () => {
    expect(parseCarRecord({ ...minimal, year: 1886 }, now).year).toBe(1886);
    expect(parseCarRecord({ ...minimal, year: 2028 }, now).year).toBe(2028);
    expect(refusal({ year: 2029 })).toEqual({ field: 'car.year', message: 'car.year: must be between 1886 and 2028' });
    expect(refusal({ year: 1885 }).message).toBe('car.year: must be between 1886 and 2028');
    expect(() => parseCarRecord({ ...minimal, year: 2029 }, new Date('2027-01-01T00:00:00Z'))).not.toThrow();
  });

  it.each([
    [{ stocknum: '  ' }, 'car.stocknum', 'must not be blank'],
    [{ dealership_id: 0 }, 'car.dealership_id', 'must be a dealership id'],
    [{ status: null }, 'car.status', 'cannot be null'],
    [{ item_type: ' ' }, 'car.item_type', 'must not be blank'],
    [{ load_to_drive: null }, 'car.load_to_drive', 'cannot be null'],
    [{ odometer: -1 }, 'car.odometer', 'must not be negative'],
    [{ vin: 'JM0 KF4' }, 'car.vin', 'must not contain spaces'],
    [{ rego_expiry: '31/02/2026' }, 'car.rego_expiry', 'is not a real calendar date, got "31/02/2026"'],
    [{ build_date: '12/31/2020' }, 'car.build_date', 'is not a real calendar date, got "12/31/2020"'],
    [
      { build_date: '1/1/21' },
      'car.build_date',
      'must be a date written day/month/year, e.g. "31/12/2026" (or "2026-12-31"), got "1/1/21"',
    ],
    [{ external_video_url: 'www.youtube.com/watch?v=1' }, 'car.external_video_url', 'must be an absolute http:// or https:// URL'],
    [
      { images: ['https://i.example.com/1.jpg', 'ftp://i.example.com/2.jpg'] },
      'car.images[1]',
      'must be an absolute http:// or https:// URL',
    ],
    [{ images: ['https://user:pw@i.example.com/1.jpg'] }, 'car.images[0]', 'must not carry a user name or password'],
    [
      { images: ['https://i.example.com/1.jpg', 'https://i.example.com/2.jpg', 'https://I.example.com/1.jpg'] },
      'car.images[2]',
      'repeats images[0]',
    ],
    [{ features: ['Sunroof', ' '] }, 'car.features[1]', 'must not be blank'],
    [
      {
        custom_attributes: [
          { name: 'a', value: '1' },
          { name: ' a ', value: '2' },
        ],
      },
      'car.custom_attributes[1].name',
      'repeats the attribute "a"',
    ],
    [{ custom_attributes: [{ name: '', value: '1' }] }, 'car.custom_attributes[0].name', 'must not be blank'],
  ])('refuses %j: %s %s', (change, field, reason) => {
    expect(refusal(change)).toEqual({ field, message: `${field}: ${reason}` });
  });

  it('refuses a lock on anything but a car field, naming the lockable ones', () => {
    for (const name of ['slug', 'locked_fields', 'match_existing_car_by_stocknum']) {
      expect(refusal({ locked_fields: ['rego', name] })).toEqual({
        field: 'car.locked_fields[1]',
        message: `car.locked_fields[1]: "${name}" is not a car field that can be locked (one of: ${LOCKABLE_CAR_FIELDS.join(', ')})`,
      });
    }
  });

  it('locks every car field of spec 2.1, in its order, and neither request instruction', () => {
    expect(LOCKABLE_CAR_FIELDS).toEqual([
      'rego',
      'rego_expiry',
      'rego_state',
      'stocknum',
      'vin',
      'dealership_id',
      'location_id',
      'odometer',
      'dapprice',
      'egcprice',
      'advertised_price',
      'make',
      'model',
      'badge',
      'series',
      'year',
      'body',
      'colour',
      'interior_colour',
      'transmission',
      'fuel',
      'drive',
      'doors',
      'seats',
      'redbook_code',
      'nvic_code',
      'dealercomments',
      'features',
      'status',
      'car_type',
      'item_type',
      'compliance_date',
      'build_date',
      'external_video_url',
      'show_on_dealer_website',
      'load_to_carsales',
      'load_to_autotrader',
      'load_to_drive',
      'grey_market_import',
      'subscription_plan_id',
      'certified',
      'custom_attributes',
      'images',
    ]);
  });
});
