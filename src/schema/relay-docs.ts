// Descriptions for what the Relay plugin generates, written once rather than at every connection.
/** The most records a root list's `totalCount` counts, so the count reads a bounded number of rows. */
export const TOTAL_COUNT_CAP = 10_000;

export const PAGING_ARGUMENTS: Readonly<Record<string, string>> = {
  first: 'How many records from the start (after `after`): 1 to 100, 20 when neither first nor last is given.',
  last: 'How many records from the end (before `before`): 1 to 100.',
  after: 'A cursor from an earlier page (`pageInfo.endCursor`): the records after it.',
  before: 'A cursor from an earlier page (`pageInfo.startCursor`): the records before it.',
};

export const PAGE_INFO = 'Where a page of a connection stands in the whole list.';

export const PAGE_INFO_FIELDS: Readonly<Record<string, string>> = {
  hasNextPage: 'Whether there are records after this page (ask again with `after: endCursor`).',
  hasPreviousPage: 'Whether there are records before this page (ask again with `before: startCursor`).',
  startCursor: 'The cursor of the first record of this page; null when the page is empty.',
  endCursor: 'The cursor of the last record of this page; null when the page is empty.',
};

export const connectionTexts = (nodeType: string, capped: boolean) => ({
  type: `A page of ${nodeType} records, with the cursors to ask for the next or previous page.`,
  edges: `The ${nodeType} records of this page, each with its cursor.`,
  pageInfo: 'Whether there are more pages, and the cursors to ask for them.',
  totalCount: capped
    ? `How many records the list holds over all its pages, counted up to ${TOTAL_COUNT_CAP.toLocaleString('en')} (totalCountCapped says when there are more).`
    : 'How many records the whole list holds, over all its pages.',
});

export const edgeTexts = (nodeType: string) => ({
  type: `One ${nodeType} of a page, with its cursor.`,
  node: `The ${nodeType}.`,
  cursor: 'Where this record stands in the list: give it as `after` or `before` to page from here.',
});
