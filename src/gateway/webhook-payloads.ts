// A webhook's payload: the record an event is about, read through the graph as the subscribing key
// (its dealerships and permissions, at delivery time), so a delivery carries exactly what that key
// could read: personal data is null without read:personal_data, as the graph answers it, and a record
// of a dealership the key does not reach is not found. Every record is read the one way, by its
// global id with `node(id:)`, and the selection is every leaf field of the record's type that the
// REST door would also show (graph-only fields left out, `databaseId` named `id`): a flat record like
// the REST door's bodies.
import { encodeGlobalID } from '@pothos/plugin-relay';
import { execute, getNamedType, isLeafType, isObjectType, parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { Actor } from '../auth/api-keys.ts';
import type { RecordEvent, RecordEventSubject } from '../domain/record-events.ts';
import type { PayloadRenderer } from '../notifications/webhook-worker.ts';
import { unheardEvents } from '../domain/record-events.ts';
import type { Context } from '../context.ts';
import { contextFor, type AppDeps } from './app.ts';

/** The graph's Node type of each event's record. */
const NODE_TYPE_OF_SUBJECT: Readonly<Record<RecordEventSubject, string>> = {
  lead: 'Lead',
  lead_event: 'LeadEvent',
  car: 'Car',
  phone_call: 'PhoneCall',
};

/** `id: databaseId name email …`: the leaf fields of a type the REST door shows. */
function leafSelection(schema: GraphQLSchema, typeName: string): string {
  const type = schema.getType(typeName);
  if (!isObjectType(type)) throw new Error(`${typeName} is not an object type`);
  const fields = Object.values(type.getFields()).filter(
    (field) =>
      isLeafType(getNamedType(field.type)) &&
      field.args.every((arg) => arg.type.toString().endsWith('!') === false) &&
      field.extensions?.graphOnly !== true &&
      field.deprecationReason === undefined,
  );
  return fields.map((field) => (field.name === 'databaseId' ? 'id: databaseId' : field.name)).join(' ');
}

export function createPayloadRenderer(
  deps: Pick<AppDeps, 'config' | 'db' | 'now' | 'files' | 'geocoder' | 'logger'>,
  schema: GraphQLSchema,
): PayloadRenderer {
  const documentOf = (typeName: string): DocumentNode =>
    parse(`query ($id: ID!) { record: node(id: $id) { ... on ${typeName} { ${leafSelection(schema, typeName)} } } }`);
  // One document per subject, made once: the entries are NODE_TYPE_OF_SUBJECT's, so every subject has one.
  const documents = Object.fromEntries(
    Object.entries(NODE_TYPE_OF_SUBJECT).map(([subject, typeName]) => [subject, documentOf(typeName)]),
  ) as Record<RecordEventSubject, DocumentNode>;
  // The payload is read as the subscribing key, through the same context a request of that key gets.
  const request = new Request('http://webhooks.internal/');
  const contextOf = (actor: Actor): Context => contextFor({ ...deps, events: unheardEvents }, actor, request, () => deps.logger);

  return async (actor: Actor, event: RecordEvent): Promise<unknown> => {
    const result = await execute({
      schema,
      document: documents[event.subject],
      variableValues: { id: encodeGlobalID(NODE_TYPE_OF_SUBJECT[event.subject], event.recordId) },
      contextValue: contextOf(actor),
    });
    const record = (result.data as { record?: unknown } | null | undefined)?.record;
    return record ?? null;
  };
}
