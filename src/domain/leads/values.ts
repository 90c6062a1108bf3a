// The closed value lists of a lead (spec 2.7.1–2.7.3 and 2.7's file and document types), in one
// place. The spec documents only some source and marketing_source values by name: the others are
// third-party company and channel names, which change with the platform's partnerships. A default
// list of the Australian listing and advertising channels ships with the service (so a lead tagged
// "carsales" is accepted on the first day), and a deployment replaces it with LEAD_EXTRA_SOURCES /
// LEAD_EXTRA_MARKETING_SOURCES (comma-separated; set to "" for none; src/config/settings.ts declares them): data,
// not code.

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

export type LeadCategory = (typeof LEAD_CATEGORIES)[number];

export const TEAM_MEMBER_ENQUIRY = 'Team Member Enquiry' satisfies LeadCategory;
export const DOCUMENT_REQUEST = 'Document Request' satisfies LeadCategory;

/** Spec 2.7.2's documented sources; the 16 third-party ones are DEFAULT_THIRD_PARTY_SOURCES or LEAD_EXTRA_SOURCES. */
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

/** Spec 2.7.3's documented marketing sources; the 10 third-party ones are DEFAULT_THIRD_PARTY_MARKETING_SOURCES or LEAD_EXTRA_MARKETING_SOURCES. */
export const DOCUMENTED_MARKETING_SOURCES = ['Organic', 'Unknown', 'QR Code', 'Email', 'SMS', 'Popup', 'CRM'] as const;

/**
 * The 16 third-party lead sources of 2.7.2 when LEAD_EXTRA_SOURCES is not set: the listing sites,
 * review sites and social channels Australian dealers receive enquiries from, by their usual
 * lower-case codes.
 */
export const DEFAULT_THIRD_PARTY_SOURCES = [
  'carsales',
  'autotrader',
  'drive',
  'gumtree',
  'carsguide',
  'carexpert',
  'redbook',
  'whichcar',
  'facebook',
  'facebook_marketplace',
  'instagram',
  'google',
  'bing',
  'youtube',
  'tiktok',
  'linkedin',
] as const;

/** The 10 third-party marketing sources of 2.7.3 when LEAD_EXTRA_MARKETING_SOURCES is not set: paid and social channels. */
export const DEFAULT_THIRD_PARTY_MARKETING_SOURCES = [
  'google',
  'facebook',
  'instagram',
  'tiktok',
  'youtube',
  'bing',
  'linkedin',
  'carsales',
  'autotrader',
  'drive',
] as const;

export const DOCUMENT_TYPES = ['car_analysis', 'ppsr', 'equifax'] as const;

export const LEAD_FILE_TYPES = ['resume', 'cover_letter', 'other'] as const;
export type LeadFileType = (typeof LEAD_FILE_TYPES)[number];

/** A lead carries at most this many attachments (create and later updates together). */
export const MAX_LEAD_FILES = 5;

/** Notification delays are capped at a week: a longer one is a client's mistake, not a plan. */
export const MAX_NOTIFICATION_DELAY_MINUTES = 7 * 24 * 60;

/** Leads of up to this age can be updated (spec 3 and 8: "at most 3 days"). */
export const LEAD_UPDATE_WINDOW_MS = 72 * 60 * 60 * 1000;

/** The source and marketing_source values a lead may have: the documented ones and the deployment's third-party ones. */
export interface LeadSourceLists {
  sources: readonly string[];
  marketingSources: readonly string[];
}

/**
 * The documented values with the given third-party ones (LEAD_EXTRA_SOURCES and
 * LEAD_EXTRA_MARKETING_SOURCES, declared in src/config/settings.ts), each value once.
 */
export function leadSourceLists(
  thirdPartySources: readonly string[] = DEFAULT_THIRD_PARTY_SOURCES,
  thirdPartyMarketingSources: readonly string[] = DEFAULT_THIRD_PARTY_MARKETING_SOURCES,
): LeadSourceLists {
  return {
    sources: [...new Set([...DOCUMENTED_LEAD_SOURCES, ...thirdPartySources])],
    marketingSources: [...new Set([...DOCUMENTED_MARKETING_SOURCES, ...thirdPartyMarketingSources])],
  };
}

/**
 * The listed value that `value` names, compared without regard to case ("Carsales", "CARSALES" and
 * "carsales" are one channel), so the stored value is always the list's own spelling; or null.
 */
export function listedValue(value: string, allowed: readonly string[]): string | null {
  const lower = value.toLowerCase();
  return allowed.find((candidate) => candidate.toLowerCase() === lower) ?? null;
}
