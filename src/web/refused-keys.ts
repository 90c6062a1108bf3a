// Keys no input may have. A request's text becomes objects in several places: query parameters and
// form fields read by their bracketed names (`lead[name]`), JSON bodies and JSON-valued parameters,
// GraphQL's variables and extensions. Three names reach past the object being built to what every
// object shares: `__proto__` (reading it gives Object.prototype, so a parser's `at[key] ??= {}` steps
// onto it; assigning it replaces an object's prototype), and `constructor` then `prototype` (the
// function behind a plain object, and that function's prototype, which is Object.prototype again).
// A property written there is seen by every object of the process: every later request failed, and a
// fuzzer took an instance down this way. No input of the API has such a key, so each place that reads
// request text into objects refuses them (a 422 naming the key's place) before anything else reads it.

const REFUSED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** The reason a refused key is refused, after the path that names it (`lead.__proto__: …`). */
export const REFUSED_KEY_REASON = 'is not a key any input may have (__proto__, constructor and prototype are refused)';

export const isRefusedKey = (key: string): boolean => REFUSED_KEYS.has(key);

/** A key's place under `path`, as errors name fields: `lead.name`, `data["a b"]`, or the key alone at the top. */
function childPath(path: string, key: string): string {
  if (path === '') return key;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/**
 * The place of the first refused name in a query parameter's or form field's name, read as its
 * bracketed names (`lead[__proto__][x]` → `lead.__proto__`), or null. Split on every bracket, so no
 * spelling a bracket parser reads as a name (`a[b]c`, `a[[b]]`) slips past.
 */
export function refusedName(name: string): string | null {
  let path = '';
  for (const part of name.split(/[[\]]+/)) {
    if (part === '') continue;
    path = childPath(path, part);
    if (isRefusedKey(part)) return path;
  }
  return null;
}

/**
 * The place of the first refused key in a value read from JSON or a form (`lead.fields.__proto__`,
 * `variables.lead.constructor`), or null. Walked with a queue, not recursion: the value may nest as
 * deep as the body limits allow.
 */
export function refusedKeyIn(value: unknown, path = ''): string | null {
  const queue: [unknown, string][] = [[value, path]];
  for (let next = 0; next < queue.length; next += 1) {
    const [item, at] = queue[next]!;
    if (typeof item !== 'object' || item === null) continue;
    if (Array.isArray(item)) {
      for (const [index, entry] of item.entries()) queue.push([entry, `${at}[${index}]`]);
      continue;
    }
    for (const [key, entry] of Object.entries(item)) {
      const place = childPath(at, key);
      if (isRefusedKey(key)) return place;
      queue.push([entry, place]);
    }
  }
  return null;
}
