#!/usr/bin/env bash
# Retains, releases and mallocs per query, counted exactly with uprobes (perf stat: no stacks, so
# a 1M run takes a minute, not an hour): each suite runs its verification pass only
# (`qbench compare --seconds 0`: every case once on each engine, then once more), and the same
# run of the `point` suite — the same open, the same setup — is subtracted. The queries are the
# calls of QueryPlanner.plan. What is left is Cirrus's query path plus the SQLite peer's Swift
# side of the same queries (the same for every Cirrus commit): compare commits, not engines.
#
#   scripts/refcount-per-query.sh DIR SIZE [SUITES] [QBENCH]
#   e.g. scripts/refcount-per-query.sh /tmp/qb100k 100k radius-eq,radius-1
#
# DIR is a `qbench compare --dir DIR` database of SIZE places (made by the first run when absent).
# Needs root (perf probe) and a release qbench (swift build -c release --package-path Benchmarks).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="$1"
SIZE="$2"
SUITES="${3:-radius-1,radius-eq,beginswith,nearest-first}"
QBENCH="${4:-$(swift build -c release --package-path Benchmarks --show-bin-path)/qbench}"
SWIFTCORE="$(ldd "$QBENCH" | awk '$1 ~ /^libswiftCore\.so/ {print $3}')"
LIBC="$(ldd "$QBENCH" | awk '$1 ~ /^libc\.so/ {print $3}')"
PLAN="$(nm "$QBENCH" | awk '$2 == "T" && $3 ~ /^\$s12QueryPlannerAAO4plan_10statistics5limit12withRejected/ {print $3}' | head -1)"
if [ -z "$PLAN" ]; then
    echo "refcount-per-query: no QueryPlanner.plan symbol in $QBENCH (renamed?)" >&2
    exit 1
fi
probes='probe_libswiftCore:swift_retain probe_libswiftCore:swift_release probe_libc:malloc probe_qbench:qplan'
for p in $probes; do perf probe -q -d "$p" 2>/dev/null || true; done
perf probe -q -x "$SWIFTCORE" swift_retain
perf probe -q -x "$SWIFTCORE" swift_release
perf probe -q -x "$LIBC" malloc
perf probe -q -x "$QBENCH" --add "qplan=$PLAN"
trap 'for p in $probes; do perf probe -q -d "$p" 2>/dev/null || true; done' EXIT
# Prints "plans retains releases mallocs" for one suite.
count() {
    perf stat -x, -e probe_qbench:qplan -e probe_libswiftCore:swift_retain -e probe_libswiftCore:swift_release \
        -e probe_libc:malloc -- "$QBENCH" compare --size "$SIZE" --seconds 0 --dir "$DIR" --reuse --suite "$1" \
        2>&1 >/dev/null | awk -F, '/probe_/ {printf "%s ", $1} END {print ""}'
}
read -r _ BR BL BM <<<"$(count point)"
printf '%-16s %8s %14s %14s %14s\n' suite queries retains/query releases/query mallocs/query
for S in ${SUITES//,/ }; do
    read -r Q R L M <<<"$(count "$S")"
    python3 -c "
q = max($Q, 1)
print('%-16s %8d %14.1f %14.1f %14.1f' % ('$S', $Q, ($R - $BR) / q, ($L - $BL) / q, ($M - $BM) / q))"
done
