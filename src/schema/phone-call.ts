// Spec 4.16: the generic phone calls webhook (POST /api/v1/webhooks/phone_calls_webhooks/generic,
// JSON or form-encoded, 202). The provider authenticates with an API key holding create:phone_call,
// as `Authorization: Bearer <key>` or as `?token=<key>` (the REST layer moves it into the header).
// Rules: src/domain/phone-calls.ts.
import { builder } from './builder.ts';
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

const PhoneCallReceiptRef = builder.objectRef<PhoneCallReceipt>('PhoneCallReceipt').implement({
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
