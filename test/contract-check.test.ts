// The contract check and release (scripts/contract/, docs/contract.md, "Contract and releases"): today's schema
// and OpenAPI document, changed in memory the way a careless change would, fail the check with one
// line naming the change and its rule; additions pass as unreleased additions; the release command
// refuses without a changelog entry or with a version that understates the changes, and writes the
// release with one. Last, the real command on a temporary copy.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import {
  buildSchema,
  extendSchema,
  getNamedType,
  GraphQLNonNull,
  isEnumType,
  isInputObjectType,
  isNonNullType,
  isObjectType,
  parse,
  printSchema,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeChange, type ContractChange } from '../scripts/contract/changes.ts';
import { graphChanges, graphDeprecationProblems } from '../scripts/contract/graph-changes.ts';
import { openApiChanges } from '../scripts/contract/openapi-changes.ts';
import {
  CONTRACT_FILES,
  compareWithRelease,
  cutRelease,
  readRelease,
  todaysContract,
  type ContractSnapshot,
} from '../scripts/contract/release.ts';
import { openApiPath, restRoutes } from '../src/rest/routes.ts';
import { runScript } from './support/processes.ts';

const TODAY = '2026-12-01';

type Node = Record<string, unknown>;

let today: ContractSnapshot;
let schema: GraphQLSchema;

beforeAll(() => {
  today = todaysContract();
  schema = buildSchema(today.sdl);
});

const lines = (changes: readonly ContractChange[], level: ContractChange['level']): string[] =>
  changes.filter((change) => change.level === level).map(describeChange);

// ─── The graph ───

const objectTypes = (of: GraphQLSchema): GraphQLObjectType[] =>
  Object.values(of.getTypeMap()).filter((type): type is GraphQLObjectType => isObjectType(type) && !type.name.startsWith('__'));

/** Today's schema without the first field of Query; and that field's name. */
function withoutFirstQueryField(): { name: string; current: GraphQLSchema } {
  const name = Object.keys(schema.getQueryType()!.getFields())[0]!;
  const current = mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (config, fieldName, typeName) => (typeName === 'Query' && fieldName === name ? null : config),
  });
  return { name, current };
}

const nullableOf = (type: GraphQLOutputType): GraphQLOutputType => (isNonNullType(type) ? type.ofType : type);

/** The first enum with two values or more that a field returns. */
function returnedEnum(of: GraphQLSchema): { name: string; value: string } {
  for (const type of objectTypes(of)) {
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      if (isEnumType(named) && named.getValues().length >= 2) return { name: named.name, value: named.getValues()[1]!.name };
    }
  }
  throw new Error('no enum is returned');
}

async function graphAgainstToday(current: GraphQLSchema, day = TODAY): Promise<ContractChange[]> {
  return graphChanges(schema, current, day);
}

