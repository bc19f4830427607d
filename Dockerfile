# API and worker image. Build: docker build -t ride-delivery .   Run: see compose.yaml.
# scripts/run-dockerfile.mjs replays these steps without a Docker engine (CI does).

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The web console, built into dist/web (served by the API process).
COPY web ./web
COPY scripts/build-web.mjs scripts/build-stamp.mjs ./scripts/
RUN npm run build

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
# glibc gives a freed argon2id buffer (19 MiB per login) back to the system only while its threshold
# for mmap stays fixed; by default it rises to that size and each libuv thread keeps one (~78 MB
# after a few logins). See docs/operations.md.
ENV MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The code and dependencies stay root-owned and read-only to the process.
USER node
EXPOSE 3000 9465
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--enable-source-maps", "dist/server.js"]
