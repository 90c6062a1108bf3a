// Imports every domain file (each registers its types and root fields) and builds the schema.
import { specifiedDirectives, type GraphQLSchema } from 'graphql';
import { GraphQLDeferDirective, GraphQLStreamDirective } from '@graphql-tools/utils';
import { builder } from './builder.ts';
import './api-key.ts';
import './lead.ts';
import './car.ts';
import './model-variant.ts';
import './offer.ts';
import './lead-event.ts';
import './partner.ts';
import './phone-call.ts';
import './car-writes.ts';
import './contact.ts';
import './dealership.ts';
import './redirect.ts';
import './subscriptions.ts';
import './webhooks.ts';

// Built as this module loads: modules that never ask for the schema read record permissions from it.
// @defer and @stream are declared here, not added by Yoga's plugin, so the printed schema and contract show them.
const schema = builder.toSchema({
  sortSchema: true,
  directives: [...specifiedDirectives, GraphQLDeferDirective, GraphQLStreamDirective],
});

export function getSchema(): GraphQLSchema {
  return schema;
}
