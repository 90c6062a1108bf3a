// Applied to every argument of every operation before it runs, so nothing downstream sees input outside them.

/** In UTF-16 code units, as JavaScript counts; a list of texts limits each entry. */
export const TEXT_MAX_LENGTHS: Readonly<Record<string, number>> = {
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
  features: 200,
  value: 1_000,
  images: 2_048,
  external_video_url: 2_048,
  locked_fields: 64,
  lead_state: 64,
  tags: 100,
  call_id: 128,
  CallSid: 128,
  fbclid: 500,
  description: 10_000,
  linkStopCommunication: 2_048,
  linkReplyAsAssistant: 2_048,
};

export const DEFAULT_TEXT_MAX_LENGTH = 255;

/** Attachment content is limited by its decoded size and the body limit instead. */
export const UNLIMITED_TEXT_FIELDS: ReadonlySet<string> = new Set(['LeadFileInput.file']);

export const MAX_JSON_DEPTH = 32;
/** Guards the stack, not the data: checked on the raw text before anything recurses over it. */
export const MAX_BODY_DEPTH = 1_024;
export const JSON_TEXT_MAX_LENGTH = 10_000;

export const INT32 = { min: -2_147_483_648, max: 2_147_483_647 } as const;

export const INT32_REASON = `must be a whole number from ${INT32.min} to ${INT32.max}`;

/** Digits within the id range only, so a longer number is looked up as a slug instead of overflowing the column. */
export function rowIdFromText(text: string): number | null {
  if (!/^\d{1,10}$/.test(text)) return null;
  const id = Number(text);
  return id <= INT32.max ? id : null;
}

export function textMaxLength(name: string): number {
  return TEXT_MAX_LENGTHS[name] ?? DEFAULT_TEXT_MAX_LENGTH;
}

/** No NUL, which PostgreSQL text cannot hold; lone surrogates stay out of the pattern, since Go's and Rust's regexes refuse them. */
export const TEXT_PATTERN = '^[^\\x00]*$';
const WELL_FORMED_TEXT = new RegExp(TEXT_PATTERN, 'u');

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

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

/** One loop, no parse and no recursion, so it can run before either on any input. */
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

export function nestingReason(limit: number = MAX_BODY_DEPTH): string {
  return `must not nest objects and lists more than ${limit} levels deep`;
}
