// `npm run contract:check`: today's schema and OpenAPI document against the release in contract/;
// fails on any breaking change to either door, naming each, and on a deprecation without its days.
// `npm run contract:release -- <version> "<changelog text>"`: cuts a release on purpose.
// docs/contract.md, "Contract and releases"; the rules are in scripts/contract/.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { describeChange, requiredBump } from './contract/changes.ts';
import { checkRegistry } from './contract/documents.ts';
import { getSchema } from '../src/schema/index.ts';
import { CONTRACT_DIR, compareWithRelease, cutRelease, nextVersion, parseVersion, unmentionedChanges } from './contract/release.ts';

const USAGE = `Usage:
  npm run contract:check                                      compare today's contract with contract/
  npm run contract:release -- <version> "<changelog text>"    write today's contract into contract/ as <version>
Options:
  --dir <folder>   the contract folder (default: contract/)`;

const today = (): string => new Date().toISOString().slice(0, 10);

function list(title: string, lines: readonly string[]): void {
  if (lines.length === 0) return;
  console.log(`\n${title} (${lines.length}):`);
  for (const line of lines) console.log(`  ${line}`);
}

async function check(dir: string, shown: string): Promise<number> {
  const comparison = await compareWithRelease(dir, today());
  const { release, changes, problems, integrity, due } = comparison;
  if (!release) {
    console.error(`${shown} holds no release. Cut the first one: npm run contract:release -- 1.0.0 "<what it holds>"`);
    list('Deprecations without their removal day', problems);
    return 1;
  }
  const breaking = changes.filter((change) => change.level === 'breaking');
  console.log(`Today's schema and OpenAPI document against the contract ${release.version} in ${shown}`);
  // A pre-release promises nothing (Semantic Versioning, item 9): its breaking changes are listed so
  // the first release's changelog can say them, but only a release's clients fail the check.
  const preRelease = (parseVersion(release.version)?.prerelease.length ?? 0) > 0;
  if (preRelease) {
    console.log(
      `${release.version} is a pre-release: it promises nothing, and any later version may follow it (npm run contract:release -- ${nextVersion(release.version, null)} "<what it holds>").`,
    );
  }
  list(
    preRelease ? 'Changes that would break the clients of a release (allowed after a pre-release)' : 'Breaking changes',
    breaking.map(describeChange),
  );
  list('Deprecations without their removal day', problems);
  list('Contract folder problems', integrity);
  list('Unreleased additions (a minor release)', changes.filter((change) => change.level === 'minor').map(describeChange));
  list('Unreleased documentation changes (a patch release)', changes.filter((change) => change.level === 'patch').map(describeChange));
  list('Deprecated, with their removal day come (a major release may remove them)', due);
  // A pre-release promises nothing, so its changes need no word to clients either.
  const unmentioned = preRelease ? [] : unmentionedChanges(release.changelog, changes);
  list(`Unreleased changes that ${shown}/CHANGELOG.md's "Unreleased" notes do not mention`, unmentioned.map(describeChange));
  if (unmentioned.length > 0)
    console.error(
      `\ncontract:check failed: ${unmentioned.length} unreleased change(s) above are not mentioned under "## [Unreleased]" in ${shown}/CHANGELOG.md. ` +
        'Say there, in a line each, what they give clients (name each type, field or path): the next release is written from those notes.',
    );
  if (breaking.length > 0 && !preRelease) {
    const version = nextVersion(release.version, requiredBump(changes));
    console.error(
      `\ncontract:check failed: ${breaking.length} breaking change(s) since ${release.version}. Deprecate instead of removing ` +
        `(docs/contract.md, "Contract and releases"), or cut a new major release on purpose:\n` +
        `  npm run contract:release -- ${version} "<what changed, and how clients move>"`,
    );
  }
  if (problems.length + integrity.length > 0)
    console.error(`\ncontract:check failed: ${problems.length + integrity.length} problem(s) above.`);
  const registry = await checkRegistry(getSchema(), process.env.DATABASE_URL, new Date());
  if ('skipped' in registry) console.log(`\nPublished documents: skipped (${registry.skipped}).`);
  else {
    console.log(`\nPublished documents: ${registry.checked} active document(s) checked against today's schema.`);
    list("Active published documents today's schema breaks", registry.broken);
    if (registry.broken.length > 0)
      console.error(
        `\ncontract:check failed: ${registry.broken.length} published document(s) in use no longer validate. Keep what they select ` +
          '(docs/trusted-documents.md, "The contract check"), whatever its deprecation says, until their applications ship versions without it.',
      );
  }
  const brokenDocuments = 'broken' in registry ? registry.broken.length : 0;
  if ((preRelease ? 0 : breaking.length) + problems.length + integrity.length + unmentioned.length + brokenDocuments > 0) return 1;
  console.log(`\ncontract:check passed: nothing breaks the clients of ${release.version}.`);
  return 0;
}

async function release(dir: string, shown: string, version: string | undefined, notes: string | undefined): Promise<number> {
  if (version === undefined) {
    console.error(`contract:release needs the version and the changelog text.\n\n${USAGE}`);
    return 2;
  }
  // A release cannot take from a published document still in use what a deprecation's end would allow.
  const registry = await checkRegistry(getSchema(), process.env.DATABASE_URL, new Date());
  if ('broken' in registry && registry.broken.length > 0) {
    console.error(`contract:release refused: today's schema breaks ${registry.broken.length} published document(s) in use:`);
    for (const broken of registry.broken) console.error(`  - ${broken}`);
    return 1;
  }
  const outcome = await cutRelease(dir, { version, notes: notes ?? '', today: today() });
  if (!outcome.released) {
    console.error(`contract:release refused: ${outcome.refusal}`);
    return 1;
  }
  console.log(
    `Released the contract ${outcome.version} into ${shown} (${outcome.changes.length} change(s); the largest: ${outcome.bump ?? 'none'}). Commit the folder.`,
  );
  return 0;
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<
    typeof parseArgs<{
      args: string[];
      allowPositionals: true;
      options: { dir: { type: 'string' }; help: { type: 'boolean'; short: 'h' } };
    }>
  >;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { dir: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const [command, ...rest] = parsed.positionals;
  if (parsed.values.help) {
    console.log(USAGE);
    return 0;
  }
  const dir = parsed.values.dir ? path.resolve(parsed.values.dir) : CONTRACT_DIR;
  const shown = path.relative(process.cwd(), dir) || '.';
  if (command === 'check' && rest.length === 0) return check(dir, shown);
  if (command === 'release' && rest.length <= 2) return release(dir, shown, rest[0], rest[1]);
  console.error(USAGE);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
