-- CreateTable
CREATE TABLE "record_events" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "event_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "dealership_id" INTEGER NOT NULL,
    "subject" TEXT NOT NULL,
    "record_id" INTEGER NOT NULL,
    "occurred_at" DATETIME NOT NULL,
    CONSTRAINT "record_events_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "webhook_subscriptions" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "dealership_id" INTEGER NOT NULL,
    "api_key_id" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "events" JSONB NOT NULL,
    "secret" TEXT NOT NULL,
    "previous_secret" TEXT,
    "previous_secret_until" DATETIME,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" TEXT,
    "disabled_at" DATETIME,
    "created_at" DATETIME NOT NULL,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "webhook_subscriptions_dealership_id_fkey" FOREIGN KEY ("dealership_id") REFERENCES "dealerships" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "webhook_subscriptions_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "subscription_id" INTEGER NOT NULL,
    "record_event_id" INTEGER NOT NULL,
    "record_key" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "due_at" DATETIME NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "locked_until" DATETIME,
    "last_status" INTEGER,
    "last_latency_ms" INTEGER,
    "last_error" TEXT,
    "first_attempt_at" DATETIME,
    "delivered_at" DATETIME,
    "created_at" DATETIME NOT NULL,
    CONSTRAINT "webhook_deliveries_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "webhook_subscriptions" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "webhook_deliveries_record_event_id_fkey" FOREIGN KEY ("record_event_id") REFERENCES "record_events" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "webhook_attempts" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "delivery_id" INTEGER NOT NULL,
    "attempt" INTEGER NOT NULL,
    "status" INTEGER,
    "latency_ms" INTEGER NOT NULL,
    "error" TEXT,
    "at" DATETIME NOT NULL,
    CONSTRAINT "webhook_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "record_events_event_id_key" ON "record_events"("event_id");

-- CreateIndex
CREATE INDEX "record_events_subject_record_id_idx" ON "record_events"("subject", "record_id");

-- CreateIndex
CREATE INDEX "record_events_dealership_id_id_idx" ON "record_events"("dealership_id", "id");

-- CreateIndex
CREATE INDEX "webhook_subscriptions_dealership_id_enabled_idx" ON "webhook_subscriptions"("dealership_id", "enabled");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_message_id_key" ON "webhook_deliveries"("message_id");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_due_at_idx" ON "webhook_deliveries"("status", "due_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_subscription_id_record_key_status_idx" ON "webhook_deliveries"("subscription_id", "record_key", "status");

-- CreateIndex
CREATE INDEX "webhook_attempts_delivery_id_attempt_idx" ON "webhook_attempts"("delivery_id", "attempt");

