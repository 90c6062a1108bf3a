// What the operators' command-line tools (keys, outbox) share: usage errors, their few argument
// checks, printing for people or with --json, and the ending every such command has (help, an
// unknown command, or the command run against the database with its refusals printed).
import { GraphQLError } from 'graphql';
import { loadDatabaseConfig } from '../src/config/index.ts';
import type { Db } from '../src/db/client.ts';
import { failIfDatabaseUnavailable, openCliDatabase } from './cli-database.ts';

/** A mistake in how the command was called: reported with the usage, exit code 2. */
export class UsageError extends Error {}

/** Prints the problem and the usage on stderr, and ends with exit code 2 (a usage error). */
export function usageFailure(usage: string, message: string): never {
  console.error(`${message}\n\n${usage}`);
  process.exit(2);
}

export function wholeNumber(value: string | undefined, what: string): number {
  if (value === undefined || !/^\d+$/.test(value)) throw new UsageError(`${what} must be a whole number`);
  return Number(value);
}

/** The JSON document with --json, else the text for people. */
export function print(asJson: boolean | undefined, json: unknown, human: string): void {
  console.log(asJson ? JSON.stringify(json, null, 2) : human);
}

/** Rows as aligned columns under their header, two spaces apart, as the CLIs print their lists. */
export function textTable(header: readonly string[], cells: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((line) => line[column]!.length)));
  return [header, ...cells]
    .map((line) =>
      line
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export interface CliCommand {
  usage: string;
  commands: ReadonlySet<string>;
  /** The command line's words after the options were taken out; the first names the command. */
  positionals: readonly string[];
  help: boolean | undefined;
  run(db: Db, config: ReturnType<typeof loadDatabaseConfig>): Promise<void>;
}

/**
 * Runs the named command against the configured database. The domain's refusals (an unknown key or
 * message, one that cannot change) are GraphQLErrors: printed as they are, exit code 1.
 */
export async function runCliCommand({ usage, commands, positionals, help, run }: CliCommand): Promise<void> {
  const [command] = positionals;
  if (help || command === 'help') {
    console.log(usage);
    return;
  }
  if (!commands.has(command ?? '')) usageFailure(usage, command ? `unknown command "${command}"` : 'no command given');
  const { db, config } = await openCliDatabase(() => loadDatabaseConfig());
  try {
    await run(db, config);
  } catch (error) {
    if (error instanceof UsageError) usageFailure(usage, error.message);
    failIfDatabaseUnavailable(error);
    if (!(error instanceof GraphQLError)) throw error;
    console.error(error.message);
    process.exitCode = 1;
  } finally {
    await db.$disconnect();
  }
}