describe('the graph', () => {
  it('has no change between today and itself, and no deprecation without its removal day', async () => {
    expect(await graphAgainstToday(buildSchema(today.sdl))).toEqual([]);
    expect(graphDeprecationProblems(schema)).toEqual([]);
    // The check has something to check: the schema holds a deprecation.
    expect(today.sdl).toMatch(/@deprecated\(reason: ".*Removal after \d{4}-\d{2}-\d{2}\."\)/);
  });

  it('fails on a removed field', async () => {
    const { name, current } = withoutFirstQueryField();
    expect(lines(await graphAgainstToday(current), 'breaking')).toContain(
      `GraphQL Query.${name}: Field '${name}' was removed from object type 'Query' [FIELD_REMOVED]`,
    );
  });

  it('fails on a removed enum value', async () => {
    const target = returnedEnum(schema);
    const current = mapSchema(schema, {
      [MapperKind.ENUM_VALUE]: (config, typeName, _schema, value) => (typeName === target.name && value === target.value ? null : config),
    });
    expect(lines(await graphAgainstToday(current), 'breaking')).toContain(
      `GraphQL ${target.name}.${target.value}: Enum value '${target.value}' was removed from enum '${target.name}' [ENUM_VALUE_REMOVED]`,
    );
  });

  it('fails on an input field made required, and on a new required input field', async () => {
    const input = Object.values(schema.getTypeMap()).find(
      (type) =>
        isInputObjectType(type) &&
        Object.values(type.getFields()).some((field) => !isNonNullType(field.type) && field.defaultValue === undefined),
    );
    if (!isInputObjectType(input)) throw new Error('no input type has an optional field');
    const field = Object.values(input.getFields()).find(
      (candidate) => !isNonNullType(candidate.type) && candidate.defaultValue === undefined,
    )!;
    const madeRequired = mapSchema(schema, {
      [MapperKind.INPUT_OBJECT_FIELD]: (config, fieldName, typeName) =>
        typeName === input.name && fieldName === field.name ? { ...config, type: new GraphQLNonNull(config.type) } : config,
    });
    expect(lines(await graphAgainstToday(madeRequired), 'breaking')).toContainEqual(
      expect.stringMatching(new RegExp(`^GraphQL ${input.name}\\.${field.name}: .* \\[INPUT_FIELD_TYPE_CHANGED\\]$`)),
    );
    const added = extendSchema(schema, parse(`extend input ${input.name} { contract_test_required: String! }`));
    expect(lines(await graphAgainstToday(added), 'breaking')).toContainEqual(
      expect.stringMatching(new RegExp(`^GraphQL ${input.name}\\.contract_test_required: .* \\[INPUT_FIELD_ADDED\\]$`)),
    );
  });

  it('fails on a field made nullable', async () => {
    const type = objectTypes(schema).find(
      (candidate) => candidate !== schema.getQueryType() && Object.values(candidate.getFields()).some((field) => isNonNullType(field.type)),
    )!;
    const field = Object.values(type.getFields()).find((candidate) => isNonNullType(candidate.type))!;
    const current = mapSchema(schema, {
      [MapperKind.OBJECT_FIELD]: (config, fieldName, typeName) =>
        typeName === type.name && fieldName === field.name && isNonNullType(config.type) ? { ...config, type: config.type.ofType } : config,
    });
    expect(lines(await graphAgainstToday(current), 'breaking')).toContain(
      `GraphQL ${type.name}.${field.name}: Field '${type.name}.${field.name}' changed type from '${String(field.type)}' to '${String(nullableOf(field.type))}' [FIELD_TYPE_CHANGED]`,
    );
  });

  it('passes an added optional field and argument, listing them as additions', async () => {
    const type = objectTypes(schema).find((candidate) => candidate !== schema.getQueryType() && candidate !== schema.getMutationType())!;
    const current = extendSchema(schema, parse(`extend type ${type.name} { contract_test_added(format: String): String }`));
    const changes = await graphAgainstToday(current);
    expect(lines(changes, 'breaking')).toEqual([]);
    expect(lines(changes, 'minor')).toEqual([
      `GraphQL ${type.name}.contract_test_added: Field 'contract_test_added' was added to object type '${type.name}' [FIELD_ADDED]`,
    ]);
  });

  it('fails on the DANGEROUS changes that reach clients that did not change, and passes the additive ones', async () => {
    const before = buildSchema(`
      type Query { kind: Kind, find(by: By, first: Int = 20): Int, result: Result }
      type A { a: Int } type B { b: Int } type C { c: Int }
      union Result = A | B
      enum Kind { NEW USED }
      enum By { ID SLUG }`);
    const after = buildSchema(`
      type Query { kind: Kind, find(by: By, first: Int = 10, sort: String): Int, result: Result }
      type A { a: Int } type B { b: Int } type C { c: Int }
      union Result = A | B | C
      enum Kind { NEW USED DEMO }
      enum By { ID SLUG STOCKNUM }`);
    const changes = await graphChanges(before, after, TODAY);
    expect(
      lines(changes, 'breaking')
        .map((line) => line.replace(/: .*\[/, ' ['))
        .sort(),
    ).toEqual([
      'GraphQL Kind.DEMO [ENUM_VALUE_ADDED]',
      'GraphQL Query.find.first [FIELD_ARGUMENT_DEFAULT_CHANGED]',
      'GraphQL Result [UNION_MEMBER_ADDED]',
    ]);
    expect(
      lines(changes, 'minor')
        .map((line) => line.replace(/: .*\[/, ' ['))
        .sort(),
    ).toEqual(['GraphQL By.STOCKNUM [ENUM_VALUE_ADDED]', 'GraphQL Query.find.sort [FIELD_ARGUMENT_ADDED]']);
  });

  it('fails on a @deprecated whose reason does not end with a real removal day, wherever it is', () => {
    const problems = graphDeprecationProblems(
      buildSchema(`
        type Query { a: Int @deprecated(reason: "Use b."), b(x: Int @deprecated(reason: "Unused. Removal after 2027-02-30.")): Int, c: Int @deprecated(reason: "Use b. Removal after 2027-06-30.") }
        input I { p: Int @deprecated }
        enum E { X @deprecated(reason: "Use Y. Removal on 2027-06-30.") Y }`),
    );
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual([
      'GraphQL E.X',
      'GraphQL I.p',
      'GraphQL Query.a',
      'GraphQL Query.b.x',
    ]);
    expect(problems[0]).toMatch(/does not end with its removal date, "Removal after YYYY-MM-DD\." \[deprecation-without-date\]$/);
  });

  it('still fails on removing a deprecated field after its day, saying the removal is due', async () => {
    const before = buildSchema('type Query { a: Int @deprecated(reason: "Use b. Removal after 2026-06-30."), b: Int }');
    const after = buildSchema('type Query { b: Int }');
    expect(lines(await graphChanges(before, after, TODAY), 'breaking')).toEqual([
      "GraphQL Query.a: Field 'a' (deprecated) was removed from object type 'Query' (it was deprecated with removal after 2026-06-30: the removal is due, and it is still a breaking change: a major release) [FIELD_REMOVED]",
    ]);
    expect(lines(await graphChanges(before, after, '2026-01-01'), 'breaking')[0]).toMatch(
      /removal after 2026-06-30, a day that has not come\) \[FIELD_REMOVED\]$/,
    );
  });
});

// ─── The REST door ───

/** Follows a local $ref in `document`. */
function resolved(document: Node, value: unknown): Node {
  let node = value as Node;
  while (typeof node.$ref === 'string') {
    node = node.$ref
      .slice(2)
      .split('/')
      .reduce<Node>((parent, key) => parent[key.replace(/~1/g, '/').replace(/~0/g, '~')] as Node, document);
  }
  return node;
}

interface Located {
  key: string;
  operation: Node;
}

function operations(document: Node): Located[] {
  return Object.entries(document.paths as Record<string, Record<string, Node>>).flatMap(([route, item]) =>
    Object.entries(item).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${route}`, operation })),
  );
}

/** The first operation of `document` (a copy of today's) that `pick` finds something in. */
function first<T>(document: Node, pick: (found: Located) => T | undefined): Located & { found: T } {
  for (const located of operations(document)) {
    const found = pick(located);
    if (found !== undefined) return { ...located, found };
  }
  throw new Error('no operation has it');
}

/** The object schema a JSON body or answer holds (an array's items), and the field path prefix to it. */
function objectIn(document: Node, schemaValue: unknown): { object: Node; prefix: string } | undefined {
  let object = resolved(document, schemaValue);
  let prefix = '';
  if (object.type === 'array') {
    object = resolved(document, object.items);
    prefix = '[].';
  }
  return object.properties ? { object, prefix } : undefined;
}

const restLines = (released: Node, current: Node, day = TODAY) => {
  const changes = openApiChanges(released, current, day);
  return { breaking: lines(changes, 'breaking'), minor: lines(changes, 'minor') };
};

describe('the REST door', () => {
  const copies = (): [Node, Node] => [structuredClone(today.openapi), structuredClone(today.openapi)];

  it('has no change between today and itself', () => {
    expect(openApiChanges(...copies(), TODAY)).toEqual([]);
  });

  it('fails on a narrowed parameter: an enum value dropped, a maxLength lowered, a minimum raised, made required', () => {
    const [released, current] = copies();
    const query = (document: Node) =>
      first(document, ({ operation }) =>
        (operation.parameters as Node[] | undefined)?.find((parameter) => resolved(document, parameter).in === 'query'),
      );
    const before = query(released);
    const after = query(current);
    const name = String(before.found.name);
    const where = `REST ${before.key} query parameter ${name}`;

    before.found.schema = { type: 'string', enum: ['new', 'used'] };
    after.found.schema = { type: 'string', enum: ['new'] };
    expect(restLines(released, current).breaking).toEqual([`${where}: enum value "used" removed [parameter-narrowed]`]);

    before.found.schema = { type: 'string', maxLength: 100 };
    after.found.schema = { type: 'string', maxLength: 40 };
    expect(restLines(released, current).breaking).toEqual([`${where}: maxLength lowered from 100 to 40 [parameter-narrowed]`]);

    before.found.schema = { type: 'integer' };
    after.found.schema = { type: 'integer', minimum: 1 };
    after.found.required = true;
    expect(restLines(released, current).breaking.sort()).toEqual([
      `${where}: made required [parameter-made-required]`,
      `${where}: minimum 1 added [parameter-narrowed]`,
    ]);
  });

  it('fails on a request body field made required, and on a new required one', () => {
    const [released, current] = copies();
    const body = (document: Node) =>
      first(document, ({ operation }) => {
        const json = (resolved(document, operation.requestBody ?? {}).content as Record<string, Node> | undefined)?.['application/json'];
        const wrapper = json ? objectIn(document, json.schema) : undefined;
        // The record inside the wrapper ({"lead": {…}}), with a field it does not require.
        for (const [name, value] of Object.entries((wrapper?.object.properties ?? {}) as Record<string, unknown>)) {
          const inner = objectIn(document, (resolved(document, value).anyOf as unknown[] | undefined)?.[0] ?? value);
          const optional = Object.keys((inner?.object.properties ?? {}) as Node).find(
            (field) => !((inner?.object.required as string[] | undefined) ?? []).includes(field),
          );
          if (inner && optional) return { wrapper: wrapper!.object, record: inner.object, path: `${name}.${optional}`, optional };
        }
        return undefined;
      });
    const found = body(current);
    found.found.record.required = [...((found.found.record.required as string[] | undefined) ?? []), found.found.optional];
    (found.found.wrapper.properties as Node).contract_test = { type: 'string' };
    found.found.wrapper.required = [...((found.found.wrapper.required as string[] | undefined) ?? []), 'contract_test'];
    const { breaking } = restLines(released, current);
    expect(breaking).toContain(
      `REST ${found.key} request body (application/json) ${found.found.path}: made required [request-field-made-required]`,
    );
    expect(breaking).toContain(
      `REST ${found.key} request body (application/json) contract_test: new required field [request-field-added-required]`,
    );
  });

  it('fails on a changed operationId, which names the MCP tool and the generated client method', () => {
    const [released, current] = copies();
    const renamed = first(current, ({ operation }) => (typeof operation.operationId === 'string' ? operation.operationId : undefined));
    renamed.operation.operationId = `${renamed.found}_renamed`;
    expect(restLines(released, current).breaking).toEqual([
      `REST ${renamed.key}: operationId changed from ${renamed.found} to ${renamed.found}_renamed [operation-id-changed]`,
    ]);
  });

  it('fails on a removed status code', () => {
    const [released, current] = copies();
    const errorStatus = first(current, ({ operation }) =>
      Object.keys(operation.responses as Node).find((status) => status.startsWith('4')),
    );
    delete (errorStatus.operation.responses as Node)[errorStatus.found];
    expect(restLines(released, current).breaking).toEqual([
      `REST ${errorStatus.key} response ${errorStatus.found}: status code removed [response-status-removed]`,
    ]);
  });

  it('fails on a response field made nullable, removed, or given an enum value more or less', () => {
    const [released, current] = copies();
    const answer = (document: Node) =>
      first(document, ({ key, operation }) => {
        if (!key.startsWith('GET ')) return undefined;
        const [status, response] = Object.entries(operation.responses as Record<string, Node>)[0]!;
        const json = (resolved(document, response).content as Record<string, Node> | undefined)?.['application/json'];
        const found = json ? objectIn(document, json.schema) : undefined;
        const required = (found?.object.required as string[] | undefined) ?? [];
        return found && required.length >= 3 ? { ...found, status, fields: required } : undefined;
      });
    const before = answer(released);
    const after = answer(current);
    const [nullable, removed, listed] = after.found.fields as [string, string, string];
    const properties = after.found.object.properties as Node;
    const where = `REST ${after.key} response ${after.found.status} (application/json) ${after.found.prefix}`;
    properties[nullable] = { anyOf: [properties[nullable], { type: 'null' }] };
    delete properties[removed];
    (before.found.object.properties as Node)[listed] = { type: 'string', enum: ['sold', 'in_stock'] };
    properties[listed] = { type: 'string', enum: ['in_stock', 'reserved'] };
    expect(restLines(released, current).breaking.sort()).toEqual(
      [
        `${where}${nullable}: may now be null [response-made-nullable]`,
        `${where}${removed}: field removed [response-field-removed]`,
        `${where}${listed}: enum value "reserved" added (a client built with the released list does not know it) [response-enum-value-added]`,
        `${where}${listed}: enum value "sold" removed [response-enum-value-removed]`,
      ].sort(),
    );
  });

  it('passes added optional fields, a response field and a path, listing them as additions', () => {
    const [released, current] = copies();
    const located = first(current, ({ operation }) => {
      const json = (resolved(current, operation.requestBody ?? {}).content as Record<string, Node> | undefined)?.['application/json'];
      return json ? objectIn(current, json.schema) : undefined;
    });
    (located.found.object.properties as Node).contract_test_optional = { type: 'string' };
    const answer = first(current, ({ operation }) => {
      const json = (resolved(current, Object.values(operation.responses as Node)[0]).content as Record<string, Node> | undefined)?.[
        'application/json'
      ];
      return json ? objectIn(current, json.schema) : undefined;
    });
    (answer.found.object.properties as Node).contract_test_answer = { type: 'string' };
    (current.paths as Node)['/api/v1/contract_test'] = { get: { responses: { '200': { description: 'Success.' } } } };
    const { breaking, minor } = restLines(released, current);
    expect(breaking).toEqual([]);
    expect(minor).toEqual(
      expect.arrayContaining([
        `REST ${located.key} request body (application/json) ${located.found.prefix}contract_test_optional: optional field added [request-field-added]`,
        expect.stringMatching(/ contract_test_answer: field added \[response-field-added\]$/),
        'REST GET /api/v1/contract_test: path added [path-added]',
      ]),
    );
  });

  it('reads schemas as JSON Schema 2020-12: type lists, null alternatives, allOf, other alternatives one by one', () => {
    /** A one-operation document whose body and answer are `request` and `response`. */
    const document = (request: Node, response: Node, components: Node = {}): Node => ({
      openapi: '3.1.0',
      paths: {
        '/things': {
          post: {
            requestBody: { required: true, content: { 'application/json': { schema: request } } },
            responses: { '200': { description: 'Success.', content: { 'application/json': { schema: response } } } },
          },
        },
      },
      components: { schemas: components },
    });
    const byCar = { type: 'object', properties: { car_id: { type: 'integer' } }, required: ['car_id'] };
    const bySlug = { type: 'object', properties: { slug: { type: 'string' } }, required: ['slug'] };
    const same = document(
      { allOf: [{ $ref: '#/components/schemas/Base' }, { properties: { note: { type: ['string', 'null'] } } }] },
      { type: 'object', properties: { kind: { anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'null' }] } } },
      { Base: { type: 'object', properties: { by: { anyOf: [byCar, bySlug] } }, required: ['by'] } },
    );
    expect(openApiChanges(same, structuredClone(same), TODAY)).toEqual([]);

    const narrowed = structuredClone(same);
    const base = ((narrowed.components as Node).schemas as Node).Base as { properties: { by: { anyOf: unknown[] } } };
    base.properties.by.anyOf = [byCar];
    const allOf = (
      ((narrowed.paths as Node)['/things'] as Node).post as {
        requestBody: { content: { 'application/json': { schema: { allOf: Node[] } } } };
      }
    ).requestBody.content['application/json'].schema.allOf;
    allOf[1] = { properties: { note: { type: 'string' } } };
    expect(restLines(same, narrowed).breaking.sort()).toEqual([
      'REST POST /things request body (application/json) by: no longer accepts one of the alternatives it accepted [request-narrowed]',
      'REST POST /things request body (application/json) note: no longer accepts null [request-narrowed]',
    ]);
    // Widening the request is an addition; widening the answer breaks.
    expect(restLines(narrowed, same).breaking).toEqual([]);
    const widened = structuredClone(same);
    const answer = (
      ((widened.paths as Node)['/things'] as Node).post as {
        responses: { '200': { content: { 'application/json': { schema: { properties: { kind: Node } } } } } };
      }
    ).responses['200'].content['application/json'].schema;
    answer.properties.kind = { anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'integer' }, { type: 'null' }] };
    expect(restLines(same, widened).breaking).toEqual([
      'REST POST /things response 200 (application/json) kind: may now answer an alternative it did not answer before [response-type-changed]',
    ]);
  });

  it('still fails on removing a deprecated path after its sunset, saying the removal is due', () => {
    const deprecated = restRoutes.filter((route) => route.deprecated);
    expect(deprecated.length).toBeGreaterThan(0);
    for (const route of deprecated) {
      const [released, current] = copies();
      delete (current.paths as Node)[openApiPath(route.path)];
      const key = `${route.method} ${openApiPath(route.path)}`;
      const sunset = route.deprecated!.sunset;
      expect(restLines(released, current, '2099-01-01').breaking).toEqual([
        `REST ${key}: path removed (it was deprecated with its sunset on ${sunset}: the removal is due, and it is still a breaking change: a major release) [path-removed]`,
      ]);
      expect(restLines(released, current, '2000-01-01').breaking).toEqual([
        `REST ${key}: path removed (it is deprecated with its sunset on ${sunset}, a day that has not come) [path-removed]`,
      ]);
    }
  });
});

// ─── Releases ───

describe('contract:release', () => {
  const folders: string[] = [];
  const folder = (): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'contract-test-'));
    folders.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  });

  const withSchema = (changed: GraphQLSchema): ContractSnapshot => ({ sdl: `${printSchema(changed)}\n`, openapi: today.openapi });
  const read = (dir: string, file: string): string => readFileSync(path.join(dir, file), 'utf8');

  it('refuses without a changelog entry, accepts with one, and asks a minor version for additions', async () => {
    const dir = folder();
    expect(await cutRelease(dir, { version: '1.0.0', notes: ' ', today: TODAY }, today)).toEqual({
      released: false,
      refusal: expect.stringContaining('a release needs a changelog entry'),
    });
    expect(readRelease(dir)).toBeNull();
    expect(await cutRelease(dir, { version: '1.0.0', notes: 'The first release.', today: TODAY }, today)).toMatchObject({ released: true });
    expect(readRelease(dir)).toMatchObject({ version: '1.0.0', sdl: today.sdl });
    expect(JSON.parse(read(dir, CONTRACT_FILES.openapi)).info.version).toBe('1.0.0');

    const added = withSchema(extendSchema(schema, parse('extend type Query { contract_test_added: String }')));
    expect(await cutRelease(dir, { version: '1.1.0', notes: '', today: TODAY }, added)).toMatchObject({
      released: false,
      refusal: expect.stringContaining('changelog entry'),
    });
    expect(await cutRelease(dir, { version: '1.0.1', notes: 'Adds a field.', today: TODAY }, added)).toEqual({
      released: false,
      refusal: '1.0.1 understates the changes: they are additions (a minor release), so the version must be at least 1.1.0',
    });
    expect(read(dir, CONTRACT_FILES.version)).toBe('1.0.0\n');
    expect(
      await cutRelease(dir, { version: '1.1.0', notes: 'Adds `Query.contract_test_added`.', today: '2026-12-02' }, added),
    ).toMatchObject({ released: true, bump: 'minor' });
    const changelog = read(dir, CONTRACT_FILES.changelog);
    expect(changelog).toContain(
      '## [Unreleased]\n\n## [1.1.0] - 2026-12-02\n\nAdds `Query.contract_test_added`.\n\n### Added\n\n' +
        "- GraphQL Query.contract_test_added: Field 'contract_test_added' was added to object type 'Query' [FIELD_ADDED]\n\n## [1.0.0] - 2026-12-01\n\nThe first release.\n",
    );
    expect(await cutRelease(dir, { version: '1.2.0', notes: 'Nothing.', today: TODAY }, added)).toEqual({
      released: false,
      refusal: 'nothing changed since 1.1.0: there is nothing to release',
    });
  });

  it('asks a major version for a breaking change, takes the notes written under Unreleased, and lists the change as breaking', async () => {
    const dir = folder();
    await cutRelease(dir, { version: '1.0.0', notes: 'The first release.', today: TODAY }, today);
    const { name, current } = withoutFirstQueryField();
    const removed = withSchema(current);
    expect(await cutRelease(dir, { version: '1.1.0', notes: 'Removes a field.', today: TODAY }, removed)).toMatchObject({
      released: false,
      refusal: expect.stringContaining('must be at least 2.0.0'),
    });
    writeFileSync(
      path.join(dir, CONTRACT_FILES.changelog),
      read(dir, CONTRACT_FILES.changelog).replace(
        '## [Unreleased]\n',
        `## [Unreleased]\n\nRemoves Query.${name}: use node(id:) instead.\n`,
      ),
    );
    expect(await cutRelease(dir, { version: '2.0.0', notes: '', today: TODAY }, removed)).toMatchObject({
      released: true,
      bump: 'breaking',
    });
    expect(read(dir, CONTRACT_FILES.changelog)).toContain(
      `## [Unreleased]\n\n## [2.0.0] - ${TODAY}\n\nRemoves Query.${name}: use node(id:) instead.\n\n### Removed\n\n` +
        `- **Breaking:** GraphQL Query.${name}: Field '${name}' was removed from object type 'Query' [FIELD_REMOVED]\n`,
    );
  });

  it('follows a pre-release with any later version, without listing what changed since', async () => {
    const dir = folder();
    await cutRelease(dir, { version: '1.0.0-pre', notes: 'A pre-release snapshot.', today: TODAY }, today);
    const removed = withSchema(withoutFirstQueryField().current);
    expect(await cutRelease(dir, { version: '1.0.0', notes: 'The first release.', today: TODAY }, removed)).toMatchObject({
      released: true,
      bump: 'breaking',
    });
    expect(read(dir, CONTRACT_FILES.changelog)).toContain(
      '## [1.0.0] - 2026-12-01\n\nThe first release.\n\n_The changes since 1.0.0-pre are not listed',
    );
  });

  it('is a command: it writes the release, and the check then fails naming what today no longer has', { timeout: 180_000 }, async () => {
    const dir = folder();
    const released = await runScript('scripts/contract.ts', ['release', '--dir', dir, '1.0.0', 'The first release.'], {});
    expect(released.stderr).toBe('');
    expect(released.code).toBe(0);
    expect(read(dir, CONTRACT_FILES.schema)).toBe(today.sdl);
    // The release holds a field today's schema lacks: today removed it.
    writeFileSync(
      path.join(dir, CONTRACT_FILES.schema),
      read(dir, CONTRACT_FILES.schema).replace('type Query {\n', 'type Query {\n  contract_test_gone: Int\n'),
    );
    const checked = await runScript('scripts/contract.ts', ['check', '--dir', dir], {});
    expect(checked.code).toBe(1);
    expect(checked.stdout).toContain(
      "GraphQL Query.contract_test_gone: Field 'contract_test_gone' was removed from object type 'Query' [FIELD_REMOVED]",
    );
    expect(checked.stderr).toContain('npm run contract:release -- 2.0.0 "<what changed, and how clients move>"');
  });

  it('fails on an addition the "Unreleased" notes do not name, and passes once they do', { timeout: 180_000 }, async () => {
    const dir = folder();
    const released = await runScript('scripts/contract.ts', ['release', '--dir', dir, '1.0.0', 'The first release.'], {});
    expect(released.code).toBe(0);
    // The release lacks today's first Query field: today adds it.
    const { name, current } = withoutFirstQueryField();
    writeFileSync(path.join(dir, CONTRACT_FILES.schema), printSchema(current));
    const unnamed = await runScript('scripts/contract.ts', ['check', '--dir', dir], {});
    expect(unnamed.code).toBe(1);
    expect(unnamed.stdout).toContain(`GraphQL Query.${name}: Field '${name}' was added to object type 'Query' [FIELD_ADDED]`);
    expect(unnamed.stderr).toContain('not mentioned under "## [Unreleased]"');

    const changelog = path.join(dir, CONTRACT_FILES.changelog);
    writeFileSync(changelog, read(dir, CONTRACT_FILES.changelog).replace('## [Unreleased]\n', `## [Unreleased]\n\n- Adds \`${name}\`.\n`));
    const named = await runScript('scripts/contract.ts', ['check', '--dir', dir], {});
    expect(named.stderr).toBe('');
    expect(named.code).toBe(0);
  });

  it('lists but does not fail on what would break the clients of a pre-release, which promises nothing', { timeout: 180_000 }, async () => {
    const dir = folder();
    const released = await runScript('scripts/contract.ts', ['release', '--dir', dir, '1.0.0-pre', 'A snapshot.'], {});
    expect(released.code).toBe(0);
    writeFileSync(
      path.join(dir, CONTRACT_FILES.schema),
      read(dir, CONTRACT_FILES.schema).replace('type Query {\n', 'type Query {\n  contract_test_gone: Int\n'),
    );
    const checked = await runScript('scripts/contract.ts', ['check', '--dir', dir], {});
    expect(checked.code).toBe(0);
    expect(checked.stdout).toContain('Changes that would break the clients of a release (allowed after a pre-release) (1):');
    expect(checked.stdout).toContain(
      "GraphQL Query.contract_test_gone: Field 'contract_test_gone' was removed from object type 'Query' [FIELD_REMOVED]",
    );
  });
});

