// The trusted documents CLI: npm run --silent documents -- <command> [options]. See `documents help`.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Db } from '../src/db/client.ts';
import { documentUsage, listReleaseDocuments, listReleases, publishRelease, readManifest } from '../src/domain/trusted-documents.ts';
import { getSchema } from '../src/schema/index.ts';
import { print, runCliCommand, textTable, usageFailure, UsageError } from './cli-command.ts';

const usage = `Usage: npm run --silent documents -- <command> [options]

  publish --app APP --version V MANIFEST.json
                      publishes the version's documents: a Relay or graphql-codegen manifest
                      ({ "<sha256>": "<text>" }) or Apollo's persisted-query manifest; every
                      document must validate against the schema, or nothing is published
  list [--app APP [--version V]]
                      the applications and their versions; with --version, that version's documents
  usage [--app APP]   each version's documents: how often and when last used

  --json              machine-readable output
See docs/trusted-documents.md.`;

function parseCommandLine() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        app: { type: 'string' },
        version: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    usageFailure(usage, error instanceof Error ? error.message : String(error));
  }
}

const { values, positionals } = parseCommandLine();

function readManifestFile(file: string | undefined): string {
  if (!file) throw new UsageError('publish needs the manifest file');
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

async function run(db: Db): Promise<void> {
  const command = positionals[0];
  switch (command) {
    case 'publish': {
      const documents = readManifest(readManifestFile(positionals[1]));
      const published = await publishRelease(db, getSchema(), { app: values.app, version: values.version, documents });
      print(
        values.json,
        published,
        `published ${published.app} ${published.version}: ${published.documents} document(s) at ${published.published_at}`,
      );
      return;
    }
    case 'list': {
      if (values.version !== undefined) {
        if (!values.app) throw new UsageError('list --version needs --app');
        const documents = await listReleaseDocuments(db, values.app, values.version);
        const cells = documents.map((document) => [document.hash, document.operation_name ?? '(anonymous)']);
        print(values.json, documents, textTable(['DOCUMENT', 'OPERATION'], cells));
        return;
      }
      const releases = await listReleases(db, values.app);
      const cells = releases.map((release) => [release.app, release.version, String(release.documents), release.published_at]);
      print(
        values.json,
        releases,
        releases.length > 0 ? textTable(['APP', 'VERSION', 'DOCUMENTS', 'PUBLISHED'], cells) : 'nothing published yet',
      );
      return;
    }
    case 'usage': {
      const rows = await documentUsage(db, values.app);
      const cells = rows.map((row) => [
        row.app,
        row.version,
        row.hash.slice(0, 12),
        row.operation_name ?? '(anonymous)',
        String(row.use_count),
        row.last_used_at ?? 'never',
      ]);
      print(
        values.json,
        rows,
        rows.length > 0 ? textTable(['APP', 'VERSION', 'DOCUMENT', 'OPERATION', 'USES', 'LAST USED'], cells) : 'nothing published yet',
      );
      return;
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

await runCliCommand({
  usage,
  commands: new Set(['publish', 'list', 'usage']),
  positionals,
  help: values.help,
  run: (db) => run(db),
});
