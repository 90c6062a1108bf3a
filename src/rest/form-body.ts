// Sofa reads JSON bodies only: Rails-style multipart parts (`lead[files][0][file]`) become the JSON body, a file its base64 text.
import { BOOLEAN_SPELLINGS, INTEGER_TEXT, NUMBER_TEXT, type ArgumentProblem } from './arguments.ts';
import { FREE_FORM_JSON, escapeRegex, withoutNull, type JsonSchema } from './input-schemas.ts';
import { isPlainObject } from '../lib/json.ts';
import { REFUSED_KEY_REASON, refusedName } from '../web/refused-keys.ts';

/** More parts than any form of the API has fields. */
const MAX_FORM_PARTS = 500;
/** `lead[lead_files_attributes][0][file]` is four names deep; JSON free-form fields nest deeper only in JSON. */
const MAX_KEY_DEPTH = 6;
const MAX_KEY_LENGTH = 1_000;
/** Index in a `[n]` list: at most this many digits (Rails reads them as keys; we keep their order). */
const MAX_INDEX_DIGITS = 4;

// The keys railsFormBody reads, as a JSON Schema pattern for the OpenAPI document: written without a
// lookahead, which Go's and Rust's regular expressions do not have.
const keyName = (least: 0 | 1): string => `(?:[0-9]{${least},${MAX_INDEX_DIGITS}}|[0-9]*[^\\[\\]0-9][^\\[\\]]*)`;
export const RAILS_KEY_PATTERN = `^${keyName(1)}(?:\\[${keyName(1)}\\]){0,${MAX_KEY_DEPTH - 2}}(?:\\[${keyName(0)}\\])?$`;

/** A key's names: `lead[files][0][file]` → lead, files, 0, file; `tags[]` → tags, "" (append). */
function keyNames(key: string): string[] | null {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match?.[1]) return null;
  const names = [match[1], ...[...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((found) => found[1] ?? '')];
  // An append (`[]`) may only end a key: `a[][b]` has no meaning a lead field could have.
  return names.slice(0, -1).includes('') ? null : names;
}

type Node = Map<string, Node | unknown>;

/** Object keys that are all list indexes become a list, in index order (`[0]`, `[1]` … as Rails' nested attributes). */
function toJson(node: Node): unknown {
  const entries = [...node.entries()].map(([key, value]) => [key, value instanceof Map ? toJson(value as Node) : value] as const);
  // `name[]` appends were gathered under a marker key: the node is that list.
  if (entries.length === 1 && entries[0]?.[0] === '\u0000list') return entries[0][1];
  if (entries.length > 0 && entries.every(([key]) => /^\d+$/.test(key))) {
    return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, value]) => value);
  }
  return Object.fromEntries(entries);
}

export async function railsFormBody(form: FormData): Promise<{ body: Record<string, unknown> } | { problem: ArgumentProblem }> {
  const root: Node = new Map();
  let parts = 0;
  for (const [key, value] of form.entries()) {
    parts += 1;
    if (parts > MAX_FORM_PARTS) return { problem: { field: 'body', reason: `must have at most ${MAX_FORM_PARTS} form fields` } };
    const names = key.length <= MAX_KEY_LENGTH ? keyNames(key) : null;
    const field = key.slice(0, 200);
    if (!names)
      return { problem: { field, reason: 'is not a form field name such as lead[name] or lead[lead_files_attributes][0][file]' } };
    if (names.length > MAX_KEY_DEPTH) return { problem: { field, reason: `must not nest more than ${MAX_KEY_DEPTH} names deep` } };
    const refused = refusedName(key);
    if (refused) return { problem: { field: refused, reason: REFUSED_KEY_REASON } };
    if (names.some((name) => /^\d+$/.test(name) && name.length > MAX_INDEX_DIGITS)) {
      return { problem: { field, reason: `has a list index over ${MAX_INDEX_DIGITS} digits` } };
    }
    const leaf = typeof value === 'string' ? value : Buffer.from(await value.arrayBuffer()).toString('base64');
    let node = root;
    for (const name of names.slice(0, -1)) {
      const next = node.get(name);
      if (next !== undefined && !(next instanceof Map)) return { problem: { field, reason: 'is both a value and a group of fields' } };
      if (next === undefined) node.set(name, new Map());
      node = node.get(name) as Node;
    }
    const name = names.at(-1) ?? '';
    if (name === '') {
      const list = node.get('\u0000list');
      if (Array.isArray(list)) list.push(leaf);
      else if (node.size === 0) node.set('\u0000list', [leaf]);
      else return { problem: { field, reason: 'mixes a list (name[]) with named fields' } };
    } else if (node.has(name)) {
      return { problem: { field, reason: 'is sent twice' } };
    } else {
      node.set(name, leaf);
    }
  }
  return { body: toJson(root) as Record<string, unknown> };
}

