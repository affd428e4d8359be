#!/usr/bin/env bash
# Mallocs per query and per returned row on Cirrus's read path, counted exactly (uprobes, not
# sampling): every malloc whose stack passes through Database.records(matching:) or
# records(continuingMatchFrom:) — checking, planning, executing and building the page — and
# every call of QueryPlanner.plan (one per query: the page function it used to count is inlined
# now). Point lookups go through record(for:) and are not counted.
#
#   scripts/malloc-per-row.sh [SIZE] [SUITES]     e.g. scripts/malloc-per-row.sh 10k radius-50,text-any
#
# Every malloc of the run is recorded with its stack (the ingest too), so keep SIZE small: at
# 100k a suite records gigabytes.
#
# Needs root (perf probe) and a release qbench (swift build -c release --package-path Benchmarks).
# Runs `qbench --suite S --verify` per suite (each case once, no timing) and prints mallocs per
# query and per returned row; the rows per query are qbench's own count ("avg N rows").
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE="${1:-10k}"
SUITES="${2:-point,eq-sort,beginswith,text-any,text-range,radius-10,radius-50,radius-eq,nearest-first}"
QBENCH="$(swift build -c release --package-path Benchmarks --show-bin-path)/qbench"
LIBC="$(ldd "$QBENCH" | awk '$1 ~ /^libc\.so/ {print $3}')"
# The planner's entry point: called once per query (and not inlined: it is public, generic and
# in another module).
PAGE="$(nm "$QBENCH" | awk '$2 == "T" && $3 ~ /^\$s12QueryPlannerAAO4plan_10statistics5limit12withRejected/ {print $3}' | head -1)"
if [ -z "$PAGE" ]; then
    echo "malloc-per-row: no QueryPlanner.plan symbol in $QBENCH (renamed?)" >&2
    exit 1
fi
perf probe -q -d 'probe_libc:malloc' 2>/dev/null || true
perf probe -q -d 'probe_qbench:qpage' 2>/dev/null || true
perf probe -q -x "$LIBC" malloc
perf probe -q -x "$QBENCH" --add "qpage=$PAGE"
trap 'perf probe -q -d probe_libc:malloc; perf probe -q -d probe_qbench:qpage' EXIT
WORK="$(mktemp -d)"
printf '%-16s %10s %12s %10s %12s\n' suite queries mallocs/query rows/query mallocs/row
for S in ${SUITES//,/ }; do
    perf record -q -o "$WORK/p.data" -g -e probe_libc:malloc -e probe_qbench:qpage -- \
        "$QBENCH" --size "$SIZE" --suite "$S" --verify --durability none >"$WORK/out.txt" 2>&1
    perf script -i "$WORK/p.data" -F event,ip,sym 2>/dev/null | python3 -c '
import sys
queries = mallocs = 0
event = None
inside = False
def flush():
    global mallocs
    if event == "malloc" and inside: mallocs += 1
for line in sys.stdin:
    s = line.strip()
    if not s:
        flush(); event = None; inside = False; continue
    if s.startswith("probe_libc:malloc"):
        flush(); event = "malloc"; inside = False
    elif s.startswith("probe_qbench:qpage"):
        flush(); event = None; queries += 1
    elif "s6Cirrus" in s and ("7records8matching" in s or "7records19continuingMatchFrom" in s):
        # The façade and the engine behind it (an async call: only the innermost async
        # function, the engine'"'"'s witness, is on the stack).
        inside = True
flush()
print(queries, mallocs)
' >"$WORK/counts.txt"
    read -r Q M <"$WORK/counts.txt"
    ROWS="$(grep -o 'avg [0-9.]* rows' "$WORK/out.txt" | head -1 | awk '{print $2}')"
    python3 -c "
q, m, r = $Q, $M, float('${ROWS:-0}' or 0)
print('%-16s %10d %12.1f %10.1f %12s' % ('$S', q, m / max(q, 1), r, ('%.1f' % (m / q / r)) if q and r else '-'))"
done
rm -rf "$WORK"
