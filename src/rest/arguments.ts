// The JSON type of every argument a REST call sends, checked against the root field's GraphQL type
// before Sofa reads it. Sofa turns a scalar into its type with the type's serializer, which converts
// rather than refuses (12345 → "12345", true → "true", 3.7 → an error that would be a 400 without a
// field), and it reads a repeated or bracketed query parameter (`?website=a&website=b`,
// `?website[x]=1`) as a list or an object. Here each of those is a 422 naming the argument.
// Values inside input objects are left to GraphQL's own coercion, which is strict and names them.
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
} from 'graphql';
import { isPlainObject } from '../domain/json-columns.ts';

export interface ArgumentProblem {
  field: string;
  reason: string;
}

const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;

/** Why a JSON value cannot be this GraphQL input type, or null. Custom scalars take any JSON. */
function jsonTypeProblem(value: unknown, type: GraphQLInputType, path: string): ArgumentProblem | null {
  if (value === null) return null; // Sofa drops it: a required argument is then "is required".
  if (isNonNullType(type)) return jsonTypeProblem(value, type.ofType, path);
  if (isListType(type)) {
    // GraphQL accepts a single value for a list (input coercion); Sofa wraps it too.
    const items = Array.isArray(value) ? value : [value];
    for (const [index, item] of items.entries()) {
      const problem = jsonTypeProblem(item, type.ofType, Array.isArray(value) ? `${path}[${index}]` : path);
      if (problem) return problem;
    }
    return null;
  }
  if (isInputObjectType(type)) return isPlainObject(value) ? null : { field: path, reason: 'must be an object' };
  if (isEnumType(type)) return typeof value === 'string' ? null : { field: path, reason: 'must be text' };
  if (!isScalarType(type)) return null;
  switch (type.name) {
    case 'String':
    case 'ID':
      return typeof value === 'string' ? null : { field: path, reason: 'must be text' };
    case 'Boolean':
      return typeof value === 'boolean' ? null : { field: path, reason: 'must be true or false' };
    case 'Int':
      if (typeof value !== 'number' || !Number.isInteger(value)) return { field: path, reason: 'must be a whole number' };
      return value < INT_MIN || value > INT_MAX ? { field: path, reason: `must be a whole number from ${INT_MIN} to ${INT_MAX}` } : null;
    case 'Float':
      return typeof value === 'number' && Number.isFinite(value) ? null : { field: path, reason: 'must be a number' };
    default:
      return null;
  }
}

/** Arguments whose value is one piece of text or a scalar (not an object the query may spell as `name[key]=…`). */
function takesSingleValue(type: GraphQLInputType): boolean {
  const named = getNamedType(type);
  return isEnumType(named) || (isScalarType(named) && ['String', 'ID', 'Int', 'Float', 'Boolean'].includes(named.name));
}

/**
 * The first argument of `field` that the request sends with the wrong JSON type, or null. Sofa reads
 * an argument from the path, else the query string, else the body (in that order); so do these checks.
 */
export function restArgumentProblem(
  field: GraphQLField<unknown, unknown>,
  request: { pathParams: Readonly<Record<string, string>>; query: URLSearchParams; body: unknown },
): ArgumentProblem | null {
  if (request.body !== undefined && !isPlainObject(request.body)) {
    return { field: 'body', reason: 'must be a JSON object, such as {"name": value}' };
  }
  for (const arg of field.args) {
    if (arg.name in request.pathParams) continue;
    const inQuery = request.query.getAll(arg.name).filter((value) => value !== '');
    const bracketed = [...request.query.keys()].some((key) => key.startsWith(`${arg.name}[`));
    if (takesSingleValue(arg.type) && (inQuery.length > 1 || bracketed)) {
      return { field: arg.name, reason: 'must be given once, as a single value' };
    }
    if (inQuery.length > 0 || bracketed) continue;
    const body = request.body as Record<string, unknown> | undefined;
    if (body && Object.hasOwn(body, arg.name)) {
      const problem = jsonTypeProblem(body[arg.name], arg.type, arg.name);
      if (problem) return problem;
    }
  }
  return null;
}
