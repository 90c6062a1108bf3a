// The published documents still in use must keep validating: a removal or change that breaks one is
// refused however long its deprecation ran (docs/trusted-documents.md, "The contract check").
import { parse, validate, type GraphQLSchema } from 'graphql';
import { createDb } from '../../src/db/client.ts';
import { activeDocuments, type ActiveDocument } from '../../src/domain/trusted-documents.ts';

/** A document used within this many days, or in its application's latest version, is active. */
export const ACTIVE_DAYS = 30;

/** One line per active document `schema` no longer runs, naming its application, version and document. */
export function brokenDocuments(schema: GraphQLSchema, documents: readonly ActiveDocument[]): string[] {
  return documents.flatMap((document) => {
    const errors = validate(schema, parse(document.body));
    if (errors.length === 0) return [];
    const name = document.operation_name ?? '(anonymous)';
    return [`${document.app} ${document.version}, document ${name} (${document.hash}): ${errors.map((error) => error.message).join('; ')}`];
  });
}

type RegistryCheck = { skipped: string } | { checked: number; broken: string[] };

/** Without DATABASE_URL (CI has no registry) the check says it was skipped; a registry that cannot be read fails it. */
export async function checkRegistry(schema: GraphQLSchema, databaseUrl: string | undefined, now: Date): Promise<RegistryCheck> {
  if (!databaseUrl) return { skipped: 'no DATABASE_URL, so the published documents were not checked' };
  const db = createDb(databaseUrl);
  try {
    const documents = await activeDocuments(db, now, ACTIVE_DAYS);
    return { checked: documents.length, broken: brokenDocuments(schema, documents) };
  } finally {
    await db.$disconnect();
  }
}
