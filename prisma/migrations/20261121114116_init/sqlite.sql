-- CreateTable
CREATE TABLE "manufacturers" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "dealerships" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "dealership_manufacturers" (
    "dealership_id" INTEGER NOT NULL,
    "manufacturer_id" INTEGER NOT NULL,

    PRIMARY KEY ("dealership_id", "manufacturer_id"),
    CONSTRAINT "dealership_manufacturers_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "dealership_manufacturers_manufacturer_id_fkey" FOREIGN KEY ("manufacturer_id") REFERENCES "manufacturers" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "locations" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "dealership_id" INTEGER NOT NULL,
    "website_id" INTEGER,
    "name" TEXT NOT NULL,
    "location_type" TEXT NOT NULL DEFAULT 'sales',
    "partner_dealership_id" TEXT,
    "partner_account_id" TEXT,
    "tracking_phone" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "locations_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "locations_website_id_fkey" FOREIGN KEY ("website_id") REFERENCES "websites" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "location_addresses" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "location_id" INTEGER NOT NULL,
    "name" TEXT,
    "street" TEXT NOT NULL,
    "city" TEXT NOT NULL,
    "seo_city" TEXT,
    "state" TEXT NOT NULL,
    "postcode" INTEGER NOT NULL,
    "lat" REAL,
    "long" REAL,
    "place_id" TEXT,
    "place_url" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "location_addresses_location_id_fkey" FOREIGN KEY ("location_id") REFERENCES "locations" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "location_contact_details" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "location_id" INTEGER NOT NULL,
    "email" TEXT,
    "facebook_url" TEXT,
    "fax" TEXT,
    "google_maps_url" TEXT,
    "instagram_url" TEXT,
    "landline_phone" TEXT,
    "linkedin_url" TEXT,
    "mailchimp_url" TEXT,
    "mobile" TEXT,
    "phone" TEXT,
    "place_id" TEXT,
    "tiktok_url" TEXT,
    "youtube_url" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "location_contact_details_location_id_fkey" FOREIGN KEY ("location_id") REFERENCES "locations" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "users" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "email_normalized" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "dealership_users" (
    "dealership_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "role" TEXT NOT NULL DEFAULT 'staff',

    PRIMARY KEY ("dealership_id", "user_id"),
    CONSTRAINT "dealership_users_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "dealership_users_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "websites" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "dealership_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "custom_slug" TEXT,
    "url" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "websites_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "cars" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "dealership_id" INTEGER NOT NULL,
    "location_id" INTEGER,
    "model_variant_id" INTEGER,
    "slug" TEXT NOT NULL,
    "custom_slug" TEXT,
    "stocknum" TEXT NOT NULL,
    "vin" TEXT,
    "rego" TEXT,
    "rego_expiry" DATETIME,
    "rego_state" TEXT,
    "odometer" INTEGER,
    "dapprice" INTEGER,
    "egcprice" INTEGER,
    "advertised_price" TEXT,
    "make" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "badge" TEXT,
    "series" TEXT,
    "year" INTEGER NOT NULL,
    "body" TEXT,
    "colour" TEXT,
    "interior_colour" TEXT,
    "transmission" TEXT,
    "fuel" TEXT,
    "drive" TEXT,
    "doors" INTEGER,
    "seats" INTEGER,
    "redbook_code" TEXT,
    "nvic_code" TEXT,
    "dealercomments" TEXT,
    "features" JSONB NOT NULL DEFAULT '[]',
    "status" TEXT NOT NULL DEFAULT 'available',
    "car_type" TEXT NOT NULL DEFAULT 'used',
    "item_type" TEXT NOT NULL DEFAULT 'car',
    "compliance_date" DATETIME,
    "build_date" DATETIME,
    "external_video_url" TEXT,
    "show_on_dealer_website" BOOLEAN NOT NULL DEFAULT true,
    "load_to_carsales" BOOLEAN NOT NULL DEFAULT false,
    "load_to_autotrader" BOOLEAN NOT NULL DEFAULT false,
    "load_to_drive" BOOLEAN NOT NULL DEFAULT false,
    "grey_market_import" BOOLEAN NOT NULL DEFAULT false,
    "locked_fields" JSONB NOT NULL DEFAULT '[]',
    "subscription_plan_id" TEXT,
    "certified" BOOLEAN NOT NULL DEFAULT false,
    "custom_attributes" JSONB NOT NULL DEFAULT '[]',
    "reserved" BOOLEAN NOT NULL DEFAULT false,
    "reserved_at" DATETIME,
    "sold_date" DATETIME,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "cars_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "cars_location_id_fkey" FOREIGN KEY ("location_id") REFERENCES "locations" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "cars_model_variant_id_fkey" FOREIGN KEY ("model_variant_id") REFERENCES "model_variants" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "car_photos" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "car_id" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "car_photos_car_id_fkey" FOREIGN KEY ("car_id") REFERENCES "cars" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "car_price_changes" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "car_id" INTEGER NOT NULL,
    "dapprice" INTEGER,
    "egcprice" INTEGER,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "car_price_changes_car_id_fkey" FOREIGN KEY ("car_id") REFERENCES "cars" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "car_view_days" (
    "car_id" INTEGER NOT NULL,
    "day" DATETIME NOT NULL,
    "views" INTEGER NOT NULL,

    PRIMARY KEY ("car_id", "day"),
    CONSTRAINT "car_view_days_car_id_fkey" FOREIGN KEY ("car_id") REFERENCES "cars" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "phone_calls" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "dedupe_key" TEXT NOT NULL,
    "called_number" TEXT NOT NULL,
    "caller_number" TEXT NOT NULL,
    "dealership_id" INTEGER,
    "location_id" INTEGER,
    "car_id" INTEGER,
    "received_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "phone_calls_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "phone_calls_location_id_fkey" FOREIGN KEY ("location_id") REFERENCES "locations" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "phone_calls_car_id_fkey" FOREIGN KEY ("car_id") REFERENCES "cars" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "payment_processors" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "dealership_id" INTEGER NOT NULL,
    "website_id" INTEGER,
    "authorization_type" TEXT NOT NULL,
    "authorization_key" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "google_merchant_id" TEXT,
    "supports_all_types" BOOLEAN NOT NULL DEFAULT false,
    "apple_pay_enabled" BOOLEAN NOT NULL DEFAULT false,
    "google_pay_enabled" BOOLEAN NOT NULL DEFAULT false,
    "types" JSONB NOT NULL DEFAULT '[]',
    "deposit_amount" INTEGER NOT NULL DEFAULT 0,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "payment_processors_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "payment_processors_website_id_fkey" FOREIGN KEY ("website_id") REFERENCES "websites" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "models" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "manufacturer_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "new_slug" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "models_manufacturer_id_fkey" FOREIGN KEY ("manufacturer_id") REFERENCES "manufacturers" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "website_models" (
    "website_id" INTEGER NOT NULL,
    "model_id" INTEGER NOT NULL,
    "position" INTEGER NOT NULL,
    "override_url" TEXT,

    PRIMARY KEY ("website_id", "model_id"),
    CONSTRAINT "website_models_website_id_fkey" FOREIGN KEY ("website_id") REFERENCES "websites" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "website_models_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "colours" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "model_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "code" TEXT NOT NULL,
    CONSTRAINT "colours_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "model_variants" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "model_id" INTEGER NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "full_name" TEXT NOT NULL,
    "bodyStyle" TEXT,
    "transmission" TEXT,
    "modelCode" TEXT,
    "engine_capacity" TEXT,
    "fuel" TEXT,
    "redbookCode" TEXT,
    "series" TEXT,
    "variant_category" TEXT,
    "vehicle_category" TEXT,
    "description" TEXT,
    "short_description" TEXT,
    "youtube_id" TEXT,
    "brochure_url" TEXT,
    "interior_image_url" TEXT,
    "second_interior_image_url" TEXT,
    "isHybrid" BOOLEAN,
    "isElectric" BOOLEAN,
    "cylinders" INTEGER,
    "year" INTEGER,
    "tare_weight" INTEGER,
    "gvm" INTEGER,
    "seats" INTEGER,
    "price" INTEGER,
    "image_url" TEXT,
    "image_thumb_url" TEXT,
    "banner_key" TEXT,
    "banner_url" TEXT,
    "banner_height" INTEGER NOT NULL DEFAULT 0,
    "banner_width" INTEGER NOT NULL DEFAULT 0,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "model_variants_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "specification_categories" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "position" INTEGER NOT NULL
);

-- CreateTable
CREATE TABLE "specification_fields" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "category_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    CONSTRAINT "specification_fields_category_id_fkey" FOREIGN KEY ("category_id") REFERENCES "specification_categories" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "specification_values" (
    "variant_id" INTEGER NOT NULL,
    "field_id" INTEGER NOT NULL,
    "value" TEXT NOT NULL,

    PRIMARY KEY ("variant_id", "field_id"),
    CONSTRAINT "specification_values_variant_id_fkey" FOREIGN KEY ("variant_id") REFERENCES "model_variants" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "specification_values_field_id_fkey" FOREIGN KEY ("field_id") REFERENCES "specification_fields" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "configurable_options" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "category_id" INTEGER NOT NULL,
    "code" TEXT NOT NULL,
    "description" TEXT,
    "recommended_retail_price_cents" INTEGER,
    "position" INTEGER NOT NULL,
    CONSTRAINT "configurable_options_category_id_fkey" FOREIGN KEY ("category_id") REFERENCES "specification_categories" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "variant_availabilities" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "variant_id" INTEGER NOT NULL,
    "option_id" INTEGER NOT NULL,
    "availability" TEXT NOT NULL,
    CONSTRAINT "variant_availabilities_variant_id_fkey" FOREIGN KEY ("variant_id") REFERENCES "model_variants" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "variant_availabilities_option_id_fkey" FOREIGN KEY ("option_id") REFERENCES "configurable_options" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "offers" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "kind" TEXT NOT NULL,
    "manufacturer_id" INTEGER NOT NULL,
    "website_id" INTEGER,
    "model_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "disclaimer" TEXT,
    "expires_at" DATETIME NOT NULL,
    "description" TEXT NOT NULL,
    "category" TEXT,
    "image_url" TEXT,
    "image_thumb_url" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "offers_manufacturer_id_fkey" FOREIGN KEY ("manufacturer_id") REFERENCES "manufacturers" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "offers_website_id_fkey" FOREIGN KEY ("website_id") REFERENCES "websites" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "offers_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "offer_dealerships" (
    "offer_id" INTEGER NOT NULL,
    "dealership_id" INTEGER NOT NULL,

    PRIMARY KEY ("offer_id", "dealership_id"),
    CONSTRAINT "offer_dealerships_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "offer_dealerships_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "offer_images" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "offer_id" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "thumb_url" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    CONSTRAINT "offer_images_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "offer_preferred_locations" (
    "offer_id" INTEGER NOT NULL,
    "location_id" INTEGER NOT NULL,

    PRIMARY KEY ("offer_id", "location_id"),
    CONSTRAINT "offer_preferred_locations_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "offer_preferred_locations_location_id_fkey" FOREIGN KEY ("location_id") REFERENCES "locations" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "contacts" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "dealership_id" INTEGER NOT NULL,
    "first_name" TEXT NOT NULL,
    "last_name" TEXT,
    "email" TEXT,
    "email_normalized" TEXT,
    "phone" TEXT,
    "postcode" TEXT,
    "sms_verified" BOOLEAN NOT NULL DEFAULT false,
    "high_priority" BOOLEAN NOT NULL DEFAULT false,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "contacts_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "contact_vehicles" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "contact_id" INTEGER NOT NULL,
    "make" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "year" INTEGER NOT NULL,
    "rego" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "contact_vehicles_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "leads" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "dealership_id" INTEGER NOT NULL,
    "contact_id" INTEGER,
    "website_id" INTEGER,
    "location_id" INTEGER,
    "car_id" INTEGER,
    "model_id" INTEGER,
    "model_variant_id" INTEGER,
    "colour_id" INTEGER,
    "team_member_id" INTEGER,
    "user_id" INTEGER,
    "name" TEXT,
    "last_name" TEXT,
    "email" TEXT,
    "phone" TEXT,
    "message" TEXT,
    "dealership_slug" TEXT,
    "website_slug" TEXT,
    "category" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "marketing_source" TEXT,
    "page_id" INTEGER,
    "stocknum" TEXT,
    "provider" TEXT,
    "provider_id" TEXT,
    "certified" BOOLEAN NOT NULL DEFAULT false,
    "golden" BOOLEAN NOT NULL DEFAULT false,
    "send_customer_email" BOOLEAN NOT NULL DEFAULT true,
    "user_email" TEXT,
    "lead_state" TEXT NOT NULL DEFAULT 'new',
    "lead_status" TEXT NOT NULL DEFAULT 'open',
    "sms_verified" BOOLEAN NOT NULL DEFAULT false,
    "tags" JSONB NOT NULL DEFAULT '[]',
    "opt_in_to_marketing" BOOLEAN NOT NULL DEFAULT false,
    "delay_customer_email_minutes" INTEGER,
    "delay_dealership_notification_minutes" INTEGER,
    "disable_strict_validation" BOOLEAN NOT NULL DEFAULT false,
    "time_on_site_seconds" INTEGER,
    "time_to_submit_seconds" INTEGER,
    "fields" JSONB NOT NULL DEFAULT '{}',
    "charge_breakdown" JSONB,
    "customer_address" TEXT,
    "dob" DATETIME,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "leads_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "leads_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "leads_website_id_fkey" FOREIGN KEY ("website_id") REFERENCES "websites" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "leads_location_id_fkey" FOREIGN KEY ("location_id") REFERENCES "locations" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "leads_car_id_fkey" FOREIGN KEY ("car_id") REFERENCES "cars" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "leads_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "leads_model_variant_id_fkey" FOREIGN KEY ("model_variant_id") REFERENCES "model_variants" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "leads_colour_id_fkey" FOREIGN KEY ("colour_id") REFERENCES "colours" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "leads_team_member_id_fkey" FOREIGN KEY ("team_member_id") REFERENCES "users" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "leads_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "lead_files" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "lead_id" INTEGER NOT NULL,
    "file_type" TEXT NOT NULL,
    "storage_key" TEXT NOT NULL,
    "byte_size" INTEGER NOT NULL,
    "content_type" TEXT,
    "sha256" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "lead_files_lead_id_fkey" FOREIGN KEY ("lead_id") REFERENCES "leads" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "lead_payments" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "lead_id" INTEGER NOT NULL,
    "amount" REAL NOT NULL,
    "car_id" INTEGER,
    "payment_processor_id" INTEGER,
    "external_transaction_id" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "lead_payments_lead_id_fkey" FOREIGN KEY ("lead_id") REFERENCES "leads" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "lead_payments_car_id_fkey" FOREIGN KEY ("car_id") REFERENCES "cars" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "lead_payments_payment_processor_id_fkey" FOREIGN KEY ("payment_processor_id") REFERENCES "payment_processors" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "lead_addresses" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "lead_id" INTEGER NOT NULL,
    "street" TEXT,
    "city" TEXT,
    "state" TEXT,
    "state_long" TEXT,
    "country" TEXT,
    "postcode" INTEGER,
    CONSTRAINT "lead_addresses_lead_id_fkey" FOREIGN KEY ("lead_id") REFERENCES "leads" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "lead_events" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "lead_id" INTEGER NOT NULL,
    "service" TEXT NOT NULL,
    "contact_type" TEXT,
    "description" TEXT,
    "sent_date" DATETIME,
    "sent_by" TEXT,
    "link_stop_communication" TEXT,
    "link_reply_as_assistant" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "lead_events_lead_id_fkey" FOREIGN KEY ("lead_id") REFERENCES "leads" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "plugins" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "categories" JSONB NOT NULL DEFAULT '[]',
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "dealership_plugins" (
    "dealership_id" INTEGER NOT NULL,
    "plugin_id" INTEGER NOT NULL,
    "installed_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "trial" BOOLEAN NOT NULL DEFAULT false,

    PRIMARY KEY ("dealership_id", "plugin_id"),
    CONSTRAINT "dealership_plugins_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "dealership_plugins_plugin_id_fkey" FOREIGN KEY ("plugin_id") REFERENCES "plugins" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "name" TEXT NOT NULL,
    "expires_at" DATETIME,
    "revoked_at" DATETIME,
    "last_used_at" DATETIME,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "api_key_secrets" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "api_key_id" INTEGER NOT NULL,
    "lookup_id" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "retires_at" DATETIME,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "api_key_secrets_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "api_key_permissions" (
    "api_key_id" INTEGER NOT NULL,
    "permission" TEXT NOT NULL,

    PRIMARY KEY ("api_key_id", "permission"),
    CONSTRAINT "api_key_permissions_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "api_key_dealerships" (
    "api_key_id" INTEGER NOT NULL,
    "dealership_id" INTEGER NOT NULL,

    PRIMARY KEY ("api_key_id", "dealership_id"),
    CONSTRAINT "api_key_dealerships_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "api_key_dealerships_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "partner_tokens" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "token_hash" TEXT NOT NULL,
    "user_id" INTEGER NOT NULL,
    "api_key_id" INTEGER,
    "expires_at" DATETIME NOT NULL,
    "used_at" DATETIME,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "partner_tokens_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "partner_tokens_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "idempotency_records" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "api_key_id" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "response_status" INTEGER NOT NULL,
    "response_body" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "idempotency_records_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "outbox_messages" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "kind" TEXT NOT NULL,
    "lead_id" INTEGER,
    "recipient" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "due_at" DATETIME NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "locked_until" DATETIME,
    "sent_at" DATETIME,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "outbox_messages_lead_id_fkey" FOREIGN KEY ("lead_id") REFERENCES "leads" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "manufacturers_slug_key" ON "manufacturers"("slug");

-- CreateIndex
CREATE UNIQUE INDEX "dealerships_slug_key" ON "dealerships"("slug");

-- CreateIndex
CREATE INDEX "dealership_manufacturers_manufacturer_id_idx" ON "dealership_manufacturers"("manufacturer_id");

-- CreateIndex
CREATE UNIQUE INDEX "locations_tracking_phone_key" ON "locations"("tracking_phone");

-- CreateIndex
CREATE INDEX "locations_dealership_id_idx" ON "locations"("dealership_id");

-- CreateIndex
CREATE UNIQUE INDEX "location_addresses_location_id_key" ON "location_addresses"("location_id");

-- CreateIndex
CREATE INDEX "location_addresses_postcode_idx" ON "location_addresses"("postcode");

-- CreateIndex
CREATE UNIQUE INDEX "location_contact_details_location_id_key" ON "location_contact_details"("location_id");

-- CreateIndex
CREATE UNIQUE INDEX "users_email_normalized_key" ON "users"("email_normalized");

-- CreateIndex
CREATE INDEX "dealership_users_user_id_idx" ON "dealership_users"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "websites_slug_key" ON "websites"("slug");

-- CreateIndex
CREATE UNIQUE INDEX "websites_custom_slug_key" ON "websites"("custom_slug");

-- CreateIndex
CREATE INDEX "websites_dealership_id_idx" ON "websites"("dealership_id");

-- CreateIndex
CREATE UNIQUE INDEX "cars_slug_key" ON "cars"("slug");

-- CreateIndex
CREATE UNIQUE INDEX "cars_custom_slug_key" ON "cars"("custom_slug");

-- CreateIndex
CREATE INDEX "cars_vin_idx" ON "cars"("vin");

-- CreateIndex
CREATE INDEX "cars_location_id_idx" ON "cars"("location_id");

-- CreateIndex
CREATE INDEX "cars_stocknum_idx" ON "cars"("stocknum");

-- CreateIndex
CREATE UNIQUE INDEX "cars_dealership_id_stocknum_key" ON "cars"("dealership_id", "stocknum");

-- CreateIndex
CREATE INDEX "car_photos_car_id_position_idx" ON "car_photos"("car_id", "position");

-- CreateIndex
CREATE INDEX "car_price_changes_car_id_created_at_idx" ON "car_price_changes"("car_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "phone_calls_dedupe_key_key" ON "phone_calls"("dedupe_key");

-- CreateIndex
CREATE INDEX "phone_calls_car_id_idx" ON "phone_calls"("car_id");

-- CreateIndex
CREATE INDEX "phone_calls_dealership_id_received_at_idx" ON "phone_calls"("dealership_id", "received_at");

-- CreateIndex
CREATE INDEX "payment_processors_dealership_id_idx" ON "payment_processors"("dealership_id");

-- CreateIndex
CREATE INDEX "payment_processors_website_id_idx" ON "payment_processors"("website_id");

-- CreateIndex
CREATE UNIQUE INDEX "models_slug_key" ON "models"("slug");

-- CreateIndex
CREATE INDEX "models_manufacturer_id_idx" ON "models"("manufacturer_id");

-- CreateIndex
CREATE INDEX "website_models_model_id_idx" ON "website_models"("model_id");

-- CreateIndex
CREATE INDEX "colours_model_id_idx" ON "colours"("model_id");

-- CreateIndex
CREATE UNIQUE INDEX "model_variants_slug_key" ON "model_variants"("slug");

-- CreateIndex
CREATE INDEX "model_variants_model_id_idx" ON "model_variants"("model_id");

-- CreateIndex
CREATE UNIQUE INDEX "specification_categories_slug_key" ON "specification_categories"("slug");

-- CreateIndex
CREATE UNIQUE INDEX "specification_fields_slug_key" ON "specification_fields"("slug");

-- CreateIndex
CREATE INDEX "specification_fields_category_id_idx" ON "specification_fields"("category_id");

-- CreateIndex
CREATE INDEX "specification_values_field_id_idx" ON "specification_values"("field_id");

-- CreateIndex
CREATE UNIQUE INDEX "configurable_options_code_key" ON "configurable_options"("code");

-- CreateIndex
CREATE INDEX "configurable_options_category_id_idx" ON "configurable_options"("category_id");

-- CreateIndex
CREATE INDEX "variant_availabilities_option_id_idx" ON "variant_availabilities"("option_id");

-- CreateIndex
CREATE UNIQUE INDEX "variant_availabilities_variant_id_option_id_key" ON "variant_availabilities"("variant_id", "option_id");

-- CreateIndex
CREATE INDEX "offers_manufacturer_id_kind_idx" ON "offers"("manufacturer_id", "kind");

-- CreateIndex
CREATE INDEX "offers_website_id_idx" ON "offers"("website_id");

-- CreateIndex
CREATE INDEX "offer_dealerships_dealership_id_idx" ON "offer_dealerships"("dealership_id");

-- CreateIndex
CREATE INDEX "offer_images_offer_id_idx" ON "offer_images"("offer_id");

-- CreateIndex
CREATE INDEX "offer_preferred_locations_location_id_idx" ON "offer_preferred_locations"("location_id");

-- CreateIndex
CREATE INDEX "contacts_dealership_id_phone_idx" ON "contacts"("dealership_id", "phone");

-- CreateIndex
CREATE UNIQUE INDEX "contacts_dealership_id_email_normalized_key" ON "contacts"("dealership_id", "email_normalized");

-- CreateIndex
CREATE INDEX "contact_vehicles_contact_id_idx" ON "contact_vehicles"("contact_id");

-- CreateIndex
CREATE INDEX "leads_dealership_id_created_at_idx" ON "leads"("dealership_id", "created_at");

-- CreateIndex
CREATE INDEX "leads_car_id_idx" ON "leads"("car_id");

-- CreateIndex
CREATE INDEX "leads_contact_id_idx" ON "leads"("contact_id");

-- CreateIndex
CREATE UNIQUE INDEX "lead_files_storage_key_key" ON "lead_files"("storage_key");

-- CreateIndex
CREATE INDEX "lead_files_lead_id_idx" ON "lead_files"("lead_id");

-- CreateIndex
CREATE UNIQUE INDEX "lead_payments_lead_id_key" ON "lead_payments"("lead_id");

-- CreateIndex
CREATE UNIQUE INDEX "lead_addresses_lead_id_key" ON "lead_addresses"("lead_id");

-- CreateIndex
CREATE INDEX "lead_events_lead_id_created_at_idx" ON "lead_events"("lead_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "plugins_slug_key" ON "plugins"("slug");

-- CreateIndex
CREATE INDEX "dealership_plugins_plugin_id_idx" ON "dealership_plugins"("plugin_id");

-- CreateIndex
CREATE UNIQUE INDEX "api_key_secrets_lookup_id_key" ON "api_key_secrets"("lookup_id");

-- CreateIndex
CREATE INDEX "api_key_secrets_api_key_id_idx" ON "api_key_secrets"("api_key_id");

-- CreateIndex
CREATE INDEX "api_key_dealerships_dealership_id_idx" ON "api_key_dealerships"("dealership_id");

-- CreateIndex
CREATE UNIQUE INDEX "partner_tokens_token_hash_key" ON "partner_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "partner_tokens_expires_at_idx" ON "partner_tokens"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "idempotency_records_api_key_id_key_key" ON "idempotency_records"("api_key_id", "key");

-- CreateIndex
CREATE INDEX "outbox_messages_status_due_at_idx" ON "outbox_messages"("status", "due_at");

