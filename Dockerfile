# Tessera in a container. Node.js 24 is the base image's, at an exact version (a rebuild gets the same
# runtime; move it on deliberately), and the only Node.js in the image: `npm ci --omit=dev` installs
# the production dependencies and not the devDependency `node`, nor the test tools.
# Build: docker build -t tessera .   Run: compose.yaml, or docs/deployment.md ("Containers").
FROM node:24.20.0-trixie-slim
ENV NODE_ENV=production
WORKDIR /opt/tessera
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY src ./src
# Without DATABASE_URL the database is SQLite in /data, a volume the unprivileged `node` user owns (a
# named volume takes this ownership when it is first mounted), with the data folder beside it.
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
VOLUME /data
ENV HOST=0.0.0.0 PORT=3000 DATABASE_URL=sqlite:/data/tessera.db TESSERA_DATA_DIR=/data
USER node
EXPOSE 3000
# Liveness: /healthz answers while the process does (readiness, /readyz, is for routing: docs/production.md).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "-r", "./bin/check-node.cjs", "--max-semi-space-size=8", "src/main.ts"]
