// The rooms of src/ and the one direction they use each other in (ARCHITECTURE.md, "Rooms"):
// `npm run lint:deps`, part of `npm test`. A room may use the rooms below it, never one above, and
// no module may reach itself again through its imports.
/** Rooms from the top (the process) to the bottom (settings, errors, the log). */
const rooms = [
  ['entry', '^src/(index|service|startup)\\.ts$'],
  ['http', '^src/http/'],
  ['gateway', '^src/(gateway|rate-limit|redis)/'],
  ['rest', '^src/rest/'],
  ['schema', '^src/schema/'],
  ['context', '^src/context\\.ts$'],
  ['domain', '^src/(domain|notifications|storage)/'],
  ['auth', '^src/auth/'],
  ['db', '^src/db/'],
  ['telemetry', '^src/telemetry/'],
  ['base', '^src/(config|lib|web)/|^src/(errors|logger)\\.ts$'],
];

/** The imports that run against the direction, each for its reason. Nothing else may. */
const againstTheDirection = [
  // errors → db: a database that did not answer is 503 `unavailable`, never a masked 500; telling
  // it is the database client's knowledge.
  { from: '^src/errors\\.ts$', to: '^src/db/unavailable\\.ts$' },
  // settings → domain: the lead sources a deployment adds are checked against the spec's own list.
  { from: '^src/config/settings\\.ts$', to: '^src/domain/leads/values\\.ts$' },
  // db → domain: preparing the database at start encrypts any secret still stored in plain text.
  { from: '^src/db/prepare\\.ts$', to: '^src/domain/stored-secrets\\.ts$' },
  // telemetry → db: the pool gauges read the database client's pool.
  { from: '^src/telemetry/metrics\\.ts$', to: '^src/db/client\\.ts$' },
];

const abovePathOf = (index) =>
  rooms
    .slice(0, index)
    .map(([, path]) => `(${path})`)
    .join('|');
const roomOf = (file) => rooms.findIndex(([, path]) => new RegExp(path).test(file));
const sample = (pattern) => pattern.replace(/^\^|\$$/g, '').replace(/\\\./g, '.');

const forbidden = [
  {
    name: 'no-circular',
    severity: 'error',
    comment: 'A module never reaches itself again through its imports.',
    from: { path: '^src/' },
    to: { circular: true },
  },
  ...rooms.slice(1).map(([name, path], offset) => ({
    name: `${name}-uses-only-rooms-below`,
    severity: 'error',
    comment: `${name} may not import a room above it`,
    from: { path, pathNot: againstTheDirection.filter((pair) => roomOf(sample(pair.from)) === offset + 1).map((pair) => pair.from) },
    to: { path: abovePathOf(offset + 1) },
  })),
  // Each module with an allowed exception: the rule of its room, less the one target it may reach.
  ...againstTheDirection.map((pair) => ({
    name: `${rooms[roomOf(sample(pair.from))][0]}-uses-only-rooms-below`,
    severity: 'error',
    comment: 'the rule of its room, but for the one import ARCHITECTURE.md explains',
    from: { path: pair.from },
    to: { path: abovePathOf(roomOf(sample(pair.from))), pathNot: pair.to },
  })),
];

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
