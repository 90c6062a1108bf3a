// Without SMTP_URL mail is logged, so development and demos need no mail server and still show what would be sent.
import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../config/index.ts';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  /** The same on every attempt of one outbox message, so a receiver can spot a repeat. */
  messageId: string;
  traceparent?: string | null;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

export function createMailer(config: Pick<Config, 'smtpUrl' | 'mailFrom'>, logger: Logger): Mailer {
  if (!config.smtpUrl) {
    return {
      async send(mail) {
        logger.info({ mail: { from: config.mailFrom, ...mail } }, 'notification (no SMTP_URL: logged, not sent)');
      },
      close() {},
    };
  }
  const smtpUrl = config.smtpUrl;
  // nodemailer is loaded with the first message, not at start-up: most instances send none for a while.
  let transport: Promise<Transporter> | undefined;
  const connect = async (): Promise<Transporter> => {
    const { default: nodemailer } = await import('nodemailer');
    // Timeouts bound a hung server; the worker renews its lease on the message meanwhile.
    return nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 30_000 });
  };
  return {
    async send(mail) {
      transport ??= connect();
      await (await transport).sendMail({
        from: config.mailFrom,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        messageId: mail.messageId,
        ...(mail.traceparent ? { headers: { traceparent: mail.traceparent } } : {}),
      });
    },
    close() {
      void transport?.then(
        (opened) => opened.close(),
        () => undefined,
      );
    },
  };
}
