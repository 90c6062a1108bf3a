// The graph's side of the contract check: graphql-inspector's diff between the released schema and
// today's, classed for this API's clients, and the rule that every @deprecated says when the thing
// goes.
//
// graphql-inspector classes each change BREAKING, DANGEROUS or NON_BREAKING. BREAKING fails the
// check. Of the DANGEROUS ones, those that change what a client that did not change receives or
// does fail it too (docs/contract.md, "Contract and releases"):
// - a value added to an enum that fields return: generated clients (TypeScript unions, Swift and
//   Kotlin enums) hold the closed set of values they were built with;
// - a member added to a union: the same, for `__typename`;
// - a changed default of an argument or input field: the same query does something else.
// The other DANGEROUS ones are additions: an optional argument or input field, an interface on an
// object, a value of an enum only inputs take. Anything else graphql-inspector calls DANGEROUS fails
// until someone decides otherwise here.
import { CriticalityLevel, diff, type Change } from '@graphql-inspector/core';
import { getNamedType, isEnumType, isInputObjectType, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { isoCalendarDay } from '../../src/domain/dates.ts';
import type { ChangelogSection, ContractChange } from './changes.ts';

/** How every @deprecated reason ends: the first day the thing may be removed (in a major release). */
const REMOVAL_NOTE = 'Removal after YYYY-MM-DD.';
const REMOVAL_NOTE_PATTERN = /Removal after (\d{4}-\d{2}-\d{2})\.$/;

/** The removal day a deprecation reason names, or null when it names none (or no real day). */
function removalDateOf(reason: string): string | null {
  const day = REMOVAL_NOTE_PATTERN.exec(reason.trim())?.[1];
  return day !== undefined && isoCalendarDay(day) ? day : null;
}

interface Deprecation {
  coordinate: string;
  reason: string;
}

/** Every deprecated field, argument, input field and enum value of the schema, by schema coordinate. */
function deprecationsOf(schema: GraphQLSchema): Deprecation[] {
  const found: Deprecation[] = [];
  const note = (coordinate: string, reason: string | null | undefined): void => {
    if (reason !== null && reason !== undefined) found.push({ coordinate, reason });
  };
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        note(`${type.name}.${field.name}`, field.deprecationReason);
        for (const arg of field.args) note(`${type.name}.${field.name}.${arg.name}`, arg.deprecationReason);
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) note(`${type.name}.${field.name}`, field.deprecationReason);
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) note(`${type.name}.${value.name}`, value.deprecationReason);
    }
  }
  return found;
}

/** One line per @deprecated whose reason does not end with its removal date: the check fails on each. */
export function graphDeprecationProblems(schema: GraphQLSchema): string[] {
  return deprecationsOf(schema)
    .filter((deprecation) => removalDateOf(deprecation.reason) === null)
    .map(
      (deprecation) =>
        `GraphQL ${deprecation.coordinate}: its @deprecated reason "${deprecation.reason}" does not end with its removal date, ` +
        `"${REMOVAL_NOTE}" [deprecation-without-date]`,
    );
}

/** The deprecated things whose removal day has come (`today` is YYYY-MM-DD): the next major release may remove them. */
export function graphRemovalsDue(schema: GraphQLSchema, today: string): string[] {
  return deprecationsOf(schema).flatMap((deprecation) => {
    const day = removalDateOf(deprecation.reason);
    return day !== null && day <= today ? [`GraphQL ${deprecation.coordinate} (removal after ${day})`] : [];
  });
}

/** The deprecation reason at a schema coordinate: undefined when nothing is there, null when it is not deprecated. */
function deprecationAt(schema: GraphQLSchema, coordinate: string): string | null | undefined {
  const [typeName = '', member = '', argName] = coordinate.split('.');
  const type = schema.getType(typeName);
  if (isObjectType(type) || isInterfaceType(type)) {
    const field = type.getFields()[member];
    if (!field) return undefined;
    if (argName === undefined) return field.deprecationReason ?? null;
    const arg = field.args.find((candidate) => candidate.name === argName);
    return arg ? (arg.deprecationReason ?? null) : undefined;
  }
  if (isInputObjectType(type)) {
    const field = type.getFields()[member];
    return field ? (field.deprecationReason ?? null) : undefined;
  }
  if (isEnumType(type)) {
    const value = type.getValue(member);
    return value ? (value.deprecationReason ?? null) : undefined;
  }
  return undefined;
}

/** The enums some field returns (as opposed to enums only arguments and input fields take). */
function returnedEnums(schema: GraphQLSchema): Set<string> {
  const names = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || !(isObjectType(type) || isInterfaceType(type))) continue;
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      if (isEnumType(named)) names.add(named.name);
    }
  }
  return names;
}

/** DANGEROUS changes that only add something a client may start to use. */
const ADDITIVE_DANGEROUS = new Set(['FIELD_ARGUMENT_ADDED', 'INPUT_FIELD_ADDED', 'OBJECT_TYPE_INTERFACE_ADDED']);

