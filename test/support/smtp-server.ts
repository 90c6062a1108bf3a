// A real SMTP server for the tests and the scale run: it records what it accepted and what merely
// arrived (a sender that died before the reply did not deliver), and can be made slow or held.
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  text: string;
  /** The Message-ID header, as sent. */
  messageId: string;
}

export interface TestSmtpServer {
  url: string;
  /** Messages accepted: the server answered 250 on a connection that was still open. */
  received: ReceivedMail[];
  /** Every message whose content arrived, accepted or not (its sender may have died before the reply). */
  arrived: ReceivedMail[];
  /** When set, the server refuses every recipient with this reply. */
  rejectWith: string | null;
  /** A slow server: each message's reply waits this long after its content arrived. */
  replyDelayMs: number;
  /** When set, replies also wait for this (a test holds a message in flight). */
  holdReplies: Promise<void> | null;
  /** Called when a message's content has arrived, before the reply. */
  onArrival: ((mail: ReceivedMail) => void) | null;
  /** Whether the connection that sent this message has closed (its sender ended or died). */
  senderGone(mail: ReceivedMail): boolean;
  close(): Promise<void>;
}

function headerValue(raw: string, name: string): string {
  const match = new RegExp(`^${name}:\\s*((?:.*)(?:\\r?\\n[ \\t].*)*)`, 'im').exec(raw);
  return (match?.[1] ?? '').replace(/\r?\n[ \t]/g, ' ').trim();
}

function bodyText(raw: string): string {
  const body = raw
    .split(/\r?\n\r?\n/)
    .slice(1)
    .join('\n\n');
  // nodemailer sends plain text as quoted-printable when lines are long or non-ASCII.
  if (/content-transfer-encoding:\s*quoted-printable/i.test(raw)) {
    return Buffer.from(
      body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_all, hex: string) => String.fromCharCode(parseInt(hex, 16))),
      'latin1',
    ).toString('utf8');
  }
  if (/content-transfer-encoding:\s*base64/i.test(raw)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/** A real SMTP server on 127.0.0.1 (a free port), no TLS, no auth. */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const closedSessions = new Set<string>();
  const sessionOf = new WeakMap<ReceivedMail, string>();
  const state: TestSmtpServer = {
    url: '',
    received,
    arrived: [],
    rejectWith: null,
    replyDelayMs: 0,
    holdReplies: null,
    onArrival: null,
    senderGone: (mail) => closedSessions.has(sessionOf.get(mail) ?? ''),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const options: SMTPServerOptions = {
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (state.rejectWith) {
        const error = new Error(state.rejectWith) as Error & { responseCode: number };
        error.responseCode = 550;
        callback(error);
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw,
          subject: headerValue(raw, 'Subject'),
          text: bodyText(raw),
          messageId: headerValue(raw, 'Message-ID'),
        };
        sessionOf.set(mail, session.id);
        state.arrived.push(mail);
        state.onArrival?.(mail);
        const reply = (): void => {
          // A reply to a sender that is gone was never received: the message was not delivered.
          if (!closedSessions.has(session.id)) received.push(mail);
          callback();
        };
        if (state.replyDelayMs === 0 && !state.holdReplies) {
          reply();
          return;
        }
        const held = state.holdReplies ?? Promise.resolve();
        void Promise.all([held, new Promise((resolve) => setTimeout(resolve, state.replyDelayMs))]).then(reply);
      });
    },
    onClose(session) {
      closedSessions.add(session.id);
    },
  };
  const server = new SMTPServer(options);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  state.url = `smtp://127.0.0.1:${port}`;
  return state;
}
