// The words for the graph's recurring names, written once. Many types share field names with one
// meaning (`created_at`, `stocknum`, `postcode`, …): instead of the same sentence typed into every
// type that has the field, a field, input field or argument declared without a description gets it
// from here. A description written where the field is declared always wins; `Type.field` entries
// below say what a shared name means on one type in particular. The check that nothing is left
// undescribed is test/schema-descriptions.test.ts.
import { isInputObjectType, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';

/** What a field means wherever it appears, by its name. */
const FIELDS: Readonly<Record<string, string>> = {
  databaseId: 'The record’s stored integer id, which the operations’ integer id arguments take.',
  name: 'Its name, as shown to people.',
  slug: 'Its URL name (lower-case words joined by hyphens), unique among its kind.',
  custom_slug: 'A URL name the dealership chose, used in place of the slug where set.',
  new_slug: 'The URL name used by the current website pages.',
  path: 'The page path on the website, starting with a slash.',
  url: 'An absolute URL.',
  created_at: 'When the record was created (ISO 8601 date-time, UTC).',
  updated_at: 'When the record was last changed (ISO 8601 date-time, UTC).',
  position: 'Display order: lower comes first.',
  description: 'Free text describing it.',

  // Cars (spec 2.1).
  stocknum: 'The dealership’s stock number for the car, unique within the dealership.',
  dealership_id: 'The dealership it belongs to.',
  location_id: 'The dealership location it belongs to, when known.',
  car_id: 'The car it is about, when known.',
  rego: 'The registration plate.',
  rego_expiry: 'When the registration expires (year-month-day).',
  rego_state: 'The state the car is registered in, e.g. NSW.',
  vin: 'The vehicle identification number, upper-case.',
  odometer: 'Kilometres driven.',
  dapprice: 'The driveaway price, in whole dollars.',
  egcprice: 'The price excluding government charges, in whole dollars.',
  advertised_price: 'Which of the two prices to advertise when both are set.',
  make: 'The manufacturer’s name, e.g. Toyota.',
  model: 'The model name, e.g. Corolla.',
  badge: 'The badge (trim level), e.g. Ascent Sport.',
  series: 'The model series, e.g. ZWE211R.',
  year: 'The model year.',
  body: 'The body style, e.g. Hatch.',
  colour: 'The exterior colour.',
  interior_colour: 'The interior colour.',
  transmission: 'The transmission, e.g. Automatic.',
  fuel: 'The fuel type, e.g. Petrol.',
  drive: 'The driven wheels, e.g. Front Wheel Drive.',
  doors: 'The number of doors.',
  seats: 'The number of seats.',
  redbook_code: 'The car’s Redbook code (a vehicle data catalogue’s id).',
  nvic_code: 'The car’s NVIC code (the Glass’s Guide vehicle id).',
  dealercomments: 'The dealership’s comments shown with the car.',
  features: 'The car’s listed features, one per entry.',
  status: 'The car’s stock status as the dealership records it, e.g. new, used, sold.',
  car_type: 'The kind of stock, e.g. new, used or demo, as the dealership records it.',
  item_type: 'The kind of item listed, e.g. car, as the dealership records it.',
  compliance_date: 'The compliance plate date (year-month-day).',
  build_date: 'The build date (year-month-day).',
  sold_date: 'When the car was sold, if it was (year-month-day).',
  external_video_url: 'A video of the car elsewhere on the web; never fetched by the service.',
  show_on_dealer_website: 'Whether the dealership’s website shows the car.',
  load_to_carsales: 'Whether the car is listed on the carsales channel.',
  load_to_autotrader: 'Whether the car is listed on the autotrader channel.',
  load_to_drive: 'Whether the car is listed on the drive channel.',
  grey_market_import: 'Whether the car is a private (grey market) import.',
  subscription_plan_id: 'The car-subscription plan the car is offered under, if any.',
  certified: 'Whether it is certified (a certified pre-owned car; for a lead, a certified pre-owned enquiry).',
  custom_attributes: 'Extra name/value pairs the dealership records for the car.',
  locked_fields: 'Car fields that updates through the API leave unchanged (a feed re-sending the record does not overwrite them).',
  reserved: 'Whether the car is reserved for a customer.',
  reserved_at: 'When the car was reserved; null while it is free.',
  photos: 'The car’s photos, in display order.',
  model_variant: 'The catalogue model variant the car is, when known.',
  model_variant_id: 'The catalogue model variant it is about, when known.',
  images: 'Image URLs, in display order.',

  // Car performance (spec 2.2).
  leads: 'The leads about it, newest first.',
  leads_count: 'How many leads the car has.',
  photos_count: 'How many photos the car has.',
  views: 'How many times the car’s page was viewed.',
  lead_state: 'Where the lead is in the dealership’s process, as the dealership records it.',
  lead_status: 'The lead’s outcome so far, as the dealership records it.',
  source: 'Where the lead came from (spec list of lead sources, e.g. Website).',

  // Payment processors (spec 2.3).
  authorization_type: 'How the processor authorises payments, as the processor names it.',
  merchant_id: 'The dealership’s merchant id at the processor.',
  supports_all_types: 'Whether the processor takes every payment type.',
  apple_pay_enabled: 'Whether Apple Pay is offered.',
  google_pay_enabled: 'Whether Google Pay is offered.',
  types: 'The payment types the processor takes.',
  deposit_amount: 'The deposit taken, in whole dollars.',

  // Model variants (spec 2.4).
  model_id: 'The catalogue model it is about.',
  full_name: 'The full name: make, model and variant.',
  bodyStyle: 'The body style, e.g. SUV.',
  modelCode: 'The manufacturer’s model code.',
  engine_capacity: 'Engine capacity as the manufacturer states it, e.g. 2.0L.',
  redbookCode: 'The Redbook code (a vehicle data catalogue’s id).',
  variant_category: 'The variant’s category in the catalogue.',
  vehicle_category: 'The vehicle category, e.g. Passenger.',
  short_description: 'A one-line description.',
  youtube_id: 'The id of a YouTube video of the variant.',
  brochure_url: 'The URL of the variant’s brochure.',
  interior_image_url: 'An interior photo.',
  second_interior_image_url: 'A second interior photo.',
  isHybrid: 'Whether it is a hybrid.',
  isElectric: 'Whether it is fully electric.',
  cylinders: 'The number of engine cylinders.',
  tare_weight: 'Tare weight, in kilograms.',
  gvm: 'Gross vehicle mass, in kilograms.',
  price: 'The price from, in whole dollars.',
  image: 'The main image and its thumbnail.',
  thumb: 'The thumbnail of the image.',
  banner_data: 'The banner image shown above the variant.',
  key: 'The storage key of the banner image.',
  height: 'Height in pixels.',
  width: 'Width in pixels.',
  code: 'The manufacturer’s option code.',
  recommended_retail_price_cents: 'The recommended retail price, in cents.',
  configurable_option: 'The option this entry is about.',
  options: 'Each option and whether the variant offers it.',
  variants: 'The model’s variants.',
  manufacturer: 'The manufacturer.',
  manufacturer_id: 'The manufacturer it belongs to.',
  models: 'The models, in display order.',
  version: 'The answer’s version, as asked for.',

  // Offers (spec 2.5).
  disclaimer: 'The offer’s small print.',
  expires_at: 'When it stops being valid.',
  preferred_locations: 'The dealership locations the offer is shown for.',
  website_id: 'The website it belongs to.',
  category: 'Its category.',

  // API key details (spec 2.6), dealerships and locations (spec 2.9, 2.10).
  permissions: 'The permissions the key holds.',
  locations: 'The dealership’s locations.',
  users: 'The dealership’s platform users.',
  websites: 'The dealership’s websites.',
  website: 'The website it belongs to.',
  location_type: 'The kind of location, e.g. sales or service.',
  email: 'An e-mail address.',
  address: 'The postal address.',
  street: 'Street number and name.',
  city: 'Suburb or city.',
  state: 'State or territory, abbreviated, e.g. NSW.',
  state_long: 'State or territory in full, e.g. New South Wales.',
  postcode: 'Postcode.',
  country: 'Country.',
  lat: 'Latitude, in degrees.',
  long: 'Longitude, in degrees.',
  place_id: 'The place’s id at the map provider.',
  place_url: 'The place’s page at the map provider.',
  seo_city: 'The city name used in search-engine-friendly page titles.',
  addressable_id: 'The record the address belongs to.',
  addressable_type: 'The kind of record the address belongs to, e.g. Location.',
  contactable_id: 'The record the contact details belong to.',
  contactable_type: 'The kind of record the contact details belong to, e.g. Location.',
  phone: 'A phone number.',
  mobile: 'A mobile phone number.',
  landline_phone: 'A landline phone number.',
  fax: 'A fax number.',
  facebook_url: 'The Facebook page.',
  instagram_url: 'The Instagram page.',
  linkedin_url: 'The LinkedIn page.',
  tiktok_url: 'The TikTok page.',
  youtube_url: 'The YouTube channel.',
  mailchimp_url: 'The newsletter sign-up page.',
  google_maps_url: 'The place on Google Maps.',
  partner_dealership_id: 'The location’s own id at the vehicle-data partner.',
  partner_account_id: 'The account (dealer group) id at the vehicle-data partner.',
  dealership_name: 'The dealership’s name.',
  dealerships: 'The dealerships.',
  plugins: 'The plugins the dealership has installed.',
  categories: 'The plugin’s categories.',
  installed_at: 'When the dealership installed the plugin.',
  trial: 'Whether the plugin is on a trial.',

  // Leads (spec 2.7).
  last_name: 'The customer’s last name.',
  message: 'The customer’s message.',
  dealership_slug: 'The dealership’s slug, another way to name the dealership.',
  website_slug: 'The website’s slug, another way to name the website.',
  marketing_source: 'The marketing channel that brought the customer (spec list of marketing sources).',
  page_id: 'The website page the lead was submitted from.',
  provider: 'The name of the supplier that sent the lead.',
  provider_id: 'The lead’s id at the supplier that sent it.',
  golden: 'Marks the lead’s cluster as high priority.',
  send_customer_email: 'Whether the customer is sent a confirmation e-mail.',
  colour_id: 'The colour asked about (new-vehicle enquiries).',
  team_member_id: 'The team member asked for (Team Member Enquiry leads only).',
  user_email: 'The e-mail of the platform user the lead is assigned to.',
  user_id: 'The platform user the lead is assigned to.',
  contact_id: 'The contact the lead belongs to.',
  sms_verified: 'Whether the customer’s phone was verified by SMS.',
  tags: 'Free labels.',
  opt_in_to_marketing: 'Whether the customer agreed to receive marketing.',
  delay_customer_email_minutes: 'Minutes to wait before e-mailing the customer.',
  delay_dealership_notification_minutes: 'Minutes to wait before notifying the dealership.',
  disable_strict_validation: 'When true, the e-mail and phone checks were skipped.',
  time_on_site_seconds: 'Seconds the customer spent on the site before submitting.',
  time_to_submit_seconds: 'Seconds from the form loading to its submission.',
  customer_address: 'The customer’s address as one line of text.',
  dob: 'The customer’s date of birth (year-month-day).',
  customer_name: 'The customer’s full name.',
  fields: 'Free additional key/value pairs.',
  charge_breakdown: 'How the amount charged is made up: a total, the charges, or both.',
  payment: 'The payment made with the lead, if any.',
  payment_attributes: 'A payment made with the lead: amount, car_id, payment_processor_id, external_transaction_id.',
  lead_files_attributes: 'Files sent with the lead (base64), each with its file_type.',
  files: 'The files sent with the lead.',
  file_type: 'What the file is: resume, cover_letter or other.',
  byte_size: 'The file’s size in bytes.',
  sha256: 'The SHA-256 digest of the file’s bytes, in hex.',
  amount: 'The amount paid, in dollars.',
  payment_processor_id: 'The payment processor that took the payment.',
  external_transaction_id: 'The payment’s id at the payment processor.',
  lead_id: 'The lead it belongs to.',
  contact_type: 'How the message went out, e.g. sms or email.',
  sent_by: 'Who sent the message.',
  link_stop_communication: 'The link the customer follows to stop further messages.',
  link_reply_as_assistant: 'The link staff follow to answer as the assistant.',

  // Contacts (spec 2.8).
  first_name: 'The contact’s first name.',
  vehicles: 'The contact’s vehicles.',
  raw_model: 'The model name as it was recorded.',
};

/** What a shared name means on one type in particular (`Type.field`, or `Type.field(arg:)` for an argument). */
export const ON_TYPE: Readonly<Record<string, string>> = {
};

/** What a type is, for the types declared without a description. */
export const TYPES: Readonly<Record<string, string>> = {
};

function absent(description: string | null | undefined): boolean {
  return !description || description.trim() === '';
}

/** Fills in, from the glossary, the descriptions the declarations left out. */
export function describeFromGlossary(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (absent(type.description) && TYPES[type.name]) type.description = TYPES[type.name];
    if (!isObjectType(type) && !isInterfaceType(type) && !isInputObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (absent(field.description)) field.description = ON_TYPE[`${type.name}.${field.name}`] ?? FIELDS[field.name];
      if (!('args' in field)) continue;
      for (const arg of field.args) {
        if (absent(arg.description)) arg.description = ON_TYPE[`${type.name}.${field.name}(${arg.name}:)`];
      }
    }
  }
  return schema;
}
