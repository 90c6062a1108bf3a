// The REST door's side of the contract check: what changed between the released OpenAPI document
// and today's, for a client generated from the released one. A request may accept more and a response
// may say more; anything else breaks some client:
// - a path, an operation, a parameter, a request body or media type, a response status, header or
//   field removed;
// - a parameter or request field made required (or a new required one);
// - what a parameter or request field accepts narrowed: a type, an enum value dropped, null refused,
//   a minimum or minLength raised, a maximum or maxLength lowered, a pattern or format added or changed,
//   unknown fields refused;
// - what a response holds widened: a field made nullable or optional, its type or format changed, an
//   enum value added (generated clients hold the closed set) or removed (code that checks for it stops
//   compiling);
// - a key or a permission newly needed; an operationId changed (generated clients name methods by it,
//   the MCP door its tools).
// Additions (paths, operations, optional parameters and fields, response fields, statuses, headers,
// request enum values) and deprecations are minor; only descriptions and examples changed is a patch.
// Schemas are read as JSON Schema 2020-12 (OpenAPI 3.1): local $refs, `type` lists, `anyOf`/`oneOf`
// (a null alternative is nullability; other alternatives are matched one by one), `allOf` merged,
// `nullable` (3.0) too. What it cannot reason about (`not`, `if`) counts as breaking when it changed.
import type { ChangelogSection, ChangeLevel, ContractChange } from './changes.ts';
import { portablePattern, withPortablePatterns } from '../../src/rest/input-schemas.ts';

type Json = Record<string, unknown>;
type Direction = 'request' | 'response';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A place in a document to read `$ref`s against. */
class DocumentReader {
  constructor(private readonly document: Json) {}

  /** The node a (chain of) local `$ref` leads to, and the last ref followed. */
  resolve(value: unknown): { node: Json; ref: string | undefined } {
    let node = value;
    let ref: string | undefined;
    const seen = new Set<string>();
    while (isJson(node) && typeof node.$ref === 'string' && !seen.has(node.$ref)) {
      ref = node.$ref;
      seen.add(ref);
      node = this.pointer(ref);
    }
    return { node: isJson(node) ? node : {}, ref };
  }

  private pointer(ref: string): unknown {
    if (!ref.startsWith('#/')) return undefined;
    let node: unknown = this.document;
    for (const segment of ref.slice(2).split('/')) {
      const key = decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~');
      node = isJson(node) ? node[key] : undefined;
    }
    return node;
  }
}

/** A schema as the comparison reads it. */
interface Shape {
  /** JSON types other than null; null when any type is allowed. */
  types: Set<string> | null;
  nullable: boolean;
  /** The allowed non-null values (`enum`, `const`), or null when not listed. */
  values: unknown[] | null;
  /** Two or more non-null alternatives (`anyOf`/`oneOf`), each still to be read. */
  alternatives: unknown[] | null;
  /** The keywords of the schema (allOf merged): properties, required, items, bounds, format… */
  keywords: Json;
  /** The `$ref`s followed to it: what stops the walk on a recursive schema. */
  ref: string | undefined;
  /** Holds keywords this comparison does not reason about (`not`, `if`): compared as text. */
  opaque: boolean;
}

function isNullSchema(node: Json): boolean {
  return (
    node.type === 'null' ||
    (Array.isArray(node.enum) && node.enum.length === 1 && node.enum[0] === null) ||
    ('const' in node && node.const === null)
  );
}

