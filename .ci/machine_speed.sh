#!/usr/bin/env bash
# Prints the kernel matrix CI can afford on this machine: "full" or "reduced" (.ci/run).
# The measure is the wall time of one fixed compile, a generator source with Halide.h (g++ -O2,
# one core): CI's time is mostly compilers' time, Halide's and LLVM's kernels and g++'s runtime
# and tests. It took 3.5-4.4 s on the 2.0 GHz Sapphire Rapids VM whose full CI would run past two
# hours; the full matrix needs a machine 2.2x as fast as that one to stay near 60 minutes, so
# machines at 1800 ms or less take it. Best of two runs, so that a stray load does not decide.
# CI_SPEED_LIMIT_MS sets the threshold.
set -euo pipefail
cd "$(dirname "$0")/.."
limit_ms="${CI_SPEED_LIMIT_MS:-1800}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
best_ms=""
for _ in 1 2; do
  t0=$(date +%s%N)
  g++ -std=c++17 -O2 -I/usr/include/halide14 -c generators/zero_fill_generator.cpp -o "$out/probe.o"
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  if [ -z "$best_ms" ] || [ "$ms" -lt "$best_ms" ]; then best_ms="$ms"; fi
done
matrix=reduced
[ "$best_ms" -le "$limit_ms" ] && matrix=full
echo "ci: probe compile ${best_ms} ms (the full matrix at ${limit_ms} ms or less): $matrix" >&2
echo "$matrix"
