// The tables of docs/ that the code declares (the settings, the REST paths with their access and
// statuses, each path's cost) and .env.example are rendered from it by `npm run docs`; a stale one
// fails here, naming the file.
import { describe, expect, it } from 'vitest';
import { GENERATED_FILES, staleFiles } from '../scripts/docs.ts';

describe('the generated parts of docs/', () => {
  it('are as the code renders them (npm run docs writes them)', () => {
    expect(GENERATED_FILES.map(({ file }) => file)).toEqual([
      'ARCHITECTURE.md',
      'docs/caching.md',
      'docs/configuration.md',
      'docs/errors.md',
      'docs/graphql.md',
      'docs/permissions.md',
      'docs/rest.md',
      'docs/rate-limits.md',
      '.env.example',
    ]);
    expect(staleFiles().map(({ file }) => file)).toEqual([]);
  });
});