function readShape(value: unknown, reader: DocumentReader): Shape {
  const { node, ref } = reader.resolve(value);
  let keywords: Json = { ...node };
  let nullable = node.nullable === true;
  if (Array.isArray(node.allOf)) {
    // Every member holds: their properties and required lists together, their other keywords overlaid.
    const members = node.allOf.map((member) => reader.resolve(member).node);
    keywords = members.reduce<Json>(
      (merged, member) => ({
        // biome-ignore lint/performance/noAccumulatingSpread: an allOf has a handful of members; the merge reads plainly.
        ...merged,
        ...member,
        properties: { ...(isJson(merged.properties) ? merged.properties : {}), ...(isJson(member.properties) ? member.properties : {}) },
        required: [...(Array.isArray(merged.required) ? merged.required : []), ...(Array.isArray(member.required) ? member.required : [])],
      }),
      { ...node, allOf: undefined },
    );
    if (Object.keys(keywords.properties as Json).length === 0) delete keywords.properties;
    if ((keywords.required as unknown[]).length === 0) delete keywords.required;
  }
  const choices = Array.isArray(keywords.anyOf) ? keywords.anyOf : Array.isArray(keywords.oneOf) ? keywords.oneOf : null;
  if (choices) {
    const nonNull = choices.filter((choice) => !isNullSchema(reader.resolve(choice).node));
    nullable ||= nonNull.length < choices.length;
    if (nonNull.length === 1) {
      const inner = readShape(nonNull[0], reader);
      return { ...inner, nullable: inner.nullable || nullable, ref: inner.ref ?? ref };
    }
    if (nonNull.length > 1) {
      return { types: null, nullable, values: null, alternatives: nonNull, keywords: {}, ref, opaque: false };
    }
  }
  const typeList = Array.isArray(keywords.type) ? keywords.type.map(String) : typeof keywords.type === 'string' ? [keywords.type] : null;
  if (typeList?.includes('null')) nullable = true;
  const listed = Array.isArray(keywords.enum)
    ? keywords.enum
    : 'const' in keywords && keywords.const !== undefined
      ? [keywords.const]
      : null;
  if (listed?.includes(null)) nullable = true;
  return {
    types: typeList ? new Set(typeList.filter((type) => type !== 'null')) : null,
    nullable,
    values: listed ? listed.filter((value) => value !== null) : null,
    alternatives: null,
    keywords,
    ref,
    opaque: ['not', 'if', 'then', 'else', 'dependentSchemas', 'patternProperties'].some((keyword) => keyword in keywords),
  };
}

/** A shape's schema without its null: one alternative beside the other side's alternatives. */
function withoutNull(shape: Shape): Json {
  return {
    ...shape.keywords,
    nullable: false,
    type: shape.types ? [...shape.types] : undefined,
    enum: Array.isArray(shape.keywords.enum) ? shape.values : undefined,
    anyOf: undefined,
    oneOf: undefined,
  };
}

/** Does a set of types accept a value of `type` (an integer is a number)? */
function accepts(types: Set<string> | null, type: string): boolean {
  return types === null || types.has(type) || (type === 'integer' && types.has('number'));
}

const typesText = (types: Set<string> | null): string => (types === null ? 'any type' : [...types].join(' or ') || 'nothing');
const valueText = (value: unknown): string => JSON.stringify(value);
const DOC_KEYWORDS = new Set(['description', 'title', 'example', 'examples']);
/** A schema without the words and examples that explain it; `isMap` when `value` maps names to schemas (`properties`). */
function withoutDocs(value: unknown, isMap = false): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutDocs(item));
  if (!isJson(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => isMap || !DOC_KEYWORDS.has(key))
      .map(([key, child]) => [key, withoutDocs(child, !isMap && (key === 'properties' || key === '$defs'))]),
  );
}
/** A schema's rules as text. */
const rulesText = (schema: Json): string => JSON.stringify(withoutDocs(schema));

/** Bounds a request may only loosen: a higher lower bound or a lower upper bound refuses what was accepted. */
const LOWER_BOUNDS = ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties'] as const;
const UPPER_BOUNDS = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'] as const;
/** Keywords whose appearance or change may refuse what was accepted (a pattern cannot be proved wider). */
const EXACT_RULES = ['pattern', 'format', 'multipleOf'] as const;

/**
 * What `label` names in the rules: `parameter` (a parameter's value), `request` (the body), `response`
 * (a response body) or `response-header`.
 */
interface Place {
  direction: Direction;
  label: string;
}

interface Finding {
  level: ChangeLevel;
  section: ChangelogSection;
  field: string;
  what: string;
  rule: string;
}

class SchemaComparison {
  private readonly visited = new Set<string>();

  constructor(
    private readonly released: DocumentReader,
    private readonly current: DocumentReader,
  ) {}

  compare(before: unknown, after: unknown, place: Place, field: string): Finding[] {
    const old = readShape(before, this.released);
    const now = readShape(after, this.current);
    if (old.ref !== undefined && now.ref !== undefined) {
      // A recursive schema: each pair of refs is compared once per direction.
      const key = `${place.direction}|${place.label}|${old.ref}|${now.ref}`;
      if (this.visited.has(key)) return [];
      this.visited.add(key);
    }
    return this.compareShapes(old, now, place, field);
  }

