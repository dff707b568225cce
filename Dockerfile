FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# patch-package applies patches/ after the install (docs/performance.md: graphql-jit's leaf checks).
COPY patches ./patches
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# patch-package applies patches/ after the install (docs/performance.md: graphql-jit's leaf checks).
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund
COPY --from=build /app/dist ./dist
# Where a key file may live when SECRET_ENCRYPTION_KEYS is not given (docker-compose.yml mounts a volume here).
RUN mkdir -p /home/node/keys && chown node:node /home/node/keys
USER node
EXPOSE 3000
# Heap cap from package.json config.nodeFlags (docs/performance.md); exec keeps node as PID 1 for SIGTERM.
CMD ["sh", "-c", "exec node $(node -p \"require('./package.json').config.nodeFlags\") dist/src/main.js"]