/** `true` as `[Tt][Rr][Uu][Ee]`: JSON Schema patterns have no case-insensitive flag. */
const anyCase = (text: string): string =>
  [...text].map((char) => (/[a-z]/i.test(char) ? `[${char.toUpperCase()}${char.toLowerCase()}]` : escapeRegex(char))).join('');

/** What a form field's text must be to stand for a JSON value of this schema (src/rest/arguments.ts reads it so). */
function formLeaf(schema: JsonSchema): JsonSchema {
  const description = typeof schema.description === 'string' ? { description: schema.description } : {};
  if (schema.contentEncoding === 'base64') {
    return { type: 'string', contentMediaType: 'application/octet-stream', description: 'A file part (or its content as base64 text).' };
  }
  switch (schema.type) {
    case 'integer':
      return { type: 'string', pattern: INTEGER_TEXT.source, ...description };
    case 'number':
      return { type: 'string', pattern: NUMBER_TEXT.source, ...description };
    case 'boolean':
      return { type: 'string', pattern: `^\\s*(?:${Object.keys(BOOLEAN_SPELLINGS).map(anyCase).join('|')})\\s*$`, ...description };
    default: {
      const { type: _type, ...text } = schema;
      return { type: 'string', ...text };
    }
  }
}

/** A JSON body's multipart/form-data form: Rails-style keys, each value as the text that stands for it. */
export function railsFormSchema(body: JsonSchema, components: Readonly<Record<string, JsonSchema>>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const patternProperties: Record<string, JsonSchema | false> = {};
  const resolve = (schema: JsonSchema): JsonSchema => {
    const described = schema.description ? { description: schema.description } : {};
    const ref = typeof schema.$ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1] : undefined;
    if (ref) return resolve({ ...(components[ref] ?? {}), ...described });
    const branches = Array.isArray(schema.anyOf) ? (schema.anyOf as JsonSchema[]).filter((branch) => branch.type !== 'null') : [];
    if (branches.length === 1 && branches[0]) return resolve({ ...branches[0], ...described });
    return Array.isArray(schema.type) ? withoutNull(schema) : schema;
  };
  const omitted: string[] = [];
  // The form requires what the JSON body does: a required key, or a part under a required record's key.
  const required: string[] = [];
  const partsUnder: string[] = [];
  // `pattern` is `key` as a regex once a list index is in it; `mustBeSent`: the JSON body requires it and its record.
  const visit = (raw: JsonSchema, key: string, pattern: string | null, mustBeSent: boolean): void => {
    const schema = resolve(raw);
    const keyPattern = pattern ?? escapeRegex(key);
    const requiredBefore = required.length;
    const needsSomePart = (): void => {
      if (mustBeSent && required.length === requiredBefore) partsUnder.push(`^${keyPattern}\\[`);
    };
    // Parts the server refuses although no field has their name: a record or a list sent as one value,
    // a value sent as a group of fields, an empty key in free-form JSON (a form's `[]` appends).
    const refuse = (namePattern: string): void => {
      patternProperties[namePattern] = false;
    };
    const freeForm = (...alsoRefused: string[]): void => {
      patternProperties[`^${keyPattern}(?:\\[[^\\[\\]]+\\])+$`] = {
        type: 'string',
        description: 'A value of the free-form object, by its keys.',
      };
      for (const namePattern of alsoRefused) refuse(namePattern);
      refuse(`^${keyPattern}(?:\\[[^\\[\\]]+\\])*\\[\\]`);
    };
    if (schema[FREE_FORM_JSON] === true) {
      // Stored as sent: a form's text stays text there, so only a field that takes text at every key can be a form's.
      if (JSON.stringify(schema).match(/"type":"(?:number|integer|boolean)"/)) {
        omitted.push(key);
        return;
      }
      freeForm(`^${keyPattern}$`);
      needsSomePart();
      return;
    }
    if (schema.type === 'object') {
      const fields = isPlainObject(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
      const requiredFields = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      for (const [name, field] of Object.entries(fields)) {
        const fieldPattern = pattern === null ? null : `${pattern}\\[${escapeRegex(name)}\\]`;
        visit(field, `${key}[${name}]`, fieldPattern, mustBeSent && requiredFields.includes(name));
      }
      if (Object.keys(fields).length === 0 || isPlainObject(schema.additionalProperties)) freeForm();
      refuse(`^${keyPattern}$`);
      needsSomePart();
      return;
    }
    if (schema.type === 'array' && isPlainObject(schema.items)) {
      const items = resolve(schema.items);
      if (items.type === 'object') {
        // A record in a list is spelled by a pattern: none of its keys can be named as required.
        visit(items, `${key}[0]`, `${keyPattern}\\[[0-9]{1,4}\\]`, false);
        refuse(`^${keyPattern}$`);
        needsSomePart();
      } else if (pattern === null) {
        properties[`${key}[]`] = {
          type: 'array',
          items: formLeaf(items),
          ...(schema.description ? { description: schema.description } : {}),
        };
        if (mustBeSent) required.push(`${key}[]`);
      } else {
        patternProperties[`^${pattern}\\[\\]$`] = { type: 'array', items: formLeaf(items) };
      }
      return;
    }
    const leaf = formLeaf(schema);
    if (pattern !== null) patternProperties[`^${pattern}$`] = leaf;
    else {
      properties[key] = leaf;
      if (mustBeSent) required.push(key);
    }
    refuse(`^${keyPattern}\\[`);
  };
  const bodyRequired = Array.isArray(body.required) ? (body.required as string[]) : [];
  for (const [name, field] of Object.entries((body.properties ?? {}) as Record<string, JsonSchema>))
    visit(field, name, null, bodyRequired.includes(name));
  return {
    type: 'object',
    description:
      "The JSON body's fields as Rails-style keys: `name[field]`, `name[list][]` for each value of a list, `name[list][0][field]` " +
      'for a list of records; a number or a boolean as its text; a file as a file part (or its content as base64 text).' +
      (omitted.length > 0
        ? ` Not in a form: ${omitted.map((key) => `\`${key}\``).join(', ')} (free-form JSON with numbers, which a form's text cannot be).`
        : ''),
    properties,
    ...(Object.keys(patternProperties).length > 0 ? { patternProperties } : {}),
    ...(required.length > 0 ? { required } : {}),
    // "At least one part named `lead[…]`": not every part's name is outside it.
    ...(partsUnder.length > 0 ? { allOf: partsUnder.map((prefix) => ({ not: { propertyNames: { not: { pattern: prefix } } } })) } : {}),
    // A part the operation does not read is ignored, as an unknown JSON field is (X-Ignored-Parameters names it).
    additionalProperties: true,
    propertyNames: { pattern: RAILS_KEY_PATTERN, maxLength: MAX_KEY_LENGTH },
    maxProperties: MAX_FORM_PARTS,
  };
}

/** A JSON body as the form fields that stand for it (for the document's example). */
export function railsFormFields(body: unknown, key = ''): Record<string, string | string[]> {
  if (Array.isArray(body)) {
    if (body.every((item) => !isPlainObject(item) && !Array.isArray(item))) return { [`${key}[]`]: body.map((item) => String(item)) };
    return Object.assign({}, ...body.map((item, index) => railsFormFields(item, `${key}[${index}]`)));
  }
  if (isPlainObject(body))
    return Object.assign({}, ...Object.entries(body).map(([name, value]) => railsFormFields(value, key === '' ? name : `${key}[${name}]`)));
  return body === null || body === undefined ? {} : { [key]: String(body) };
}
