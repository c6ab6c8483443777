#!/bin/bash
# The environment contract of the official postgres image, as far as deploy/k8s uses it:
# POSTGRES_USER, POSTGRES_DB, POSTGRES_PASSWORD (required for a first start), PGDATA. A first
# start initializes PGDATA with scram-sha-256 password authentication for network clients.
set -euo pipefail
if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}" "${PGDATA:=/var/lib/postgresql/data}"
export PGDATA
if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo 'Error: Database is uninitialized and superuser password is not specified (POSTGRES_PASSWORD).' >&2
    exit 1
  fi
  mkdir -p "$PGDATA" && chmod 0700 "$PGDATA"
  initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k /var/run/postgresql" -w start >/dev/null
  if [ "$POSTGRES_DB" != postgres ]; then
    psql -v ON_ERROR_STOP=1 -h /var/run/postgresql -U "$POSTGRES_USER" -d postgres -q -c "CREATE DATABASE \"$POSTGRES_DB\""
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "database initialized in $PGDATA" >&2
fi
if [ "$1" = postgres ]; then
  shift
  exec postgres -c listen_addresses='*' -k /var/run/postgresql "$@"
fi
exec "$@"
