-- CreateTable
CREATE TABLE "api_key_document_apps" (
    "api_key_id" INTEGER NOT NULL,
    "app" TEXT NOT NULL,

    CONSTRAINT "api_key_document_apps_pkey" PRIMARY KEY ("api_key_id","app")
);

-- CreateTable
CREATE TABLE "trusted_documents" (
    "hash" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "operation_name" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "trusted_documents_pkey" PRIMARY KEY ("hash")
);

-- CreateTable
CREATE TABLE "document_releases" (
    "id" SERIAL NOT NULL,
    "app" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "published_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "document_releases_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "document_release_entries" (
    "release_id" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "use_count" INTEGER NOT NULL DEFAULT 0,
    "last_used_at" TIMESTAMP(3),

    CONSTRAINT "document_release_entries_pkey" PRIMARY KEY ("release_id","hash")
);

-- CreateIndex
CREATE INDEX "document_releases_app_published_at_idx" ON "document_releases"("app", "published_at");

-- CreateIndex
CREATE UNIQUE INDEX "document_releases_app_version_key" ON "document_releases"("app", "version");

-- CreateIndex
CREATE INDEX "document_release_entries_hash_idx" ON "document_release_entries"("hash");

-- AddForeignKey
ALTER TABLE "api_key_document_apps" ADD CONSTRAINT "api_key_document_apps_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "document_release_entries" ADD CONSTRAINT "document_release_entries_release_id_fkey" FOREIGN KEY ("release_id") REFERENCES "document_releases"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "document_release_entries" ADD CONSTRAINT "document_release_entries_hash_fkey" FOREIGN KEY ("hash") REFERENCES "trusted_documents"("hash") ON DELETE RESTRICT ON UPDATE CASCADE;

