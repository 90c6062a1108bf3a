// Written in the lead's transaction, so notifications exist exactly when the lead does and a slow or
// failing mail server never fails or slows a lead. One message per recipient, so one bouncing address
// does not hold back the others; the data model has no dealership mailbox, so its users it is.
import { requestTraceparent } from '../telemetry/tracing.ts';
import type { Prisma } from '../db/client.ts';
import type { ScopedTx } from '../db/scoped.ts';
import { insertRows } from '../db/insert-rows.ts';
import { isEmailAddress } from '../domain/leads/validation.ts';

export const CUSTOMER_EMAIL = 'lead_customer_email';
export const DEALERSHIP_NOTIFICATION = 'lead_dealership_notification';
export const WEBHOOK_DISABLED_NOTICE = 'webhook_subscription_disabled';

const MINUTE_MS = 60_000;

function usableAddresses(emails: readonly string[]): string[] {
  return [...new Set(emails.map((email) => email.trim()).filter(isEmailAddress))];
}

type DealershipWithStaff = NonNullable<Awaited<ReturnType<typeof dealershipWithStaff>>>;

/** One raw statement where Prisma would run two. */
export async function dealershipWithStaff(tx: ScopedTx, dealershipId: number) {
  const rows = await tx.$queryRaw<{ id: unknown; slug: string; name: string; email: string | null }[]>`
    SELECT dealerships.id, dealerships.slug, dealerships.name, users.email FROM dealerships
    LEFT JOIN dealership_users ON dealership_users.dealership_id = dealerships.id
    LEFT JOIN users ON users.id = dealership_users.user_id
    WHERE dealerships.id = ${dealershipId} ORDER BY users.id`;
  const [first] = rows;
  if (!first) return null;
  const staffEmails = rows.flatMap((row) => (row.email === null ? [] : [row.email]));
  return { id: Number(first.id), slug: first.slug, name: first.name, staffEmails };
}

async function dealershipRecipients(tx: ScopedTx, lead: Prisma.LeadModel, dealership: Pick<DealershipWithStaff, 'staffEmails'>) {
  const named = lead.team_member_id ?? lead.user_id;
  if (named === null) return usableAddresses(dealership.staffEmails);
  const users = await tx.$queryRaw<{ email: string }[]>`SELECT email FROM users WHERE id = ${named}`;
  return usableAddresses(users.map((user) => user.email));
}

/** Enqueued in the disabling transaction, so the people who can fix the receiver learn of it without reading logs. */
export async function enqueueWebhookDisabledNotice(
  tx: ScopedTx,
  subscription: { id: number; dealership_id: number; url: string; disabled_reason: string },
  now: Date,
): Promise<void> {
  const body = [
    `Webhook subscription #${subscription.id} stopped: ${subscription.disabled_reason}.`,
    '',
    `URL: ${subscription.url}`,
    '',
    'No more events are sent to it. Fix the receiver, then enable the subscription again',
    `(POST /api/v1/webhook_subscriptions/${subscription.id}/enable) and redeliver what it missed from its delivery log.`,
  ].join('\n');
  const staff = (await dealershipWithStaff(tx, subscription.dealership_id))?.staffEmails ?? [];
  const rows = usableAddresses(staff).map((recipient) => ({
    kind: WEBHOOK_DISABLED_NOTICE,
    lead_id: null,
    recipient,
    subject: `Webhook subscription #${subscription.id} was disabled`,
    body,
    due_at: now,
    created_at: now,
    traceparent: null,
  }));
  await insertRows(tx, 'outbox_messages', rows);
}

/** The same on every attempt, so a retry after a crash is recognisable downstream; created_at separates databases sharing an id. */
export function outboxMessageId(row: { id: number; created_at: Date }, mailFrom: string): string {
  const domain = /@([A-Za-z0-9.-]+)>?\s*$/.exec(mailFrom)?.[1] ?? 'dealership-gateway.invalid';
  return `<outbox-${row.id}-${row.created_at.getTime().toString(36)}@${domain}>`;
}

type OutboxRow = Pick<
  Prisma.OutboxMessageModel,
  'kind' | 'lead_id' | 'recipient' | 'subject' | 'body' | 'due_at' | 'created_at' | 'traceparent'
>;

type NotifiedCar = Pick<Prisma.CarModel, 'id' | 'year' | 'make' | 'model' | 'stocknum'>;

/** `knownCar`: the lead's car when the caller has just read it, so it is not read again. */
export async function enqueueLeadNotifications(
  tx: ScopedTx,
  lead: Prisma.LeadModel,
  dealership: Pick<DealershipWithStaff, 'name' | 'staffEmails'>,
  now: Date,
  knownCar?: NotifiedCar,
): Promise<void> {
  const car = !lead.car_id
    ? null
    : knownCar?.id === lead.car_id
      ? knownCar
      : await tx.car.findUnique({ where: { id: lead.car_id }, select: { id: true, year: true, make: true, model: true, stocknum: true } });
  const vehicle = car
    ? `${car.year} ${car.make} ${car.model} (stock number ${car.stocknum})`
    : lead.stocknum
      ? `stock number ${lead.stocknum}`
      : null;
  const name = [lead.name, lead.last_name].filter((part) => part).join(' ') || null;
  const traceparent = requestTraceparent();
  const rows: OutboxRow[] = [];
  const queue = (kind: string, recipient: string, subject: string, body: string, delayMinutes: number | null) =>
    // Header text: no line breaks from customer input.
    rows.push({
      kind,
      lead_id: lead.id,
      recipient,
      subject: subject.replace(/\s+/g, ' '),
      body,
      due_at: new Date(now.getTime() + (delayMinutes ?? 0) * MINUTE_MS),
      created_at: now,
      traceparent,
    });

  const customerEmail = lead.email?.trim();
  if (lead.send_customer_email && customerEmail && isEmailAddress(customerEmail)) {
    const body = [
      `Hi ${lead.name ?? 'there'},`,
      '',
      `Thank you for your ${lead.category.toLowerCase()} with ${dealership.name}. We have received it and a member of our team will be in touch shortly.`,
      ...(vehicle ? ['', `Vehicle: ${vehicle}`] : []),
      '',
      `Your reference: lead #${lead.id}`,
      '',
      dealership.name,
    ].join('\n');
    queue(CUSTOMER_EMAIL, customerEmail, `Thank you for your enquiry with ${dealership.name}`, body, lead.delay_customer_email_minutes);
  }

  const details: [string, string | null][] = [
    ['Lead', `#${lead.id}`],
    ['Category', lead.category],
    ['Source', lead.source],
    ['Marketing source', lead.marketing_source],
    ['Name', name],
    ['E-mail', lead.email],
    ['Phone', lead.phone],
    ['Vehicle', vehicle],
    ['Received', lead.created_at.toISOString()],
  ];
  const dealershipBody = [
    `A new lead arrived for ${dealership.name}.`,
    '',
    ...details.filter((entry): entry is [string, string] => entry[1] !== null).map(([label, value]) => `${label}: ${value}`),
    ...(lead.message ? ['', 'Message:', lead.message] : []),
  ].join('\n');
  const subject = `New lead #${lead.id}: ${lead.category}${name ? ` from ${name}` : ''}`;
  for (const recipient of await dealershipRecipients(tx, lead, dealership)) {
    queue(DEALERSHIP_NOTIFICATION, recipient, subject, dealershipBody, lead.delay_dealership_notification_minutes);
  }

  await insertRows(tx, 'outbox_messages', rows);
}
