// Lists the spec answers whole, with no paging of their own (an API key's dealerships, the partner
// mappings, an offer's dealership ids, a car's leads): each carries at most WHOLE_LIST_BOUND entries,
// the first ones in its documented order, and a sibling `<list>_truncated` field says whether entries
// were left out (docs/decisions.md, "Lists the spec answers whole"). The keys and data the spec
// describes stay under the bound, so their lists are whole; a platform-wide key gets a bounded answer
// instead of one that grows with the platform. A list is read with `take: WHOLE_LIST_TAKE` (one more
// than the bound), so that whether there are more is known from the same statement, without a count.

/** The most entries a list the spec answers whole carries. */
export const WHOLE_LIST_BOUND = 200;

/** What a read of such a list takes: one entry more than it answers, to tell whether there are more. */
export const WHOLE_LIST_TAKE = WHOLE_LIST_BOUND + 1;

/** A list as answered: at most WHOLE_LIST_BOUND entries, and whether entries were left out. */
export interface BoundedList<T> {
  entries: T[];
  truncated: boolean;
}

/** The answer of a list read with `take: WHOLE_LIST_TAKE` (in its documented order). */
export function boundedList<T>(rows: readonly T[]): BoundedList<T> {
  return { entries: rows.slice(0, WHOLE_LIST_BOUND), truncated: rows.length > WHOLE_LIST_BOUND };
}

/** The description of that field, the same words for every such list. */
export function truncatedFieldDescription(list: string): string {
  return `True when \`${list}\` stops at its bound of ${WHOLE_LIST_BOUND} entries and more were left out; false when \`${list}\` is whole.`;
}
