# The extscope collector and its dashboard. Build: docker build -t extscope .
# (`--target demo` builds the demo fleet instead: see docker-compose.yml, profile "demo".)
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles its native addon at install time.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json ./
COPY contract ./contract
# The agent is a workspace of the root package (agent/package.json), built first by `npm run build`.
COPY agent ./agent
COPY collector ./collector
COPY dashboard ./dashboard
COPY scripts ./scripts
COPY bin ./bin
COPY migrations ./migrations
RUN npm install --no-audit --no-fund

# The demo fleet (scripts/demo.mjs --collector …): instrumented MCP servers and SDK clients, which need the
# development dependencies (the MCP SDKs).
FROM build AS demo
COPY demo ./demo
USER node
CMD ["node", "scripts/demo.mjs", "--collector", "http://collector:4318", "--dashboard-url", "http://localhost:4318"]

FROM build AS production-modules
RUN npm prune --omit=dev

# The default target (the last stage): the collector alone.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=production-modules /app/package.json ./
COPY --from=production-modules /app/node_modules ./node_modules
# The agent package (the CLI's wrap and proxy): an npm workspace, linked from node_modules/@extscope/agent.
COPY --from=build /app/agent/package.json ./agent/package.json
COPY --from=build /app/agent/dist ./agent/dist
COPY --from=build /app/dist ./dist
COPY --from=build /app/dashboard/dist ./dashboard/dist
COPY --from=build /app/migrations ./migrations
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# 4318: OTLP/HTTP, the API and the dashboard; 4317: OTLP/gRPC (the default of --grpc-port).
EXPOSE 4318 4317
# Listening beyond loopback requires EXTSCOPE_INGEST_TOKEN and EXTSCOPE_READ_TOKEN (the collector refuses otherwise).
CMD ["node", "dist/bin/extscope.js", "collector", "--host", "0.0.0.0", "--port", "4318", "--db", "/data/extscope.db"]