  /** Does comparing these two find nothing breaking? (Alternatives are matched with it.) */
  private compatible(before: unknown, after: unknown, place: Place): boolean {
    const scratch = new SchemaComparison(this.released, this.current);
    for (const key of this.visited) scratch.visited.add(key);
    return scratch.compare(before, after, place, '').every((finding) => finding.level !== 'breaking');
  }

  private compareShapes(old: Shape, now: Shape, place: Place, field: string): Finding[] {
    const found: Finding[] = [];
    const breaking = (rule: string, what: string, section: ChangelogSection = 'Changed'): void => {
      found.push({ level: 'breaking', section, field, what, rule: `${place.label}-${rule}` });
    };
    const minor = (rule: string, what: string, section: ChangelogSection = 'Changed'): void => {
      found.push({ level: 'minor', section, field, what, rule: `${place.label}-${rule}` });
    };
    const request = place.direction === 'request';

    if (request && old.nullable && !now.nullable) breaking('narrowed', 'no longer accepts null');
    if (!request && !old.nullable && now.nullable) breaking('made-nullable', 'may now be null');
    if (request && !old.nullable && now.nullable) minor('loosened', 'now accepts null');

    if (old.opaque || now.opaque) {
      if (rulesText(old.keywords) !== rulesText(now.keywords))
        breaking('schema-changed', 'its schema changed in a way this check cannot prove compatible');
      return found;
    }

    if (old.alternatives || now.alternatives) {
      // Each alternative a client may send must still be accepted by one; each one a client may get must have been answerable.
      const oldChoices = old.alternatives ?? [withoutNull(old)];
      const newChoices = now.alternatives ?? [withoutNull(now)];
      if (request) {
        for (const choice of oldChoices) {
          if (!newChoices.some((candidate) => this.compatible(choice, candidate, place))) {
            breaking('narrowed', 'no longer accepts one of the alternatives it accepted');
          }
        }
      } else {
        for (const choice of newChoices) {
          if (!oldChoices.some((candidate) => this.compatible(candidate, choice, place))) {
            breaking('type-changed', 'may now answer an alternative it did not answer before');
          }
        }
      }
      return found;
    }

    // Types
    if (request) {
      const refused =
        old.types === null ? (now.types === null ? [] : ['any type']) : [...old.types].filter((type) => !accepts(now.types, type));
      if (refused.length > 0) breaking('narrowed', `type narrowed from ${typesText(old.types)} to ${typesText(now.types)}`);
    } else {
      const unexpected =
        now.types === null ? (old.types === null ? [] : ['any type']) : [...now.types].filter((type) => !accepts(old.types, type));
      if (unexpected.length > 0) breaking('type-changed', `type changed from ${typesText(old.types)} to ${typesText(now.types)}`);
    }

    // Listed values
    const oldValues = old.values?.map(valueText) ?? null;
    const newValues = now.values?.map(valueText) ?? null;
    if (request) {
      if (oldValues && newValues) {
        for (const value of oldValues.filter((value) => !newValues.includes(value)))
          breaking('narrowed', `enum value ${value} removed`, 'Removed');
        for (const value of newValues.filter((value) => !oldValues.includes(value)))
          minor('enum-value-added', `enum value ${value} added`, 'Added');
      } else if (newValues) {
        breaking('narrowed', `now limited to the values ${newValues.join(', ')}`);
      } else if (oldValues) {
        minor('loosened', 'no longer limited to a list of values');
      }
    } else if (oldValues && newValues) {
      for (const value of newValues.filter((value) => !oldValues.includes(value)))
        breaking('enum-value-added', `enum value ${value} added (a client built with the released list does not know it)`, 'Added');
      for (const value of oldValues.filter((value) => !newValues.includes(value)))
        breaking('enum-value-removed', `enum value ${value} removed`, 'Removed');
    } else if (oldValues && !newValues) {
      breaking('type-changed', 'no longer limited to a list of values');
    }

    // Bounds and formats: a request refuses what it accepted; a response changes the format clients parse.
    if (request) {
      for (const bound of LOWER_BOUNDS) {
        const before = old.keywords[bound];
        const after = now.keywords[bound];
        if (typeof after === 'number' && (typeof before !== 'number' || after > before)) {
          breaking('narrowed', typeof before === 'number' ? `${bound} raised from ${before} to ${after}` : `${bound} ${after} added`);
        } else if (typeof before === 'number' && (typeof after !== 'number' || after < before)) minor('loosened', `${bound} loosened`);
      }
      for (const bound of UPPER_BOUNDS) {
        const before = old.keywords[bound];
        const after = now.keywords[bound];
        if (typeof after === 'number' && (typeof before !== 'number' || after < before)) {
          breaking('narrowed', typeof before === 'number' ? `${bound} lowered from ${before} to ${after}` : `${bound} ${after} added`);
        } else if (typeof before === 'number' && (typeof after !== 'number' || after > before)) minor('loosened', `${bound} loosened`);
      }
      for (const rule of EXACT_RULES) {
        const before = old.keywords[rule];
        const after = now.keywords[rule];
        if (after !== undefined && valueText(after) !== valueText(before)) {
          breaking(
            'narrowed',
            before === undefined ? `${rule} ${valueText(after)} added` : `${rule} changed from ${valueText(before)} to ${valueText(after)}`,
          );
        } else if (before !== undefined && after === undefined) minor('loosened', `${rule} removed`);
      }
      if (now.keywords.uniqueItems === true && old.keywords.uniqueItems !== true) breaking('narrowed', 'items must now be unique');
    } else if (old.keywords.format !== undefined && valueText(old.keywords.format) !== valueText(now.keywords.format)) {
      breaking('format-changed', `format changed from ${valueText(old.keywords.format)} to ${valueText(now.keywords.format ?? null)}`);
    }

    found.push(...this.compareObjects(old, now, place, field));
    if (old.keywords.items !== undefined || now.keywords.items !== undefined) {
      found.push(...this.compare(old.keywords.items ?? {}, now.keywords.items ?? {}, place, `${field}[]`));
    }
    return found;
  }

