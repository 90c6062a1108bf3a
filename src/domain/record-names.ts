// One precedence for "ID, slug or custom slug": id, then slug, then custom slug, so a text always
// means the same record whatever the others are called.
import { rowIdFromText } from './input-limits.ts';

export type NamedRecord = { id: number; slug: string; custom_slug: string | null };
export const NAME_COLUMNS = { id: true, slug: true, custom_slug: true } as const;

type RecordName = { id: number | null; slug: string | null };

type RecordNameCondition = { id: number } | { slug: string } | { custom_slug: string };

/** A number (an Int argument) is an id only; digit text is both an id and a slug. */
export function idOrSlug(identifier: string | number): RecordName {
  if (typeof identifier === 'number') return { id: identifier, slug: null };
  const text = identifier.trim();
  return { id: rowIdFromText(text), slug: text };
}

export function slugOnly(slug: string): RecordName {
  return { id: null, slug: slug.trim() };
}

export function recordNameWhere(name: RecordName): { OR: RecordNameCondition[] } {
  const conditions: RecordNameCondition[] = [];
  if (name.id !== null) conditions.push({ id: name.id });
  if (name.slug !== null) conditions.push({ slug: name.slug }, { custom_slug: name.slug });
  return { OR: conditions };
}

export function nameMatch(record: NamedRecord, name: RecordName): number | null {
  if (name.id !== null && record.id === name.id) return 0;
  if (name.slug === null) return null;
  if (record.slug === name.slug) return 1;
  if (record.custom_slug === name.slug) return 2;
  return null;
}

export function recordNamed<Row extends NamedRecord>(rows: readonly Row[], name: RecordName): Row | null {
  let best: { row: Row; rank: number } | null = null;
  for (const row of rows) {
    const rank = nameMatch(row, name);
    if (rank !== null && (best === null || rank < best.rank)) best = { row, rank };
  }
  return best?.row ?? null;
}
