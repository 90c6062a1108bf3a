// The shape of a webhook payload's `data`, for one event type: the record the event is about, read by
// its global id as the REST door types it (`enumsAsText`: a lead's category is "Test Drive Booking",
// never the enum's name) and names it (`restFieldNames`: `databaseId` is `id`), with every leaf field
// of its type that the REST door would also show (graph-only and deprecated fields left out). The
// delivery reads exactly these fields (src/gateway/webhook-payloads.ts), and the OpenAPI document
// describes them (its `webhooks`, src/rest/openapi.ts): declared here alone, below both.
import { getNamedType, isLeafType, isObjectType, type GraphQLField, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { NODE_TYPE_OF_SUBJECT, subjectOfEvent, type RecordEventType } from '../domain/record-events.ts';
import { enumsAsText, restFieldNames } from './rest-schema.ts';

/** One field of a payload's `data`: its name there, and the graph field it is read from. */
export interface PayloadField {
  name: string;
  field: GraphQLField<unknown, unknown>;
}

/** What a payload's `data` is for one event type: the graph type its record is read as, and its fields. */
interface WebhookPayloadShape {
  type: RecordEventType;
  /** The record's type in the REST door's typing (enums as the spec's text). */
  recordType: GraphQLObjectType;
  fields: readonly PayloadField[];
}

/** The leaf fields of a type the REST door shows, under the names the REST door gives them. */
function payloadFields(type: GraphQLObjectType): PayloadField[] {
  return Object.values(type.getFields())
    .filter(
      (field) =>
        isLeafType(getNamedType(field.type)) &&
        field.args.every((arg) => !arg.type.toString().endsWith('!')) &&
        field.extensions?.graphOnly !== true &&
        field.deprecationReason === undefined,
    )
    .map((field) => ({ name: restFieldNames[field.name] ?? field.name, field: field as GraphQLField<unknown, unknown> }));
}

/** The graph as payloads read it: the REST door's value texts (built once per schema). */
const payloadSchemas = new WeakMap<GraphQLSchema, GraphQLSchema>();
export function payloadSchemaOf(schema: GraphQLSchema): GraphQLSchema {
  let projected = payloadSchemas.get(schema);
  if (!projected) {
    projected = enumsAsText(schema);
    payloadSchemas.set(schema, projected);
  }
  return projected;
}

/** The shape of the `data` of an event type's payload, from `schema` (the graph, src/schema/index.ts). */
export function webhookPayloadShape(schema: GraphQLSchema, type: RecordEventType): WebhookPayloadShape {
  const typeName = NODE_TYPE_OF_SUBJECT[subjectOfEvent(type)];
  const recordType = payloadSchemaOf(schema).getType(typeName);
  if (!isObjectType(recordType)) throw new Error(`${typeName} is not an object type`);
  return { type, recordType, fields: payloadFields(recordType) };
}
