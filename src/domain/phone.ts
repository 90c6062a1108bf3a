// Phone numbers in one normal form (E.164, e.g. +61412345678), used for leads, contacts and the
// call-tracking numbers phone webhooks report. Numbers without a country code are Australian.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** E.164 for a valid number (04xx xxx xxx, (03) 9xxx xxxx, +61 4xx…, 1300/1800 numbers…), else null. */
export function normalizePhone(raw: string): string | null {
  const text = raw.trim();
  if (!/^[+\d\s().-]{6,20}$/.test(text)) return null;
  const parsed = parsePhoneNumberFromString(text, 'AU');
  if (!parsed || !parsed.isValid()) return null;
  return parsed.number;
}
