-- CreateTable
CREATE TABLE "pending_lead_files" (
    "storage_key" TEXT NOT NULL PRIMARY KEY,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "pending_lead_files_created_at_idx" ON "pending_lead_files"("created_at");

