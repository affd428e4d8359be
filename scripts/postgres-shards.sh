#!/usr/bin/env bash
# Three throwaway PostgreSQL 15 + PostGIS clusters on loopback ports — a coordinator and two
# workers — for the multi-node CirrusPostgres tests (docs/scale-out.md "Multi-node").
#
#   scripts/postgres-shards.sh up BASEPORT     clusters cirrus_shard_BASEPORT_c / _w0 / _w1 on
#                                              127.0.0.1:BASEPORT, BASEPORT+1, BASEPORT+2 (each made
#                                              by scripts/postgres-cluster.sh: database `cirrus`
#                                              with PostGIS), then postgres_fdw on the coordinator
#                                              with servers shard0 and shard1 (the workers) and a
#                                              user mapping for `cirrus` on each; prints
#                                              `COORD_URL WORKER0_URL WORKER1_URL` (last line)
#   scripts/postgres-shards.sh down BASEPORT   stop and drop the three clusters
#
# The workers trust `cirrus` over 127.0.0.1 like the coordinator, so the user mappings carry no
# password (password_required 'false', which only a superuser may set: the mapping is created by
# the `postgres` OS user). The tests stop and start a worker with pg_ctlcluster.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-}
BASE=${2:-55440}
NAME=cirrus_shard_$BASE

as_postgres() {
    if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi
}

down() {
    # A test stops a worker's postmaster with SIGSTOP for a moment: resume it first, or a test
    # killed meanwhile would leave a server pg_dropcluster cannot stop.
    for i in c w0 w1; do
        local pidfile=/var/lib/postgresql/15/${NAME}_$i/postmaster.pid
        if [[ -r $pidfile ]]; then kill -CONT "$(head -1 "$pidfile")" 2>/dev/null || true; fi
    done
    for i in c w0 w1; do CLUSTER=${NAME}_$i ./scripts/postgres-cluster.sh down || true; done
}

# The foreign servers' options besides the address. A coordinator session's connection to a
# worker must fail in bounded time when the worker is gone, not only when it refuses at once
# (a stopped server on a live host): connect_timeout bounds a connection attempt that gets no
# answer (a hung or unreachable host: 3 s, libpq's minimum is 2), and keepalives plus
# tcp_user_timeout end an established connection whose peer stopped answering (about 10 s)
# instead of the kernel's minutes — PostgreSQL 15's postgres_fdw has no timeout of its own, and
# its connect is not interrupted by statement_timeout. `extensions 'postgis'` lets PostGIS
# operators be shipped to the workers.
FDW_OPTIONS="application_name 'cirrus coordinator', extensions 'postgis', connect_timeout '3', \
keepalives '1', keepalives_idle '5', keepalives_interval '2', keepalives_count '3', tcp_user_timeout '10000'"

up() {
    local urls=()
    local port=$BASE
    for i in c w0 w1; do
        urls+=("$(CLUSTER=${NAME}_$i ./scripts/postgres-cluster.sh up "$port" | tail -1)")
        port=$((port + 1))
    done
    as_postgres psql -q -p "$BASE" -d cirrus -v ON_ERROR_STOP=1 <<EOSQL
CREATE EXTENSION postgres_fdw;
GRANT USAGE ON FOREIGN DATA WRAPPER postgres_fdw TO cirrus;
CREATE SERVER shard0 FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '127.0.0.1', port '$((BASE + 1))', dbname 'cirrus', $FDW_OPTIONS);
CREATE SERVER shard1 FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '127.0.0.1', port '$((BASE + 2))', dbname 'cirrus', $FDW_OPTIONS);
CREATE USER MAPPING FOR cirrus SERVER shard0 OPTIONS (user 'cirrus', password_required 'false');
CREATE USER MAPPING FOR cirrus SERVER shard1 OPTIONS (user 'cirrus', password_required 'false');
GRANT USAGE ON FOREIGN SERVER shard0, shard1 TO cirrus;
EOSQL
    echo "postgres-shards: coordinator 127.0.0.1:$BASE, workers shard0 127.0.0.1:$((BASE + 1)), shard1 127.0.0.1:$((BASE + 2))" >&2
    echo "${urls[*]}"
}

case "$cmd" in
    up) up ;;
    down) down ;;
    *)
        echo "usage: $0 up|down BASEPORT" >&2
        exit 2
        ;;
esac
