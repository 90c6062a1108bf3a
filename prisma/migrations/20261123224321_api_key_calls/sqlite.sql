-- CreateTable
CREATE TABLE "api_key_calls" (
    "api_key_id" INTEGER NOT NULL,
    "minute" DATETIME NOT NULL,
    "operation" TEXT NOT NULL,
    "door" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "calls" INTEGER NOT NULL,
    "last_at" DATETIME NOT NULL,

    PRIMARY KEY ("api_key_id", "minute", "operation", "door", "status")
);

-- CreateIndex
CREATE INDEX "api_key_calls_minute_idx" ON "api_key_calls"("minute");

