// Header values built from text the service does not control (a caller's parameter names, a stored
// slug in a redirect's Location) are built AFTER the operation ran, when a write may already be
// committed: building them must never throw, or the caller is told 5xx about a write that happened.
// A header value must be ISO-8859-1 without control characters (undici and Node throw otherwise),
// and encodeURIComponent throws on half a surrogate pair, so neither can be trusted with any string.
// This is the one place such values are made, for every Unicode input.

const encoder = new TextEncoder();

/** What a lone surrogate (half a pair, not text) is written as: U+FFFD, the replacement character. */
const REPLACEMENT = '\uFFFD';

function percentEncoded(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  // TextEncoder would also replace a lone surrogate, but saying so here keeps the rule visible.
  const text = code >= 0xd800 && code <= 0xdfff ? REPLACEMENT : char;
  let out = '';
  for (const byte of encoder.encode(text)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

interface HeaderValueOptions {
  /** At most this many code points of the text are kept (a cut never splits a surrogate pair). */
  maxCodePoints?: number;
  /** Printable ASCII characters that are escaped too (a list's separator, `%` when the reader decodes). */
  alsoEscape?: string;
}

/**
 * The text as a header value that any HTTP stack accepts: printable ASCII is kept, every other code
 * point (spaces, controls, non-ASCII, lone surrogates as U+FFFD) is written as the percent-escapes of
 * its UTF-8 bytes. Never throws, whatever the string.
 */
export function headerValue(text: string, { maxCodePoints = Number.POSITIVE_INFINITY, alsoEscape = '' }: HeaderValueOptions = {}): string {
  let out = '';
  let count = 0;
  // for…of walks code points: a pair is one step, a lone surrogate is one step of its own.
  for (const char of String(text)) {
    if (count >= maxCodePoints) break;
    count += 1;
    const code = char.charCodeAt(0);
    const printable = char.length === 1 && code >= 0x21 && code <= 0x7e && !alsoEscape.includes(char);
    out += printable ? char : percentEncoded(char);
  }
  return out;
}

/** The text with each lone surrogate replaced by U+FFFD, so encodeURIComponent and encoders cannot throw on it. */
export function wellFormed(text: string): string {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, REPLACEMENT);
}

/** The text cut to at most `maxCodePoints` code points, never splitting a surrogate pair (for logs). */
export function cutText(text: string, maxCodePoints: number): string {
  if (text.length <= maxCodePoints) return text;
  let out = '';
  let count = 0;
  for (const char of text) {
    if (count >= maxCodePoints) return `${out}…`;
    count += 1;
    out += char;
  }
  return out;
}
