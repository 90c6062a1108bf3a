// multipart/form-data bodies with Rails-style keys, as the Rails-era integrations send a lead with
// attachments: `lead[name]=Jordan`, `lead[tags][]=vip`, `lead[lead_files_attributes][0][file_type]=resume`
// and `lead[lead_files_attributes][0][file]=<the file>`. The parts become the JSON body the route
// takes anyway ({"lead": {...}}), a file becoming its base64 text, so every rule and limit that
// applies to a JSON body applies here too (the attachment count and size are the lead's own rules;
// the whole body is within BODY_LIMIT_BYTES before it is read). Text values stay text: the REST
// layer's reading of arguments (src/rest/arguments.ts) turns "1" into 1 where a number is expected.
import type { ArgumentProblem } from './arguments.ts';

/** More parts than any form of the API has fields (a lead with five attachments has about 60). */
export const MAX_FORM_PARTS = 500;
/** `lead[lead_files_attributes][0][file]` is four names deep; JSON free-form fields nest deeper only in JSON. */
const MAX_KEY_DEPTH = 6;
const MAX_KEY_LENGTH = 1_000;
/** Index in a `[n]` list: at most this many digits (Rails reads them as keys; we keep their order). */
const MAX_INDEX_DIGITS = 4;

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
  if (entries.length > 0 && entries.every(([key]) => /^\d+$/.test(key))) {
    return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, value]) => value);
  }
  return Object.fromEntries(entries);
}

/** The form's parts as the JSON body they stand for, or the first problem with a key. */
export async function railsFormBody(form: FormData): Promise<{ body: Record<string, unknown> } | { problem: ArgumentProblem }> {
  const root: Node = new Map();
  let parts = 0;
  for (const [key, value] of form.entries()) {
    parts += 1;
    if (parts > MAX_FORM_PARTS) return { problem: { field: 'body', reason: `must have at most ${MAX_FORM_PARTS} form fields` } };
    const names = key.length <= MAX_KEY_LENGTH ? keyNames(key) : null;
    const field = key.slice(0, 200);
    if (!names) return { problem: { field, reason: 'is not a form field name such as lead[name] or lead[lead_files_attributes][0][file]' } };
    if (names.length > MAX_KEY_DEPTH) return { problem: { field, reason: `must not nest more than ${MAX_KEY_DEPTH} names deep` } };
    if (names.some((name) => /^\d+$/.test(name) && name.length > MAX_INDEX_DIGITS)) {
      return { problem: { field, reason: `has a list index over ${MAX_INDEX_DIGITS} digits` } };
    }
    const leaf = typeof value === 'string' ? value : Buffer.from(await value.arrayBuffer()).toString('base64');
    let node = root;
    for (const [index, name] of names.entries()) {
      const last = index === names.length - 1;
      if (last) {
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
        break;
      }
      const next = node.get(name);
      if (next instanceof Map) {
        node = next as Node;
      } else if (next === undefined) {
        const created: Node = new Map();
        node.set(name, created);
        node = created;
      } else {
        return { problem: { field, reason: 'is both a value and a group of fields' } };
      }
    }
  }
  return { body: unwrapLists(toJson(root)) as Record<string, unknown> };
}

/** `name[]` appends were gathered under a marker key; the node is that list. */
function unwrapLists(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unwrapLists);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && entries[0]?.[0] === '\u0000list') return entries[0][1];
  return Object.fromEntries(entries.map(([key, item]) => [key, unwrapLists(item)]));
}
