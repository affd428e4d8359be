#!/usr/bin/env bash
# A throwaway PostgreSQL 15 + PostGIS cluster on a loopback port, for the CirrusPostgres tests.
#
#   scripts/postgres-cluster.sh up [PORT]     install postgresql-15-postgis-3 when missing, create
#                                             and start cluster 15/cirrus_test on 127.0.0.1:PORT
#                                             (default 55432), create database `cirrus` with
#                                             PostGIS, print its URL on stdout (last line)
#   scripts/postgres-cluster.sh down [PORT]   stop and drop the cluster (PORT is ignored)
#
# The cluster listens on 127.0.0.1 only and trusts loopback connections of the `cirrus` role
# (no password): it is for tests on this machine, never for data. Postgres runs as the
# `postgres` OS user, as Debian's pg_createcluster sets it up. CLUSTER=name picks another
# cluster name (default cirrus_test), so two runs on one machine do not collide.
set -euo pipefail
VERSION=15
CLUSTER=${CLUSTER:-cirrus_test}
cmd=${1:-}
PORT=${2:-55432}
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"

as_postgres() {
    if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi
}

log() { echo "postgres-cluster: $*" >&2; }

down() {
    if pg_lsclusters -h 2>/dev/null | awk '{print $1" "$2}' | grep -qx "$VERSION $CLUSTER"; then
        $SUDO pg_dropcluster --stop "$VERSION" "$CLUSTER"
        log "dropped cluster $VERSION/$CLUSTER"
    else
        log "no cluster $VERSION/$CLUSTER"
    fi
}

up() {
    if ! dpkg -s "postgresql-$VERSION-postgis-3" >/dev/null 2>&1; then
        log "installing postgresql-$VERSION-postgis-3"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "postgresql-$VERSION-postgis-3" >/dev/null
    fi
    # A leftover cluster of an interrupted run is dropped first: the data is throwaway.
    down
    $SUDO pg_createcluster "$VERSION" "$CLUSTER" -p "$PORT" -e UTF8 --locale C.UTF-8 \
        -- --auth-local=peer --auth-host=reject >/dev/null
    local conf=/etc/postgresql/$VERSION/$CLUSTER
    # Loopback only; the test role is trusted over 127.0.0.1, everything else is refused.
    # max_connections: the suites run in parallel, each container with its own pool and a
    # LISTEN connection; at 50 a busy run occasionally ran out of slots (SQLSTATE 53300).
    cat >"$conf/conf.d/cirrus.conf" <<EOF
listen_addresses = '127.0.0.1'
ssl = off
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
EOF
    cat >"$conf/pg_hba.conf" <<EOF
local   all   postgres                 peer
host    all   cirrus     127.0.0.1/32  trust
EOF
    $SUDO pg_ctlcluster "$VERSION" "$CLUSTER" start
    as_postgres psql -q -p "$PORT" -v ON_ERROR_STOP=1 <<EOF
CREATE ROLE cirrus LOGIN;
CREATE DATABASE cirrus OWNER cirrus ENCODING 'UTF8' TEMPLATE template0;
\c cirrus
CREATE EXTENSION postgis;
EOF
    log "cluster $VERSION/$CLUSTER up on 127.0.0.1:$PORT"
    echo "postgres://cirrus@127.0.0.1:$PORT/cirrus"
}

case "$cmd" in
    up) up ;;
    down) down ;;
    *)
        echo "usage: $0 up|down [PORT]" >&2
        exit 2
        ;;
esac
