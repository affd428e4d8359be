#!/usr/bin/env bash
# Fuzzes the predicate front end with libFuzzer for SECONDS seconds (default 60).
#
#   scripts/fuzz.sh [SECONDS] [extra libFuzzer flags…]
#
# Builds each module in MODULES straight from its sources with swiftc (instrumented with
# -sanitize=fuzzer,address; one -package-name for all, as SwiftPM gives, for `package`
# declarations), links them with Fuzz/*.swift into Fuzz/bin/fuzz-predicate, and runs it over
# the committed seed corpus Fuzz/corpus/ plus a scratch corpus Fuzz/corpus-run/ (not committed).
# Needs only the Swift toolchain (SWIFTC, default: swiftc on PATH or /opt/swift/usr/bin/swiftc).
# Exits non-zero when libFuzzer finds a crash; the input is saved as Fuzz/bin/crash-<sha1> —
# replay it with `Fuzz/bin/fuzz-predicate Fuzz/bin/crash-…`.
# Fuzz/predicate.dict gives libFuzzer the reserved words and operator spellings.
set -euo pipefail

# Modules linked into the harness, in dependency order (each may import the ones before it).
MODULES=(PredicateSyntax RecordModel QueryChecker)

SECONDS_TO_RUN="${1:-60}"
shift || true
cd "$(dirname "$0")/.."
ROOT="$PWD"
SWIFTC="${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}"
BIN="$ROOT/Fuzz/bin"
mkdir -p "$BIN/modules" "$ROOT/Fuzz/corpus-run"

FLAGS=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -enable-upcoming-feature ExistentialAny
       -package-name Cirrus
       -I "$BIN/modules")
OBJECTS=()
for m in "${MODULES[@]}"; do
    echo "fuzz.sh: compiling $m" >&2
    mapfile -t SOURCES < <(find "$ROOT/Sources/$m" -name '*.swift' | sort)
    "$SWIFTC" "${FLAGS[@]}" -module-name "$m" -wmo -num-threads 0 \
        -emit-module -emit-module-path "$BIN/modules/$m.swiftmodule" \
        -c "${SOURCES[@]}" -o "$BIN/modules/$m.o"
    OBJECTS+=("$BIN/modules/$m.o")
done
echo "fuzz.sh: linking Fuzz/bin/fuzz-predicate" >&2
"$SWIFTC" "${FLAGS[@]}" -module-name FuzzPredicate "$ROOT"/Fuzz/*.swift "${OBJECTS[@]}" -o "$BIN/fuzz-predicate"

echo "fuzz.sh: fuzzing for $SECONDS_TO_RUN s" >&2
# detect_leaks=0: the Swift runtime keeps metadata caches alive on purpose.
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" "$BIN/fuzz-predicate" \
    -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$BIN/" -dict="$ROOT/Fuzz/predicate.dict" "$@" "$ROOT/Fuzz/corpus-run" "$ROOT/Fuzz/corpus"
