// The mail server notifications are sent through.
import { z } from 'zod';
import { optional, setting, type SettingDeclaration } from './declare.ts';

export const MAIL_SETTINGS = {
  SMTP_URL: setting({
    schema: optional(
      z
        .string()
        .trim()
        .refine((value) => /^smtps?:\/\/[^/\s]/.test(value), 'must be smtp://user:pass@host:port or smtps://…'),
    ),
    defaultInWords: 'none: notifications are logged',
    meaning: 'the mail server notifications are sent through, `smtp://user:pass@host:587` or `smtps://…`',
    confidential: true,
  }),
  MAIL_FROM: setting({
    schema: optional(z.string().trim()),
    default: 'Dealership Platform <no-reply@dealership.local>',
    meaning: 'sender of notifications',
  }),
} as const satisfies Record<string, SettingDeclaration>;
