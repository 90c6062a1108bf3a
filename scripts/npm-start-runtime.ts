// The node flags and process variables `npm start` runs the service with (package.json's start
// script), read by the measurements that start the compiled service themselves, so that what they
// measure is that start and the flags are written in one place.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface NpmStartRuntime {
  /** The process variables set before `exec node` (MALLOC_ARENA_MAX=1). */
  variables: Record<string, string>;
  /** The node flags before dist/src/index.js. */
  nodeFlags: string[];
}

/** Reads `projectDir`'s package.json start script; throws on a shape it does not know rather than guess. */
export function npmStartRuntime(projectDir: string): NpmStartRuntime {
  const script =
    (JSON.parse(readFileSync(path.join(projectDir, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start ?? '';
  const match = /^((?:[A-Z_]+=\S+ )*)exec node ((?:--\S+ )*)dist\/src\/index\.js --dev$/.exec(script);
  if (!match) throw new Error(`package.json's start script has a shape this measurement does not know: ${script}`);
  const words = (text: string | undefined): string[] =>
    (text ?? '')
      .trim()
      .split(/\s+/)
      .filter((word) => word !== '');
  return { variables: Object.fromEntries(words(match[1]).map((pair) => pair.split('=') as [string, string])), nodeFlags: words(match[2]) };
}
