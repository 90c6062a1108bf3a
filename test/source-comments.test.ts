// Comments say why, briefly: in every source file at most a tenth of the lines (or a three-line
// header in a small file), and none quotes a measured figure, which would rot (docs/benchmarks.md
// holds those).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { typescriptSources } from './support/source-files.ts';

const root = path.resolve(import.meta.dirname, '..');
const MEASURED = /\b\d[\d.,]*\s?(?:ms|µs|MB|kB|KB|GB|ns)\b|\b\d[\d.,]*\s?%\s+(?:of\s+)?(?:the\s+)?(?:CPU|time|faster|slower)/;

/** The comment lines of a TypeScript file: `//` lines and every line of a block comment. */
function commentLines(lines: readonly string[]): string[] {
  let inBlock = false;
  return lines.filter((line) => {
    const text = line.trim();
    if (inBlock) {
      inBlock = !text.includes('*/');
      return true;
    }
    if (text.startsWith('/*')) inBlock = !text.includes('*/');
    return text.startsWith('//') || text.startsWith('/*');
  });
}

describe('comments in src/', () => {
  const files = typescriptSources('src').map((file) => {
    const lines = readFileSync(path.join(root, file), 'utf8').replace(/\n$/, '').split('\n');
    return { file, lines: lines.length, comments: commentLines(lines) };
  });

  it('take at most a tenth of each file (three lines in a small one)', () => {
    expect(files.length).toBeGreaterThan(100);
    const over = files
      .filter(({ lines, comments }) => comments.length > Math.max(3, Math.floor(lines / 10)))
      .map(({ file, lines, comments }) => `${file}: ${comments.length} of ${lines} lines`);
    expect(over).toEqual([]);
  });

  it('quote no measured figure', () => {
    const figures = files.flatMap(({ file, comments }) =>
      comments.filter((line) => MEASURED.test(line)).map((line) => `${file}: ${line.trim()}`),
    );
    expect(figures).toEqual([]);
  });
});
