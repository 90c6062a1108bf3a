// Every REST response the suite receives is checked against the OpenAPI document the service
// serves: a status the document does not list for that operation, or a body its schema does not
// describe, fails the test that made the call. Validation is by Ajv (JSON Schema 2020-12, the
// dialect of OpenAPI 3.1), not by hand.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/rest/openapi.ts';
import { matchPath } from '../../src/rest/routes.ts';
import { getSchema } from '../../src/schema/index.ts';

const DOCUMENT_ID = 'https://gateway.test/openapi.json';
let document: Record<string, unknown> | undefined;
let ajv: Ajv2020 | undefined;
const validators = new Map<string, ValidateFunction>();

export function openApiDocument(): Record<string, unknown> {
  // The test apps' settings (test/support/app.ts): the served document names their PUBLIC_URL.
  document ??= buildOpenApiDocument(getSchema(), { publicUrl: 'http://localhost:4000' });
  return document;
}

function validatorFor(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    if (!ajv) {
      ajv = new Ajv2020({ strict: false, allErrors: true });
      (addFormats as unknown as (instance: Ajv2020) => void)(ajv);
      ajv.addSchema({ ...openApiDocument(), $id: DOCUMENT_ID });
    }
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

type Responses = Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;

/** Whether `value` matches the schema at `pointer` in the document, with what Ajv found if not. */
export function validationErrors(pointer: string, value: unknown): string | null {
  const validate = validatorFor(pointer);
  return validate(value) ? null : JSON.stringify(validate.errors?.slice(0, 5));
}

/** Throws when `value` does not match the schema at `pointer` in the document (e.g. an example). */
export function assertValidAgainst(pointer: string, value: unknown, label: string): void {
  const validate = validatorFor(pointer);
  if (!validate(value)) throw new Error(`${label}: does not match ${pointer}: ${JSON.stringify(validate.errors?.slice(0, 5))}`);
}

/** Throws when a REST response differs from what the document promises; ignores non-REST paths. */
export async function assertMatchesContract(method: string, url: string, response: Response): Promise<void> {
  const pathname = new URL(url, 'http://gateway.test').pathname;
  const match = matchPath(pathname).find((candidate) => candidate.route.method === method.toUpperCase());
  if (!match) return;
  const path = match.template;
  const paths = openApiDocument().paths as Record<string, Record<string, { responses: Responses }>>;
  const operation = paths[path]?.[method.toLowerCase()];
  if (!operation) return; // a documented path whose operation is not built in this schema answers 404
  const status = String(response.status);
  const documented = operation.responses[status];
  if (!documented) {
    const body = await response.clone().text();
    throw new Error(
      `${method} ${pathname} answered ${status}, which the OpenAPI document does not list (${Object.keys(operation.responses).join(', ')}): ${body.slice(0, 300)}`,
    );
  }
  if (!documented.content) {
    if (status === '302' && !response.headers.get('location')) throw new Error(`${method} ${pathname}: 302 without Location`);
    return;
  }
  const text = await response.clone().text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${method} ${pathname} answered ${status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  const pointer = `/paths/${escapePointer(path)}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`;
  const validate = validatorFor(pointer);
  if (!validate(body)) {
    throw new Error(
      `${method} ${pathname} ${status}: the body does not match the OpenAPI document: ${JSON.stringify(validate.errors?.slice(0, 5))}\nbody: ${text.slice(0, 500)}`,
    );
  }
}
