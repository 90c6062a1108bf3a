// Spec 4.10: the partner's server creates a sign-on token, the user's browser redeems it (GET
// /api/v1/partner/sign_on?token=…) and is redirected to the platform with a signed session value.
import { builder } from './builder.ts';
import { requireActor } from '../auth/scope.ts';
import { createPartnerToken, partnerTokenRequest, redeemPartnerToken, type PartnerTokenGrant } from '../domain/partner-sign-on.ts';
import { argsFromZod } from './input-from-zod.ts';

const PartnerToken = builder.objectRef<PartnerTokenGrant>('PartnerToken').implement({
  description: "Where to send the user's browser to finish signing on, and until when that works.",
  fields: (t) => ({
    redirect_url: t.exposeString('redirect_url', { description: 'Full URL of the sign-on handoff; it carries the one-time token.' }),
    expires_at: t.expose('expires_at', { type: 'DateTime', description: 'When the token stops being accepted (ISO 8601 date-time, UTC).' }),
  }),
});

const PartnerSignOn = builder.objectRef<{ location: string }>('PartnerSignOn').implement({
  description: 'The platform URL the browser is redirected to (REST answers it as a 302 Location).',
  fields: (t) => ({ location: t.exposeString('location', { description: 'The absolute URL the browser is sent to.' }) }),
});

builder.mutationFields((t) => ({
  create_partner_token: t.field({
    type: PartnerToken,
    description:
      "Creates a 10-minute, single-use sign-on token for the platform user with this e-mail, and the URL to send the user's browser to.",
    authScopes: { permission: 'create:partner_token' },
    args: argsFromZod(builder, t.arg, 'create_partner_token', partnerTokenRequest),
    resolve: (_root, args, context) => createPartnerToken(context.db, requireActor(context), context.config, args, context.now()),
  }),
  redeem_partner_token: t.field({
    type: PartnerSignOn,
    description:
      "Spends a sign-on token once and answers the platform URL with a signed, 2-minute session value. Public: the user's browser has no API key; the token is the credential.",
    authScopes: { public: true },
    args: {
      // Nullable on purpose: a link without its token (or ?token=) is the same 404 token_not_found as a wrong one.
      token: t.arg.string({ required: false, description: 'The token from create_partner_token.' }),
    },
    // Public: the browser holds no key; the single-use token names the one row the escape hatch reads.
    resolve: (_root, args, context) => redeemPartnerToken(context.unscopedDb, context.config, args.token, context.now()),
  }),
}));