describe('corrections of the document', () => {
  /** The first request body parameter pattern of today's document, and a document with it spelled `old`. */
  const withPattern = (old: string, now: string): [Node, Node] => {
    const released = structuredClone(today.openapi);
    const current = structuredClone(today.openapi);
    const postcode = (document: Node) =>
      (
        ((document.paths as Node)['/manufacturers/{id}/search_by_postcode'] as Node).get as { parameters: { name: string; schema: Node }[] }
      ).parameters.find((parameter) => parameter.name === 'postcode') as { schema: Node };
    postcode(released).schema.pattern = old;
    postcode(current).schema.pattern = now;
    return [released, current];
  };

  it('reads a released pattern respelled for every engine as no change, and a surrogate range dropped from refused characters as none either', () => {
    expect(openApiChanges(...withPattern('^\\d{4}$', '^[0-9]{4}$'), TODAY)).toEqual([]);
    expect(openApiChanges(...withPattern('^[^\\u0000\\ud800-\\udfff]*$', '^[^\\x00]*$'), TODAY)).toEqual([]);
    // Another pattern is still a narrowing.
    expect(lines(openApiChanges(...withPattern('^\\d{4}$', '^[0-9]{3}$'), TODAY), 'breaking')).toHaveLength(1);
  });

  it('counts a narrowing listed under "### Fixed" in the Unreleased notes as a documentation fix, and one not listed as breaking', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'contract-test-'));
    try {
      await cutRelease(dir, { version: '1.0.0', notes: 'The first release.', today: TODAY }, today);
      const current = structuredClone(today.openapi);
      const form = (((current.paths as Node)['/api/v1/leads'] as Node).post as Node).requestBody as {
        content: Record<string, { schema: Node }>;
      };
      const schemaOfForm = form.content['multipart/form-data']?.schema as Node;
      schemaOfForm.required = [...((schemaOfForm.required as string[] | undefined) ?? []), 'lead[name]'];
      const snapshot = { sdl: today.sdl, openapi: current };
      const where = 'REST POST /api/v1/leads request body (multipart/form-data)';
      const levels = async () =>
        (await compareWithRelease(dir, TODAY, snapshot)).changes
          .filter((change) => describeChange(change).startsWith(where))
          .map((change) => change.level);
      expect(await levels()).toEqual(['breaking']);
      const changelog = read(dir);
      writeFileSync(
        path.join(dir, CONTRACT_FILES.changelog),
        changelog.replace(
          '## [Unreleased]\n',
          `## [Unreleased]\n\n### Fixed\n\n- \`${where}\`: requires lead[name], as the server always did.\n`,
        ),
      );
      expect(await levels()).toEqual(['patch']);
      // Listed anywhere else, it is not a correction.
      writeFileSync(
        path.join(dir, CONTRACT_FILES.changelog),
        changelog.replace('## [Unreleased]\n', `## [Unreleased]\n\n- \`${where}\`: stricter.\n`),
      );
      expect(await levels()).toEqual(['breaking']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const read = (dir: string): string => readFileSync(path.join(dir, CONTRACT_FILES.changelog), 'utf8');
});
