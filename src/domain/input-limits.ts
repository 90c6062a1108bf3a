// What any text or JSON input may be, whatever the operation and whichever door it came through:
// the one table of maximum lengths, the nesting limit for free-form JSON, and the rule that text is
// well-formed Unicode. src/gateway/input-checks.ts applies them to every argument of every operation before
// it runs, so no resolver, domain function or database driver sees input outside them.

/**
 * Maximum length, in characters (UTF-16 code units, as JavaScript counts them), of text inputs by
 * field or argument name; every other text input has DEFAULT_TEXT_MAX_LENGTH. A list of texts
 * (`tags`, `images`) limits each entry. docs/errors.md's "Input limits" table is this one.
 */
export const TEXT_MAX_LENGTHS: Readonly<Record<string, number>> = {
  // People and their words
  name: 200,
  last_name: 200,
  email: 254,
  user_email: 254,
  phone: 64,
  called_number: 64,
  caller_number: 64,
  customer_address: 500,
  street: 200,
  city: 100,
  state: 100,
  state_long: 100,
  country: 100,
  message: 10_000,
  dealercomments: 10_000,
  // Car details
  features: 200,
  value: 1_000,
  images: 2_048,
  external_video_url: 2_048,
  locked_fields: 64,
  // Lead bookkeeping
  lead_state: 64,
  tags: 100,
  // Provider references
  call_id: 128,
  CallSid: 128,
  fbclid: 500,
  // Lead events' message detail
  description: 10_000,
  linkStopCommunication: 2_048,
  linkReplyAsAssistant: 2_048,
};

export const DEFAULT_TEXT_MAX_LENGTH = 255;

/**
 * Attachment content (base64) is limited by its decoded size, LEAD_FILE_MAX_BYTES, and the request
 * body limit, not by this table (src/domain/leads/files.ts).
 */
export const UNLIMITED_TEXT_FIELDS: ReadonlySet<string> = new Set(['LeadFileInput.file']);

/** Free-form JSON (lead.fields, lead.charge_breakdown) nests at most this deep. */
export const MAX_JSON_DEPTH = 32;
/**
 * A whole request body (or a JSON parameter) nests at most this deep. It guards the stack, not the
 * data: checked on the raw text before it is parsed (src/gateway/input-checks.ts, jsonNestingExceeds), so a
 * body nested thousands deep is refused before anything recurses over it (parsers, the input checks,
 * serialisers). Below it, MAX_JSON_DEPTH applies and names the field (`lead.fields`).
 */
export const MAX_BODY_DEPTH = 1_024;
/** Each text inside free-form JSON, keys included, is at most this long. */
export const JSON_TEXT_MAX_LENGTH = 10_000;

/**
 * Whole numbers in: GraphQL's Int, and so every integer argument, input field and REST parameter, and
 * row ids (PostgreSQL integer) are 32-bit signed.
 */
export const INT32 = { min: -2_147_483_648, max: 2_147_483_647 } as const;

/** Why a whole number is refused as an Int, the same words on both doors and in the document. */
export const INT32_REASON = `must be a whole number from ${INT32.min} to ${INT32.max}`;

/**
 * The row id that an identifier given as text ("id, slug or custom slug") names, or null when the
 * text is not one: digits only, and within the database's id range, so a longer number is looked
 * up as a slug instead of overflowing the database's integer.
 */
export function rowIdFromText(text: string): number | null {
  if (!/^\d{1,10}$/.test(text)) return null;
  const id = Number(text);
  return id <= INT32.max ? id : null;
}

export function textMaxLength(name: string): number {
  return TEXT_MAX_LENGTHS[name] ?? DEFAULT_TEXT_MAX_LENGTH;
}

/**
 * Text as every text input must be, as a JSON Schema pattern: no NUL character (U+0000), which
 * PostgreSQL text and jsonb cannot hold. The OpenAPI document states it for every text input, and
 * textProblem checks it. Unpaired surrogates, which textProblem also refuses, are not in the pattern:
 * Go's and Rust's regular expressions refuse a surrogate in a pattern, and a string they decode from
 * JSON cannot hold one anyway.
 */
export const TEXT_PATTERN = '^[^\\x00]*$';
const WELL_FORMED_TEXT = new RegExp(TEXT_PATTERN, 'u');

// A high surrogate not followed by a low one, or a low one not preceded by a high one: text that is
// not Unicode (JSON's "\ud800"), which no database stores and no e-mail can carry.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why this text is refused, or null when it may be used. */
export function textProblem(text: string, maxLength: number): string | null {
  if (LONE_SURROGATE.test(text)) return 'must be valid Unicode text (it contains an unpaired surrogate)';
  // PostgreSQL text and jsonb cannot hold U+0000, so no engine may be handed one.
  if (!WELL_FORMED_TEXT.test(text)) return 'must not contain the NUL character (U+0000)';
  if (text.length > maxLength) return `must be at most ${maxLength} characters`;
  return null;
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text (as UTF-8 bytes or a string) nests objects and lists more than `limit` deep, found
 * by one loop over it: no parse, no recursion, so it can run before either on any input. Brackets
 * inside strings do not count; text that is not JSON is measured the same way and left to the parser.
 */
export function jsonNestingExceeds(text: Uint8Array | string, limit: number = MAX_BODY_DEPTH): boolean {
  const at = typeof text === 'string' ? (index: number) => text.charCodeAt(index) : (index: number) => text[index] as number;
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = at(index);
    if (inString) {
      if (code === BACKSLASH) index += 1;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth += 1;
      if (depth > limit) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) depth -= 1;
  }
  return false;
}

/** The refusal of a body or parameter nested too deep, in the words of the other input problems. */
export function nestingReason(limit: number = MAX_BODY_DEPTH): string {
  return `must not nest objects and lists more than ${limit} levels deep`;
}
