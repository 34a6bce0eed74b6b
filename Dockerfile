# Temporal Memory Service: one image for every process of the service.
#
#   docker build -t tms .
#   docker run --rm -e DATABASE_URL=... tms node dist/bin/svc.mjs migrate     # operator CLI
#   docker run --rm -p 8080:8080 -e DATABASE_URL=... tms                        # gateway (default command)
#   docker run --rm -e DATABASE_URL=... -e INDEXER_METRICS_PORT=9464 \
#          -e HEALTHCHECK_URL=http://127.0.0.1:9464/healthz tms node dist/bin/indexer.mjs   # indexer
#
# Two stages: `build` installs the whole workspace, compiles the services with esbuild
# (`pnpm build`: dist/bin/{gateway,indexer,svc}.mjs with source maps) and then prunes the install
# to production dependencies; `runtime` keeps only the bundles and that pruned install, runs as
# the unprivileged `node` user under tini, and starts `node` directly (no pnpm, no tsx).

# Node 22 LTS (maintained until April 2027); Node 20 reached its end of life on 2026-04-30.
ARG NODE_IMAGE=node:22-bookworm-slim

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
ARG PNPM_VERSION=10
# Use the pnpm installed here as is: never switch to the exact `packageManager` version.
ENV npm_config_manage_package_manager_versions=false \
    npm_config_update_notifier=false
RUN npm i -g "pnpm@${PNPM_VERSION}" && npm cache clean --force && pnpm --version
WORKDIR /app
# Dependencies first, from the lockfile (and the patch it names) alone, so this layer survives
# source edits.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
COPY patches ./patches
RUN pnpm fetch
COPY . .
# Full install (esbuild and tsx build the bundles), build, then drop the dev dependencies in
# place: the bundles' links into node_modules/.pnpm stay valid, as the paths do not change.
RUN pnpm install --frozen-lockfile --offline \
    && pnpm build \
    && pnpm install --prod --frozen-lockfile --offline --ignore-scripts

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# tini as PID 1: signals reach node, and zombies are reaped.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# The bundles, the migrations they apply and their links to third-party packages...
COPY --from=build /app/dist ./dist
# ...which resolve into the pruned production install (symlinks copied as they are).
COPY --from=build /app/node_modules ./node_modules
# The directories the service writes to: /data (DEV_AUTH keys, embedded PGlite when no
# DATABASE_URL) and /secrets (`svc search create-key --output`; a new volume mounted there takes
# this owner, so the unprivileged user can write it).
RUN mkdir -p /data /secrets && chown node:node /data /secrets
ENV NODE_ENV=production \
    PORT=8080 \
    DATA_DIR=/data
USER node
EXPOSE 8080
# The gateway's readiness; the indexer points HEALTHCHECK_URL at its own /healthz (see above).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=6 \
    CMD ["node", "-e", "fetch(process.env.HEALTHCHECK_URL||`http://127.0.0.1:${process.env.PORT||8080}/readyz`).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--enable-source-maps", "--max-old-space-size=1024", "dist/bin/gateway.mjs"]
