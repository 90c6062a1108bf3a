// Imports every domain file (each registers its types and root fields) and builds the schema.
import { GraphQLSchema } from 'graphql';
import { builder } from './builder.ts';
import { guardFieldsByType, guardNodeLookups } from '../auth/type-guards.ts';
import { describeAccess } from '../auth/access-docs.ts';
import { describeRelayStructure } from './relay-docs.ts';
import { describeFromGlossary } from './glossary.ts';
import { keyEveryWrite } from './idempotent-writes.ts';
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

let schema: GraphQLSchema | undefined;

/** The schema, built once: Pothos types are registered at import time and cannot be built twice. */
export function getSchema(): GraphQLSchema {
  if (!schema) {
    const built = describeRelayStructure(
      describeAccess(describeFromGlossary(guardNodeLookups(guardFieldsByType(keyEveryWrite(builder.toSchema({ sortSchema: true })))))),
    );
    // Mutation is declared in builder.ts for every domain file to extend; a schema without any
    // mutation field yet must leave the type out rather than be invalid.
    const mutation = built.getMutationType();
    if (mutation && Object.keys(mutation.getFields()).length === 0) {
      const config = built.toConfig();
      schema = new GraphQLSchema({ ...config, mutation: null, types: config.types.filter((type) => type !== mutation) });
    } else {
      schema = built;
    }
  }
  return schema;
}
