// The Relay plugin's texts that name their node type, which its options cannot; a root list counts up to the cap.
export const TOTAL_COUNT_CAP = 10_000;

export const connectionTexts = (nodeType: string, capped: boolean) => ({
  type: `A page of ${nodeType} records, with the cursors to ask for the next or previous page.`,
  edges: `The ${nodeType} records of this page, each with its cursor.`,
  totalCount: capped
    ? `How many records the list holds over all its pages, counted up to ${TOTAL_COUNT_CAP.toLocaleString('en')} (totalCountCapped says when there are more).`
    : 'How many records the whole list holds, over all its pages.',
});

export const edgeTexts = (nodeType: string) => ({
  type: `One ${nodeType} of a page, with its cursor.`,
  node: `The ${nodeType}.`,
});
