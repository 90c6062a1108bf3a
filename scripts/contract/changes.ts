// One change between the released contract (contract/) and today's, on either door, as the check
// prints it and the release's changelog lists it.

/**
 * What a change means for clients and so for the version: `breaking` needs a major release,
 * `minor` (an addition, a deprecation, a compatible change) a minor one, `patch` (descriptions,
 * examples) a patch.
 */
export type ChangeLevel = 'breaking' | 'minor' | 'patch';

/** Keep a Changelog's section the change is listed under. */
export type ChangelogSection = 'Added' | 'Changed' | 'Deprecated' | 'Removed';

export interface ContractChange {
  door: 'graph' | 'rest';
  level: ChangeLevel;
  section: ChangelogSection;
  /** Where: a schema coordinate (`Query.cars.first`), or an operation and the part of it (`GET /api/v1/cars/{id} query parameter id`). */
  where: string;
  /** What changed, in words. */
  what: string;
  /** The rule that classed it: graphql-inspector's change type for the graph, this checker's rule name for REST. */
  rule: string;
}

const DOOR_NAMES = { graph: 'GraphQL', rest: 'REST' } as const;

/** One line: door, where, what and the rule. */
export function describeChange(change: ContractChange): string {
  return `${DOOR_NAMES[change.door]} ${change.where}: ${change.what} [${change.rule}]`;
}

/** The version part a set of changes needs raised, or null when nothing changed. */
export function requiredBump(changes: readonly ContractChange[]): ChangeLevel | null {
  for (const level of ['breaking', 'minor', 'patch'] as const) if (changes.some((change) => change.level === level)) return level;
  return null;
}
