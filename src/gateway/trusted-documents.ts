// /graphql's persisted documents (docs/trusted-documents.md): a published document runs by its id for
// any key, a key locked to applications runs only theirs, and other keys keep arbitrary documents and
// Automatic Persisted Queries. The REST door runs its own fixed documents and never passes here.
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { createGraphQLError, type GraphQLParams, type Plugin } from 'graphql-yoga';
import { sentRequest, verifyPresentedKey } from '../context.ts';
import { noteErrorLogger, requestLogger } from '../telemetry/request-record.ts';
import { documentNotTrusted, persistedQueryNotFound } from '../errors.ts';
import { boundedCache, type CacheBounds } from '../lib/bounded-cache.ts';
import { requestState } from '../web/request-state.ts';
import { queryLimits } from '../schema/graphql-limits.ts';
import { documentHash, findTrustedDocument, isDocumentHash, recordDocumentUses, type DocumentUse } from '../domain/trusted-documents.ts';
import type { AppDeps, DocumentUseLog } from './app.ts';

/** Use counts are written at most this often per instance, so reads do not all become writes. */
const USAGE_FLUSH_MS = 60_000;
const FOUND_BOUNDS: CacheBounds = { maxEntries: 5_000, maxBytes: 16 * 1024 * 1024 };
const APQ_BOUNDS: CacheBounds = { maxEntries: 2_000, maxBytes: 8 * 1024 * 1024 };
const MAX_PENDING_USES = 10_000;

function documentIdOf(params: GraphQLParams & { documentId?: unknown }): string | null {
  if (typeof params.documentId === 'string') return params.documentId;
  const persisted = params.extensions?.persistedQuery as { version?: unknown; sha256Hash?: unknown } | undefined;
  return persisted?.version === 1 && typeof persisted.sha256Hash === 'string' ? persisted.sha256Hash : null;
}

const CLIENT_VERSION = /^[A-Za-z0-9][A-Za-z0-9.+_-]{0,63}$/;

/** The version Apollo's clients name in their headers (`version` of `ApolloClient`), counted as the release used. */
function clientVersionOf(request: Request): string | null {
  const version = request.headers.get('graphql-client-version') ?? request.headers.get('apollographql-client-version');
  return version && CLIENT_VERSION.test(version) ? version : null;
}

export function createDocumentUseLog(deps: Pick<AppDeps, 'db' | 'logger'>): DocumentUseLog {
  const pending = new Map<string, DocumentUse>();
  let flushedAt = Number.NEGATIVE_INFINITY;
  const flush = (): Promise<void> => {
    const uses = [...pending.values()];
    pending.clear();
    if (uses.length === 0) return Promise.resolve();
    return recordDocumentUses(deps.db, uses).catch((error: unknown) =>
      deps.logger.warn({ err: error }, 'trusted document use not recorded'),
    );
  };
  return {
    note(releaseId, hash, at) {
      const name = `${releaseId}|${hash}`;
      const use = pending.get(name) ?? { releaseId, hash, count: 0, lastUsedAt: at };
      use.count += 1;
      use.lastUsedAt = at;
      pending.set(name, use);
      if (at.getTime() - flushedAt < USAGE_FLUSH_MS && pending.size < MAX_PENDING_USES) return;
      flushedAt = at.getTime();
      void flush();
    },
    flush,
  };
}

declare module '../web/request-state.ts' {
  interface RequestState {
    /** The document was looked up by its id (APQ's second step needs no check of its text then). */
    documentResolvedById?: true;
  }
}

export function useTrustedDocuments(deps: Pick<AppDeps, 'db' | 'keys' | 'now' | 'logger' | 'documentUses'>): Plugin[] {
  // Releases never change once published, so a found document stays right; a miss is always asked of the database.
  const found = boundedCache<{ body: string; releaseId: number }>(FOUND_BOUNDS, (document) => document.body.length * 2);
  // APQ's documents are the client's cache, not a registry: per instance, bounded; a miss costs the client one retry with the text.
  const automatic = boundedCache<string>(APQ_BOUNDS, (body) => body.length * 2);
  const uses = deps.documentUses ?? createDocumentUseLog(deps);

  // Not actorFromRequest: a request refused here, before its context, is no call of its key (src/gateway/key-call-log.ts).
  const actorOf = (request: Request) => withRequestLog(request, verifyPresentedKey(deps.keys, request));
  // An unexpected failure here is logged under its request, as one of the context factory's is.
  function withRequestLog<T>(request: Request, work: Promise<T>): Promise<T> {
    return work.catch((error: unknown) => {
      noteErrorLogger(error, requestLogger(deps.logger, sentRequest(request)));
      throw error;
    });
  }

  async function lookUp(id: string, request: Request): Promise<string | null> {
    const actor = await actorOf(request);
    const apps = actor?.documentApps ?? null;
    requestState(request).documentResolvedById = true;
    const sent = apps ? undefined : automatic.get(id);
    if (sent !== undefined) return sent;
    const version = clientVersionOf(request);
    const name = `${apps?.join(',') ?? '*'}|${version ?? ''}|${id}`;
    let document = isDocumentHash(id) ? found.get(name) : undefined;
    if (!document && isDocumentHash(id)) {
      document = (await withRequestLog(request, findTrustedDocument(deps.db, id, apps, version))) ?? undefined;
      if (document) found.set(name, document);
    }
    if (document) {
      uses.note(document.releaseId, id, deps.now());
      return document.body;
    }
    if (apps) throw documentNotTrusted();
    return null;
  }

  return [
    usePersistedOperations({
      extractPersistedOperationId: documentIdOf,
      getPersistedOperation: (id, request) => lookUp(id, request),
      allowArbitraryOperations: async (request) => !(await actorOf(request))?.documentApps,
      customErrors: {
        notFound: () => persistedQueryNotFound(),
        persistedQueryOnly: () => documentNotTrusted(),
        keyNotFound: () =>
          createGraphQLError('Must provide query string, or a published document id (documentId).', {
            extensions: { http: { status: 400 }, code: 'BAD_REQUEST', error: 'malformed_request' },
          }),
      },
    }),
    {
      // APQ's second step, hash and text: kept once the text is seen to have that hash.
      // Not @graphql-yoga/plugin-apq: the registry's only release wants @graphql-tools/utils 10, this service runs 12.
      async onParams({ params, request }) {
        const id = documentIdOf(params);
        const text = params.query;
        if (id === null || typeof text !== 'string' || requestState(request).documentResolvedById) return;
        if (documentHash(text) !== id)
          throw createGraphQLError('PersistedQueryMismatch: the hash is not the SHA-256 of the query text.', {
            extensions: { code: 'BAD_USER_INPUT', error: 'invalid_input', field: 'extensions.persistedQuery.sha256Hash' },
          });
        // Only a key's documents, within the length any document may have, take a place in the cache.
        if (text.length > queryLimits.maxCharacters || !(await actorOf(request))) return;
        if (automatic.get(id) === undefined) automatic.set(id, text);
      },
    },
  ];
}
