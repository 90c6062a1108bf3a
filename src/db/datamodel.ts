// The data model's relations, as the scoped client and the bounded relations both read them.
import { getDatamodel } from '../generated/pothos-types.ts';
import { isPlainObject } from '../lib/json.ts';

interface Field {
  name: string;
  kind: string;
  type: string;
  isList: boolean;
  isId?: boolean;
  relationName?: string;
  relationFromFields?: readonly string[];
  relationToFields?: readonly string[];
}

export const datamodel = getDatamodel().datamodel.models as unknown as Record<
  string,
  { primaryKey: { fields: readonly string[] } | null; fields: readonly Field[] }
>;

interface Relation {
  target: string;
  isList: boolean;
  /** The target's field of the same relation. */
  back: Field | undefined;
}

const relationsByModel = new Map(
  Object.entries(datamodel).map(([model, { fields }]) => [
    model,
    new Map<string, Relation>(
      fields
        .filter((field) => field.kind === 'object')
        .map((field) => [
          field.name,
          {
            target: field.type,
            isList: field.isList,
            back: datamodel[field.type]?.fields.find((other) => other.relationName === field.relationName && other !== field),
          },
        ]),
    ),
  ]),
);

export function relationsOf(model: string): ReadonlyMap<string, Relation> {
  return relationsByModel.get(model) ?? new Map();
}

/** Query arguments, and any nested part of them. */
export type Args = Record<string, unknown>;

/** The relations a `_count` selection counts, with what each was given: `true` is every list relation; null for no selection. */
export function countSelection(model: string, value: unknown): Args | null {
  if (value !== true) return isPlainObject(value) && isPlainObject(value.select) ? value.select : null;
  const lists = [...relationsOf(model)].filter(([, relation]) => relation.isList);
  return Object.fromEntries(lists.map(([field]) => [field, true]));
}
