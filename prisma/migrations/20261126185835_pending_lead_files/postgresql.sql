-- CreateTable
CREATE TABLE "pending_lead_files" (
    "storage_key" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pending_lead_files_pkey" PRIMARY KEY ("storage_key")
);

-- CreateIndex
CREATE INDEX "pending_lead_files_created_at_idx" ON "pending_lead_files"("created_at");

