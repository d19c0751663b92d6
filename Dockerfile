# One image for both services: the command chooses gateway, engine or the all-in-one
# (deploy/compose.yaml runs the gateway and the engine apart, on MongoDB).
# tests/deploy/image-build.test.ts builds what this file builds, without Docker, and runs a leave
# request through the result: it fails on an instruction it does not know, so change both together.
FROM node:20-bookworm-slim AS build
# better-sqlite3 is a native module: npm ci takes its prebuilt binary when one can be downloaded
# for the platform, and compiles it otherwise, with python3, make and g++, which the slim image
# lacks. They stay in this stage; the runtime stage below gets the built module only.
# hadolint ignore=DL3008
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# The build context is the repository less .dockerignore.
COPY . .
# tsconfig.build.json compiles the services without their tests and test support, and esbuild
# bundles the console (console/, served by the gateway at /console) into dist/console/; then the
# devDependencies go.
RUN npx tsc -p tsconfig.build.json && node scripts/build/console.mjs && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
WORKDIR /app
# NODE_OPTIONS: package.json's `config.nodeOptions`, which `npm start` and `make run` pass too (a
# young generation of 64 MB, docs/production.md#the-young-generation).
ENV NODE_ENV=production HOST=0.0.0.0 NODE_OPTIONS=--max-semi-space-size=64
# What the services run and read: their package.json (version), production dependencies, the built
# code (the console's bundle in dist/console/ among it), and the OpenAPI documents they serve.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/openapi/generated/engine.openapi.json /app/openapi/generated/gateway.openapi.json openapi/generated/
# The embedded store's default DATA_DIR (./.data), the one place the services write, belongs to the
# user they run as (mount a volume there to keep it).
RUN install -d -o node -g node .data
USER node
EXPOSE 3000 3001
CMD ["node", "dist/services/all-in-one.js"]
