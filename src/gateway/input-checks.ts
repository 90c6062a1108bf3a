// Checks every input of every operation, on both doors, before any resolver runs: text must be
// well-formed Unicode within its length; free-form JSON must nest within its limit, holding no prototype
// key. The first problem answers 422 naming the field by its path (`lead.message`, `car.images[2]`).
// Own code: no GraphQL library checks text per field by name, nor JSON scalars' nesting and keys.
import {
  getArgumentValues,
  getOperationAST,
  getVariableValues,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type FieldNode,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { JSON_TEXT_MAX_LENGTH, MAX_JSON_DEPTH, UNLIMITED_TEXT_FIELDS, textMaxLength, textProblem } from '../domain/input-limits.ts';
import { invalidInput } from '../errors.ts';
import type { ArgumentProblem } from '../rest/arguments.ts';
import { REFUSED_KEY_REASON, isRefusedKey, keyPath, refusedKeyIn } from '../web/refused-keys.ts';

/** Date and DateTime arrive as parsed Dates: only these are text as sent. */
const TEXT_SCALARS = new Set(['String', 'ID']);
const JSON_SCALARS = new Set(['JSON', 'JSONObject']);

/** Depth problems name the JSON field itself (`lead.fields`); text problems name the text's place in it. */
function jsonProblem(value: unknown, root: string, path: string, depth: number): ArgumentProblem | null {
  if (typeof value === 'string') {
    // A whole value as one string is JSON text (?data={…}): the domain checks it, the request size bounds it.
    const reason = textProblem(value, depth === 0 ? Number.POSITIVE_INFINITY : JSON_TEXT_MAX_LENGTH);
    return reason ? { field: path, reason } : null;
  }
  if (value === null || typeof value !== 'object') return null;
  if (depth >= MAX_JSON_DEPTH) return { field: root, reason: `must not nest objects and lists more than ${MAX_JSON_DEPTH} levels deep` };
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const problem = jsonProblem(item, root, `${path}[${index}]`, depth + 1);
      if (problem) return problem;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    if (isRefusedKey(key)) return { field: keyPath(path, key), reason: REFUSED_KEY_REASON };
    const keyReason = textProblem(key, JSON_TEXT_MAX_LENGTH);
    if (keyReason) return { field: path, reason: `has a key that ${keyReason}` };
    const problem = jsonProblem(item, root, keyPath(path, key), depth + 1);
    if (problem) return problem;
  }
  return null;
}

/** `name` picks the length limit (a list's entries share it); `owner` finds the fields left unlimited. */
function valueProblem(value: unknown, type: GraphQLInputType, path: string, name: string, owner: string): ArgumentProblem | null {
  if (value === null || value === undefined) return null;
  if (isNonNullType(type)) return valueProblem(value, type.ofType, path, name, owner);
  if (isListType(type)) {
    if (!Array.isArray(value)) return valueProblem(value, type.ofType, path, name, owner);
    for (const [index, item] of value.entries()) {
      const problem = valueProblem(item, type.ofType, `${path}[${index}]`, name, owner);
      if (problem) return problem;
    }
    return null;
  }
  if (isInputObjectType(type)) {
    if (typeof value !== 'object') return null;
    const fields = type.getFields();
    for (const [fieldName, fieldValue] of Object.entries(value)) {
      const field = fields[fieldName];
      if (!field) continue;
      const problem = valueProblem(fieldValue, field.type, `${path}.${fieldName}`, fieldName, type.name);
      if (problem) return problem;
    }
    return null;
  }
  if (isEnumType(type) || !isScalarType(type)) return null;
  if (TEXT_SCALARS.has(type.name) && typeof value === 'string') {
    const maxLength = UNLIMITED_TEXT_FIELDS.has(`${owner}.${name}`) ? Number.POSITIVE_INFINITY : textMaxLength(name);
    const reason = textProblem(value, maxLength);
    return reason ? { field: path, reason } : null;
  }
  if (JSON_SCALARS.has(type.name)) return jsonProblem(value, path, path, 0);
  return null;
}

interface ArgumentField {
  definition: GraphQLField<unknown, unknown>;
  node: FieldNode;
}

// Found once per document, not per request: Yoga's parse cache hands back the same document object.
const argumentFieldsByOperation = new WeakMap<
  OperationDefinitionNode,
  { schema: GraphQLSchema; document: DocumentNode; fields: ArgumentField[] }
>();

function argumentFieldsOf(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): ArgumentField[] {
  const known = argumentFieldsByOperation.get(operation);
  if (known && known.schema === schema && known.document === document) return known.fields;
  const typeInfo = new TypeInfo(schema);
  const fields: ArgumentField[] = [];
  for (const definition of document.definitions) {
    if (definition !== operation && definition.kind !== Kind.FRAGMENT_DEFINITION) continue;
    visit(
      definition,
      visitWithTypeInfo(typeInfo, {
        Field(node) {
          const field = node.arguments?.length ? typeInfo.getFieldDef() : null;
          if (field) fields.push({ definition: field, node });
        },
      }),
    );
  }
  argumentFieldsByOperation.set(operation, { schema, document, fields });
  return fields;
}

/** Values GraphQL refuses itself (a wrong type, a missing variable) are left to it: its error names them. */
function findInputProblem({ schema, document, variableValues, operationName }: ExecutionArgs): ArgumentProblem | null {
  const operation = getOperationAST(document, operationName);
  if (!operation) return null;
  const fields = argumentFieldsOf(schema, document, operation);
  if (fields.length === 0) return null;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variableValues ?? {}, { maxErrors: 1 });
  if ('errors' in coerced && coerced.errors) return null;
  const variables = coerced.coerced;
  for (const { definition, node } of fields) {
    let args: Record<string, unknown>;
    try {
      args = getArgumentValues(definition, node, variables);
    } catch {
      continue; // GraphQL refuses it itself, naming the argument.
    }
    for (const arg of definition.args) {
      const problem = valueProblem(args[arg.name], arg.type, arg.name, arg.name, '');
      if (problem) return problem;
    }
  }
  return null;
}

type OperationStart = { args: ExecutionArgs; setResultAndStopExecution(result: ExecutionResult): void };

/** Refuses an operation whose inputs break src/domain/input-limits.ts, or a request holding a refused key. */
export function useInputChecks(): Plugin {
  const check = ({ args, setResultAndStopExecution }: OperationStart): void => {
    const problem = findInputProblem(args);
    if (problem) setResultAndStopExecution({ errors: [invalidInput(problem.field, problem.reason)] });
  };
  return {
    // Checked as soon as the parameters are read, however they came, before anything else reads them.
    onParams({ params, setResult }) {
      const field = refusedKeyIn(params.variables, 'variables') ?? refusedKeyIn(params.extensions, 'extensions');
      if (field === null) return;
      const extensions = { http: { status: 422 }, code: 'BAD_USER_INPUT', error: 'invalid_input', field };
      setResult({ errors: [createGraphQLError(`${field}: ${REFUSED_KEY_REASON}`, { extensions })] });
    },
    onExecute: check,
    // A subscription's arguments are checked when it opens.
    onSubscribe: check,
  };
}
