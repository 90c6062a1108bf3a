# syntax=docker/dockerfile:1
# The gateway's production image (docs/operations.md, "Production set-up"): dependencies, then the compiled
# build, then a runtime stage holding only the production dependencies, dist/ and the migrations,
# run by the unprivileged `node` user.

# Node 22 LTS, the exact release CI also runs the runtime tests on (.ci/run reads this line). Not Node 24:
# better-sqlite3 12.6 aborts at a worker's teardown there (RemoveEnvironmentCleanupHook assertion).
# TODO(digest): pin by digest (`node:22.23.3-bookworm-slim@sha256:…`, from
# `docker buildx imagetools inspect node:22.23.3-bookworm-slim`); no container registry is reachable
# where this file was written, so the digest could not be read, and none is made up.
ARG NODE_IMAGE=node:22.23.3-bookworm-slim

# ── deps: every dependency, from the lock file ──
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# better-sqlite3 (Prisma 7's SQLite adapter) is compiled from source at install: no prebuilt binary
# of the version Prisma 7 wants is published for every platform (see .ci/run).
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
# What `npm ci` needs: its postinstall generates the Prisma clients from prisma/schema.prisma.
COPY package.json package-lock.json prisma.config.ts tsconfig.json ./
COPY scripts ./scripts
COPY prisma ./prisma
RUN npm ci --no-audit --no-fund

# ── build: the bundle in dist/, then the development dependencies removed ──
FROM deps AS build
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# ── runtime: compiled output and production dependencies only ──
FROM ${NODE_IMAGE} AS runtime
# One malloc arena: the service's threads share it, which keeps the resident size down (docs/benchmarks.md, "Benchmark").
ENV NODE_ENV=production PORT=4000 MALLOC_ARENA_MAX=1
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/prisma/migrations ./prisma/migrations
# Root owns the files; the service only reads them (its data lives in PostgreSQL, Redis and S3).
USER node
EXPOSE 4000
# Slim images have no curl: Node's own fetch asks /ready (503 while draining or without a database).
# (On Kubernetes the probes of deploy/kubernetes take this role: a HEALTHCHECK is Docker's.)
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# What `npm run start:production` runs, without npm in between: node is PID 1's only child
# (compose's `init: true`) and gets SIGTERM itself, so a stop drains (docs/operations.md, "Stopping").
CMD ["node", "--max-semi-space-size=16", "--heap-growing-percent=30", "dist/src/index.js"]
