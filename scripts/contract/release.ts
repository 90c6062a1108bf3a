// The released contract in contract/ and the two things done with it: compare it with today's
// schema and OpenAPI document (`npm run contract:check`), and cut a new release on purpose
// (`npm run contract:release -- <version> "<changelog text>"`). docs/contract.md, "Contract and releases".
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildSchema, printSchema } from 'graphql';
import { projectRoot } from '../../src/config/index.ts';
import { buildOpenApiDocument } from '../../src/rest/openapi.ts';
import { isoCalendarDay } from '../../src/domain/dates.ts';
import type { RouteDeprecation } from '../../src/rest/deprecation.ts';
import { restRoutes } from '../../src/rest/routes.ts';
import { getSchema } from '../../src/schema/index.ts';
import { describeChange, requiredBump, type ChangeLevel, type ChangelogSection, type ContractChange } from './changes.ts';
import { graphChanges, graphDeprecationProblems, graphRemovalsDue } from './graph-changes.ts';
import { openApiChanges, restRemovalsDue } from './openapi-changes.ts';

export const CONTRACT_DIR = path.join(projectRoot, 'contract');
export const CONTRACT_FILES = { schema: 'schema.graphql', openapi: 'openapi.json', version: 'VERSION', changelog: 'CHANGELOG.md' } as const;
/** The document's server in the snapshot: the development server's (a deployed service names its PUBLIC_URL). */
const CONTRACT_PUBLIC_URL = 'http://localhost:4000';

type Json = Record<string, unknown>;

export interface ContractSnapshot {
  /** The GraphQL schema as SDL, printed as scripts/print-schema.ts prints schema.graphql. */
  sdl: string;
  /** The REST door's OpenAPI document (src/rest/openapi.ts). */
  openapi: Json;
}

interface Release extends ContractSnapshot {
  version: string;
  changelog: string;
}

/** Today's contract, generated from the code. */
export function todaysContract(): ContractSnapshot {
  const schema = getSchema();
  return { sdl: `${printSchema(schema)}\n`, openapi: buildOpenApiDocument(schema, { publicUrl: CONTRACT_PUBLIC_URL }) };
}

/** The release in `dir`, or null when none was cut. */
export function readRelease(dir: string): Release | null {
  const file = (name: string): string => path.join(dir, name);
  if (!existsSync(file(CONTRACT_FILES.version))) return null;
  return {
    version: readFileSync(file(CONTRACT_FILES.version), 'utf8').trim(),
    sdl: readFileSync(file(CONTRACT_FILES.schema), 'utf8'),
    openapi: JSON.parse(readFileSync(file(CONTRACT_FILES.openapi), 'utf8')) as Json,
    changelog: existsSync(file(CONTRACT_FILES.changelog)) ? readFileSync(file(CONTRACT_FILES.changelog), 'utf8') : '',
  };
}

// ─── Versions (Semantic Versioning 2.0.0) ───

interface Version {
  major: number;
  minor: number;
  patch: number;
  prerelease: string[];
}

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?$/;

export function parseVersion(text: string): Version | null {
  const match = SEMVER.exec(text);
  if (!match) return null;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), prerelease: match[4]?.split('.') ?? [] };
}

