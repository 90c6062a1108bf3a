// The MCP door (/mcp): the SDK's Web-standard Streamable HTTP transport, stateless (a server per request,
// so any instance answers any request), whose tools are the REST operations of the key's OpenAPI view;
// a tool call is its REST request sent through this same app, so every check of the REST door applies.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { permissionSetName } from '../auth/api-view.ts';
import { accessOfField, type FieldAccess } from '../auth/field-access.ts';
import type { KeyVerifier } from '../auth/key-cache.ts';
import type { Permission } from '../auth/permissions.ts';
import { actorFromRequest } from '../context.ts';
import { isPlainObject, parsedJson } from '../lib/json.ts';
import { logError, unauthenticated } from '../errors.ts';
import { boundedCache, type BoundedCache } from '../lib/bounded-cache.ts';
import type { ArgumentProblem } from '../rest/arguments.ts';
import { invalidInputBody, methodNotAllowed, restErrorResponse, unavailableAnswer } from '../rest/errors.ts';
import { restCallOf, toolsOfDocument, type RestTool } from '../rest/mcp-tools.ts';
import { buildOpenApiDocument, type OpenApiOptions } from '../rest/openapi.ts';
import { permissionRefusal } from '../rest/plugin.ts';
import { restRoutes, rootFieldIn } from '../rest/routes.ts';
import { restSchema } from '../rest/rest-schema.ts';
import { recordOf, requestLogger } from '../telemetry/request-record.ts';
import { requestOver } from '../web/fetch-api.ts';
import { carrySocketAddress } from './client-address.ts';

export const MCP_PATH = '/mcp';

interface McpDeps {
  /** The app this plugin is part of (its handleRequest, as the HTTP server calls it): a tool call is a request to it. */
  sendThrough: (request: Request) => Promise<Response>;
  keys: KeyVerifier;
  logger: Logger;
  documentOptions: OpenApiOptions;
  bodyLimitBytes: number;
}

interface ToolView {
  /** The document's version: the server's. */
  version: string;
  tools: readonly Tool[];
  byName: ReadonlyMap<string, RestTool>;
}

/** The tools of one schema; the access of every operation is read at the first hidden tool's call, as the REST door's schema is costly. */
interface SchemaTools {
  schema: GraphQLSchema;
  accessByTool?: ReadonlyMap<string, FieldAccess>;
  views: BoundedCache<ToolView>;
}

const VIEW_BOUNDS = { maxEntries: 64, maxBytes: 16 * 1024 * 1024 };
const INSTRUCTIONS =
  'Each tool is an operation of the REST API this key may call, named by its OpenAPI operationId. ' +
  'A write takes an idempotency_key argument: the same key and arguments answer the first result again.';

function listed(tool: RestTool): Tool {
  const { name, title, description, inputSchema, annotations } = tool;
  return { name, title, description, inputSchema, annotations };
}

function accessOf(tools: SchemaTools, name: string): FieldAccess | undefined {
  if (!tools.accessByTool) {
    const served = restSchema(tools.schema);
    const accessByTool = new Map<string, FieldAccess>();
    for (const route of restRoutes) {
      const field = rootFieldIn(route, served);
      if (field) accessByTool.set(field.name, accessOfField(field));
    }
    tools.accessByTool = accessByTool;
  }
  return tools.accessByTool.get(name);
}

function viewOf(tools: SchemaTools, options: OpenApiOptions, permissions: ReadonlySet<Permission>): ToolView {
  const name = permissionSetName(permissions);
  let view = tools.views.get(name);
  if (!view) {
    const document = buildOpenApiDocument(tools.schema, { ...options, viewOf: permissions });
    const restTools = toolsOfDocument(document);
    const { version } = document.info as { version: string };
    view = { version, tools: restTools.map(listed), byName: new Map(restTools.map((tool) => [tool.name, tool])) };
    tools.views.set(name, view);
  }
  return view;
}

/** The REST answer as the tool's result: its JSON body as structured content, an error status as isError. */
async function toolResult(response: Response): Promise<CallToolResult> {
  const text = await response.text();
  const body = parsedJson(text);
  const { status } = response;
  const location = response.headers.get('location');
  if (status >= 300 && status < 400 && location) {
    const redirect = { status, location };
    return { content: [{ type: 'text', text: JSON.stringify(redirect) }], structuredContent: redirect };
  }
  if (status < 400) return { content: [{ type: 'text', text }], ...(isPlainObject(body) ? { structuredContent: body } : {}) };
  const problem = isPlainObject(body) ? body : { error: 'error', message: text };
  const retryAfter = response.headers.get('retry-after');
  return {
    isError: true,
    content: [{ type: 'text', text: typeof problem.message === 'string' ? problem.message : text }],
    structuredContent: { status, ...problem, ...(retryAfter ? { retry_after: Number(retryAfter) } : {}) },
  };
}

