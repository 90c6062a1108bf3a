-- AlterTable
ALTER TABLE "offers" ADD COLUMN     "sanitized_description" TEXT;

-- CreateIndex
CREATE INDEX "location_addresses_lat_long_idx" ON "location_addresses"("lat", "long");

-- CreateIndex
CREATE INDEX "cars_dealership_id_id_idx" ON "cars"("dealership_id", "id");

-- CreateIndex
CREATE INDEX "cars_make_id_idx" ON "cars"("make", "id");

-- CreateIndex
CREATE INDEX "cars_status_id_idx" ON "cars"("status", "id");

-- CreateIndex
CREATE INDEX "contacts_dealership_id_id_idx" ON "contacts"("dealership_id", "id");

-- CreateIndex
CREATE INDEX "leads_dealership_id_id_idx" ON "leads"("dealership_id", "id");

-- CreateIndex
CREATE INDEX "leads_category_id_idx" ON "leads"("category", "id");

-- CreateIndex
CREATE INDEX "leads_lead_state_id_idx" ON "leads"("lead_state", "id");

-- CreateIndex
CREATE INDEX "idempotency_records_created_at_idx" ON "idempotency_records"("created_at");

