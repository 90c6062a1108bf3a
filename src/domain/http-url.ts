// Links a client gives the service to publish (a car's photos and video): stored, never fetched.
import { invalidInput } from '../errors.ts';

const MAX_URL_LENGTH = 2048;

/** An absolute http(s) URL in its canonical form. The server only stores it, it never fetches it. */
export function httpUrl(text: string, field: string): string {
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
