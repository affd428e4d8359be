#!/usr/bin/env bash
# Kill test with more rounds: a cirrus-logwriter child (.everyCommit; in half the rounds also
# checkpoints, three-step checkpoints beside commits and bulk loads) is SIGKILLed at random
# moments; after each kill every acknowledged commit must be present and verify clean.
#   scripts/killtest.sh [ROUNDS]      (default 500; CIRRUS_SEED=<seed> replays a run)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-500}"
swift build --build-tests
CIRRUS_KILL_ROUNDS="$ROUNDS" swift test --skip-build --filter KillTests
