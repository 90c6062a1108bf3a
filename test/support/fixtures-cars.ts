// Factories for the car write tests: complete update bodies and a car's photos.
import type { Db } from '../../src/db/client.ts';
import type { CarInput } from '../../src/domain/car-record.ts';

/** A complete, valid body for update_car (every field of spec 2.1 and the sample-only ones). */
export function carInput(dealershipId: number, overrides: Partial<CarInput> = {}): CarInput {
  return {
    stocknum: 'U1234',
    dealership_id: dealershipId,
    make: 'Mazda',
    model: 'CX-5',
    year: 2021,
    rego: 'ABC123',
    rego_expiry: '31/12/2026',
    rego_state: 'VIC',
    vin: 'jm0kf4w7a00123456',
    odometer: 42000,
    dapprice: 32990,
    egcprice: 30990,
    advertised_price: 'dapprice',
    badge: 'Maxx Sport',
    series: 'KF',
    body: 'SUV',
    colour: 'Soul Red',
    interior_colour: 'Black',
    transmission: 'Automatic',
    fuel: 'Petrol',
    drive: 'AWD',
    doors: 5,
    seats: 5,
    redbook_code: 'MAZD21AB',
    nvic_code: 'ABC12',
    dealercomments: 'One owner, full service history.',
    features: ['Apple CarPlay', 'Reversing camera'],
    status: 'available',
    car_type: 'used',
    item_type: 'car',
    compliance_date: '1/3/2021',
    build_date: '15/01/2021',
    external_video_url: 'https://videos.example.com/cx5.mp4',
    show_on_dealer_website: true,
    load_to_carsales: true,
    load_to_autotrader: false,
    load_to_drive: true,
    grey_market_import: false,
    subscription_plan_id: 'plan-12',
    certified: true,
    custom_attributes: [{ name: 'warranty', value: '5 years' }],
    locked_fields: [],
    images: ['https://img.example.com/cx5/1.jpg', 'https://img.example.com/cx5/2.jpg'],
    ...overrides,
  };
}

/** Photos in the given order (positions 0, 1, …), each created at `createdAt`. */
export async function makeCarPhotos(db: Db, carId: number, urls: readonly string[], createdAt = new Date('2026-01-01T00:00:00.000Z')) {
  await db.carPhoto.createMany({ data: urls.map((url, position) => ({ car_id: carId, url, position, created_at: createdAt })) });
  return db.carPhoto.findMany({ where: { car_id: carId }, orderBy: { position: 'asc' } });
}
