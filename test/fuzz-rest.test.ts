// Fuzzing the REST door (with test/fuzz-graphql.test.ts, over 5,000 requests): every operation of the
// served OpenAPI document (/openapi.json), its path parameters (bad percent-escapes, encoded
// surrogates, huge ids, unicode, huge text), its query parameters (repeated, bracketed, badly
// escaped, wrong types) and its body (generated from the operation's schema, then spoiled: wrong JSON
// types, nulls, extra keys, lone surrogates, huge strings, deep nesting; or not JSON, or not an
// object), sent with a key holding every permission, with none, and with a broken one. No answer
// may be a 5xx, no body may carry internal detail, and no error body GraphQL's words. The seed is fixed, so a failure repeats.
import { beforeAll, describe, expect, it } from 'vitest';
import { createDemoApp } from './support/demo.ts';
import {
  FUZZ_SEED,
  createFuzzHarness,
  deeplyNestedJson,
  hostilePathSegment,
  hostileQuery,
  hostileString,
  seededRandom,
  valueForSchema,
  wrongValue,
  type FuzzHarness,
  FUZZ_SCALE,
} from './support/fuzz.ts';

const REQUESTS_PER_OPERATION = 125 * FUZZ_SCALE;

type JsonSchema = Parameters<typeof valueForSchema>[0];
interface OpenApi {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; in: 'path' | 'query'; schema: JsonSchema }[];
        requestBody?: { content: Record<string, { schema: JsonSchema }> };
      }
    >
  >;
  components: { schemas: Record<string, JsonSchema> };
}

const DOOR = 'REST';
let harness: FuzzHarness;
let openApi: OpenApi;

beforeAll(async () => {
  const { app, key } = await createDemoApp();
  harness = createFuzzHarness(app, key, { restDoor: true });
  openApi = (await (await app.yoga.fetch('http://gateway.test/openapi.json')).json()) as OpenApi;
}, 120_000);

/** Text without lone surrogates, which encodeURIComponent cannot encode (they are sent in bodies). */
const encodable = (text: string): string => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ''));

describe('the REST door under fuzzing', () => {
  it(
    'answers every generated request below 500, with nothing internal in the body',
    async () => {
      const random = seededRandom(FUZZ_SEED);
      const { schemas } = openApi.components;
      const operations = Object.entries(openApi.paths).flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
      );
      expect(operations.length).toBeGreaterThanOrEqual(21);
      for (const { path, method, operation } of operations) {
        const parameters = operation.parameters ?? [];
        const jsonBody = operation.requestBody?.content['application/json']?.schema;
        const acceptsForm = operation.requestBody?.content['application/x-www-form-urlencoded'] !== undefined;
        for (let round = 0; round < REQUESTS_PER_OPERATION; round += 1) {
          const url = path.replace(/\{[^}]+\}/g, () =>
            random.chance(0.5) ? random.pick(['1', '2', 'richmond-toyota']) : hostilePathSegment(random),
          );
          const query = parameters
            .filter((parameter) => parameter.in === 'query' && random.chance(0.7))
            .map((parameter) =>
              random.chance(0.5)
                ? hostileQuery(parameter.name, random)
                : `${parameter.name}=${encodable(String(valueForSchema(parameter.schema, schemas, random)))}`,
            );
          if (random.chance(0.1)) query.push(hostileQuery(`extra${random.int(0, 3)}`, random));
          const headers: Record<string, string> = harness.authorization(random);
          let body: string | undefined;
          if (method !== 'GET') {
            const shape = random.next();
            if (jsonBody && shape < 0.75) {
              body = JSON.stringify(valueForSchema(jsonBody, schemas, random));
              headers['content-type'] = 'application/json';
            } else if (acceptsForm && shape < 0.85) {
              body = `called_number=${encodable(hostileString(random))}&caller_number=%E0%A4%A&call_id[x]=1`;
              headers['content-type'] = 'application/x-www-form-urlencoded';
            } else {
              body = random.pick(['{', '[]', 'null', '"text"', '12', '{"a":', JSON.stringify(wrongValue(random)), deeplyNestedJson(5_000)]);
              headers['content-type'] = random.pick(['application/json', 'text/plain', 'application/json; charset=latin1']);
            }
          }
          await harness.send(method, `${url}${query.length ? `?${query.join('&')}` : ''}`, { method, headers, body });
        }
      }
      console.info(harness.tally(`${DOOR} fuzz, seed ${FUZZ_SEED}`));
      expect(harness.summary()).toEqual([]);
      expect(harness.sent).toBe(operations.length * REQUESTS_PER_OPERATION);
      expect(harness.sent).toBeGreaterThanOrEqual(2_500);
    },
    300_000 * FUZZ_SCALE,
  );
});
