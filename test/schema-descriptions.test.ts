// Every part of the graph is described for the front-end developer reading it in GraphiQL or a
// generated client: each type, field, argument, input field and enum value. A coordinate without a
// description fails here, by name (`npm run schema:undescribed` lists them all). Shared field names
// take their words from src/schema/glossary.ts; a declaration's own description wins over it.
import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { getSchema } from '../src/schema/index.ts';
import { undescribed } from '../src/schema/descriptions.ts';
import { describedOrFromGlossary } from '../src/schema/glossary.ts';

describe('schema descriptions', () => {
  it('describes every type, field, argument, input field and enum value of the graph', () => {
    expect(undescribed(getSchema())).toEqual([]);
  });

  it('names each kind of undescribed coordinate, so the check above can fail', () => {
    const schema = buildSchema(`
      type Query { lookup(key: String): Thing }
      """A thing."""
      type Thing { described: Int "" blank: Int }
      input Filter { part: Int }
      enum Colour { RED }
    `);
    expect(undescribed(schema)).toEqual([
      'Colour',
      'Colour.RED',
      'Filter',
      'Filter.part',
      'Query.lookup',
      'Query.lookup(key:)',
      'Thing.blank',
      'Thing.described',
    ]);
  });

  it('fills a shared name from the glossary and keeps a declared description over it', () => {
    expect(describedOrFromGlossary('stocknum', 'Declared here.')).toBe('Declared here.');
    expect(describedOrFromGlossary('created_at', undefined)).toMatch(/created/);
    expect(describedOrFromGlossary('unheard_of_name', undefined)).toBeUndefined();
  });
});