/** Negative when a < b, by semver's precedence (a pre-release is below its version). */
function compareVersions(a: Version, b: Version): number {
  for (const part of ['major', 'minor', 'patch'] as const) if (a[part] !== b[part]) return a[part] - b[part];
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return b.prerelease.length - a.prerelease.length;
  for (let index = 0; index < Math.max(a.prerelease.length, b.prerelease.length); index++) {
    const x = a.prerelease[index];
    const y = b.prerelease[index];
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    if (x === y) continue;
    const numeric = /^\d+$/;
    if (numeric.test(x) && numeric.test(y)) return Number(x) - Number(y);
    if (numeric.test(x) !== numeric.test(y)) return numeric.test(x) ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/** Before 1.0.0, and in a pre-release, semver promises nothing: any later version may follow. */
function promisesNothing(version: Version): boolean {
  return version.major === 0 || version.prerelease.length > 0;
}

/** The smallest version after `current` that the changes allow. */
export function nextVersion(current: string | null, bump: ChangeLevel | null): string {
  const version = current === null ? null : parseVersion(current);
  if (!version) return '1.0.0';
  if (promisesNothing(version)) return version.major === 0 ? '1.0.0' : `${version.major}.${version.minor}.${version.patch}`;
  if (bump === 'breaking') return `${version.major + 1}.0.0`;
  if (bump === 'minor') return `${version.major}.${version.minor + 1}.0`;
  return `${version.major}.${version.minor}.${version.patch + 1}`;
}

/** Why `proposed` cannot follow `current` with these changes, or null when it can. */
function versionRefusal(current: string | null, proposed: string, bump: ChangeLevel | null): string | null {
  const next = parseVersion(proposed);
  if (!next) return `"${proposed}" is not a semantic version (MAJOR.MINOR.PATCH, e.g. ${nextVersion(current, bump)})`;
  const previous = current === null ? null : parseVersion(current);
  if (!previous) return null;
  if (compareVersions(next, previous) <= 0) return `${proposed} is not after the released ${current}`;
  if (promisesNothing(previous)) return null;
  const understated =
    (bump === 'breaking' && next.major === previous.major) ||
    (bump === 'minor' && next.major === previous.major && next.minor === previous.minor);
  if (understated) {
    return `${proposed} understates the changes: they are ${bump === 'breaking' ? 'breaking (a major release)' : 'additions (a minor release)'}, so the version must be at least ${nextVersion(current, bump)}`;
  }
  return null;
}

// ─── The comparison ───

interface Comparison {
  release: Release | null;
  changes: ContractChange[];
  /** Deprecations without their days: they fail the check, and refuse a release. */
  problems: string[];
  /** What does not hold together in contract/ (a version without its changelog entry): fails the check. */
  integrity: string[];
  /** Deprecated things whose removal day has come. */
  due: string[];
}

/** The contract check refuses a route whose deprecation days are not real days in order. */
function deprecationProblems(deprecation: RouteDeprecation): string[] {
  const since = isoCalendarDay(deprecation.since);
  const sunset = isoCalendarDay(deprecation.sunset);
  return [
    ...(since ? [] : [`deprecated.since "${deprecation.since}" is not a day written YYYY-MM-DD`]),
    ...(sunset ? [] : [`deprecated.sunset "${deprecation.sunset}" is not a day written YYYY-MM-DD`]),
    ...(since && sunset && sunset <= since
      ? [`deprecated.sunset ${deprecation.sunset} is not after deprecated.since ${deprecation.since}`]
      : []),
  ];
}

/** One line per deprecated REST route whose days are not real days in order. */
function restDeprecationProblems(): string[] {
  return restRoutes.flatMap((route) =>
    route.deprecated
      ? deprecationProblems(route.deprecated).map((problem) => `REST ${route.method} ${route.path}: ${problem} [deprecation-date-invalid]`)
      : [],
  );
}

function releaseProblems(release: Release): string[] {
  const problems: string[] = [];
  if (!parseVersion(release.version))
    problems.push(`contract/${CONTRACT_FILES.version} holds "${release.version}", not a semantic version`);
  if (!release.changelog.includes(`## [${release.version}]`))
    problems.push(`contract/${CONTRACT_FILES.changelog} has no entry "## [${release.version}]" for the released version`);
  return problems;
}

/** Today's contract against the release in `dir`; `today` is YYYY-MM-DD. */
export async function compareWithRelease(dir: string, today: string, current: ContractSnapshot = todaysContract()): Promise<Comparison> {
  const release = readRelease(dir);
  const schema = buildSchema(current.sdl);
  const problems = [...graphDeprecationProblems(schema), ...restDeprecationProblems()];
  const integrity = release ? releaseProblems(release) : [];
  const due = [...graphRemovalsDue(schema, today), ...restRemovalsDue(current.openapi, today)];
  if (!release) return { release, changes: [], problems, integrity, due };
  const changes = asCorrections(release.changelog, [
    ...(await graphChanges(buildSchema(release.sdl), schema, today)),
    ...openApiChanges(release.openapi, current.openapi, today),
  ]);
  return { release, changes, problems, integrity, due };
}

/**
 * The places the "Unreleased" notes list under `### Fixed` as corrections of the document: each
 * bullet's first code span, e.g. `REST POST /api/v1/leads request body (multipart/form-data)`.
 */
function correctedPlaces(changelog: string): string[] {
  const fixed = /^### Fixed\s*$([\s\S]*?)(?=^### |(?![\s\S]))/m.exec(unreleasedNotes(changelog))?.[1] ?? '';
  return [...fixed.matchAll(/^- `([^`]+)`/gm)].map((match) => match[1] ?? '').filter(Boolean);
}

/**
 * A narrowing the notes list under `### Fixed` is a correction: the document now says what the
 * server always did (a form that always needed the JSON body's required fields, a pattern spelled so
 * that every engine reads it), so no client that worked stops working. It is a documentation change
 * (a patch), said as such, not a breaking one; anything not listed there still breaks.
 */
function asCorrections(changelog: string, changes: ContractChange[]): ContractChange[] {
  const places = correctedPlaces(changelog);
  return changes.map((change) => {
    const place = describeChange(change);
    if (change.level !== 'breaking' || !places.some((corrected) => place.startsWith(`${corrected}:`) || place.startsWith(`${corrected} `)))
      return change;
    return { ...change, level: 'patch', what: `${change.what} (a correction: the server always did so)` };
  });
}

// ─── The changelog (Keep a Changelog 1.1.0) ───

const UNRELEASED = '## [Unreleased]';
const SECTION_ORDER: readonly ChangelogSection[] = ['Added', 'Changed', 'Deprecated', 'Removed'];

const CHANGELOG_HEADER = `# Changelog

Every release of this service's public contract: the GraphQL schema (\`schema.graphql\`) and the REST
door's OpenAPI document (\`openapi.json\`) in this folder. The format is based on
[Keep a Changelog](https://keepachangelog.com/en/1.1.0/), and the contract follows
[Semantic Versioning](https://semver.org/spec/v2.0.0.html): a breaking change to either door is a
new major version. \`npm run contract:release\` writes the entries; notes written under
"Unreleased" go into the next one.

${UNRELEASED}
`;

/**
 * What a change is about, as a changelog note names it: a type, a field (without its type), or a
 * REST path. A schema-wide change (`(schema)`) names nothing of its own.
 */
function subjectOf(change: ContractChange): string | null {
  if (change.door === 'rest') return change.where.split(/\s+/)[1] ?? null;
  if (change.where.startsWith('(')) return null;
  const [type, field] = change.where.split(/\s+/)[0]!.split('.');
  return field ?? type ?? null;
}

/**
 * The unreleased changes that clients will get but that the "Unreleased" notes do not mention: the
 * next release's changelog entry is written from those notes, so a change they leave out would be
 * released without a word to its clients. Descriptions and examples (patch changes) need none.
 */
export function unmentionedChanges(changelog: string, changes: readonly ContractChange[]): ContractChange[] {
  const notes = unreleasedNotes(changelog);
  return changes.filter((change) => {
    if (change.level === 'patch') return false;
    const subject = subjectOf(change);
    return subject !== null && !notes.includes(subject);
  });
}

/** The notes written under "Unreleased", trimmed. */
function unreleasedNotes(changelog: string): string {
  const start = changelog.indexOf(UNRELEASED);
  if (start === -1) return '';
  const rest = changelog.slice(start + UNRELEASED.length);
  const end = rest.search(/^## /m);
  return (end === -1 ? rest : rest.slice(0, end)).trim();
}

function changeLines(changes: readonly ContractChange[]): string {
  return SECTION_ORDER.flatMap((section) => {
    const listed = changes.filter((change) => change.section === section);
    if (listed.length === 0) return [];
    const lines = listed.map((change) => `- ${change.level === 'breaking' ? '**Breaking:** ' : ''}${describeChange(change)}`);
    return [`### ${section}\n\n${lines.join('\n')}\n`];
  }).join('\n');
}

/** The changelog with a new entry in place of the "Unreleased" notes (an empty "Unreleased" stays on top). */
function withEntry(changelog: string, entry: string): string {
  const base = changelog.trim() === '' ? CHANGELOG_HEADER : changelog;
  const start = base.indexOf(UNRELEASED);
  if (start === -1) {
    const firstEntry = base.search(/^## /m);
    const at = firstEntry === -1 ? base.length : firstEntry;
    return `${base.slice(0, at).trimEnd()}\n\n${UNRELEASED}\n\n${entry.trimEnd()}\n${base.slice(at) ? `\n${base.slice(at)}` : ''}`;
  }
  const rest = base.slice(start + UNRELEASED.length);
  const end = rest.search(/^## /m);
  const after = end === -1 ? '' : rest.slice(end);
  return `${base.slice(0, start)}${UNRELEASED}\n\n${entry.trimEnd()}\n${after ? `\n${after}` : ''}`;
}

// ─── Cutting a release ───

interface ReleaseRequest {
  version: string;
  /** What the release is, and how clients move for its breaking changes: the changelog entry's text. */
  notes: string;
  /** The release day, YYYY-MM-DD. */
  today: string;
}

type ReleaseOutcome =
  | { released: true; version: string; bump: ChangeLevel | null; changes: ContractChange[] }
  | { released: false; refusal: string };

/**
 * Writes today's contract into `dir` as `request.version`, with its changelog entry. Refused without
 * a changelog text (given, or written under "Unreleased"), with deprecations that lack their days,
 * with nothing changed since a real release, or with a version that is not after the released one
 * or understates the changes (major for breaking, minor for additions).
 */
export async function cutRelease(
  dir: string,
  request: ReleaseRequest,
  current: ContractSnapshot = todaysContract(),
): Promise<ReleaseOutcome> {
  const comparison = await compareWithRelease(dir, request.today, current);
  const previous = comparison.release;
  const pending = previous ? unreleasedNotes(previous.changelog) : '';
  const notes = [request.notes.trim(), pending].filter(Boolean).join('\n\n');
  if (notes === '') {
    return {
      released: false,
      refusal: 'a release needs a changelog entry: say what it holds and how clients move, e.g. npm run contract:release -- 1.2.0 "Adds …"',
    };
  }
  if (comparison.problems.length > 0) return { released: false, refusal: `fix these first:\n${comparison.problems.join('\n')}` };
  const bump = requiredBump(comparison.changes);
  const previousVersion = previous?.version ?? null;
  const previousParsed = previousVersion === null ? null : parseVersion(previousVersion);
  const fromPrerelease = previousParsed !== null && promisesNothing(previousParsed);
  if (previous && bump === null && !fromPrerelease)
    return { released: false, refusal: `nothing changed since ${previous.version}: there is nothing to release` };
  const refusal = versionRefusal(previousVersion, request.version, bump);
  if (refusal) return { released: false, refusal };

  const listed =
    previous === null
      ? ''
      : fromPrerelease
        ? `_The changes since ${previous.version} are not listed: that version was a pre-release, and promised nothing._\n`
        : changeLines(comparison.changes);
  const entry = `## [${request.version}] - ${request.today}\n\n${notes}\n${listed ? `\n${listed}` : ''}`;
  mkdirSync(dir, { recursive: true });
  const openapi = { ...current.openapi, info: { ...(current.openapi.info as Json | undefined), version: request.version } };
  writeFileSync(path.join(dir, CONTRACT_FILES.schema), current.sdl);
  writeFileSync(path.join(dir, CONTRACT_FILES.openapi), `${JSON.stringify(openapi, null, 2)}\n`);
  writeFileSync(path.join(dir, CONTRACT_FILES.version), `${request.version}\n`);
  writeFileSync(path.join(dir, CONTRACT_FILES.changelog), withEntry(previous?.changelog ?? '', entry));
  return { released: true, version: request.version, bump, changes: comparison.changes };
}
