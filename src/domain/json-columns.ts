// The database does not hold the free JSON columns to their documented shape, so a read keeps what fits.

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** PostgreSQL's driver answers the parsed value, SQLite the text Prisma stored. */
export function jsonColumnValue(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return null;
  }
}

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
