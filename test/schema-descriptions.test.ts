// Every part of the graph is described for the front-end developer reading it in GraphiQL or a
// generated client: each type, field, argument, input field and enum value. A new coordinate without
// a description fails here, by name (`npm run schema:undescribed` lists them all). The ones that had
// none when this check was written are listed in test/support/undescribed-baseline.json, a debt that
// may only shrink: a listed coordinate that gains a description must leave the list.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { getSchema } from '../src/schema/index.ts';
import { undescribed } from '../src/schema/descriptions.ts';

const baseline = new Set(
  (JSON.parse(readFileSync(path.join(import.meta.dirname, 'support', 'undescribed-baseline.json'), 'utf8')) as { coordinates: string[] }).coordinates,
);

describe('schema descriptions', () => {
  const missing = undescribed(getSchema());

  it('describes every type, field, argument, input field and enum value added since the baseline', () => {
    expect(missing.filter((coordinate) => !baseline.has(coordinate))).toEqual([]);
  });

  it('keeps the baseline to coordinates that still lack a description, so it only shrinks', () => {
    const stillMissing = new Set(missing);
    expect([...baseline].filter((coordinate) => !stillMissing.has(coordinate))).toEqual([]);
  });
});
