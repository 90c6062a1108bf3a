// The input-records mechanism without HTTP or a database: a zod schema in, the project's 422 and
// the printed GraphQL input type out.
import SchemaBuilder from '@pothos/core';
import { printSchema, printType, type GraphQLNamedType } from 'graphql';
import { JSONResolver } from 'graphql-scalars';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { invalidInput } from '../src/errors.ts';
import fc from 'fast-check';
import { calendarDatePattern, parseDayMonthYear } from '../src/domain/dates.ts';
import { HTTP_URL_PATTERN, httpUrl } from '../src/domain/http-url.ts';
import { fieldPath, fieldRule, parseRecord } from '../src/domain/input-records.ts';
import { leadFilePattern, sniffContentType } from '../src/domain/leads/files.ts';
import { PHONE_EXAMPLE_PATTERN, normalizePhone } from '../src/domain/phone.ts';
import { RAILS_KEY_PATTERN, railsFormBody } from '../src/rest/form-body.ts';
import { argsFromZod, inputFromZod } from '../src/schema/input-from-zod.ts';

/** The 422 parseRecord throws, as { field, message }. */
function refusal(run: () => unknown): { field: unknown; message: string } {
  try {
    run();
  } catch (error) {
    const { field } = (error as { extensions: { field?: unknown } }).extensions;
    return { field, message: (error as Error).message };
  }
  throw new Error('expected a refusal');
}

const charge = z.object({ name: z.string(), amount: z.number({ error: 'must be a number of dollars' }) }).meta({ id: 'TestChargeInput' });
const lead = z.object({
  email: z.string().trim().min(1),
  charge_breakdown: z
    .object({ charges: z.array(charge) })
    .meta({ id: 'TestBreakdownInput' })
    .optional(),
  tags: z.array(z.string()).nullish(),
});

describe('parseRecord', () => {
  it('names the field by its path under the record, with the schema’s own message', () => {
    const value = {
      email: 'a@example.com',
      charge_breakdown: {
        charges: [
          { name: 'Rego', amount: 1 },
          { name: 'Stamp', amount: 'x' },
        ],
      },
    };
    expect(refusal(() => parseRecord(lead, value, 'lead'))).toEqual({
      field: 'lead.charge_breakdown.charges[1].amount',
      message: 'lead.charge_breakdown.charges[1].amount: must be a number of dollars',
    });
  });

  it('says "is required", "cannot be null" and the expected kind where the schema says nothing', () => {
    expect(refusal(() => parseRecord(lead, {}, 'lead')).message).toBe('lead.email: is required');
    expect(refusal(() => parseRecord(lead, { email: null }, 'lead')).message).toBe('lead.email: cannot be null');
    expect(refusal(() => parseRecord(lead, { email: 'x', tags: ['a', 3] }, 'lead')).message).toBe('lead.tags[1]: must be text');
    expect(refusal(() => parseRecord(lead, { email: '  ' }, 'lead')).message).toBe('lead.email: must not be blank');
    expect(refusal(() => parseRecord(lead, 5, 'lead')).message).toBe('lead: must be an object');
  });

  it('answers the parsed value, absent fields left out', () => {
    expect(parseRecord(lead, { email: ' a@example.com ' }, 'lead')).toEqual({ email: 'a@example.com' });
  });

  it('gives the error name a custom issue carries, for outcomes the spec names', () => {
    const request = z.object({
      // A transform, not a refine: zod skips an optional field's refinements when it is absent.
      email: z
        .string()
        .nullish()
        .transform((email, context) => {
          if (!email) context.addIssue({ code: 'custom', message: 'is required', params: { error: 'email_required' } });
          return email;
        }),
    });
    const error = (() => {
      try {
        parseRecord(request, {}, '');
      } catch (thrown) {
        return thrown as { message: string; extensions: Record<string, unknown> };
      }
      throw new Error('expected a refusal');
    })();
    expect(error.message).toBe('email: is required');
    expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', error: 'email_required', field: 'email' });
    expect(refusal(() => parseRecord(lead, {}, 'lead'))).toMatchObject({ field: 'lead.email' });
  });

  it('writes paths as the bodies name them', () => {
    expect(fieldPath('car', ['images', 2])).toBe('car.images[2]');
    expect(fieldPath('car', [])).toBe('car');
    expect(fieldPath('', ['id'])).toBe('id');
  });
});

