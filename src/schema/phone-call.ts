// Spec 4.16: the generic phone calls webhook (POST /api/v1/webhooks/phone_calls_webhooks/generic,
// JSON or form-encoded, 202). The provider authenticates with an API key holding create:phone_call,
// as `Authorization: Bearer <key>` or as `?token=<key>` (the REST layer moves it into the header).
import { builder, nodeById } from './builder.ts';
import { personalData } from '../auth/field-guards.ts';
import { requireActor } from '../auth/scope.ts';
import { phoneCallReport, recordPhoneCall, type PhoneCallReceipt } from '../domain/phone-calls.ts';
import { argsFromZod } from './input-from-zod.ts';

const PhoneCallStatus = builder.enumType('PhoneCallStatus', {
  description: 'Whether a reported call was recorded now or had been already.',
  values: {
    accepted: { description: 'The call is recorded.' },
    duplicate: { description: 'A repeated delivery of a call already recorded; nothing new is counted.' },
  } as const,
});

// Graph only: node(id:) and phoneCallCreated answer it, and webhook payloads are read through it.
builder.prismaNode('PhoneCall', {
  // The caller is a lead's kind of data, and calls have no read of their own.
  readPermission: 'read:lead',
  ...nodeById,
  description:
    'A phone call a call-tracking provider reported: the tracking number called, attributed to its location and, when the caller recently enquired about one, to a car. The caller’s number is null without read:personal_data.',
  fields: (t) => ({
    databaseId: t.exposeInt('id'),
    dealership_id: t.exposeInt('dealership_id', {
      nullable: true,
      description: 'The dealership whose tracking number was called; null for a call to a number of no dealership.',
    }),
    location_id: t.exposeInt('location_id', { nullable: true, description: 'The location whose tracking number was called.' }),
    car_id: t.exposeInt('car_id', {
      nullable: true,
      description: 'The car the caller enquired about at this dealership in the 30 days before the call, if any.',
    }),
    called_number: t.exposeString('called_number', {
      description: 'The number dialled (the location’s tracking number): E.164 when it is a valid number, else as reported.',
    }),
    caller_number: t.exposeString('caller_number', {
      ...personalData,
      description: 'The number that called: E.164 when it is a valid number, else as reported (digits, or a word such as "anonymous").',
    }),
    received_at: t.expose('received_at', { type: 'DateTime', description: 'When the service recorded the call.' }),
  }),
});

const PhoneCallReceiptRef = builder.objectRef<PhoneCallReceipt>('PhoneCallReceipt').implement({
  variantOf: {
    record: 'Phone call',
    reason:
      "The provider's answer (4.16): whether the call was recorded now or already, and its id; read with `create:phone_call`, while `PhoneCall` needs `read:lead`.",
  },
  description: 'What became of a reported phone call.',
  fields: (t) => ({
    status: t.expose('status', { type: PhoneCallStatus, description: 'Whether the call was recorded now or had been already.' }),
    databaseId: t.exposeInt('id', { description: 'The recorded call; a repeated delivery answers the first one.' }),
  }),
});

builder.mutationField('phone_call_webhook', (t) =>
  t.field({
    type: PhoneCallReceiptRef,
    description: 'Records a phone call reported by a call-tracking provider, once however often it is delivered.',
    authScopes: { permission: 'create:phone_call' },
    args: argsFromZod(builder, t.arg, 'phone_call_webhook', phoneCallReport),
    resolve: (_root, args, context) => recordPhoneCall(context, requireActor(context), args, context.now()),
  }),
);
