// How a record is named by text where the spec says "ID, slug or custom slug" (a car on 4.2, 4.3 and
// 4.19, a website on 4.3, 4.4, 4.6, 4.18 and 4.20) or "slug" (a lead's website_slug). One rule for
// every caller: the record whose id the text is wins, then the one whose slug it is, then the one
// whose custom slug it is. Ids, slugs and custom slugs are each unique, so a text matches at most
// three records, and the precedence makes it always mean the same one, whatever the others are
// called (a website whose slug is another website's id digits does not shadow that website).
import { rowIdFromText } from './input-limits.ts';

/** The columns a record is named by. */
export interface NamedRecord {
  id: number;
  slug: string;
  custom_slug: string | null;
}

/** What a caller's text can mean: a row id (null when it cannot be one) and a slug or custom slug (null when it cannot be one). */
interface RecordName {
  id: number | null;
  slug: string | null;
}

/** One way of matching a record, as a Prisma `where` of any model with these columns. */
type RecordNameCondition = { id: number } | { slug: string } | { custom_slug: string };

/**
 * An identifier given as "ID, slug or custom slug": text is trimmed, and is an id when it is digits
 * within the id range (rowIdFromText) as well as a slug; a number (an Int argument) is an id only.
 */
export function idOrSlug(identifier: string | number): RecordName {
  if (typeof identifier === 'number') return { id: identifier, slug: null };
  const text = identifier.trim();
  return { id: rowIdFromText(text), slug: text };
}

/** A name given as a slug (a lead's website_slug): its slug or its custom slug, never its id. */
export function slugOnly(slug: string): RecordName {
  return { id: null, slug: slug.trim() };
}

/** The `where` that finds every record the name could mean; recordNamed then picks the one it means. */
export function recordNameWhere(name: RecordName): { OR: RecordNameCondition[] } {
  const conditions: RecordNameCondition[] = [];
  if (name.id !== null) conditions.push({ id: name.id });
  if (name.slug !== null) conditions.push({ slug: name.slug }, { custom_slug: name.slug });
  return { OR: conditions };
}

/** How the record answers to the name, as its precedence (0 id, 1 slug, 2 custom slug); null when it does not. */
export function nameMatch(record: NamedRecord, name: RecordName): number | null {
  if (name.id !== null && record.id === name.id) return 0;
  if (name.slug === null) return null;
  if (record.slug === name.slug) return 1;
  if (record.custom_slug === name.slug) return 2;
  return null;
}

/** The record the name means among the rows recordNameWhere found: the best match, or null when none answers to it. */
export function recordNamed<Row extends NamedRecord>(rows: readonly Row[], name: RecordName): Row | null {
  let best: { row: Row; rank: number } | null = null;
  for (const row of rows) {
    const rank = nameMatch(row, name);
    if (rank !== null && (best === null || rank < best.rank)) best = { row, rank };
  }
  return best?.row ?? null;
}
