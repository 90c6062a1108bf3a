// Every connection of the graph, read from the schema (so a connection added later is walked too),
// each with the shortest query from Query that reaches it, and the records that make every parent
// on the way resolve: for the tests that walk the connections' arguments.
import { getNamedType, isObjectType, type GraphQLField, type GraphQLObjectType } from 'graphql';
import { permissionCatalogue, type Permission } from '../../src/auth/permissions.ts';
import type { Db } from '../../src/db/client.ts';
import { getSchema } from '../../src/schema/index.ts';
import { makeCarLead, makeModel, makeOffer } from './fixtures-catalogue.ts';
import { franchise } from './fixtures-dealership.ts';
import { makeStoredLead } from './fixtures-leads.ts';
import { makeCar, makeContact, makeDealership, makeKey, makeLocation, makeManufacturer, makeUser, makeWebsite } from './fixtures.ts';

export interface ConnectionField {
  /** `Type.field`, for the test names. */
  coordinate: string;
  field: GraphQLField<unknown, unknown>;
  /** The query that reaches the field, with `%VARS%`, `%ARGS%` and `%SELECTION%` where the field's own go. */
  template: string;
}

const isConnection = (type: GraphQLObjectType): boolean => 'edges' in type.getFields() && 'pageInfo' in type.getFields();

/**
 * Every connection field of the schema, each with the shortest query from Query that reaches it:
 * fields with required arguments are not walked, connections are walked through `edges { node }`
 * with `first: 1`.
 */
export function connectionFields(): ConnectionField[] {
  const schema = getSchema();
  const found = new Map<string, ConnectionField>();
  const queue: { type: GraphQLObjectType; wrap: (inner: string) => string }[] = [
    { type: schema.getQueryType()!, wrap: (inner) => `query Walk($a: ${'%VARS%'}) { ${inner} }` },
  ];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const { type, wrap } = queue.shift()!;
    if (seen.has(type.name)) continue;
    seen.add(type.name);
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      if (!isObjectType(named)) continue;
      if (isConnection(named)) {
        const coordinate = `${type.name}.${field.name}`;
        if (!found.has(coordinate)) found.set(coordinate, { coordinate, field, template: wrap(`${field.name}(%ARGS%) { %SELECTION% }`) });
        const node = getNamedType(named.getFields().edges!.type);
        const nodeType = isObjectType(node) ? getNamedType(node.getFields().node!.type) : null;
        if (nodeType && isObjectType(nodeType)) {
          queue.push({ type: nodeType, wrap: (inner) => wrap(`${field.name}(first: 1) { edges { node { __typename ${inner} } } }`) });
        }
        continue;
      }
      if (field.args.some((arg) => arg.type.toString().endsWith('!') && arg.defaultValue === undefined)) continue;
      queue.push({ type: named, wrap: (inner) => wrap(`${field.name} { __typename ${inner} }`) });
    }
  }
  return [...found.values()];
}

/** One record behind every connection, so each parent on the walk resolves; the key (every permission) reaches them. */
export async function seedEveryConnection(db: Db): Promise<{ key: string }> {
  const home = await makeDealership(db, { name: 'Arguments Motors' });
  await makeLocation(db, home.id);
  await makeWebsite(db, home.id);
  await makeContact(db, home.id);
  await makeUser(db, [home.id]);
  const car = await makeCar(db, home.id);
  await makeCarLead(db, home.id, car.id);
  const lead = await makeStoredLead(db, home.id);
  await db.leadEvent.create({ data: { lead_id: lead.id, service: 'sms' } });
  const manufacturer = await makeManufacturer(db);
  await franchise(db, home.id, manufacturer.id);
  const model = await makeModel(db, manufacturer.id);
  await makeOffer(db, { manufacturer_id: manufacturer.id, model_id: model.id, expires_at: new Date('2099-01-01T00:00:00.000Z') }, [
    home.id,
  ]);
  const permissions = Object.keys(permissionCatalogue) as Permission[];
  return { key: (await makeKey(db, { permissions, dealershipIds: [home.id] })).key };
}
