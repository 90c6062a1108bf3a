// The one offline command that writes a new migration for both engines (`npm run db:migration`),
// run as a real process, with no network where the machine can take it away, on throwaway copies:
// prisma/migrations is never touched. The SQL it writes for the engine under test is then applied
// by the project's migration runner to an empty database.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../src/config/index.ts';
import { createDb } from '../src/db/client.ts';
import { migrate, migrationsDir as projectMigrationsDir, readMigrations } from '../src/db/migrate.ts';
import { createEmptyDatabase, testEngine, type TestDatabase } from './support/database.ts';

const schemaPath = path.join(projectRoot, 'prisma', 'schema.prisma');
let workDir: string;
let migrationsDir: string;
let projectMigrationsBefore: string;
const databases: TestDatabase[] = [];
/** One run of the command starts the Prisma 6.19 CLI twice (a WASM schema engine each): seconds, more on a busy machine. */
const DIFF_TIMEOUT = 120_000;

/** A fingerprint of every file under a folder, to prove that nothing there changed. */
function fingerprint(dir: string): string {
  const hash = createHash('sha256');
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }).sort((a, b) =>
    path.join(a.parentPath, a.name).localeCompare(path.join(b.parentPath, b.name)),
  )) {
    const file = path.join(entry.parentPath, entry.name);
    hash.update(path.relative(dir, file));
    if (entry.isFile()) hash.update(readFileSync(file));
  }
  return hash.digest('hex');
}

/** Whether this machine lets an unprivileged process run without any network (user + net namespace). */
const canCutNetwork = spawnSync('unshare', ['--map-root-user', '--net', 'true']).status === 0;

/** `npm run db:migration -- <name> --schema <file> --migrations <dir>`, offline where possible. */
function writeMigration(name: string, schema: string): string {
  const command = ['npm', 'run', '--silent', 'db:migration', '--', name, '--schema', schema, '--migrations', migrationsDir];
  const [file, ...args] = canCutNetwork ? ['unshare', '--map-root-user', '--net', ...command] : command;
  return execFileSync(file!, args, { cwd: projectRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

beforeAll(() => {
  projectMigrationsBefore = fingerprint(projectMigrationsDir);
  workDir = mkdtempSync(path.join(tmpdir(), 'migration-writer-'));
  migrationsDir = path.join(workDir, 'migrations');
  cpSync(projectMigrationsDir, migrationsDir, { recursive: true });
});

afterAll(async () => {
  rmSync(workDir, { recursive: true, force: true });
  await Promise.all(databases.map((database) => database.drop()));
});

describe(`npm run db:migration (${canCutNetwork ? 'no network' : 'network not cut: unshare unavailable'})`, () => {
  it(
    'writes nothing when the data model matches the last migration',
    () => {
      expect(writeMigration('no_change', schemaPath)).toMatch(/has not changed since the last migration; nothing written/);
      expect(fingerprint(migrationsDir)).toBe(projectMigrationsBefore);
    },
    DIFF_TIMEOUT,
  );

  it(
    `writes SQL for both engines that brings a ${testEngine} database to the changed model`,
    async () => {
      const changed = readFileSync(schemaPath, 'utf8')
        .replace('model Plugin {\n', 'model Plugin {\n  homepage    String?\n')
        .concat(
          '\nmodel Brochure {\n  id    Int    @id @default(autoincrement())\n  title String\n  tags  Json   @default("[]")\n\n  @@map("brochures")\n}\n',
        );
      const changedPath = path.join(workDir, 'schema.prisma');
      writeFileSync(changedPath, changed);

      const output = writeMigration('add_brochures', changedPath);
      const [written, ...others] = readdirSync(migrationsDir).filter((entry) => entry.endsWith('_add_brochures'));
      expect(others).toEqual([]);
      expect(output).toContain(`wrote ${path.join(migrationsDir, written!)}`);
      const folder = path.join(migrationsDir, written!);
      expect(readdirSync(folder).sort()).toEqual(['postgresql.sql', 'schema.prisma', 'sqlite.sql']);
      expect(readFileSync(path.join(folder, 'schema.prisma'), 'utf8')).toBe(changed);
      const sqlite = readFileSync(path.join(folder, 'sqlite.sql'), 'utf8');
      const postgres = readFileSync(path.join(folder, 'postgresql.sql'), 'utf8');
      expect(sqlite).toMatch(/ALTER TABLE "plugins" ADD COLUMN "homepage" TEXT;/);
      expect(sqlite).toMatch(/CREATE TABLE "brochures"[\s\S]*"tags" JSONB NOT NULL DEFAULT '\[\]'/);
      expect(postgres).toMatch(/ALTER TABLE "plugins" ADD COLUMN\s+"homepage" TEXT;/);
      expect(postgres).toMatch(/CREATE TABLE "brochures"[\s\S]*"tags" JSONB NOT NULL DEFAULT '\[\]'/);

      // The project's runner applies the whole throwaway set, the new migration last.
      const database = await createEmptyDatabase();
      databases.push(database);
      expect(await migrate(database.url, undefined, migrationsDir)).toEqual(readMigrations(testEngine, migrationsDir).map((m) => m.name));
      const db = createDb(database.url);
      try {
        await db.$executeRawUnsafe(`INSERT INTO brochures (title) VALUES ('Spring range')`);
        const [row] = await db.$queryRawUnsafe<{ title: string; tags: unknown }[]>('SELECT title, tags FROM brochures');
        expect({ ...row, tags: typeof row?.tags === 'string' ? JSON.parse(row.tags) : row?.tags }).toEqual({
          title: 'Spring range',
          tags: [],
        });
        expect(await db.$queryRawUnsafe('SELECT homepage FROM plugins')).toEqual([]);
      } finally {
        await db.$disconnect();
      }

      // The new snapshot is where the next diff starts: the same model again writes nothing.
      expect(writeMigration('again', changedPath)).toMatch(/nothing written/);
    },
    2 * DIFF_TIMEOUT,
  );

  it('leaves prisma/migrations as it was', () => {
    expect(fingerprint(projectMigrationsDir)).toBe(projectMigrationsBefore);
  });
});