/** The headers of the REST request a tool call makes: the caller's credential and address, this request's id. */
function callHeaders(request: Request, idempotencyKey: string | undefined, hasBody: boolean): Headers {
  const headers = new Headers({ accept: 'application/json' });
  for (const name of ['authorization', 'x-forwarded-for', 'user-agent']) {
    const value = request.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  const id = recordOf(request)?.id;
  if (id) headers.set('x-request-id', id);
  if (idempotencyKey !== undefined) headers.set('idempotency-key', idempotencyKey);
  if (hasBody) headers.set('content-type', 'application/json');
  return headers;
}

/** The first error as the REST door's 422 words one: the argument's path (`body.lead.email`) and why. */
function argumentProblem(errors: readonly ErrorObject[]): ArgumentProblem {
  const [error] = errors;
  if (!error) return { field: 'arguments', reason: 'are not valid' };
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  if (error.keyword === 'required' && params.missingProperty)
    return { field: [...path, params.missingProperty].join('.'), reason: 'is required' };
  if (error.keyword === 'additionalProperties' && params.additionalProperty) {
    return { field: [...path, params.additionalProperty].join('.'), reason: 'is not an argument this tool takes' };
  }
  return { field: path.length > 0 ? path.join('.') : 'arguments', reason: error.message ?? 'is not valid' };
}

function invalidArguments(problem: ArgumentProblem): CallToolResult {
  const body = invalidInputBody(problem);
  return { isError: true, content: [{ type: 'text', text: body.message }], structuredContent: { status: 422, ...body } };
}

export function useMcp(deps: McpDeps): Plugin {
  let current: SchemaTools | undefined;
  const validators = new WeakMap<RestTool, ValidateFunction>();
  // Not the SDK's AjvJsonSchemaValidator: its message is ajv's errorsText, which names no field for an argument the tool does not take.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (instance: Ajv2020) => void)(ajv);
  const validatorOf = (tool: RestTool): ValidateFunction => {
    let validate = validators.get(tool);
    if (!validate) {
      validate = ajv.compile(tool.inputSchema);
      validators.set(tool, validate);
    }
    return validate;
  };

  const answer = async (request: Request): Promise<Response> => {
    const tools = current;
    if (!tools) throw new Error('the MCP door was used before Yoga initialised it');
    const actor = await actorFromRequest(deps.keys, request);
    if (!actor) return restErrorResponse([unauthenticated()]);
    const view = viewOf(tools, deps.documentOptions, actor.permissions);
    const callTool = async (name: string, args: Record<string, unknown> | undefined): Promise<CallToolResult> => {
      const tool = view.byName.get(name);
      if (!tool) {
        const access = accessOf(tools, name);
        const refusal = access ? permissionRefusal(access, actor.permissions) : null;
        if (refusal) {
          // As a JSON-RPC error: the REST door's status and code in its data.
          const body = (await refusal.json()) as { error: string; message: string };
          throw new McpError(ErrorCode.InvalidParams, body.message, { status: refusal.status, error: body.error });
        }
        throw new McpError(ErrorCode.InvalidParams, `No tool named ${name}.`, { status: 404, error: 'not_found' });
      }
      const input: Record<string, unknown> = args ?? {};
      const validate = validatorOf(tool);
      if (!validate(input)) return invalidArguments(argumentProblem(validate.errors ?? []));
      const call = restCallOf(tool, input, new URL(request.url).origin);
      if ('problem' in call) return invalidArguments(call.problem);
      const inner = requestOver(call.url, tool.method, callHeaders(request, call.idempotencyKey, call.body !== undefined), call.body);
      carrySocketAddress(request, inner);
      return toolResult(await deps.sendThrough(inner));
    };
    // The low-level Server, not McpServer: McpServer's tools take zod schemas, these are the OpenAPI document's JSON Schemas.
    const server = new Server(
      { name: 'dealership-gateway', version: view.version },
      { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...view.tools] }));
    server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
      try {
        return await callTool(params.name, params.arguments);
      } catch (error) {
        if (error instanceof McpError) throw error;
        logError(requestLogger(deps.logger, request), error, 'an MCP tool call failed');
        throw new McpError(ErrorCode.InternalError, 'Unexpected error.');
      }
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: deps.bodyLimitBytes,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request);
    } finally {
      await server.close();
    }
  };

  return {
    onSchemaChange({ schema }) {
      current = { schema, views: boundedCache<ToolView>(VIEW_BOUNDS, (view) => JSON.stringify(view.tools).length) };
    },
    onRequest({ request, url, endResponse }) {
      if (url.pathname !== MCP_PATH) return undefined;
      if (request.method !== 'POST') {
        // Stateless: no stream for the server to send on later (GET) and no session to end (DELETE).
        return endResponse(methodNotAllowed('POST'));
      }
      return answer(request)
        .catch((error: unknown) => unavailableAnswer(error, requestLogger(deps.logger, request)))
        .then(endResponse);
    },
  };
}
