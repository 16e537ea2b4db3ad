# syntax=docker/dockerfile:1
# `catalog serve` as a container: a stateless instance over PostgreSQL (docs/deploy.md).
#
#   docker build -t catalog .
#   docker run --rm -p 3000:3000 -p 3001:3001 --env-file catalog.env catalog
#
# Configured by the environment only: every flag of `catalog serve` has a CATALOG_* variable, and
# PostgREST's PGRST_* names are read too (docs/service.md). catalog.env (chmod 600) holds at least
#   CATALOG_DATABASE_URL=postgres://catalog:…@db:5432/catalog   (or PGRST_DB_URI)
#   CATALOG_JWT_SECRET=…                                         (or PGRST_JWT_SECRET; 32+ characters, a JWK or a JWKS)
# Without a JWT secret the service refuses to listen on 0.0.0.0 (exit 2); without a database URL
# it serves an embedded catalog in /var/lib/catalog (mount a volume there; one container only).
# Arguments after the image name are `catalog serve` flags: `docker run … catalog --workers 2`.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: install from the lockfile, compile, pack, and install the package's production dependencies
FROM ${NODE_IMAGE} AS build
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: package.json's `dependencies` script (npm run build) would run before the sources are here
RUN npm ci --ignore-scripts
COPY tsconfig*.json README.md LICENSE ./
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
COPY migrations ./migrations
COPY fixtures/seed ./fixtures/seed
# The npm package as `npm publish` would ship it (the bundle, the embedded-catalog template, the man
# page, the sample catalog), unpacked into /opt/catalog with the lockfile's production dependencies.
RUN npm run build \
 && npm pack --ignore-scripts --pack-destination /tmp \
 && mkdir -p /opt/catalog \
 && tar -xzf /tmp/music-catalog-cli-*.tgz -C /opt/catalog --strip-components=1 \
 && cp package-lock.json /opt/catalog/ \
 && cd /opt/catalog \
 && npm ci --omit=dev --ignore-scripts --prefer-offline \
 && rm package-lock.json

# ---- runtime: node and the package, run as an unprivileged user
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    CATALOG_HOST=0.0.0.0 \
    CATALOG_PORT=3000 \
    CATALOG_ADMIN_PORT=3001 \
    CATALOG_LOG_FORMAT=json \
    CATALOG_DATA=/var/lib/catalog/data \
    XDG_CACHE_HOME=/var/cache/catalog
RUN groupadd --system --gid 10001 catalog \
 && useradd --system --uid 10001 --gid catalog --home-dir /var/lib/catalog --no-create-home --shell /usr/sbin/nologin catalog \
 && install -d -o catalog -g catalog -m 0700 /var/lib/catalog /var/cache/catalog
COPY --from=build /opt/catalog /opt/catalog
RUN ln -s /opt/catalog/bin/catalog.js /usr/local/bin/catalog
USER 10001:10001
# Writes the CLI's V8 code cache into the image (/var/cache/catalog), so a start compiles nothing
# and a container run with --read-only writes nothing outside a data volume.
RUN catalog --version
EXPOSE 3000 3001
# Liveness: the admin port's /live (200 while the process serves). A load balancer asks /ready
# instead (503 while the database does not answer): docs/deploy.md.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.CATALOG_ADMIN_PORT||3001)+'/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM (docker stop) finishes the requests in flight and exits 0; SIGUSR2 or SIGHUP reloads the configuration.
STOPSIGNAL SIGTERM
ENTRYPOINT ["catalog", "serve"]
