// Sofa passes REST arguments to GraphQL strictly: here they are read as leniently as the Rails-era service read them.
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  isSpecifiedScalarType,
  type GraphQLField,
  type GraphQLInputType,
} from 'graphql';
import { INT32, INT32_REASON } from '../domain/input-limits.ts';
import { isPlainObject, parsedJson } from '../lib/json.ts';
import { keyPath } from '../web/refused-keys.ts';

export interface ArgumentProblem {
  field: string;
  reason: string;
}

export const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;
export const NUMBER_TEXT = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;
export const BOOLEAN_SPELLINGS: Readonly<Record<string, boolean>> = { true: true, false: false, '1': true, '0': false };

/** The plain reason for each scalar's wrong value, shared with the translation of GraphQL's own errors. */
export const SCALAR_REASONS = {
  Int: 'must be a whole number',
  IntRange: INT32_REASON,
  Float: 'must be a number',
  Boolean: 'must be true or false',
  String: 'must be text',
  ID: 'must be text or a whole number',
  object: 'must be an object',
} as const;

type Read = { value: unknown } | { problem: ArgumentProblem };

function readScalar(value: unknown, typeName: string, path: string): Read {
  const problem = (reason: string): Read => ({ problem: { field: path, reason } });
  switch (typeName) {
    case 'String':
      return typeof value === 'string' ? { value } : problem(SCALAR_REASONS.String);
    case 'ID':
      return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value)) ? { value } : problem(SCALAR_REASONS.ID);
    case 'Boolean': {
      if (typeof value === 'boolean') return { value };
      const spelled =
        typeof value === 'string' || typeof value === 'number' ? BOOLEAN_SPELLINGS[String(value).trim().toLowerCase()] : undefined;
      return spelled === undefined ? problem(SCALAR_REASONS.Boolean) : { value: spelled };
    }
    case 'Int': {
      const number = typeof value === 'string' && INTEGER_TEXT.test(value) ? Number(value) : value;
      if (typeof number !== 'number' || !Number.isInteger(number)) return problem(SCALAR_REASONS.Int);
      return number < INT32.min || number > INT32.max ? problem(SCALAR_REASONS.IntRange) : { value: number };
    }
    case 'Float': {
      const number = typeof value === 'string' && NUMBER_TEXT.test(value) ? Number(value) : value;
      return typeof number === 'number' && Number.isFinite(number) ? { value: number } : problem(SCALAR_REASONS.Float);
    }
    default:
      return { value }; // custom scalars (dates, JSON) check their own input and name the field
  }
}

/** The value as the operation takes it, with unknown keys dropped (and recorded), or the first problem. */
function readValue(value: unknown, type: GraphQLInputType, path: string, ignored: string[]): Read {
  if (value === null) return { value }; // GraphQL then says "is required" for a required one
  if (isNonNullType(type)) return readValue(value, type.ofType, path, ignored);
  if (isListType(type)) {
    // GraphQL accepts a single value for a list (input coercion); Sofa wraps it too.
    if (!Array.isArray(value)) return readValue(value, type.ofType, path, ignored);
    const items: unknown[] = [];
    for (const [index, item] of value.entries()) {
      const read = readValue(item, type.ofType, `${path}[${index}]`, ignored);
      if ('problem' in read) return read;
      items.push(read.value);
    }
    return { value: items };
  }
  if (isInputObjectType(type)) {
    if (!isPlainObject(value)) return { problem: { field: path, reason: SCALAR_REASONS.object } };
    const fields = type.getFields();
    const known: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const field = Object.hasOwn(fields, key) ? fields[key] : undefined;
      if (!field) {
        ignored.push(keyPath(path, key));
        continue;
      }
      const read = readValue(item, field.type, `${path}.${key}`, ignored);
      if ('problem' in read) return read;
      known[key] = read.value;
    }
    return { value: known };
  }
  if (isEnumType(type)) {
    const names = type.getValues().map((entry) => entry.name);
    if (typeof value === 'string' && names.includes(value)) return { value };
    return { problem: { field: path, reason: `must be one of: ${names.join(', ')}` } };
  }
  return isScalarType(type) ? readScalar(value, type.name, path) : { value };
}

/** The reason an input object in the query string cannot be read, naming both spellings. */
const queryObjectReason = (name: string): string => `must be an object: ${name}[key]=… (nested as ${name}[key][key]=…) or JSON text`;

/** A nested key that is given both a value and keys of its own (`data[leadId]=1&data[leadId][x]=2`). */
const BOTH_REASON = 'is both a value and a group of keys';

/**
 * An input object argument as the query string gives it: nested keys (`data[leadId]=12`) or one JSON text;
 * undefined when it is not there (or only blank). Its objects have no prototype for a key to reach past.
 */