describe('fieldRule', () => {
  const evenRule = (value: number, field: string) => {
    if (value % 2 !== 0) throw invalidInput(field, `must be even, got ${value}`);
    return value / 2;
  };
  const halves = z.object({ counts: z.array(z.number().transform(fieldRule(evenRule))) });

  it('turns a rule that throws invalidInput into the issue at the field’s path, and keeps its result', () => {
    expect(refusal(() => parseRecord(halves, { counts: [2, 3] }, 'car')).message).toBe('car.counts[1]: must be even, got 3');
    expect(parseRecord(halves, { counts: [2, 4] }, 'car')).toEqual({ counts: [1, 2] });
  });

  it('throws any other error on', () => {
    const broken = z.string().transform(
      fieldRule(() => {
        throw new TypeError('bug');
      }),
    );
    expect(() => parseRecord(broken, 'x', 'car')).toThrow(TypeError);
  });
});

describe('inputFromZod', () => {
  function printed(schema: z.ZodObject, name: string): Record<string, string> {
    // A builder of its own, without plugins: the project's plugin option types (prisma, scopeAuth) are
    // declared for every builder, so the empty options need the cast.
    type TestTypes = { Scalars: { JSON: { Input: unknown; Output: unknown } } };
    const builder = new SchemaBuilder<TestTypes>({} as ConstructorParameters<typeof SchemaBuilder<TestTypes>>[0]);
    builder.addScalarType('JSON', JSONResolver);
    const input = inputFromZod(builder, name, schema, { description: 'A record to test.' });
    builder.queryType({
      fields: (t) => ({ echo: t.boolean({ args: { record: t.arg({ type: input, required: true }) }, resolve: () => true }) }),
    });
    const types = builder.toSchema().getTypeMap();
    return Object.fromEntries(
      Object.entries(types)
        .filter(([key]) => key.endsWith('Input'))
        .map(([key, type]) => [key, printType(type as GraphQLNamedType)]),
    );
  }

  it('prints each kind with its nullability and description, nested records as their own input types', () => {
    const record = z.object({
      title: z.string().trim().min(1).describe('The title, never blank.'),
      subtitle: z
        .string()
        .transform((text) => text.trim())
        .nullish(),
      year: z.int().min(1886),
      price: z.number().nonnegative().optional().describe('In dollars.'),
      sold: z.boolean().optional(),
      kind: z.enum(['new', 'used']),
      tags: z
        .array(z.string())
        .nullable()
        .transform((tags) => tags ?? [])
        .optional(),
      charges: z.array(charge).optional(),
      fields: z.record(z.string(), z.unknown()).nullish(),
      breakdown: z.object({ total: z.number() }).meta({ asJson: true }).optional(),
    });
    const types = printed(record, 'TestRecordInput');
    // Pothos prints the fields in name order.
    expect(types.TestRecordInput).toBe(
      [
        '"""A record to test."""',
        'input TestRecordInput {',
        '  breakdown: JSON',
        '  charges: [TestChargeInput!]',
        '  fields: JSON',
        '  kind: String!',
        '',
        '  """In dollars."""',
        '  price: Float',
        '  sold: Boolean',
        '  subtitle: String',
        '  tags: [String!]',
        '',
        '  """The title, never blank."""',
        '  title: String!',
        '  year: Int!',
        '}',
      ].join('\n'),
    );
    expect(types.TestChargeInput).toBe('input TestChargeInput {\n  amount: Float!\n  name: String!\n}');
  });

  it('gives resolvers the schema’s input type (checked by tsc)', () => {
    type TestTypes = { Scalars: { JSON: { Input: unknown; Output: unknown } } };
    const builder = new SchemaBuilder<TestTypes>({} as ConstructorParameters<typeof SchemaBuilder<TestTypes>>[0]);
    const input = inputFromZod(builder, 'TestTypedInput', lead);
    builder.queryType({
      fields: (t) => ({
        echo: t.string({
          args: { record: t.arg({ type: input, required: true }) },
          resolve: (_root, { record }) => {
            expectTypeOf(record).toEqualTypeOf<z.input<typeof lead>>();
            return record.email;
          },
        }),
      }),
    });
    expect(builder.toSchema().getType('TestTypedInput')).toBeDefined();
  });

  it('makes a root field’s arguments from a record, typed as its input', () => {
    type TestTypes = { Scalars: { JSON: { Input: unknown; Output: unknown } } };
    const builder = new SchemaBuilder<TestTypes>({} as ConstructorParameters<typeof SchemaBuilder<TestTypes>>[0]);
    const report = z.object({
      called_number: z.string().describe('The number dialled.'),
      call_id: z.string().nullish(),
      minutes: z.int().optional(),
    });
    builder.queryType({
      fields: (t) => ({
        report: t.string({
          args: argsFromZod(builder, t.arg, 'report', report),
          resolve: (_root, args) => {
            expectTypeOf(args.called_number).toEqualTypeOf<string>();
            // GraphQL may send null for any argument that is not required; the schema decides whether null is allowed.
            expectTypeOf(args.minutes).toEqualTypeOf<number | null | undefined>();
            return args.called_number;
          },
        }),
      }),
    });
    expect(printSchema(builder.toSchema())).toContain(
      'report(\n    call_id: String\n\n    """The number dialled."""\n    called_number: String!\n    minutes: Int\n  ): String\n',
    );
  });

  it('keeps a nested record’s description on its input type, not on the fields that hold it', () => {
    const address = z.object({ street: z.string().nullish() }).meta({ id: 'TestAddressInput', description: 'A postal address.' });
    const types = printed(z.object({ home: address.nullish(), work: address.nullish().describe('Where they work.') }), 'TestHolderInput');
    expect(types.TestAddressInput).toBe('"""A postal address."""\ninput TestAddressInput {\n  street: String\n}');
    expect(types.TestHolderInput).toBe(
      '"""A record to test."""\ninput TestHolderInput {\n  home: TestAddressInput\n\n  """Where they work."""\n  work: TestAddressInput\n}',
    );
  });

  it('refuses a nested object without a name instead of guessing one', () => {
    expect(() => printed(z.object({ inner: z.object({ a: z.string() }) }), 'TestUnnamedInput')).toThrow(
      /TestUnnamedInput\.inner: a nested object needs a GraphQL name/,
    );
  });
});

