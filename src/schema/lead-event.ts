// Spec 4.11 (deprecated): messaging events recorded against a lead
// (POST /api/v1/lead_events/:service/create?data…), and the lead's events in the graph.
// What `data` accepts and the rules: src/domain/lead-events.ts.
import { GraphQLScalarType } from 'graphql';
import { JSONResolver } from 'graphql-scalars';
import { builder, nodeById, keepNodeIdField } from '../builder.ts';
import { createLeadEvent } from '../domain/lead-events.ts';

// No root field reads events by id, so Sofa never cuts this type to { id }: the REST answer and the
// graph share it.
export const LeadEvent = builder.prismaNode('LeadEvent', {
  ...nodeById,
  description: 'A messaging event an external service recorded against a lead.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    lead_id: t.exposeInt('lead_id'),
    service: t.exposeString('service', { description: 'The messaging service, lower-cased as given in the path.' }),
    contact_type: t.exposeString('contact_type', { nullable: true }),
    description: t.exposeString('description', { nullable: true }),
    sent_date: t.expose('sent_date', {
      type: 'DateTime',
      nullable: true,
      description: 'messageDetail.sentDate as an instant (sent without a zone, it is read as Sydney time).',
    }),
    sent_by: t.exposeString('sent_by', { nullable: true }),
    link_stop_communication: t.exposeString('link_stop_communication', { nullable: true }),
    link_reply_as_assistant: t.exposeString('link_reply_as_assistant', { nullable: true }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});
keepNodeIdField(LeadEvent, 'LeadEvent');

// `data` is a scalar, not an input object: the query string delivers it as nested text or as JSON
// text, and only the domain can then name the field at fault (an input object would answer type
// errors about the whole of `data`). Its values are unknown until the domain validates them.
const LeadEventData = builder.addScalarType(
  'LeadEventData',
  new GraphQLScalarType({
    ...JSONResolver.toConfig(),
    name: 'LeadEventData',
    description:
      'Object {leadId: Int (or its text), messageDetail: {contactType, description, sentDate, sentBy, linkStopCommunication, linkReplyAsAssistant: String}}. ' +
      'sentDate is a date-time without zone (read as Australia/Sydney time); the links are http(s) URLs. ' +
      'REST sends it in the query string, nested (?data[leadId]=12&data[messageDetail][sentBy]=Ana) or as JSON text (?data={"leadId":12,…}).',
    // Not JSON's own specification: the shape above is what it accepts.
    specifiedByURL: null,
  }),
);

builder.mutationField('create_lead_event', (t) =>
  t.prismaField({
    type: LeadEvent,
    description: 'Records a messaging event (sent by an external messaging service) against a lead.',
    deprecationReason: 'Kept only for existing messaging integrations, like its REST path. Removal after 2027-06-30.',
    authScopes: { permission: 'create:lead_event' },
    args: {
      service: t.arg.string({ required: true, description: 'The messaging service: 1 to 40 letters, digits, "-" or "_".' }),
      data: t.arg({ type: LeadEventData, required: true, description: 'The lead and the message detail.' }),
    },
    resolve: (query, _root, args, context) =>
      createLeadEvent(context.db, { service: args.service, data: args.data }, context.now(), query),
  }),
);

// The lead's events in the graph; reading the lead (read:lead) reads its events.
builder.prismaObjectField('Lead', 'events', (t) =>
  t.relatedConnection('events', {
    type: LeadEvent,
    cursor: 'id',
    totalCount: true,
    description: 'Messaging events recorded by external services, oldest first.',
    query: { orderBy: [{ created_at: 'asc' }, { id: 'asc' }] },
  }),
);
