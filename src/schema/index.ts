// Imports every domain file (each registers its types and root fields) and builds the schema.
import type { GraphQLSchema } from 'graphql';
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
import './dealership-users.ts';
import './redirect.ts';
import './subscriptions.ts';
import './webhooks.ts';

// Built as this module loads: modules that never ask for the schema read record permissions from it.
const schema = builder.toSchema({ sortSchema: true });

export function getSchema(): GraphQLSchema {
  return schema;
}
