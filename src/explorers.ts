// The explorers' GraphiQL page (served at /graphql to a browser; Swagger UI is src/rest/docs.ts)
// and the Content-Security-Policy it runs under. The page carries all its code inline, so the
// policy admits exactly that script by its hash rather than any inline script.
import { createHash } from 'node:crypto';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';

export const graphiqlOptions = {
  title: 'Dealership API',
  defaultQuery: '{\n  apikey_details {\n    id\n    permissions\n  }\n}\n',
};

/** Hashes of the page's inline scripts, as CSP source expressions. */
function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    ([, script]) => `'sha256-${createHash('sha256').update(script ?? '', 'utf8').digest('base64')}'`,
  );
}

let rendered: { html: string; policy: string } | undefined;

/**
 * The GraphiQL page, rendered once (its options are fixed), and its policy: scripts only its own,
 * Monaco's workers from the blob: URLs the page makes, styles inline (the editor sets them at run
 * time), requests only to this origin, never framed.
 */
export function graphiqlPage(): { html: string; policy: string } {
  if (!rendered) {
    const html = renderGraphiQL(graphiqlOptions);
    const policy = [
      "default-src 'none'",
      `script-src ${inlineScriptHashes(html).join(' ')}`,
      'worker-src blob:',
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data: blob:",
      "font-src 'self' data:",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; ');
    rendered = { html, policy };
  }
  return rendered;
}
