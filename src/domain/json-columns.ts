// The database does not hold the free JSON columns to their documented shape, so a read keeps what fits.
import { isPlainObject } from '../lib/json.ts';

export function jsonStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

export function jsonAttributes(value: unknown): { name: string; value: string }[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) =>
    isPlainObject(item) && typeof item.name === 'string' && typeof item.value === 'string' ? [{ name: item.name, value: item.value }] : [],
  );
}

export function jsonObject(value: unknown): Record<string, unknown> {
  return isPlainObject(value) ? value : {};
}
