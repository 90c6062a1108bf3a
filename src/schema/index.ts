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

// Built as this module loads, after every type above: record permissions are read from it
// (src/auth/record-access.ts) by modules that never ask for the schema.
const schema = builder.toSchema({ sortSchema: true });

/** The schema, built once: Pothos types are registered at import time and cannot be built twice. */
export function getSchema(): GraphQLSchema {
  return schema;
}
