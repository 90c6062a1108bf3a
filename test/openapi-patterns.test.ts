// Every `pattern` of the OpenAPI document (and every `patternProperties` name) in the syntax every
// client's engine reads: compiled by Google's RE2 as it is written (Go's regexp and kin-openapi,
// oasdiff read RE2's syntax), checked against what Rust's regex refuses as well (lookaround,
// backreferences, `\u` escapes, surrogates) and against the shorthands each engine reads its own way
// (`\d`, `\s`, `\w`, `\b`, `.`), and by JavaScript in Unicode mode, as Ajv compiles it. The spelling
// matches the same text as the server's JavaScript pattern: JavaScript's white space, spelled out,
// is exactly `\s`.
import { createRequire } from 'node:module';
import path from 'node:path';
import { projectRoot } from '../src/config/index.ts';
import { describe, expect, it } from 'vitest';
import { getSchema } from '../src/schema/index.ts';
import { buildOpenApiDocument } from '../src/rest/openapi.ts';
import { PORTABLE_WHITE_SPACE, portablePattern } from '../src/rest/input-schemas.ts';
import { allPermissions } from '../src/auth/permissions.ts';

/**
 * Google's RE2 compiled to WebAssembly, as installed for kubernetes-models' validator. Its own
 * wrapper rewrites JavaScript syntax first (`\u` into `\x{…}`), so the bare engine is used: a
 * pattern is compiled exactly as written.
 */
interface Re2Engine {
  WrappedRE2: new (pattern: string, ignoreCase: boolean, multiline: boolean, dotAll: boolean) => { ok(): boolean; error(): string };
}
const fromValidator = createRequire(path.join(projectRoot, 'node_modules', '@kubernetes-models', 'validate', 'package.json'));
const re2Path = fromValidator.resolve('re2-wasm/build/wasm/re2.js');
const re2 = fromValidator(re2Path) as Re2Engine;

/** Why RE2 refuses the pattern, or null when it compiles it. */
function re2Refusal(pattern: string): string | null {
  const compiled = new re2.WrappedRE2(pattern, false, false, false);
  return compiled.ok() ? null : compiled.error();
}

/**
 * What Rust's regex or Go's RE2 refuses, or reads otherwise than JavaScript, that RE2's own check
 * would let by: a lookaround or named group, a backreference, an escape other than `\xHH`, the
 * control escapes and an escaped punctuation mark, a shorthand class, a bare `.`, a bare `[` in a class.
 */
function portabilityProblem(pattern: string): string | null {
  let inClass = false;
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index];
    if (char === '\\') {
      const next = pattern[index + 1] ?? '';
      index += 1;
      if (next === 'x') {
        if (!/^[0-9A-Fa-f]{2}/.test(pattern.slice(index + 1))) return `\\x without two hex digits at ${index}`;
        index += 2;
      } else if (!/[tnrfv^$\\.*+?()[\]{}|-]/.test(next)) {
        return `the escape \\${next} at ${index - 1}`;
      }
      continue;
    }
    if (inClass) {
      if (char === ']') inClass = false;
      else if (char === '[') return `a bare [ inside a class at ${index}`;
      continue;
    }
    if (char === '[') inClass = true;
    else if (char === '.') return `a bare . at ${index}`;
    else if (char === '(' && pattern[index + 1] === '?' && pattern[index + 2] !== ':') return `a lookaround or named group at ${index}`;
  }
  return null;
}

/** Every pattern of a document, with where it is. */
function patternsOf(document: unknown): { pattern: string; at: string }[] {
  const found: { pattern: string; at: string }[] = [];
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) walk(item, `${at}/${index}`);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'example' || key === 'examples') continue;
      if (key === 'pattern' && typeof value === 'string') found.push({ pattern: value, at });
      if (key === 'patternProperties' && typeof value === 'object' && value !== null) {
        for (const name of Object.keys(value)) found.push({ pattern: name, at: `${at}/patternProperties` });
      }
      walk(value, `${at}/${key}`);
    }
  };
  walk(document, '');
  return found;
}