/** Why a DANGEROUS change fails the check, where graphql-inspector's own reason is not this API's. */
const CLIENT_BREAKING_DANGEROUS: Record<string, string> = {
  ENUM_VALUE_ADDED: 'fields return this enum, and generated clients hold the closed set of values they were built with',
  UNION_MEMBER_ADDED: 'fields return this union, and generated clients hold the closed set of `__typename`s they were built with',
  FIELD_ARGUMENT_DEFAULT_CHANGED: 'a query that leaves the argument out now does something else',
  INPUT_FIELD_DEFAULT_VALUE_CHANGED: 'an input that leaves the field out now means something else',
};

function sectionOf(type: string): ChangelogSection {
  if (type.endsWith('_REMOVED')) return 'Removed';
  if (type.endsWith('_ADDED')) return 'Added';
  return 'Changed';
}

/** What a removal says about the deprecation of what it removed: removing is breaking even when it was due. */
function removalNote(released: GraphQLSchema, coordinate: string, today: string): string {
  const reason = deprecationAt(released, coordinate);
  if (typeof reason !== 'string') return '';
  const day = removalDateOf(reason);
  if (day === null) return ' (it was deprecated; removing it is still a breaking change: a major release)';
  return day <= today
    ? ` (it was deprecated with removal after ${day}: the removal is due, and it is still a breaking change: a major release)`
    : ` (it is deprecated with removal after ${day}, a day that has not come)`;
}

function isDeprecationChange(change: Change): boolean {
  return change.type.includes('DEPRECATION') || (change.path ?? '').includes('.@deprecated');
}

/** The changes between the released schema and today's, classed; `today` (YYYY-MM-DD) dates the removal notes. */
export async function graphChanges(released: GraphQLSchema, current: GraphQLSchema, today: string): Promise<ContractChange[]> {
  const changes = await diff(released, current);
  const returned = returnedEnums(current);
  const classed: ContractChange[] = [];
  const deprecationSubjects = new Map<string, string>();
  for (const change of changes) {
    const path = change.path ?? '(schema)';
    // The value of a directive's argument (a reason, a URL): its usage's own change says it.
    if (change.type === 'DIRECTIVE_USAGE_ARGUMENT_ADDED' || change.type === 'DIRECTIVE_USAGE_ARGUMENT_REMOVED') continue;
    if (isDeprecationChange(change)) {
      // graphql-inspector reports one deprecation as a field change and a directive change: one line per subject.
      const subject = path.split('.@deprecated')[0] ?? path;
      if (!deprecationSubjects.has(subject)) deprecationSubjects.set(subject, change.type);
      continue;
    }
    const base = { door: 'graph' as const, where: path, rule: change.type, section: sectionOf(change.type) };
    if (change.type.startsWith('DIRECTIVE_USAGE_') && path.includes('.@specifiedBy')) {
      classed.push({ ...base, level: 'patch', section: 'Changed', what: change.message });
    } else if (change.criticality.level === CriticalityLevel.Breaking) {
      classed.push({ ...base, level: 'breaking', what: `${change.message}${removalNote(released, path, today)}` });
    } else if (change.criticality.level === CriticalityLevel.Dangerous) {
      const enumOnlyTaken = change.type === 'ENUM_VALUE_ADDED' && !returned.has(path.split('.')[0] ?? '');
      const why = CLIENT_BREAKING_DANGEROUS[change.type];
      if (ADDITIVE_DANGEROUS.has(change.type) || enumOnlyTaken) classed.push({ ...base, level: 'minor', what: change.message });
      else
        classed.push({
          ...base,
          level: 'breaking',
          what: `${change.message}: ${why ?? change.criticality.reason ?? 'graphql-inspector calls it dangerous'}`,
        });
    } else {
      classed.push({ ...base, level: change.type.includes('DESCRIPTION') ? 'patch' : 'minor', what: change.message });
    }
  }
  for (const [subject, rule] of deprecationSubjects) {
    const before = deprecationAt(released, subject);
    const after = deprecationAt(current, subject);
    // A subject added or removed with its deprecation: the addition or removal says it.
    if (before === undefined || after === undefined || before === after) continue;
    const base = { door: 'graph' as const, where: subject, rule };
    if (before === null) classed.push({ ...base, level: 'minor', section: 'Deprecated', what: `deprecated: ${after}` });
    else if (after === null) classed.push({ ...base, level: 'minor', section: 'Changed', what: 'no longer deprecated' });
    else classed.push({ ...base, level: 'patch', section: 'Changed', what: `deprecation reason now: ${after}` });
  }
  // What an added type or field holds (its fields, description, interfaces) is part of that addition: listed once.
  const additions = new Set(['TYPE_ADDED', 'FIELD_ADDED']);
  const added = classed.filter((change) => additions.has(change.rule)).map((change) => change.where);
  const partOfAddition = (change: ContractChange): boolean =>
    added.some((parent) => (change.where === parent && !additions.has(change.rule)) || change.where.startsWith(`${parent}.`));
  return classed.filter((change) => change.level === 'breaking' || !partOfAddition(change));
}
