// The one way this service asks whether text is an absolute URL. Not `URL.canParse`: on Node 20 its
// optimised (fast API) path answers false for text with non-ASCII characters once it has been called
// often enough (an IDN host such as bücher.example was refused after warm-up), while `new URL` reads
// the same text correctly; test/parse-url.test.ts holds the two apart.

/** The URL `text` is, or null when it is not an absolute URL. */
export function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}