function queryObject(query: URLSearchParams, name: string): Read | undefined {
  const problem: Read = { problem: { field: name, reason: queryObjectReason(name) } };
  const nested = [...query.entries()].filter(([key]) => key.startsWith(`${name}[`));
  const texts = query.getAll(name).filter((value) => value.trim() !== '');
  if (nested.length === 0 && texts.length === 0) return undefined;
  if (nested.length > 0) {
    if (texts.length > 0) return { problem: { field: name, reason: `${queryObjectReason(name)}, not both` } };
    const root: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [key, value] of nested) {
      const rest = key.slice(name.length);
      if (!/^(\[[^[\]]+\])+$/.test(rest)) return problem;
      const path = [...rest.matchAll(/\[([^[\]]+)\]/g)].map((match) => match[1]!);
      let at = root;
      let place = name;
      for (const [index, segment] of path.entries()) {
        place = keyPath(place, segment);
        const held = Object.hasOwn(at, segment) ? at[segment] : undefined;
        if (index === path.length - 1) {
          if (held !== undefined) return { problem: { field: place, reason: isPlainObject(held) ? BOTH_REASON : 'is sent twice' } };
          at[segment] = value;
        } else if (held !== undefined && !isPlainObject(held)) {
          return { problem: { field: place, reason: BOTH_REASON } };
        } else {
          at[segment] ??= Object.create(null);
          at = at[segment] as Record<string, unknown>;
        }
      }
    }
    return { value: root };
  }
  if (texts.length > 1) return { problem: { field: name, reason: 'must be given once, as a single value' } };
  const value = parsedJson(texts[0]);
  return isPlainObject(value) ? { value } : problem;
}

interface RestArguments {
  /** The body with only the operation's arguments, converted where the rules above allow. */
  body: Record<string, unknown> | undefined;
  /** Query parameters read into the body (an input object's keys): Sofa must not read them again. */
  readFromQuery: string[];
  /** Body keys and query parameters that were ignored, by path. */
  ignored: string[];
  problem: ArgumentProblem | null;
}

/**
 * Reads a REST call's arguments for `field` as Sofa does (path, else query, else body), leniently:
 * unknown body keys and query parameters are ignored (and named, like Rails' strong parameters); a
 * number or boolean may come as its text; a scalar given twice or bracketed is a 422; an input object
 * may come in the query (`?data[leadId]=12` or `?data={…}`) and then reaches Sofa in the body.
 */
export function readRestArguments(
  field: GraphQLField<unknown, unknown>,
  request: { pathParams: Readonly<Record<string, string>>; query: URLSearchParams; body: unknown },
): RestArguments {
  const ignored: string[] = [];
  const readFromQuery: string[] = [];
  const argNames = new Set(field.args.map((arg) => arg.name));
  for (const key of new Set(request.query.keys())) {
    const base = key.replace(/\[.*$/s, '');
    if (!argNames.has(base)) ignored.push(key);
  }
  const done = (problem: ArgumentProblem | null, body?: Record<string, unknown>): RestArguments => ({
    body,
    readFromQuery,
    ignored,
    problem,
  });
  if (request.body !== undefined && !isPlainObject(request.body)) {
    return done({ field: 'body', reason: 'must be a JSON object, such as {"name": value}' });
  }
  const sent = request.body as Record<string, unknown> | undefined;
  let body: Record<string, unknown> | undefined = sent ? {} : undefined;
  for (const key of Object.keys(sent ?? {})) if (!argNames.has(key)) ignored.push(key);
  for (const arg of field.args) {
    if (arg.name in request.pathParams) continue;
    const inQuery = request.query.getAll(arg.name).filter((value) => value !== '');
    const bracketed = [...request.query.keys()].some((key) => key.startsWith(`${arg.name}[`));
    const named = getNamedType(arg.type);
    // One piece of text or a scalar, not an object the query may spell as `name[key]=…`.
    const single = isEnumType(named) || isSpecifiedScalarType(named);
    if (single && (inQuery.length > 1 || bracketed)) return done({ field: arg.name, reason: 'must be given once, as a single value' });
    if (isInputObjectType(named)) {
      const fromQuery = queryObject(request.query, arg.name);
      if (fromQuery) {
        const read = 'problem' in fromQuery ? fromQuery : readValue(fromQuery.value, arg.type, arg.name, ignored);
        if ('problem' in read) return done(read.problem);
        body ??= {};
        body[arg.name] = read.value;
        readFromQuery.push(arg.name);
        continue;
      }
    }
    if (inQuery.length === 1 && isEnumType(named)) {
      // Sofa passes query text to GraphQL as it is; an enum's values are named here in plain words.
      const read = readValue(inQuery[0], named, arg.name, ignored);
      if ('problem' in read) return done(read.problem);
    }
    if (inQuery.length > 0 || bracketed) continue;
    if (sent && body && Object.hasOwn(sent, arg.name)) {
      const read = readValue(sent[arg.name], arg.type, arg.name, ignored);
      if ('problem' in read) return done(read.problem);
      body[arg.name] = read.value;
    }
  }
  return done(null, body);
}
