// A webhook's payload: the record an event is about, read through the graph as the subscribing key
// (its dealerships and permissions, at delivery time), so a delivery carries exactly what that key
// could read: personal data is null without read:personal_data, as the graph answers it, and a record
// of a dealership the key does not reach is not found. Every record is read the one way, by its
// global id with `node(id:)`, through the graph as the REST door types it (`enumsAsText`: a lead's
// category is "Test Drive Booking", as the REST door answers it, never the enum's name) and names it
// (`restFieldNames`: `databaseId` is `id`). The selection is every leaf field of the record's type that
// the REST door would also show (graph-only and deprecated fields left out): a flat record, each
// field and value as the REST door's body of the same record has it.
//
// The payload's shape is declared once, for the delivery and for the OpenAPI document that describes
// it: `webhookPayloadShape` (src/rest/webhook-payload-shape.ts, in the room both can use).
import { encodeGlobalID } from '@pothos/plugin-relay';
import { execute, parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { Actor } from '../auth/api-keys.ts';
import type { Context } from '../context.ts';
import type { RecordEvent, RecordEventSubject } from '../domain/record-events.ts';
import { NODE_TYPE_OF_SUBJECT, unheardEvents } from '../domain/record-events.ts';
import type { PayloadRenderer } from '../notifications/webhook-worker.ts';
import { payloadSchemaOf, webhookPayloadShape, type PayloadField } from '../rest/webhook-payload-shape.ts';
import { contextFor, type AppDeps } from './app.ts';

/** `id: databaseId name email …`: the selection that reads a payload's fields under their REST names. */
function selectionOf(fields: readonly PayloadField[]): string {
  return fields.map(({ name, field }) => (name === field.name ? name : `${name}: ${field.name}`)).join(' ');
}

export function createPayloadRenderer(
  deps: Pick<AppDeps, 'config' | 'db' | 'now' | 'files' | 'geocoder' | 'logger'>,
  schema: GraphQLSchema,
): PayloadRenderer {
  const payloadSchema = payloadSchemaOf(schema);
  // One document per subject, made once; every event type of a subject has the same record type.
  const documents = new Map<RecordEventSubject, DocumentNode>();
  const documentOf = (event: RecordEvent): DocumentNode => {
    let document = documents.get(event.subject);
    if (!document) {
      const shape = webhookPayloadShape(schema, event.type);
      document = parse(`query ($id: ID!) { record: node(id: $id) { ... on ${shape.recordType.name} { ${selectionOf(shape.fields)} } } }`);
      documents.set(event.subject, document);
    }
    return document;
  };
  // The payload is read as the subscribing key, through the same context a request of that key gets.
  const request = new Request('http://webhooks.internal/');
  const contextOf = (actor: Actor): Context => contextFor({ ...deps, events: unheardEvents }, actor, request, () => deps.logger);

  return async (actor: Actor, event: RecordEvent): Promise<unknown> => {
    const result = await execute({
      schema: payloadSchema,
      document: documentOf(event),
      variableValues: { id: encodeGlobalID(NODE_TYPE_OF_SUBJECT[event.subject], event.recordId) },
      contextValue: contextOf(actor),
    });
    const record = (result.data as { record?: unknown } | null | undefined)?.record;
    return record ?? null;
  };
}
