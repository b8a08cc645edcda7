#!/bin/sh
# Tessera's role and database, made by the PostgreSQL superuser once: the role owns its database (so
# it may create its tables in `public`, PostgreSQL 15+) and is not a superuser. The official postgres
# image runs this from /docker-entrypoint-initdb.d when its volume is first initialised (compose.yaml);
# it works against any server too: PGHOST=… POSTGRES_USER=postgres TESSERA_DB_PASSWORD=… sh postgres-init.sh
# The role's password comes from TESSERA_DB_PASSWORD, or from the file TESSERA_DB_PASSWORD_FILE names
# (a compose secret), as the image reads POSTGRES_PASSWORD_FILE.
set -eu
if [ -n "${TESSERA_DB_PASSWORD_FILE:-}" ]; then
  TESSERA_DB_PASSWORD=$(cat "$TESSERA_DB_PASSWORD_FILE")
fi
psql -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-postgres}" \
  --set=password="$TESSERA_DB_PASSWORD" <<'SQL'
CREATE ROLE tessera LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'password';
CREATE DATABASE tessera OWNER tessera;
SQL