const publicDocument = buildOpenApiDocument(getSchema(), { publicUrl: 'http://localhost:4000' });
// A key's view is written by the same code; one holding every permission has every operation and webhook.
const fullView = buildOpenApiDocument(getSchema(), { publicUrl: 'http://localhost:4000', viewOf: new Set(allPermissions) });

describe("the document's patterns", () => {
  const patterns = [...patternsOf(publicDocument), ...patternsOf(fullView)];

  it('are many: every text input has one', () => {
    expect(new Set(patterns.map(({ pattern }) => pattern)).size).toBeGreaterThan(20);
  });

  it.each([...new Set(patterns.map(({ pattern }) => pattern))])('%s compiles in RE2, JavaScript and the syntax Rust shares', (pattern) => {
    const at = patterns.find((found) => found.pattern === pattern)?.at;
    expect(re2Refusal(pattern), `RE2, at ${at}`).toBeNull();
    expect(portabilityProblem(pattern), `Go / Rust, at ${at}`).toBeNull();
    expect(() => new RegExp(pattern, 'u'), `JavaScript, at ${at}`).not.toThrow();
  });
});

describe('the check of portable patterns', () => {
  it.each([
    ['^[^\\u0000\\ud800-\\udfff]*$', 'RE2'],
    ['^(?![0-9]{5})[0-9]+$', 'RE2'],
    ['^(a)\\1$', 'RE2'],
    ['^\\d{4}$', 'Go / Rust'],
    ['^\\s*\\S*$', 'Go / Rust'],
    ['^a.b$', 'Go / Rust'],
    ['^[[:alpha:]]$', 'Go / Rust'],
  ])('refuses %s (%s)', (pattern, engine) => {
    expect(engine === 'RE2' ? re2Refusal(pattern) : portabilityProblem(pattern)).not.toBeNull();
  });
});

describe('portablePattern', () => {
  it("spells JavaScript's white space exactly: every code point of the first plane, and beyond", () => {
    const spelled = new RegExp(`^[${PORTABLE_WHITE_SPACE}]$`, 'u');
    const differing: string[] = [];
    for (let code = 0; code <= 0x1ffff; code += 1) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCodePoint(code);
      if (spelled.test(char) !== /^\s$/u.test(char)) differing.push(code.toString(16));
    }
    expect(differing).toEqual([]);
  });

  it('matches what the JavaScript pattern matches', () => {
    const samples = ['', ' ', 'a', '  a b ', '\u00a0x\u3000', '12', '١٢', 'x\ny', 'x\r', 'x\u2028', 'é', '\u0000', 'ab_9', '-1', '+5 '];
    for (const source of ['^\\s*\\S*\\s*$', '^\\d+$', '^\\w*$', '^a.b$', '^[^\\u0000\\s]+$', '^[\\d\\s]*$', '^\\u00e9$', '^x\\/y$']) {
      const javascript = new RegExp(source, 'u');
      const portable = new RegExp(portablePattern(source), 'u');
      for (const text of [...samples, 'a\u00a0b', 'x/y', 'axb', 'a\nb']) {
        expect(portable.test(text), `${source} → ${portablePattern(source)} on ${JSON.stringify(text)}`).toBe(javascript.test(text));
      }
    }
  });

  it('refuses what it cannot spell for every engine, naming it', () => {
    expect(() => portablePattern('^(?!x)y$')).toThrow(/lookaround/);
    expect(() => portablePattern('^(a)\\1$')).toThrow(/\\1/);
    expect(() => portablePattern('^[^\\ud800-\\udfff]$')).toThrow(/surrogate/);
    expect(() => portablePattern('^\\bword$')).toThrow(/\\b/);
    expect(() => portablePattern('^[^\\S]$')).toThrow(/inside a class/);
  });
});
