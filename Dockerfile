# Temporal Memory Service: one image for every process of the service.
#
#   docker build -t tms .
#   docker run --rm -e DATABASE_URL=... tms pnpm svc migrate        # operator CLI
#   docker run --rm -p 8080:8080 -e DATABASE_URL=... tms            # gateway (default command)
#   docker run --rm -e DATABASE_URL=... tms pnpm --filter @tms/indexer start   # indexer (later)
#
# The service runs TypeScript through tsx (a root devDependency), so the runtime keeps the full
# workspace install rather than a production-only one.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS base
ARG PNPM_VERSION=10
# Use the pnpm installed here as is: never switch to the exact `packageManager` version from
# package.json at run time (that would need the network on every start).
ENV npm_config_manage_package_manager_versions=false \
    npm_config_update_notifier=false
RUN npm i -g "pnpm@${PNPM_VERSION}" && npm cache clean --force && pnpm --version
WORKDIR /app

# ---------------------------------------------------------------------------------------------
FROM base AS build
# Dependencies first, from the lockfile alone, so this layer survives source edits.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --frozen-lockfile --offline

# ---------------------------------------------------------------------------------------------
FROM base AS runtime
# tini as PID 1 with -g: `docker stop` delivers SIGTERM to the whole process group, so the
# gateway behind `pnpm start` (which does not forward signals) shuts down cleanly.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /app /app
# The only directory the service writes to (DEV_AUTH keys, embedded PGlite when no DATABASE_URL).
RUN mkdir -p /data && chown node:node /data
ENV PORT=8080 \
    DATA_DIR=/data
USER node
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "-g", "--"]
CMD ["pnpm", "start"]
