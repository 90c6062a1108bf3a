// The explorers' GraphiQL page (served at /graphql to a browser; Swagger UI is src/rest/docs.ts)
// and the Content-Security-Policy it runs under. The page carries all its code inline, so the
// policy admits exactly that script by its hash rather than any inline script.
import { createHash } from 'node:crypto';

export const graphiqlOptions = {
  title: 'Dealership API',
  defaultQuery: '{\n  apikey_details {\n    databaseId\n    permissions\n  }\n}\n',
  // Subscriptions over /graphql itself, as Server-Sent Events (docs/subscriptions.md).
  subscriptionsProtocol: 'SSE',
} as const;

/** Hashes of the page's inline scripts, as CSP source expressions. */
function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    ([, script]) =>
      `'sha256-${createHash('sha256')
        .update(script ?? '', 'utf8')
        .digest('base64')}'`,
  );
}

interface GraphiqlPage {
  html: string;
  policy: string;
}

/**
 * GraphiQL introspects with the headers of its headers editor, but only when the page loads or when
 * asked ("Re-fetch GraphQL schema"). With a key the answer is the key's view (docs/api-view.md), so
 * leaving the headers editor after changing it asks again: the docs and completion follow the key.
 */
const KEY_VIEW_SCRIPT = `<script>
(() => {
  // The editors' text as shown (the editor takes its input without input events): compared when focus leaves them.
  const toolOf = (node) => (node instanceof Element ? node.closest('.graphiql-editor-tool') : null);
  let seen = null;
  document.addEventListener('focusin', (event) => {
    const tool = toolOf(event.target);
    if (tool && seen === null) seen = tool.textContent;
  }, true);
  document.addEventListener('focusout', (event) => {
    const tool = toolOf(event.target);
    if (!tool || toolOf(event.relatedTarget)) return;
    const text = tool.textContent;
    if (text === seen) return;
    seen = text;
    document.querySelector('button[aria-label^="Re-fetch GraphQL schema"]')?.click();
  }, true);
})();
</script>`;

/** The page with the script that re-introspects when the headers change, before the end of its body. */
function withKeyView(html: string): string {
  const end = html.lastIndexOf('</body>');
  if (end < 0) throw new Error('the GraphiQL page has no </body>');
  return `${html.slice(0, end)}${KEY_VIEW_SCRIPT}\n${html.slice(end)}`;
}

let rendering: Promise<GraphiqlPage> | undefined;
let rendered: GraphiqlPage | undefined;

/**
 * The GraphiQL page, rendered once (its options are fixed), and its policy: scripts only its own,
 * Monaco's workers from the blob: URLs the page makes, styles inline (the editor sets them at run
 * time), requests only to this origin, never framed. The renderer carries the whole page inline
 * (megabytes of JavaScript), so it is loaded when a browser first asks for the page, not at start-up.
 */
export function graphiqlPage(): Promise<GraphiqlPage> {
  rendering ??= import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) => {
    const html = withKeyView(renderGraphiQL(graphiqlOptions));
    const policy = explorerPagePolicy({
      scripts: inlineScriptHashes(html),
      extra: ['worker-src blob:'],
      images: "'self' data: blob:",
    });
    rendered = { html, policy };
    return rendered;
  });
  return rendering;
}

/** The GraphiQL page's policy once the page has been rendered (it always has, before it is served). */
export function graphiqlPolicy(): string | null {
  return rendered?.policy ?? null;
}

/**
 * The Content-Security-Policy of an explorer page (GraphiQL, Swagger UI): this server's own files and
 * the named scripts only, nothing from elsewhere, never framed.
 */
export function explorerPagePolicy(page: { scripts: readonly string[]; images: string; extra?: readonly string[] }): string {
  return [
    "default-src 'none'",
    `script-src ${page.scripts.join(' ')}`,
    ...(page.extra ?? []),
    "style-src 'self' 'unsafe-inline'",
    `img-src ${page.images}`,
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