  private compareObjects(old: Shape, now: Shape, place: Place, field: string): Finding[] {
    const found: Finding[] = [];
    const request = place.direction === 'request';
    const oldProperties = isJson(old.keywords.properties) ? old.keywords.properties : {};
    const newProperties = isJson(now.keywords.properties) ? now.keywords.properties : {};
    const oldRequired = new Set(Array.isArray(old.keywords.required) ? old.keywords.required.map(String) : []);
    const newRequired = new Set(Array.isArray(now.keywords.required) ? now.keywords.required.map(String) : []);
    const at = (name: string): string => (field ? `${field}.${name}` : name);
    const push = (level: ChangeLevel, section: ChangelogSection, name: string, rule: string, what: string): void => {
      found.push({ level, section, field: at(name), what, rule: `${place.label}-${rule}` });
    };
    for (const name of Object.keys(oldProperties)) {
      if (!(name in newProperties)) {
        push('breaking', 'Removed', name, 'field-removed', request ? 'field removed (clients send it)' : 'field removed');
        continue;
      }
      if (request && !oldRequired.has(name) && newRequired.has(name))
        push('breaking', 'Changed', name, 'field-made-required', 'made required');
      if (request && oldRequired.has(name) && !newRequired.has(name)) push('minor', 'Changed', name, 'loosened', 'no longer required');
      if (!request && oldRequired.has(name) && !newRequired.has(name))
        push('breaking', 'Changed', name, 'field-made-optional', 'may now be absent');
      found.push(...this.compare(oldProperties[name], newProperties[name], place, at(name)));
    }
    for (const name of Object.keys(newProperties)) {
      if (name in oldProperties) continue;
      if (request && newRequired.has(name)) push('breaking', 'Added', name, 'field-added-required', 'new required field');
      else push('minor', 'Added', name, 'field-added', request ? 'optional field added' : 'field added');
    }
    if (
      request &&
      old.keywords.additionalProperties !== false &&
      now.keywords.additionalProperties === false &&
      Object.keys(oldProperties).length + Object.keys(newProperties).length > 0
    ) {
      found.push({
        level: 'breaking',
        section: 'Changed',
        field,
        what: 'no longer accepts fields it does not name',
        rule: `${place.label}-narrowed`,
      });
    }
    if (isJson(old.keywords.additionalProperties) && isJson(now.keywords.additionalProperties)) {
      found.push(...this.compare(old.keywords.additionalProperties, now.keywords.additionalProperties, place, at('*')));
    }
    return found;
  }
}

interface Operation extends Json {
  parameters?: unknown[];
  requestBody?: unknown;
  responses?: Json;
  deprecated?: boolean;
  security?: unknown[];
}

