// The closed value lists of a lead (spec 2.7.1–2.7.3 and 2.7's file and document types), in one
// place. The spec documents only some source and marketing_source values by name: the others are
// third-party company and channel names, which change with the platform's partnerships, so they are
// configuration (LEAD_EXTRA_SOURCES, LEAD_EXTRA_MARKETING_SOURCES: comma-separated), not code.

export const LEAD_CATEGORIES = [
  'New Vehicle Enquiry',
  'Used Vehicle Enquiry',
  'Test Drive Booking',
  'Special Offer Enquiry',
  'Fleet Enquiry',
  'Finance Enquiry',
  'Insurance Enquiry',
  'Subscription Enquiry',
  'Team Member Enquiry',
  'Vehicle Reservation',
  'Online Purchase',
  'Brochure Download',
  'Document Request',
  'Trade-in Enquiry',
  'Sell My Car Enquiry',
  'Service Booking',
  'Service Enquiry',
  'Parts Enquiry',
  'Service Retention',
  'Loan Car Booking',
  'General Enquiry',
  'Survey',
  'Competition Enquiry',
  'Phone Call',
  'Event Enquiry',
] as const;

export const TEAM_MEMBER_ENQUIRY = 'Team Member Enquiry';
export const DOCUMENT_REQUEST = 'Document Request';

/** Spec 2.7.2's documented sources; the 16 third-party ones come from LEAD_EXTRA_SOURCES. */
export const DOCUMENTED_LEAD_SOURCES = [
  'Walk In',
  'Website',
  'Event',
  'Chatbot',
  'Chatbot - External',
  'QR Code',
  'Phone Call',
  'SMS',
  'Connect',
  'Manufacturer',
  'Mobile App',
  'Repeat',
  'Bulk SMS Campaign',
  'Retention',
] as const;

/** Spec 2.7.3's documented marketing sources; the 10 third-party ones come from LEAD_EXTRA_MARKETING_SOURCES. */
export const DOCUMENTED_MARKETING_SOURCES = ['Organic', 'Unknown', 'QR Code', 'Email', 'SMS', 'Popup', 'CRM'] as const;

export const DOCUMENT_TYPES = ['car_analysis', 'ppsr', 'equifax'] as const;

export const LEAD_FILE_TYPES = ['resume', 'cover_letter', 'other'] as const;
export type LeadFileType = (typeof LEAD_FILE_TYPES)[number];

/** A lead carries at most this many attachments (create and later updates together). */
export const MAX_LEAD_FILES = 5;

/** Notification delays are capped at a week: a longer one is a client's mistake, not a plan. */
export const MAX_NOTIFICATION_DELAY_MINUTES = 7 * 24 * 60;

/** Leads of up to this age can be updated (spec 3 and 8: "at most 3 days"). */
export const LEAD_UPDATE_WINDOW_MS = 72 * 60 * 60 * 1000;

function listFromEnv(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
}

/** Read at each call, so a deployment changes the list with its environment and no code. */
export function leadSources(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  return [...new Set([...DOCUMENTED_LEAD_SOURCES, ...listFromEnv(env.LEAD_EXTRA_SOURCES)])];
}

export function marketingSources(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  return [...new Set([...DOCUMENTED_MARKETING_SOURCES, ...listFromEnv(env.LEAD_EXTRA_MARKETING_SOURCES)])];
}
