// The contract, served: the OpenAPI document at /openapi.json and Swagger UI at /docs, whose code
// comes from the swagger-ui-dist package on this server (no CDN), so it works with no internet.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { buildOpenApiDocument, type OpenApiOptions } from './openapi.ts';
import { noSuchPath, restError, restErrorResponse } from './errors.ts';
import { permissionSetName } from '../auth/api-view.ts';
import type { KeyVerifier } from '../auth/key-cache.ts';
import type { Permission } from '../auth/permissions.ts';
import { actorFromRequest } from '../context.ts';
import { unauthenticated } from '../errors.ts';
import { boundedCache } from '../lib/bounded-cache.ts';
import { explorerPagePolicy } from './explorers.ts';
import { Response } from '../web/fetch-api.ts';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

const swaggerPackage = createRequire(import.meta.url).resolve('swagger-ui-dist/package.json');
const swaggerDir = path.dirname(swaggerPackage);
/** In the asset URLs, so a new Swagger UI is a new URL and each version's assets can be immutable. */
const swaggerVersion = (JSON.parse(readFileSync(swaggerPackage, 'utf8')) as { version: string }).version;
const assets: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <title>Dealership API — REST paths</title>
  <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css?v=${swaggerVersion}" />
  <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png?v=${swaggerVersion}" />
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${DOCS_PATH}/swagger-ui-bundle.js?v=${swaggerVersion}"></script>
  <script src="${DOCS_PATH}/swagger-ui-standalone-preset.js?v=${swaggerVersion}"></script>
  <script src="${DOCS_PATH}/init.js"></script>
</body>
</html>
`;

// "Authorize" keeps the key across reloads for "Try it out"; the document is fetched with it, and again
// on authorise or log-out, so the page shows the key's view.
const init = `let system = null;
function authorisedKey() {
  if (system) return system.authSelectors.authorized().getIn(['bearer', 'value']) || null;
  try {
    const kept = JSON.parse(window.localStorage.getItem('authorized') || '{}');
    return (kept.bearer && kept.bearer.value) || null;
  } catch {
    return null;
  }
}
const reloadDocument = (action) => (...args) => {
  const result = action(...args);
  system.specActions.download();
  return result;
};
window.ui = SwaggerUIBundle({
  url: '${OPENAPI_PATH}',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: true,
  // No badge fetched from validator.swagger.io: the page calls this server only.
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  plugins: [
    () => ({
      afterLoad(loaded) {
        system = loaded;
      },
      statePlugins: { auth: { wrapActions: { authorize: reloadDocument, logout: reloadDocument } } },
    }),
  ],
  requestInterceptor(request) {
    const key = request.loadSpec ? authorisedKey() : null;
    if (key) request.headers.Authorization = 'Bearer ' + key;
    return request;
  },
  // "Try it out" calls this page's origin, the only one its policy allows: the document names PUBLIC_URL,
  // another origin when the page is opened by another name (in development, or behind a proxy).
  responseInterceptor(response) {
    if (!response.ok || new URL(response.url, window.location.href).pathname !== '${OPENAPI_PATH}') return response;
    try {
      const document = JSON.parse(response.text);
      const named = (document.servers || []).map((server) => server.url);
      const description = named.includes(window.location.origin) ? 'This service' : 'The origin of this page (the document names ' + named.join(', ') + ')';
      document.servers = [{ url: window.location.origin, description }];
      response.text = JSON.stringify(document);
      response.body = document;
      response.obj = document;
      response.data = response.text;
    } catch {
      // Not JSON: Swagger UI shows its own error.
    }
    return response;
  },
  layout: 'StandaloneLayout',
});
`;

/** Swagger UI's scripts are files of this server; React sets some styles inline. */
export const DOCS_PAGE_POLICY = explorerPagePolicy({ scripts: ["'self'"], images: "'self' data:" });

export function isDocsPath(pathname: string): boolean {
  if (pathname === DOCS_PATH || pathname === `${DOCS_PATH}/init.js`) return true;
  return pathname.startsWith(`${DOCS_PATH}/`) && Object.hasOwn(assets, pathname.slice(DOCS_PATH.length + 1));
}

// A new object per answer: the Response may keep it as its headers, and a later hook adds the ETag,
// which a shared object would carry to the next answer.
const documentHeaders = () => ({
  'content-type': 'application/json; charset=utf-8',
  // The answer depends on the key: a shared cache must not hand one key's view (or the public one) to another.
  vary: 'Authorization',
});

const documentText = (schema: GraphQLSchema, options: OpenApiOptions): string =>
  JSON.stringify(buildOpenApiDocument(schema, options), null, 2);

/** Serves the OpenAPI document always (a key's view of it to a request with a key), and Swagger UI when `explorers` is on. */
export function useApiDocs(explorers: boolean, documentOptions: OpenApiOptions, keys: KeyVerifier): Plugin {
  // Written when first asked for, not at start-up: integrators fetch it rarely, and it walks the whole REST schema.
  let schema: GraphQLSchema | undefined;
  let documentJson: string | undefined;
  // The keys' views of the document, one per distinct permission set.
  const keyViews = boundedCache<Uint8Array<ArrayBuffer>>({ maxEntries: 64, maxBytes: 16 * 1024 * 1024 }, (bytes) => bytes.byteLength);
  const fileCache = new Map<string, ReturnType<typeof readFileSync>>();
  const keyView = (served: GraphQLSchema, permissions: ReadonlySet<Permission>): Uint8Array<ArrayBuffer> => {
    const name = permissionSetName(permissions);
    const bytes = keyViews.get(name) ?? new TextEncoder().encode(documentText(served, { ...documentOptions, viewOf: permissions }));
    keyViews.set(name, bytes);
    return bytes;
  };
  return {
    onSchemaChange({ schema: changed }: { schema: GraphQLSchema }) {
      schema = changed;
      documentJson = undefined;
      keyViews.clear();
    },
    async onRequest({ request, url, endResponse }) {
      if (request.method !== 'GET') return;
      if (url.pathname === OPENAPI_PATH && schema) {
        if (request.headers.has('authorization')) {
          // A key that is not valid gets the 401 of every other path, not the public document.
          const actor = await actorFromRequest(keys, request);
          if (!actor) return endResponse(restErrorResponse([unauthenticated()]));
          return endResponse(new Response(keyView(schema, actor.permissions), { headers: documentHeaders() }));
        }
        documentJson ??= documentText(schema, documentOptions);
        endResponse(new Response(documentJson, { headers: documentHeaders() }));
      } else if (!explorers) {
        return;
      } else if (url.pathname === DOCS_PATH || url.pathname === `${DOCS_PATH}/`) {
        endResponse(new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }));
      } else if (url.pathname === `${DOCS_PATH}/init.js`) {
        endResponse(new Response(init, { headers: { 'content-type': 'text/javascript; charset=utf-8' } }));
      } else if (url.pathname.startsWith(`${DOCS_PATH}/`)) {
        const name = url.pathname.slice(DOCS_PATH.length + 1);
        const type = assets[name];
        if (!type) return endResponse(restError(404, noSuchPath()));
        const bytes = fileCache.get(name) ?? readFileSync(path.join(swaggerDir, name));
        fileCache.set(name, bytes);
        endResponse(new Response(bytes, { headers: { 'content-type': type, 'cache-control': 'public, max-age=31536000, immutable' } }));
      }
    },
  };
}
