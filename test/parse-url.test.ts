// Whether text is an absolute URL is asked in one way (src/lib/parse-url.ts), which reads non-ASCII
// hosts right however often it has run; URL.canParse, whose optimised path on Node 20 does not, is
// used nowhere in src/.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseUrl } from '../src/lib/parse-url.ts';
import { typescriptSources } from './support/source-files.ts';

const NON_ASCII = ['https://b\u00fccher.example/hooks', 'https://local\u00adhost/hooks', 'https://\uff43\uff52\uff4d.example/hooks'];

describe('parseUrl', () => {
  it('reads non-ASCII URLs after many calls as on the first, and refuses what is not an absolute URL', () => {
    for (let call = 0; call < 50_000; call += 1) parseUrl(`https://crm.example/x${call % 10}`);
    for (const text of NON_ASCII) expect(parseUrl(text)?.href, text).toBe(new URL(text).href);
    for (const text of ['', 'crm.example/hooks', '/hooks', 'https://', 'http://[::1']) expect(parseUrl(text), text).toBeNull();
  });

  it('is the only way src/ asks: no module calls URL.canParse', () => {
    const callers = typescriptSources('src').filter((file) => /\bURL\.canParse\s*\(/.test(readFileSync(file, 'utf8')));
    expect(callers).toEqual([]);
  });
});
