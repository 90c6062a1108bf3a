// The spec names only some sources: the third-party ones change with partnerships, so a default
// list ships and a deployment replaces it by setting (data, not code).

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

export const DOCUMENTED_MARKETING_SOURCES = ['Organic', 'Unknown', 'QR Code', 'Email', 'SMS', 'Popup', 'CRM'] as const;

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

export const MAX_LEAD_FILES = 5;

/** A longer delay is a client's mistake, not a plan. */
export const MAX_NOTIFICATION_DELAY_MINUTES = 7 * 24 * 60;

export const LEAD_UPDATE_WINDOW_MS = 72 * 60 * 60 * 1000;

export type LeadSourceLists = { sources: readonly string[]; marketingSources: readonly string[] };

export function leadSourceLists(
  thirdPartySources: readonly string[] = DEFAULT_THIRD_PARTY_SOURCES,
  thirdPartyMarketingSources: readonly string[] = DEFAULT_THIRD_PARTY_MARKETING_SOURCES,
): LeadSourceLists {
  return {
    sources: [...new Set([...DOCUMENTED_LEAD_SOURCES, ...thirdPartySources])],
    marketingSources: [...new Set([...DOCUMENTED_MARKETING_SOURCES, ...thirdPartyMarketingSources])],
  };
}

/** Compared without regard to case, so the stored value is always the list's own spelling. */
export function listedValue(value: string, allowed: readonly string[]): string | null {
  const lower = value.toLowerCase();
  return allowed.find((candidate) => candidate.toLowerCase() === lower) ?? null;
}

export const notListedReason = (allowed: readonly string[], value: unknown): string =>
  `must be one of: ${allowed.join('; ')}. Got "${String(value)}"`;
