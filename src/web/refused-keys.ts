// `__proto__`, `constructor` and `prototype` reach Object.prototype: one write there through a parsed
// input poisons every object in the process, so every reader of request text refuses them first.

const REFUSED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export const REFUSED_KEY_REASON = 'is not a key any input may have (__proto__, constructor and prototype are refused)';

export const isRefusedKey = (key: string): boolean => REFUSED_KEYS.has(key);

export function keyPath(path: string, key: string): string {
  if (path === '') return key;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

// Split on every bracket, so no spelling a bracket parser reads as a name (`a[b]c`, `a[[b]]`) slips past.
export function refusedName(name: string): string | null {
  let path = '';
  for (const part of name.split(/[[\]]+/)) {
    if (part === '') continue;
    path = keyPath(path, part);
    if (isRefusedKey(part)) return path;
  }
  return null;
}

// A queue, not recursion: the value may nest as deep as the body limits allow.
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
      const place = keyPath(at, key);
      if (isRefusedKey(key)) return place;
      queue.push([entry, place]);
    }
  }
  return null;
}
