// The shape of a webhook payload's `data`, for one event type: the record the event is about, in the
// REST door's typing (`enumsAsText`) and names (`restFieldNames`), with every leaf field of its type
// the REST door would also show (graph-only and deprecated fields left out). The delivery reads
// exactly these fields (src/gateway/webhook-payloads.ts) and the OpenAPI document describes them.
import { getNamedType, isLeafType, isObjectType, type GraphQLField, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { NODE_TYPE_OF_SUBJECT, subjectOfEvent, type RecordEventType } from '../domain/record-events.ts';
import { enumsAsText, restFieldNames } from './rest-schema.ts';

/** One field of a payload's `data`: its name there, and the graph field it is read from. */
export interface PayloadField {
  name: string;
  field: GraphQLField<unknown, unknown>;
}

/** The graph as payloads read it: the REST door's value texts (built once per schema). */
const payloadSchemas = new WeakMap<GraphQLSchema, GraphQLSchema>();
export function payloadSchemaOf(schema: GraphQLSchema): GraphQLSchema {
  const projected = payloadSchemas.get(schema) ?? enumsAsText(schema);
  payloadSchemas.set(schema, projected);
  return projected;
}

/** The graph type (REST typing) an event type's record is read as, and the fields of its `data`. */
export function webhookPayloadShape(
  schema: GraphQLSchema,
  type: RecordEventType,
): { recordType: GraphQLObjectType; fields: PayloadField[] } {
  const typeName = NODE_TYPE_OF_SUBJECT[subjectOfEvent(type)];
  const recordType = payloadSchemaOf(schema).getType(typeName);
  if (!isObjectType(recordType)) throw new Error(`${typeName} is not an object type`);
  const fields = Object.values(recordType.getFields())
    .filter(
      (field) =>
        isLeafType(getNamedType(field.type)) &&
        field.args.every((arg) => !arg.type.toString().endsWith('!')) &&
        field.extensions?.graphOnly !== true &&
        field.deprecationReason === undefined,
    )
    .map((field) => ({ name: restFieldNames[field.name] ?? field.name, field: field as GraphQLField<unknown, unknown> }));
  return { recordType, fields };
}
