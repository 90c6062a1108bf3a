-- AlterTable
ALTER TABLE "outbox_messages" ADD COLUMN "traceparent" TEXT;

