// Spec 4.11 (deprecated): messaging events recorded against a lead
// (POST /api/v1/lead_events/:service/create?data…), and the lead's events in the graph.
import { builder, nodeById, keepNodeIdField } from './builder.ts';
import { readAlongItsHolder } from '../auth/record-access.ts';
import { deniedAsUnauthorized } from '../auth/field-access.ts';
import { createLeadEvent } from '../domain/lead-events.ts';

// No root field reads events by id, so Sofa never cuts this type to { id }: the REST answer and the
// graph share it.
const LeadEvent = builder.prismaNode('LeadEvent', {
  ...readAlongItsHolder('read:lead', 'a lead’s events are part of the lead'),
  ...nodeById,
  description: 'A messaging event an external service recorded against a lead.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    lead_id: t.exposeInt('lead_id'),
    service: t.exposeString('service', { description: 'The messaging service, lower-cased as given in the path.' }),
    contact_type: t.exposeString('contact_type', { nullable: true }),
    description: t.exposeString('description', {
      nullable: true,
      description: 'The message text or its summary, as the messaging service sent it.',
    }),
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
keepNodeIdField(LeadEvent);

// `data` as input types, so clients see its structure; the rules on each value are the domain's.
const LeadEventMessageDetail = builder.inputType('LeadEventMessageDetail', {
  description: 'The message an external service sent. Each field may be omitted, null or blank.',
  fields: (t) => ({
    contactType: t.string({ description: 'How the customer was contacted (sms, email, …).' }),
    description: t.string({ description: 'The message, at most 10,000 characters.' }),
    sentDate: t.string({
      description: 'When it was sent: a date-time such as 2026-11-20 14:30:00, read as Australia/Sydney time unless it carries a zone.',
    }),
    sentBy: t.string({ description: 'Who sent it.' }),
    linkStopCommunication: t.string({ description: 'An http(s) URL where the customer stops the messages.' }),
    linkReplyAsAssistant: t.string({ description: 'An http(s) URL where staff reply.' }),
  }),
});

const LeadEventData = builder.inputType('LeadEventData', {
  description:
    'The lead and the message detail. REST sends it in the query string, nested (?data[leadId]=12&data[messageDetail][sentBy]=Ana) or as JSON text (?data={"leadId":12,…}).',
  fields: (t) => ({
    leadId: t.int({ required: true, description: 'The lead the event is about (REST also takes its digits as text).' }),
    messageDetail: t.field({
      type: LeadEventMessageDetail,
      required: true,
      description: 'The message the service sent; keys it does not list are ignored on the REST door.',
    }),
  }),
});

builder.mutationField('create_lead_event', (t) =>
  t.prismaField({
    type: LeadEvent,
    description: 'Records a messaging event (sent by an external messaging service) against a lead.',
    deprecationReason: 'Kept only for existing messaging integrations, like its REST path. Removal after 2027-06-30.',
    authScopes: { permission: 'create:lead_event' },
    extensions: deniedAsUnauthorized,
    args: {
      service: t.arg.string({ required: true, description: 'The messaging service: 1 to 40 letters, digits, "-" or "_".' }),
      data: t.arg({ type: LeadEventData, required: true, description: 'The lead and the message detail.' }),
    },
    resolve: (query, _root, args, context) =>
      createLeadEvent(context.db, context.events, { service: args.service, data: args.data }, context.now(), query),
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