function operationsOf(document: Json): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  const paths = isJson(document.paths) ? document.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isJson(item)) continue;
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (isJson(operation)) operations.set(`${method.toUpperCase()} ${path}`, operation);
    }
  }
  return operations;
}

/** The first day a deprecated operation may stop answering: its documented Sunset header's example, as YYYY-MM-DD. */
function sunsetOf(operation: Operation, reader: DocumentReader): string | null {
  for (const response of Object.values(operation.responses ?? {})) {
    const headers = reader.resolve(response).node.headers;
    if (!isJson(headers)) continue;
    for (const [name, header] of Object.entries(headers)) {
      const example = reader.resolve(header).node.example;
      if (name.toLowerCase() === 'sunset' && typeof example === 'string' && !Number.isNaN(Date.parse(example))) {
        return new Date(example).toISOString().slice(0, 10);
      }
    }
  }
  return null;
}

function removalNote(operation: Operation, reader: DocumentReader, today: string): string {
  if (operation.deprecated !== true) return '';
  const sunset = sunsetOf(operation, reader);
  if (sunset === null) return ' (it was deprecated; removing it is still a breaking change: a major release)';
  return sunset <= today
    ? ` (it was deprecated with its sunset on ${sunset}: the removal is due, and it is still a breaking change: a major release)`
    : ` (it is deprecated with its sunset on ${sunset}, a day that has not come)`;
}

interface Parameter {
  name: string;
  in: string;
  required: boolean;
  schema: unknown;
  style: unknown;
  explode: unknown;
}

function parametersOf(operation: Operation, pathItem: Json, reader: DocumentReader): Map<string, Parameter> {
  const found = new Map<string, Parameter>();
  const all = [...(Array.isArray(pathItem.parameters) ? pathItem.parameters : []), ...(operation.parameters ?? [])];
  for (const value of all) {
    const node = reader.resolve(value).node;
    const where = String(node.in);
    const name = String(node.name);
    const content = isJson(node.content) ? Object.values(node.content)[0] : undefined;
    const schema = node.schema ?? (isJson(content) ? content.schema : undefined) ?? {};
    // HTTP header names are case-insensitive.
    found.set(`${where} ${where === 'header' ? name.toLowerCase() : name}`, {
      name,
      in: where,
      required: where === 'path' || node.required === true,
      schema,
      style: node.style,
      explode: node.explode,
    });
  }
  return found;
}

function pathItemOf(document: Json, key: string): Json {
  const path = key.slice(key.indexOf(' ') + 1);
  const paths = isJson(document.paths) ? document.paths : {};
  const item = paths[path];
  return isJson(item) ? item : {};
}

