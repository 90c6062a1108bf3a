// A webhook's payload: the record an event is about, read through the graph as the subscribing key
// (its dealerships and permissions, at delivery time), so a delivery carries exactly what that key
// could read: personal data is null without read:personal_data, as the graph answers it, and a record
// of a dealership the key does not reach is not found. The selection is every leaf field of the
// record's type that the REST door also has (graph-only fields left out, `databaseId` named `id`),
// the flat record the REST door's bodies are made of. A phone call has no read in the graph: its
// row is read through the key's scoped client, the caller's number masked like personal data.
import { encodeGlobalID } from '@pothos/plugin-relay';
import { execute, getNamedType, isLeafType, isObjectType, parse, type GraphQLSchema } from 'graphql';
import type { Actor } from '../auth/api-keys.ts';
import { forActor } from '../db/scoped.ts';
import type { RecordEvent } from '../domain/record-events.ts';
import type { PayloadRenderer } from '../notifications/webhook-worker.ts';
import { unheardEvents } from '../domain/record-events.ts';
import type { Context } from '../context.ts';
import { contextFor, type AppDeps } from './app.ts';

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
  const documents = {
    lead: parse(`query ($id: Int!) { record: lead(id: $id) { ${leafSelection(schema, 'Lead')} } }`),
    car: parse(`query ($id: String!) { record: car(id: $id) { ${leafSelection(schema, 'Car')} } }`),
    lead_event: parse(`query ($id: ID!) { record: node(id: $id) { ... on LeadEvent { ${leafSelection(schema, 'LeadEvent')} } } }`),
  };
  // The payload is read as the subscribing key, through the same context a request of that key gets.
  const request = new Request('http://webhooks.internal/');
  const contextOf = (actor: Actor): Context => contextFor({ ...deps, events: unheardEvents }, actor, request, () => deps.logger);

  return async (actor: Actor, event: RecordEvent): Promise<unknown> => {
    if (event.subject === 'phone_call') {
      const call = await forActor(deps.db, actor).phoneCall.findUnique({
        where: { id: event.recordId },
        select: {
          id: true,
          dealership_id: true,
          location_id: true,
          car_id: true,
          called_number: true,
          caller_number: true,
          received_at: true,
        },
      });
      if (!call) return null;
      return { ...call, caller_number: actor.permissions.has('read:personal_data') ? call.caller_number : null };
    }
    const variables =
      event.subject === 'lead'
        ? { id: event.recordId }
        : event.subject === 'car'
          ? { id: String(event.recordId) }
          : { id: encodeGlobalID('LeadEvent', event.recordId) };
    const result = await execute({
      schema,
      document: documents[event.subject],
      variableValues: variables,
      contextValue: contextOf(actor),
    });
    const record = (result.data as { record?: unknown } | null | undefined)?.record;
    return record ?? null;
  };
}
