#!/usr/bin/env bash
# The ARM64 job: cross-builds libdeconv and its tests for aarch64 Linux (kernels for
# arm-64-linux-arm_dot_prod-arm_fp16 with an arm-64-linux NEON fallback) and runs the tests under
# qemu-user, twice:
#   1. QEMU's default CPU ("max": has ARMv8.2 dot product and fp16, so the dotprod_fp16 kernels
#      run): the correctness (conformance vectors, the whole seeded sweep, API), shape and error
#      suites;
#   2. QEMU_CPU=cortex-a53 (ARMv8.0, neither feature): the correctness suite's own tests again,
#      which must pick the NEON kernels and must not die of SIGILL. Its repeats under forced
#      routes and variants (channels., positions., unbordered_*., neon., ...) run in run 1 only
#      (neon. there: the NEON kernels on their default routes). On cortex-a53 they took 70% of
#      this run's time; what they add there, forced routes on the NEON kernels, is schedule code
#      that run 1 checks on the dot-product kernels.
#
#   scripts/test_arm64.sh [extra cmake arguments for the cross configure, e.g. -DDECONV_DTYPES=f32]
#
# Steps: scripts/setup.sh --arm64; a host build of the Halide generator (preset host-gen, in
# ./build-host-gen; DECONV_HOST_BUILD=build reuses an existing host build dir instead); the cross
# build (preset arm64, in ./build-arm64); ctest (preset arm64, through qemu-aarch64).
# Environment: JOBS (default 2), DECONV_HOST_BUILD, ARM64_CTEST_EXCLUDE (ctest -E regex of run 1; the
# default skips the x86-only DECONV_CPU_VARIANT=avx2/sse41 repeats of the correctness suite).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
JOBS="${JOBS:-2}"
exclude="${ARM64_CTEST_EXCLUDE:-^(avx2|sse41)\\.}"
labels='^(correctness|shape|error)$'

now() { date +%s; }
t0=$(now)
scripts/setup.sh --arm64

# ---------------------------------------------------------------- host: the generator (x86-64)
t=$(now)
host="${DECONV_HOST_BUILD:-build-host-gen}"
case "$host" in /*) ;; *) host="$root/$host" ;; esac
if [ "$host" = "$root/build-host-gen" ]; then
  cmake --preset host-gen > /dev/null
  cmake --build --preset host-gen -j "$JOBS"
else
  cmake --build "$host" --target deconv-halide_generators -j "$JOBS"  # every generator executable
fi
t_host=$(( $(now) - t ))

# ---------------------------------------------------------------- cross build (aarch64)
t=$(now)
# _DIR, not _ROOT: a cached _DIR would win over a new _ROOT and keep an old generator.
cmake --preset arm64 -Ddeconv-halide_generators_DIR="$host/cmake" "$@"
cmake --build --preset arm64 -j "$JOBS"
t_cross=$(( $(now) - t ))

# ---------------------------------------------------------------- tests under qemu-aarch64
emu=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
corr=build-arm64/tests/correctness/deconv_correctness_tests
variant_on() {  # the kernel variant cpu_variant() reports on the given QEMU CPU
  if [ -x "$corr" ]; then
    QEMU_CPU="$1" "${emu[@]}" "$corr" --gtest_filter='BuildFacts.*' 2>/dev/null \
      | sed -n 's/^\[ variant  \] //p' | head -n1
  fi
}
status=0
# The GoogleTest cases run batched, up to 64 to a process (scripts/ctest_batched.py): starting
# a process under qemu costs 0.28 s, which was 3/4 of these runs' time one case at a time.
run_ctest() {  # name, then ctest arguments; appends a summary line
  local name="$1" log="build-arm64/ctest-$1.log"
  shift
  scripts/ctest_batched.py --jobs "$JOBS" -- --preset arm64 "$@" 2>&1 | tee "$log" || status=1
  local line
  line=$(grep -E '^ctest_batched: [0-9]+ of [0-9]+ tests passed' "$log" || echo "no tests ran")
  summary+=("$(printf '%-22s %s' "$name:" "${line#ctest_batched: }")")
}
summary=()
t=$(now)
run_ctest default-cpu -L "$labels" -E "$exclude"
repeats='^(avx2|sse41|neon|channels|positions|unbordered_[a-z]+|parallel|halide_pool)\.'
QEMU_CPU=cortex-a53 run_ctest cortex-a53 -L '^correctness$' -E "$repeats"
t_test=$(( $(now) - t ))

echo
echo "==================== ARM64 summary ===================="
echo "qemu:            $(qemu-aarch64 --version | head -n1)"
echo "variant:         default CPU -> $(variant_on max || true), cortex-a53 -> $(variant_on cortex-a53 || true)"
printf '%s\n' "${summary[@]}"
echo "time:            host generator ${t_host} s, cross build ${t_cross} s, tests ${t_test} s," \
     "total $(( $(now) - t0 )) s"
exit $status
