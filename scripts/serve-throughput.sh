#!/usr/bin/env bash
# Throughput of `cirrus serve` over one PostgreSQL + PostGIS server with 1, 2 and 4 server
# processes (and, for reference, one process on a container directory): records/query requests
# through wrk, one wrk per server process, for a bounded time each. A measurement to run and
# report (docs/scale-out.md "Throughput"), not a CI step.
#
#   scripts/serve-throughput.sh                      # RECORDS=10000 SECONDS=10 PROCS="1 2 4"
#   RECORDS=50000 SECONDS=20 scripts/serve-throughput.sh
#
# Needs: a release `cirrus` (swift build -c release --product cirrus), wrk (apt-get install
# wrk), PostgreSQL 15 + PostGIS (scripts/postgres-cluster.sh installs it when missing). Every
# server listens on loopback on ports picked here; the cluster and the servers are stopped at
# the end, whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."

RECORDS=${RECORDS:-10000}
SECONDS_EACH=${SECONDS:-10}
PROCS=${PROCS:-"1 2 4"}
CONNECTIONS=${CONNECTIONS:-8}
CIRRUS=${CIRRUS:-.build/release/cirrus}
[[ -x $CIRRUS ]] || { echo "serve-throughput: build it first: swift build -c release --product cirrus" >&2; exit 1; }
command -v wrk >/dev/null || { echo "serve-throughput: wrk is missing (apt-get install -y wrk)" >&2; exit 1; }

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

work=$(mktemp -d)
pids=()
pg_port=$(free_port)
export CLUSTER=cirrus_tput_$pg_port
cleanup() {
    for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    ./scripts/postgres-cluster.sh down >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
url=$(./scripts/postgres-cluster.sh up "$pg_port" | tail -1)

mkdir -p "$work/pg" "$work/dir"
token_pg=$($CIRRUS token create --db "$work/pg")
user_pg=$($CIRRUS token create --db "$work/pg" --user _bench)
token_dir=$($CIRRUS token create --db "$work/dir")
user_dir=$($CIRRUS token create --db "$work/dir" --user _bench)
container=iCloud.bench.throughput

# start DIR PORT [--postgres URL]: one server in the background; waits until it listens.
start() {
    local dir=$1 port=$2
    shift 2
    $CIRRUS serve --db "$dir" --container "$container" --port "$port" "$@" >"$work/serve-$port.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do
        grep -q "Ctrl-C stops" "$work/serve-$port.log" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "serve-throughput: the server on $port did not start:" >&2
    cat "$work/serve-$port.log" >&2
    exit 1
}
stop_all() {
    for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
    wait "${pids[@]}" 2>/dev/null || true
    pids=()
}

# seed PORT TOKEN USER: RECORDS places through records/modify, 200 per request.
seed() {
    python3 - "$1" "$2" "$3" "$RECORDS" "$container" <<'PY'
import json, sys, urllib.request, random
port, token, user, n, container = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
rng = random.Random(7)
kinds = ["cafe", "park", "museum", "shop", "school"]
url = f"http://127.0.0.1:{port}/database/1/{container}/development/public/records/modify?ckAPIToken={token}&ckWebAuthToken={user}"
for start in range(0, n, 200):
    ops = []
    for i in range(start, min(n, start + 200)):
        ops.append({"operationType": "create", "record": {"recordName": f"p{i}", "recordType": "Place", "fields": {
            "kind": {"value": rng.choice(kinds)}, "rank": {"value": rng.randrange(1000)},
            "location": {"value": {"latitude": rng.uniform(40, 50), "longitude": rng.uniform(-5, 10)}}}}})
    body = json.dumps({"operations": ops}).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST")) as r:
        answer = json.load(r)
        bad = [x for x in answer["records"] if "serverErrorCode" in x]
        if bad: sys.exit(f"seed failed: {bad[0]}")
PY
}

cat >"$work/query.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"query": {"recordType": "Place", "filterBy": [{"fieldName": "kind", "comparator": "EQUALS", "fieldValue": {"value": "cafe"}}, {"fieldName": "rank", "comparator": "GREATER_THAN", "fieldValue": {"value": 900}}], "sortBy": [{"fieldName": "rank", "ascending": false}]}, "resultsLimit": 20}'
LUA

# run N TOKEN PORTS...: one wrk per port at once; prints the summed requests/s and the worst p99.
run() {
    local label=$1 token=$2
    shift 2
    local outs=() waits=()
    for port in "$@"; do
        wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_EACH}s" --latency -s "$work/query.lua" \
            "http://127.0.0.1:$port/database/1/$container/development/public/records/query?ckAPIToken=$token" \
            >"$work/wrk-$port.txt" 2>&1 &
        waits+=($!)
        outs+=("$work/wrk-$port.txt")
    done
    wait "${waits[@]}"
    python3 - "$label" "${outs[@]}" <<'PY'
import re, sys
label, files = sys.argv[1], sys.argv[2:]
total, p99s, errors = 0.0, [], 0
for f in files:
    t = open(f).read()
    m = re.search(r"Requests/sec:\s+([\d.]+)", t)
    if not m: sys.exit(f"no wrk result in {f}:\n{t}")
    total += float(m.group(1))
    p = re.search(r"99%\s+([\d.]+)(us|ms|s)", t)
    if p: p99s.append(float(p.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p.group(2)])
    e = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
    if e: errors += int(e.group(1))
print(f"| {label} | {total:,.0f} | {max(p99s):.1f} ms | {errors} |")
PY
}

base=$(free_port)
echo "seeding $RECORDS places on each engine …" >&2
start "$work/pg" "$base" --postgres "$url"
seed "$base" "$token_pg" "$user_pg"
stop_all
start "$work/dir" "$base"
seed "$base" "$token_dir" "$user_dir"

echo "| servers | requests/s | worst p99 | non-2xx |"
echo "|---|---|---|---|"
run "1 × embedded (directory)" "$token_dir" "$base"
stop_all
for n in $PROCS; do
    ports=()
    for i in $(seq "$n"); do
        p=$(free_port)
        start "$work/pg" "$p" --postgres "$url"
        ports+=("$p")
    done
    run "$n × PostgreSQL" "$token_pg" "${ports[@]}"
    stop_all
done
echo "($RECORDS places, $SECONDS_EACH s per row, $CONNECTIONS connections per server, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