/** Every finding of an operation, as ContractChanges named by the operation. */
function compareOperation(
  key: string,
  old: Operation,
  now: Operation,
  documents: { released: Json; current: Json },
  readers: { released: DocumentReader; current: DocumentReader },
): ContractChange[] {
  const schemas = new SchemaComparison(readers.released, readers.current);
  const changes: ContractChange[] = [];
  const add = (level: ChangeLevel, section: ChangelogSection, where: string, what: string, rule: string): void => {
    changes.push({ door: 'rest', level, section, where, what, rule });
  };
  const addFindings = (prefix: string, findings: Finding[]): void => {
    for (const finding of findings)
      add(finding.level, finding.section, `${prefix}${finding.field ? ` ${finding.field}` : ''}`, finding.what, finding.rule);
  };

  /** The media types of a body or an answer: one gone breaks, one new is an addition, the schemas of the others are compared. */
  const compareContent = (before: unknown, after: unknown, prefix: string, direction: Direction): void => {
    const oldContent = isJson(before) ? before : {};
    const newContent = isJson(after) ? after : {};
    const verb = direction === 'request' ? 'accepted' : 'answered';
    for (const [mediaType, media] of Object.entries(oldContent)) {
      const where = `${prefix} (${mediaType})`;
      const next = newContent[mediaType];
      if (!isJson(next)) add('breaking', 'Removed', where, `media type no longer ${verb}`, `${direction}-media-type-removed`);
      else addFindings(where, schemas.compare(isJson(media) ? media.schema : {}, next.schema, { direction, label: direction }, ''));
    }
    for (const mediaType of Object.keys(newContent).filter((type) => !(type in oldContent))) {
      add('minor', 'Added', `${prefix} (${mediaType})`, `media type now ${verb}`, `${direction}-media-type-added`);
    }
  };

  // Who may call it
  if ((old.security?.length ?? 1) === 0 && (now.security?.length ?? 1) > 0)
    add('breaking', 'Changed', key, 'now needs an API key', 'security-added');
  const oldPermissions = Array.isArray(old['x-permissions']) ? old['x-permissions'].map(String) : [];
  const newPermissions = Array.isArray(now['x-permissions']) ? now['x-permissions'].map(String) : [];
  for (const permission of newPermissions.filter((permission) => !oldPermissions.includes(permission))) {
    add('breaking', 'Changed', key, `now needs the permission ${permission}`, 'permission-added');
  }
  if (old.deprecated !== true && now.deprecated === true) add('minor', 'Deprecated', key, 'deprecated', 'operation-deprecated');
  if (typeof old.operationId === 'string' && old.operationId !== now.operationId) {
    add('breaking', 'Changed', key, `operationId changed from ${old.operationId} to ${String(now.operationId)}`, 'operation-id-changed');
  }

  // Parameters
  const oldParameters = parametersOf(old, pathItemOf(documents.released, key), readers.released);
  const newParameters = parametersOf(now, pathItemOf(documents.current, key), readers.current);
  for (const [id, parameter] of oldParameters) {
    const where = `${key} ${parameter.in} parameter ${parameter.name}`;
    const next = newParameters.get(id);
    if (!next) {
      add('breaking', 'Removed', where, 'parameter removed', 'parameter-removed');
      continue;
    }
    if (!parameter.required && next.required) add('breaking', 'Changed', where, 'made required', 'parameter-made-required');
    if (parameter.required && !next.required) add('minor', 'Changed', where, 'no longer required', 'parameter-loosened');
    if (
      valueText(parameter.style ?? null) !== valueText(next.style ?? null) ||
      valueText(parameter.explode ?? null) !== valueText(next.explode ?? null)
    ) {
      add('breaking', 'Changed', where, 'sent another way (style or explode changed)', 'parameter-serialization-changed');
    }
    addFindings(where, schemas.compare(parameter.schema, next.schema, { direction: 'request', label: 'parameter' }, ''));
  }
  for (const [id, parameter] of newParameters) {
    if (oldParameters.has(id)) continue;
    const where = `${key} ${parameter.in} parameter ${parameter.name}`;
    if (parameter.required) add('breaking', 'Added', where, 'new required parameter', 'parameter-added-required');
    else add('minor', 'Added', where, 'optional parameter added', 'parameter-added');
  }

  // Request body
  const oldBody = old.requestBody === undefined ? null : readers.released.resolve(old.requestBody).node;
  const newBody = now.requestBody === undefined ? null : readers.current.resolve(now.requestBody).node;
  const bodyWhere = `${key} request body`;
  if (oldBody && !newBody) add('breaking', 'Removed', bodyWhere, 'request body removed', 'request-body-removed');
  if (!oldBody && newBody?.required === true)
    add('breaking', 'Added', bodyWhere, 'a request body is now required', 'request-body-made-required');
  if (oldBody && newBody) {
    if (oldBody.required !== true && newBody.required === true)
      add('breaking', 'Changed', bodyWhere, 'made required', 'request-body-made-required');
    compareContent(oldBody.content, newBody.content, bodyWhere, 'request');
  }

  // Responses
  const oldResponses = old.responses ?? {};
  const newResponses = now.responses ?? {};
  for (const [status, value] of Object.entries(oldResponses)) {
    const where = `${key} response ${status}`;
    if (!(status in newResponses)) {
      add('breaking', 'Removed', where, 'status code removed', 'response-status-removed');
      continue;
    }
    const oldResponse = readers.released.resolve(value).node;
    const newResponse = readers.current.resolve(newResponses[status]).node;
    const oldHeaders = isJson(oldResponse.headers) ? oldResponse.headers : {};
    const newHeaders = isJson(newResponse.headers) ? newResponse.headers : {};
    const newHeaderNames = new Map(Object.keys(newHeaders).map((name) => [name.toLowerCase(), name]));
    for (const [name, header] of Object.entries(oldHeaders)) {
      const newName = newHeaderNames.get(name.toLowerCase());
      if (newName === undefined) {
        add('breaking', 'Removed', `${where} header ${name}`, 'response header removed', 'response-header-removed');
        continue;
      }
      const oldSchema = readers.released.resolve(header).node.schema ?? {};
      const newSchema = readers.current.resolve(newHeaders[newName]).node.schema ?? {};
      const headerWhere = `${where} header ${name}`;
      addFindings(headerWhere, schemas.compare(oldSchema, newSchema, { direction: 'response', label: 'response-header' }, ''));
    }
    const oldHeaderNames = new Set(Object.keys(oldHeaders).map((name) => name.toLowerCase()));
    for (const name of Object.keys(newHeaders).filter((name) => !oldHeaderNames.has(name.toLowerCase()))) {
      add('minor', 'Added', `${where} header ${name}`, 'response header added', 'response-header-added');
    }
    compareContent(oldResponse.content, newResponse.content, where, 'response');
  }
  for (const status of Object.keys(newResponses).filter((status) => !(status in oldResponses))) {
    add('minor', 'Added', `${key} response ${status}`, 'status code added', 'response-status-added');
  }
  return changes;
}

