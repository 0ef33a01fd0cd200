#!/usr/bin/env bash
# Every plan the dispatcher makes for the layers of bench/*.json, one line each (file, layer, tab,
# Plan::describe), on 2 threads: run before and after a change to the dispatch and diff the two
# files. The CPU variant comes from the environment (DECONV_CPU_VARIANT=avx2 for the AVX2 plans).
# Usage: tools/plan_snapshot.sh [BUILD_DIR] > plans.txt
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
for suite in bench/*.json; do
  "$build/tools/deconv" bench --plans --threads 2 --include-scale --no-onednn --suite "$suite" |
    sed "s|^|$(basename "$suite" .json)/|"
done
