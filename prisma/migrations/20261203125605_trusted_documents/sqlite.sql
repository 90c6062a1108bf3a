-- CreateTable
CREATE TABLE "api_key_document_apps" (
    "api_key_id" INTEGER NOT NULL,
    "app" TEXT NOT NULL,

    PRIMARY KEY ("api_key_id", "app"),
    CONSTRAINT "api_key_document_apps_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "trusted_documents" (
    "hash" TEXT NOT NULL PRIMARY KEY,
    "body" TEXT NOT NULL,
    "operation_name" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "document_releases" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "app" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "published_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "document_release_entries" (
    "release_id" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "use_count" INTEGER NOT NULL DEFAULT 0,
    "last_used_at" DATETIME,

    PRIMARY KEY ("release_id", "hash"),
    CONSTRAINT "document_release_entries_release_id_fkey" FOREIGN KEY ("release_id") REFERENCES "document_releases" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "document_release_entries_hash_fkey" FOREIGN KEY ("hash") REFERENCES "trusted_documents" ("hash") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "document_releases_app_published_at_idx" ON "document_releases"("app", "published_at");

-- CreateIndex
CREATE UNIQUE INDEX "document_releases_app_version_key" ON "document_releases"("app", "version");

-- CreateIndex
CREATE INDEX "document_release_entries_hash_idx" ON "document_release_entries"("hash");

