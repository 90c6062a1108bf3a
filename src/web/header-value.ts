// Header values from uncontrolled text are built after a write may have committed, so building one
// must never throw (Node rejects non-Latin-1 and control characters; encodeURIComponent throws on lone surrogates).

const encoder = new TextEncoder();

const REPLACEMENT = '\uFFFD';

function percentEncoded(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  const text = code >= 0xd800 && code <= 0xdfff ? REPLACEMENT : char;
  let out = '';
  for (const byte of encoder.encode(text)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

interface HeaderValueOptions {
  maxCodePoints?: number;
  alsoEscape?: string;
}

/** Printable ASCII kept, every other code point percent-escaped as UTF-8; never throws. */
export function headerValue(text: string, { maxCodePoints = Number.POSITIVE_INFINITY, alsoEscape = '' }: HeaderValueOptions = {}): string {
  let out = '';
  let count = 0;
  for (const char of String(text)) {
    if (count >= maxCodePoints) break;
    count += 1;
    const code = char.charCodeAt(0);
    const printable = char.length === 1 && code >= 0x21 && code <= 0x7e && !alsoEscape.includes(char);
    out += printable ? char : percentEncoded(char);
  }
  return out;
}

export function wellFormed(text: string): string {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, REPLACEMENT);
}

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
