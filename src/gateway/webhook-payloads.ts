// A webhook's payload, read through the graph as the subscribing key at delivery time, so it carries
// exactly what that key could read, each field and value as the REST door's body of the record has it.
import { encodeGlobalID } from '@pothos/plugin-relay';
import { execute, parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { Actor } from '../auth/api-keys.ts';
import type { RecordEvent, RecordEventSubject } from '../domain/record-events.ts';
import { NODE_TYPE_OF_SUBJECT, unheardEvents } from '../domain/record-events.ts';
import type { PayloadRenderer } from '../notifications/webhook-worker.ts';
import { payloadSchemaOf, webhookPayloadShape, type PayloadField } from '../rest/webhook-payload-shape.ts';
import { contextFor, type AppDeps } from './app.ts';

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
  const request = new Request('http://webhooks.internal/');

  return async (actor: Actor, event: RecordEvent): Promise<unknown> => {
    const result = await execute({
      schema: payloadSchema,
      document: documentOf(event),
      variableValues: { id: encodeGlobalID(NODE_TYPE_OF_SUBJECT[event.subject], event.recordId) },
      contextValue: contextFor({ ...deps, events: unheardEvents }, actor, request, () => deps.logger),
    });
    return (result.data as { record?: unknown } | null | undefined)?.record ?? null;
  };
}
