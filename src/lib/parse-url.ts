// Not `URL.canParse`: Node 20's fast path refuses non-ASCII text (IDN hosts) after warm-up, `new URL` does not.

export function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}
