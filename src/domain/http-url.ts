import { invalidInput } from '../errors.ts';
import { parseUrl } from '../lib/parse-url.ts';

const MAX_URL_LENGTH = 2048;

const CONTROL_CHARACTER = /\p{Cc}/u;

/** The URL parser silently drops tabs, CR and LF, so text holding one names a URL other than the one it shows. */
export function urlTextProblem(text: string): string | null {
  const control = CONTROL_CHARACTER.exec(text);
  if (!control) return null;
  const code = control[0].codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0');
  return `must not contain control characters (U+${code} at position ${control.index + 1})`;
}

/** The server only stores it, never fetches it. */
export function httpUrl(text: string, field: string): string {
  const textProblem = urlTextProblem(text);
  if (textProblem) throw invalidInput(field, textProblem);
  const trimmed = text.trim();
  const reason = 'must be an absolute http:// or https:// URL';
  if (!/^https?:\/\//i.test(trimmed)) throw invalidInput(field, reason);
  const url = parseUrl(trimmed);
  if (!url?.hostname) throw invalidInput(field, reason);
  if (url.username || url.password) throw invalidInput(field, 'must not carry a user name or password');
  if (url.href.length > MAX_URL_LENGTH) throw invalidInput(field, `must be at most ${MAX_URL_LENGTH} characters`);
  return url.href;
}

// Only canonical URLs (httpUrl keeps them as sent), for the OpenAPI document's generated examples.
export const HTTP_URL_PATTERN =
  '^https?://(?:[a-z0-9]+(?:-[a-z0-9]+)*\\.)*[a-z][a-z0-9]*(?:-[a-z0-9]+)*/(?:[A-Za-z0-9_~-][A-Za-z0-9._~-]*(?:/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*/?)?$';
