// The fields of a webhook payload's `data`, as the REST door types and names them: declared once so
// the delivery and the OpenAPI document cannot disagree.
import { getNamedType, isLeafType, isNonNullType, isObjectType, type GraphQLField, type GraphQLSchema } from 'graphql';
import { NODE_TYPE_OF_SUBJECT, subjectOfEvent, type RecordEventType } from '../domain/record-events.ts';
import { enumsAsText, restFieldNames } from './rest-schema.ts';

export interface PayloadField {
  name: string;
  field: GraphQLField<unknown, unknown>;
}

const payloadSchemas = new WeakMap<GraphQLSchema, GraphQLSchema>();
export function payloadSchemaOf(schema: GraphQLSchema): GraphQLSchema {
  const projected = payloadSchemas.get(schema) ?? enumsAsText(schema);
  payloadSchemas.set(schema, projected);
  return projected;
}

/** The leaf fields the REST door shows of an event's record; graph-only and deprecated ones left out. */
export function webhookPayloadShape(schema: GraphQLSchema, type: RecordEventType) {
  const typeName = NODE_TYPE_OF_SUBJECT[subjectOfEvent(type)];
  const recordType = payloadSchemaOf(schema).getType(typeName);
  if (!isObjectType(recordType)) throw new Error(`${typeName} is not an object type`);
  const fields = Object.values(recordType.getFields())
    .filter(
      (field) =>
        isLeafType(getNamedType(field.type)) &&
        field.args.every((arg) => !isNonNullType(arg.type)) &&
        field.extensions?.graphOnly !== true &&
        field.deprecationReason === undefined,
    )
    .map((field) => ({ name: restFieldNames[field.name] ?? field.name, field: field as GraphQLField<unknown, unknown> }));
  return { recordType, fields };
}
