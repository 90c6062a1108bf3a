// The modules of src/schema, src/domain and src/notifications that step past the scoped client, each
// with its reason: declared once here, held by test/tenant-boundary.test.ts and rendered into
// ARCHITECTURE.md by `npm run docs`.

/** Modules of src/schema and src/domain that hold the unscoped client (`Db` or `context.unscopedDb`). */
export const UNSCOPED_CLIENT_HOLDERS: Readonly<Record<string, string>> = {
  'src/schema/redirect.ts, src/domain/redirects.ts':
    "The public stock-number redirect: no key, so no scope; it reads only the named dealership's website and car.",
  'src/schema/partner.ts, src/domain/partner-sign-on.ts':
    'The sign-on landing: the browser holds no key; the single-use token names the one row it reads.',
  'src/domain/websites.ts, src/domain/cars.ts':
    "Telling another dealership's website or car (403, as the spec answers) from a missing one (404): one id lookup.",
  'src/domain/phone-calls.ts': "Call-tracking providers' retries are recognised per key across dealerships (the dedupe record).",
  'src/domain/leads/files.ts, src/domain/leads/file-sweep.ts':
    'Pending attachment records belong to no dealership until their lead commits; the sweep runs with no caller.',
  'src/domain/leads/idempotency.ts': 'The purge of expired Idempotency-Key records runs with no caller.',
  'src/domain/api-key-calls.ts, src/domain/shared-settings.ts, src/domain/stored-secrets.ts':
    "The service's own records (the key-call log, deployment settings, encrypted secrets), read and written by the service and its CLIs, never by a caller.",
  'src/domain/trusted-documents.ts':
    "Client applications' published documents and their use: no dealership's rows; found by the gateway before any resolver runs, written by the documents CLI.",
  'src/domain/offers.ts':
    "An offer row written before its stored sanitised description existed gets it on its first read: a derived column of the catalogue row the caller's scoped client has just read (which refuses offer writes).",
};

/** Modules of src/schema, src/domain and src/notifications that run raw statements, which pass the scoped client by. */
export const RAW_STATEMENT_MODULES: Readonly<Record<string, string>> = {
  'src/domain/leads/create.ts':
    "The new lead's row and its files, in the dealership `reachesDealership` checked the key reaches; an updated lead's files, of the lead the caller has just read through its scoped client.",
  'src/domain/leads/contacts.ts': "The contacts of that dealership that match the lead's e-mail or phone.",
  'src/notifications/outbox.ts':
    "The notifications and their recipients: the lead's dealership with its users' addresses (read after `reachesDealership`), the user a lead names, a disabled subscription's dealership's users.",
  'src/domain/record-events.ts':
    "The change's event and its dealership's webhook subscriptions and deliveries; the caller has just written to that dealership.",
  'src/domain/car-updates.ts': 'The photos of the car the caller has just read through its scoped client.',
  'src/domain/leads/files.ts': 'Pending attachment records, which belong to no dealership until their lead commits.',
  'src/domain/leads/idempotency.ts, src/domain/api-key-calls.ts':
    "The service's own records (Idempotency-Key answers and their purge, the key-call log).",
  'src/notifications/worker.ts': "The outbox worker's claims, with no caller.",
  'src/domain/dealerships.ts':
    "The postcode search's ranking (`ORDER BY` distance `LIMIT` n, which Prisma cannot write): only the showrooms of the dealerships the caller's scoped client has just read.",
};

/** The modules a declaration names, one per entry of its comma-separated keys. */
export const modulesOf = (declaration: Readonly<Record<string, string>>): string[] =>
  Object.keys(declaration).flatMap((modules) => modules.split(',').map((module) => module.trim()));

const table = (heading: string, declaration: Readonly<Record<string, string>>): string =>
  [`| Module | ${heading} |`, '|---|---|', ...Object.entries(declaration).map(([modules, why]) => `| ${modules} | ${why} |`)].join('\n');

export const unscopedHoldersTable = (): string => table('Why it holds the unscoped client', UNSCOPED_CLIENT_HOLDERS);
export const rawStatementsTable = (): string => table('What its raw statements touch, and why that is safe', RAW_STATEMENT_MODULES);
