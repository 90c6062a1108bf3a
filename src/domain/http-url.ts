// Links a client gives the service to publish (a car's photos and video): stored, never fetched; and
// the rule for the text of every URL the service takes (urlTextProblem, which webhook URLs follow too).
import { invalidInput } from '../errors.ts';

const MAX_URL_LENGTH = 2048;

/** C0 controls, DEL and C1 controls: the URL parser drops tabs and newlines and encodes the rest. */
const CONTROL_CHARACTER = /\p{Cc}/u;

/**
 * Why the text of a URL is not safe to keep as sent, or null. The WHATWG URL parser silently removes
 * tabs, CR and LF anywhere in a URL (`https://host/x\r\nHost: evil` reads as `https://host/xHost:%20evil`),
 * so text holding one names a URL other than the one it shows; every control character is refused,
 * leading and trailing ones included (only spaces are trimmed).
 */
export function urlTextProblem(text: string): string | null {
  const control = CONTROL_CHARACTER.exec(text);
  if (!control) return null;
  const code = control[0].codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0');
  return `must not contain control characters (U+${code} at position ${control.index + 1})`;
}

/** An absolute http(s) URL in its canonical form. The server only stores it, it never fetches it. */
export function httpUrl(text: string, field: string): string {
  const textProblem = urlTextProblem(text);
  if (textProblem) throw invalidInput(field, textProblem);
  const trimmed = text.trim();
  const reason = 'must be an absolute http:// or https:// URL';
  if (!/^https?:\/\//i.test(trimmed)) throw invalidInput(field, reason);
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw invalidInput(field, reason);
  }
  if (!url.hostname) throw invalidInput(field, reason);
  if (url.username || url.password) throw invalidInput(field, 'must not carry a user name or password');
  if (url.href.length > MAX_URL_LENGTH) throw invalidInput(field, `must be at most ${MAX_URL_LENGTH} characters`);
  return url.href;
}

/**
 * Absolute http(s) URLs that httpUrl keeps exactly as sent (already in their canonical form, so two
 * different texts are two different URLs), as a JSON Schema pattern: what the OpenAPI document shows
 * a client generating a URL. A lower-case host name whose last label starts with a letter (one
 * ending in a number is read as an IPv4 address), no label with two hyphens in a row (`xn--` names
 * must be valid punycode), a path from `/` without dot segments or escapes.
 */
export const HTTP_URL_PATTERN =
  '^https?://(?:[a-z0-9]+(?:-[a-z0-9]+)*\\.)*[a-z][a-z0-9]*(?:-[a-z0-9]+)*/(?:[A-Za-z0-9_~-][A-Za-z0-9._~-]*(?:/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*/?)?$';
