// parseDayMonthYear (src/domain/dates.ts): the strict day/month/year reading shared by cars and leads.
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { parseDayMonthYear } from '../src/domain/dates.ts';

describe('parseDayMonthYear', () => {
  it.each([
    ['31/12/2026', '2026-12-31'],
    ['1/2/2026', '2026-02-01'],
    ['01/02/2026', '2026-02-01'],
    ['29/02/2024', '2024-02-29'],
    ['29/02/2000', '2000-02-29'],
    [' 9/7/1985 ', '1985-07-09'],
    ['2026-12-31', '2026-12-31'],
    ['0099-01-01', '0099-01-01'],
  ])('reads %s as %s at midnight UTC', (text, iso) => {
    const date = parseDayMonthYear(text, 'car.build_date');
    expect(date.toISOString()).toBe(`${iso}T00:00:00.000Z`);
  });

  it.each([
    '31/02/2026',
    '29/02/2025',
    '29/02/1900',
    '31/04/2026',
    '0/1/2026',
    '1/0/2026',
    '1/13/2026',
    '12/31/2026',
    '1/1/26',
    '2026/12/31',
    '31-12-2026',
    '31.12.2026',
    '2026-2-1',
    '2026-02-30',
    '0000-01-01',
    '',
    'today',
    '31/12/2026T00:00',
  ])('refuses %j with an invalid_input error naming the field', (text) => {
    let caught: unknown;
    try {
      parseDayMonthYear(text, 'lead.dob');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GraphQLError);
    expect((caught as GraphQLError).extensions).toEqual({ code: 'BAD_USER_INPUT', error: 'invalid_input', field: 'lead.dob' });
    expect((caught as GraphQLError).message).toMatch(/^lead\.dob: /);
  });
});