// The patterns the OpenAPI document shows for values whose rule is code: every text a pattern
// allows, the rule accepts (a client generating values from the document is never refused), and the
// date pattern is exactly the real days of its years.
describe('the patterns the OpenAPI document states for rules written as code', () => {
  const matching = (pattern: string) => fc.stringMatching(new RegExp(pattern, 'u'));
  const runs = { numRuns: 2_000, seed: 20_261_121 };

  it('phone numbers: each one the pattern allows is a valid number', () => {
    fc.assert(
      fc.property(matching(PHONE_EXAMPLE_PATTERN), (text) => normalizePhone(text) !== null),
      runs,
    );
  });

  it('URLs: each one the pattern allows is kept exactly as sent', () => {
    fc.assert(
      fc.property(matching(HTTP_URL_PATTERN), (text) => httpUrl(text, 'url') === text),
      runs,
    );
  });

  it('attachments: each text the pattern allows decodes to a kind of file that is accepted', () => {
    fc.assert(
      fc.property(
        matching(leadFilePattern()),
        (text) => sniffContentType(Buffer.from(text.replace(/^data:[^,]*,/, ''), 'base64')) !== null,
      ),
      runs,
    );
  });

  it('dates: the pattern allows exactly the real days of its years, written either way', () => {
    const pattern = new RegExp(calendarDatePattern(1896, 2031), 'u');
    const mismatches: string[] = [];
    // The years around both ends, and around the century years (1900 is not a leap year, 2000 is).
    const years = [1890, 1895, 1896, 1897, 1899, 1900, 1901, 1904, 1996, 1999, 2000, 2001, 2004, 2024, 2028, 2030, 2031, 2032];
    for (const year of years) {
      for (let month = 0; month <= 13; month += 1) {
        for (let day = 0; day <= 32; day += 1) {
          const two = (value: number) => String(value).padStart(2, '0');
          for (const text of [`${day}/${month}/${year}`, `${two(day)}/${two(month)}/${year}`, `${year}-${two(month)}-${two(day)}`]) {
            let real = true;
            try {
              parseDayMonthYear(text, 'date');
            } catch {
              real = false;
            }
            if (pattern.test(text) !== (real && year >= 1896 && year <= 2031)) mismatches.push(text);
          }
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('form keys: the pattern allows exactly the keys a multipart form may have', async () => {
    const keys = [
      'lead[name]',
      'lead[tags][]',
      'lead[lead_files_attributes][0][file]',
      'lead[fields][a][b][c][d]',
      'lead[fields][a][b][c][d][e]',
      'a[][b]',
      'lead[x][12345]',
      'lead[x][1234]',
      'lead]',
      'lead[fields][u[x][]',
      '12345',
    ];
    for (const key of keys) {
      const form = new FormData();
      form.append(key, 'value');
      expect(new RegExp(RAILS_KEY_PATTERN, 'u').test(key), key).toBe(!('problem' in (await railsFormBody(form))));
    }
  });
});
