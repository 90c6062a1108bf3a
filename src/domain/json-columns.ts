// Readers for the free JSON columns (Prisma `Json`): features, locked_fields, custom_attributes,
// payment processor types, plugin categories, lead tags and fields. The database does not hold
// them to their documented shape, so a read keeps what fits and leaves the rest out.

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A JSON column as a raw statement reads it: PostgreSQL's driver answers the parsed value, SQLite the
 * text Prisma stored; text that is not JSON reads as null.
 */
export function jsonColumnValue(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return null;
  }
}

/** A column documented as Array<string>; anything else in it is not a string and is left out. */
export function jsonStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** A column documented as Array<{name, value}> of strings (a car's custom_attributes); other entries are left out. */
export function jsonAttributes(value: unknown): { name: string; value: string }[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) =>
    isPlainObject(item) && typeof item.name === 'string' && typeof item.value === 'string' ? [{ name: item.name, value: item.value }] : [],
  );
}

/** A column documented as an object of free key/value pairs; anything else reads as {}. */
export function jsonObject(value: unknown): Record<string, unknown> {
  return isPlainObject(value) ? value : {};
}
