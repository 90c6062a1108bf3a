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
