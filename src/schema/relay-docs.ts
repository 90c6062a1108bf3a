// Descriptions for what the Relay plugin generates (connections, edges, page info and their paging
// arguments), written once here rather than at every connection field: every part of the graph is
// described for the front-end developers who read it in GraphiQL (test/schema-descriptions.test.ts).
import { getNamedType, isObjectType, type GraphQLField, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { TOTAL_COUNT_CAP } from './field-builders.ts';

const PAGING_ARGUMENTS: Readonly<Record<string, string>> = {
  first: 'How many records from the start (after `after`): 1 to 100, 20 when neither first nor last is given.',
  last: 'How many records from the end (before `before`): 1 to 100.',
  after: 'A cursor from an earlier page (`pageInfo.endCursor`): the records after it.',
  before: 'A cursor from an earlier page (`pageInfo.startCursor`): the records before it.',
};

const PAGE_INFO_FIELDS: Readonly<Record<string, string>> = {
  hasNextPage: 'Whether there are records after this page (ask again with `after: endCursor`).',
  hasPreviousPage: 'Whether there are records before this page (ask again with `before: startCursor`).',
  startCursor: 'The cursor of the first record of this page; null when the page is empty.',
  endCursor: 'The cursor of the last record of this page; null when the page is empty.',
};

const describeIfMissing = (thing: { description?: string | null }, text: string): void => {
  if (!thing.description) thing.description = text;
};

function connectionNodeType(type: GraphQLObjectType): string | null {
  const fields = type.getFields();
  if (!type.name.endsWith('Connection') || !fields.edges || !fields.pageInfo) return null;
  const edge = getNamedType(fields.edges.type);
  const node = isObjectType(edge) ? edge.getFields().node : undefined;
  return node ? getNamedType(node.type).name : null;
}

export function describeRelayStructure(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    if (type.name === 'PageInfo') {
      describeIfMissing(type, 'Where a page of a connection stands in the whole list.');
      for (const [name, text] of Object.entries(PAGE_INFO_FIELDS))
        if (type.getFields()[name]) describeIfMissing(type.getFields()[name]!, text);
      continue;
    }
    const nodeType = connectionNodeType(type);
    if (nodeType) {
      const fields = type.getFields();
      describeIfMissing(type, `A page of ${nodeType} records, with the cursors to ask for the next or previous page.`);
      describeIfMissing(fields.edges!, `The ${nodeType} records of this page, each with its cursor.`);
      describeIfMissing(fields.pageInfo!, 'Whether there are more pages, and the cursors to ask for them.');
      if (fields.totalCount)
        describeIfMissing(
          fields.totalCount,
          fields.totalCountCapped
            ? `How many records the list holds over all its pages, counted up to ${TOTAL_COUNT_CAP.toLocaleString('en')} (totalCountCapped says when there are more).`
            : 'How many records the whole list holds, over all its pages.',
        );
      const edge = getNamedType(fields.edges!.type);
      if (isObjectType(edge)) {
        describeIfMissing(edge, `One ${nodeType} of a page, with its cursor.`);
        if (edge.getFields().node) describeIfMissing(edge.getFields().node!, `The ${nodeType}.`);
        if (edge.getFields().cursor)
          describeIfMissing(
            edge.getFields().cursor!,
            'Where this record stands in the list: give it as `after` or `before` to page from here.',
          );
      }
    }
    for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
      const named = getNamedType(field.type);
      if (!isObjectType(named) || !connectionNodeType(named)) continue;
      for (const arg of field.args) if (PAGING_ARGUMENTS[arg.name]) describeIfMissing(arg, PAGING_ARGUMENTS[arg.name]!);
    }
  }
  return schema;
}
