import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

export function normalizePhone(raw: string): string | null {
  const text = raw.trim();
  if (!/^[+\d\s().-]{6,20}$/.test(text)) return null;
  const parsed = parsePhoneNumberFromString(text, 'AU');
  if (!parsed?.isValid()) return null;
  return parsed.number;
}

/** A subset of what normalizePhone accepts, for the OpenAPI document's generated examples. */
export const PHONE_EXAMPLE_PATTERN = '^(?:(?:\\+61 ?|0)4[0-3][0-9] ?[0-9]{3} ?[0-9]{3}|(?:\\+61 ?|0)[23] ?[0-2][0-9]{3} ?[0-9]{4})$';
