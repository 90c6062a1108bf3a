-- CreateTable
CREATE TABLE "api_key_calls" (
    "api_key_id" INTEGER NOT NULL,
    "minute" TIMESTAMP(3) NOT NULL,
    "operation" TEXT NOT NULL,
    "door" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "calls" INTEGER NOT NULL,
    "last_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "api_key_calls_pkey" PRIMARY KEY ("api_key_id","minute","operation","door","status")
);

-- CreateIndex
CREATE INDEX "api_key_calls_minute_idx" ON "api_key_calls"("minute");

