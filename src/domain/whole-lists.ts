// Read with one more than the bound, so the same statement tells whether entries were left out.

export const WHOLE_LIST_BOUND = 200;

export const WHOLE_LIST_TAKE = WHOLE_LIST_BOUND + 1;

export type BoundedList<T> = { entries: T[]; truncated: boolean };

export function boundedList<T>(rows: readonly T[]): BoundedList<T> {
  return { entries: rows.slice(0, WHOLE_LIST_BOUND), truncated: rows.length > WHOLE_LIST_BOUND };
}

export function truncatedFieldDescription(list: string): string {
  return `True when \`${list}\` stops at its bound of ${WHOLE_LIST_BOUND} entries and more were left out; false when \`${list}\` is whole.`;
}
