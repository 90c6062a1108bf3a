-- CreateTable
CREATE TABLE "stored_files" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "bytes" BLOB NOT NULL,
    "byte_size" INTEGER NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "shared_settings" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "value" TEXT NOT NULL,
    "updated_at" DATETIME NOT NULL
);

