# Tessera in a container: the pinned Node.js comes with `npm ci` (the devDependency `node`), so any
# Debian base with npm works. Build: docker build -t tessera .  Run: see compose.yaml.
FROM node:24-bookworm-slim
WORKDIR /opt/tessera
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY examples ./examples
USER node
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 TESSERA_METRICS_HOST=0.0.0.0
EXPOSE 3000 9464
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:3000/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node_modules/.bin/node", "--max-semi-space-size=8", "src/main.ts"]
