// The explorers' GraphiQL page and the Content-Security-Policy it runs under: the page carries its
// code inline, so the policy admits exactly its scripts by hash rather than any inline script.
import { hash } from 'node:crypto';

export const graphiqlOptions = {
  title: 'Dealership API',
  defaultQuery: '{\n  apikey_details {\n    databaseId\n    permissions\n  }\n}\n',
  subscriptionsProtocol: 'SSE',
} as const;

// GraphiQL introspects only on load or when asked, yet a key sees its own view of the schema: leaving
// a changed headers editor asks again, so the docs and completion follow the key.
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

let rendered: { html: string; policy: string } | undefined;
let rendering: Promise<NonNullable<typeof rendered>> | undefined;

/** Rendered when a browser first asks, not at start-up: the renderer is large. Monaco's workers need blob:. */
export function graphiqlPage(): Promise<NonNullable<typeof rendered>> {
  rendering ??= import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) => {
    const page = renderGraphiQL(graphiqlOptions);
    const end = page.lastIndexOf('</body>');
    if (end < 0) throw new Error('the GraphiQL page has no </body>');
    const html = `${page.slice(0, end)}${KEY_VIEW_SCRIPT}\n${page.slice(end)}`;
    const policy = explorerPagePolicy({
      scripts: [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
        ([, script]) => `'sha256-${hash('sha256', script ?? '', 'base64')}'`,
      ),
      extra: ['worker-src blob:'],
      images: "'self' data: blob:",
    });
    rendered = { html, policy };
    return rendered;
  });
  return rendering;
}

/** null only before the page is rendered, and it always is before it is served. */
export function graphiqlPolicy(): string | null {
  return rendered?.policy ?? null;
}

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
