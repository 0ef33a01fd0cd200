#!/usr/bin/env bash
# Checks .ci/machine_speed.sh: its answer follows the threshold (a limit of 0 ms no machine meets,
# one of an hour every machine does), it prints nothing else on stdout, and it names its measure
# on stderr.
set -euo pipefail
probe="$1"
fail() { echo "machine_speed_test: $*" >&2; exit 1; }
slow="$(CI_SPEED_LIMIT_MS=0 "$probe" 2> err.txt)"
[ "$slow" = reduced ] || fail "a limit of 0 ms gave '$slow', not 'reduced'"
grep -q "probe compile [0-9]* ms" err.txt || fail "stderr did not give the probe's time: $(cat err.txt)"
fast="$(CI_SPEED_LIMIT_MS=3600000 "$probe" 2> /dev/null)"
[ "$fast" = full ] || fail "a limit of an hour gave '$fast', not 'full'"
echo "machine_speed_test: passed"
