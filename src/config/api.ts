// What the API itself offers: its explorers, its contact, the GraphQL cost bound, the lead sources it accepts.
import { z } from 'zod';
import { DEFAULT_THIRD_PARTY_MARKETING_SOURCES, DEFAULT_THIRD_PARTY_SOURCES } from '../domain/leads/values.ts';

// The one module of the settings that reads the spec's lead values (the rooms' rule names it):
// the rest of src/config/ takes them from here.
export { leadSourceLists, type LeadSourceLists } from '../domain/leads/values.ts';
import { commaList, optional, positiveWholeNumber, setting, trueOrFalse, type SettingDeclaration } from './declare.ts';

/** The default of GRAPHQL_MAX_COST (src/schema/graphql-limits.ts explains the cost). */
export const DEFAULT_GRAPHQL_MAX_COST = 5_000;

export const API_SETTINGS = {
  LEAD_EXTRA_SOURCES: setting({
    schema: commaList,
    default: DEFAULT_THIRD_PARTY_SOURCES.join(','),
    defaultInWords: 'the Australian listing and social channels in "Decisions where the spec is silent", Leads',
    meaning: 'comma-separated third-party lead sources; they replace the default list (`""` for none)',
    emptyIsAValue: true,
  }),
  LEAD_EXTRA_MARKETING_SOURCES: setting({
    schema: commaList,
    default: DEFAULT_THIRD_PARTY_MARKETING_SOURCES.join(','),
    defaultInWords: 'the paid and social channels in "Decisions where the spec is silent", Leads',
    meaning: 'comma-separated third-party marketing sources; they replace the default list (`""` for none)',
    emptyIsAValue: true,
  }),
  API_CONTACT_EMAIL: setting({
    schema: optional(z.string().trim().email('must be an e-mail address (api-support@example.com)')),
    meaning: 'the support address the OpenAPI document gives integrators (its `info.contact`, beside the `/docs` page)',
  }),
  EXPLORERS: setting({
    schema: trueOrFalse,
    defaultInWords: '`on` unless `NODE_ENV=production`',
    meaning: 'serve GraphiQL (`/graphql` in a browser) and Swagger UI (`/docs`)',
  }),
  GRAPHQL_MAX_COST: setting({
    schema: positiveWholeNumber,
    default: String(DEFAULT_GRAPHQL_MAX_COST),
    meaning: 'the highest estimated cost one GraphQL operation may have (see GraphQL, Limits)',
  }),
} as const satisfies Record<string, SettingDeclaration>;