/** The parts of a document a client's code depends on (not its server, contact or version). */
function contractPart(document: Json): string {
  return JSON.stringify({ ...document, info: undefined, servers: undefined });
}

/** The changes between the released OpenAPI document and today's; `today` (YYYY-MM-DD) dates the removal notes. */
/**
 * The released document with its patterns spelled as today's document spells them (portablePattern,
 * src/rest/input-schemas.ts): a respelling matches the same text, so it is no change. A surrogate
 * range in a class of refused characters, which no portable spelling can name, is dropped first: that
 * only lets more through. A pattern that cannot be respelled stays as it was.
 */
function withRespelledPatterns(document: Json): Json {
  const respell = (pattern: string): string => {
    try {
      return portablePattern(pattern.replace(/(\[\^(?:[^\]\\]|\\.)*?)\\u[dD]800-\\u[dD][fF]{3}/g, '$1'));
    } catch {
      return pattern;
    }
  };
  return withPortablePatterns(document, respell);
}

export function openApiChanges(releasedAsWritten: Json, current: Json, today: string): ContractChange[] {
  const released = withRespelledPatterns(releasedAsWritten);
  const readers = { released: new DocumentReader(released), current: new DocumentReader(current) };
  const documents = { released, current };
  const oldOperations = operationsOf(released);
  const newOperations = operationsOf(current);
  const newPaths = new Set([...newOperations.keys()].map((key) => key.slice(key.indexOf(' ') + 1)));
  const oldPaths = new Set([...oldOperations.keys()].map((key) => key.slice(key.indexOf(' ') + 1)));
  const changes: ContractChange[] = [];
  for (const [key, operation] of oldOperations) {
    const now = newOperations.get(key);
    if (now) {
      changes.push(...compareOperation(key, operation, now, documents, readers));
      continue;
    }
    const pathGone = !newPaths.has(key.slice(key.indexOf(' ') + 1));
    changes.push({
      door: 'rest',
      level: 'breaking',
      section: 'Removed',
      where: key,
      what: `${pathGone ? 'path removed' : 'operation removed'}${removalNote(operation, readers.released, today)}`,
      rule: pathGone ? 'path-removed' : 'operation-removed',
    });
  }
  for (const key of newOperations.keys()) {
    if (oldOperations.has(key)) continue;
    const pathNew = !oldPaths.has(key.slice(key.indexOf(' ') + 1));
    changes.push({
      door: 'rest',
      level: 'minor',
      section: 'Added',
      where: key,
      what: pathNew ? 'path added' : 'operation added',
      rule: pathNew ? 'path-added' : 'operation-added',
    });
  }
  if (changes.length === 0 && contractPart(released) !== contractPart(current)) {
    changes.push({
      door: 'rest',
      level: 'patch',
      section: 'Changed',
      where: 'the OpenAPI document',
      what: 'descriptions, examples or other documentation changed',
      rule: 'documentation-changed',
    });
  }
  return changes;
}

/** The deprecated operations whose sunset has come (`today` is YYYY-MM-DD): the next major release may remove them. */
export function restRemovalsDue(document: Json, today: string): string[] {
  const reader = new DocumentReader(document);
  return [...operationsOf(document)].flatMap(([key, operation]) => {
    const sunset = operation.deprecated === true ? sunsetOf(operation, reader) : null;
    return sunset !== null && sunset <= today ? [`REST ${key} (sunset ${sunset})`] : [];
  });
}
