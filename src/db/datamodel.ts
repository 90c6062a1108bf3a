// The data model's relations, as the scoped client and the bounded relations both read them.
import { getDatamodel } from '../generated/pothos-types.ts';

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
