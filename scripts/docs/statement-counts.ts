// What one request costs the database, uncached and with the key's verdict remembered, on the demo
// data: declared once here, measured by test/statement-counts.test.ts and rendered into
// docs/caching.md by `npm run docs`.

/** Each sample request: its statements (transaction BEGIN/COMMIT not counted) and what they read. */
export const STATEMENTS_PER_REQUEST: Readonly<Record<string, { statements: number; reads: string }>> = {
  'GET /api/v1/apikeys/apikey_details.json': { statements: 4, reads: "the key's dealerships, their locations, user links, users" },
  'GET /api/v1/cars/1/performance.json': {
    statements: 6,
    reads: 'the car (found and read in one statement), then leads, photos, calls, prices, views at once',
  },
  'GET /api/v1/cars/JTEL9WSVWBZR388DY/performance.json?lookup_by=vin': { statements: 6, reads: 'as above, by VIN' },
  'GET /api/v1/cars/1/payment_processors.json?website=richmond-toyota': { statements: 3, reads: 'the car, the website, its processors' },
  'GET /api/v1/model_variants/toyota-corolla-sx-hybrid?website_id=1': {
    statements: 9,
    reads: 'website, variant, model, specifications, options, availability',
  },
  'GET /manufacturers/1/offers.json': { statements: 7, reads: 'manufacturer, offers and their images, models, dealerships, locations' },
  'GET /websites/1/offers/13.json': { statements: 10, reads: 'website, offer and its relations' },
  'GET /dealerships/1/contacts/1': { statements: 3, reads: 'dealership, contact, vehicles' },
  'GET /dealerships/1/contacts?per_page=50': { statements: 3, reads: 'dealership, page of contacts, their vehicles' },
  'GET /api/v1/partner/dealerships': { statements: 2, reads: 'locations with partner ids, their dealerships' },
  'GET /manufacturers/1/search_by_postcode?postcode=3000': {
    statements: 12,
    reads:
      "manufacturers, the reachable dealerships selling the make, their showrooms without coordinates (and those showrooms' postcodes), the ranking in the database (one statement per widening of its radius: 100, 400, 1,600 km, then the whole country, four on the demo's sparse showrooms), the answered locations' websites (own and fallback in one), their locations, addresses and details",
  },
  'GET /api/v1/dealerships/richmond-toyota/plugins': { statements: 3, reads: 'dealership, plugin links, plugins' },
  'GET /api/v1/dealerships/richmond-toyota/redirect_service?website_id=1&stocknum=MEL1002': {
    statements: 3,
    reads: 'dealership, website, car',
  },
  'GET /api/v1/websites/richmond-toyota/models?version=2': { statements: 5, reads: 'website, models, variants' },
  'POST /api/v1/leads': {
    statements: 9,
    reads:
      "validation look-ups (the dealership read with its users' e-mail addresses, the notification's recipients unless the lead names a user; the car found by its stock number is the one the notifications describe, not read again), contact match (one look-up for the e-mail and the phone together), lead (its insert returns the record; a lead with a payment, address or files is read back), outbox messages in one INSERT, the `lead.created` event (its insert also counts the dealership's enabled webhook subscriptions), the subscriptions, and their deliveries in one INSERT (one transaction; the sample's dealership has one subscription to `lead.created`; without any, neither the subscriptions' read nor the INSERT is sent: 7); with an `Idempotency-Key`, 2 more: the key's look-up before, its record (with the answer) last in the transaction",
  },
  'PUT /api/v1/cars/2/reserve?reserved=true': {
    statements: 6,
    reads:
      "find the car; in one transaction the conditional update, the car's dealership, the `car.reserved` event and its dealership's webhook subscriptions; read back",
  },
};

export const statementsTable = (): string =>
  [
    '| Request (demo data) | Statements | What they read |',
    '|---|---|---|',
    ...Object.entries(STATEMENTS_PER_REQUEST).map(([request, { statements, reads }]) => `| \`${request}\` | ${statements} | ${reads} |`),
  ].join('\n');
