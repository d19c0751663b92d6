# One image for both services: the command chooses gateway, engine or the all-in-one
# (deploy/compose.yaml runs the gateway and the engine apart, on MongoDB).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY openapi openapi
COPY plugins plugins
COPY services services
COPY sdk sdk
COPY scripts scripts
COPY tests tests
RUN npx tsc -p . && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0
# What the built services read at run time: their package.json (version), the served OpenAPI
# documents, and the example models.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY openapi/generated openapi/generated
COPY examples examples
USER node
EXPOSE 3000 3001
CMD ["node", "dist/services/all-in-one.js"]
