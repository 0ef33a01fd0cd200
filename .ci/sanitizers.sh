#!/usr/bin/env bash
# CI's sanitizer jobs, after the main x86-64 build (./build, whose generator executables they
# run, so that every kernel comes from the kernel cache: cmake/DeconvKernelCache.cmake). Small
# kernel matrix (f32, f64 unless told; no CUDA, no
# bf16 dot-product kernels): the kernels are Halide's generated code and are not instrumented.
#   1. ASan + UBSan (clang-14), also building the libFuzzer targets: the CTest suite but for its
#      repeats under the lower x86 kernel variants (avx2., sse41.: they change which uninstrumented
#      kernel runs, not which of our code does), the unbordered repeats of the pinned routes (the
#      unbordered_twin ones stay) and the build-option checks (CMake runs, nothing instrumented),
#      then each fuzz target, one per core at a time, for FUZZ_SECONDS (default
#      30) from a copy of its seed corpus, with a fixed seed: a run explores a prefix of the same
#      sequence of inputs every time, so CI fails on a change, not on the draw (long runs find new
#      inputs: tests/fuzz/CMakeLists.txt).
#   2. TSan (clang-14): the threading tests (the pools, plans and packed filters shared across
#      threads, set_cpu_threads racing with runs, the CUDA probe, tests/concurrency's stress test).
# Environment: JOBS (default 2), FUZZ_SECONDS, DECONV_HOST_BUILD (default ./build),
# SANITIZER_DTYPES and SANITIZER_RANKS (default f32;f64 and 1;2;3).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
JOBS="${JOBS:-2}"
FUZZ_SECONDS="${FUZZ_SECONDS:-30}"
# The kernel matrix: a part of the x86-64 build's (its native variant), so that every kernel
# comes from the kernel cache.
SANITIZER_DTYPES="${SANITIZER_DTYPES:-f32;f64}"
SANITIZER_RANKS="${SANITIZER_RANKS:-1;2;3}"
host="${DECONV_HOST_BUILD:-$root/build}"
case "$host" in /*) ;; *) host="$root/$host" ;; esac
[ -f "$host/cmake/deconv-halide_generators-config.cmake" ] ||
  { echo "sanitizers: $host has no built generator (run scripts/test.sh first)" >&2; exit 1; }
cmake --build "$host" --target deconv-halide_generators > /dev/null

now() { date +%s; }
t0=$(now)
scripts/setup.sh --sanitizers

configure() {  # build folder, then extra cmake arguments
  local dir="$1"
  shift
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DDECONV_DTYPES="$SANITIZER_DTYPES" -DDECONV_RANKS="$SANITIZER_RANKS" -DDECONV_CUDA=OFF -DDECONV_BF16_DOT=OFF \
    -DDECONV_CPU_VARIANTS=native -Ddeconv-halide_generators_DIR="$host/cmake" "$@" > /dev/null
}

# ---------------------------------------------------------------- ASan + UBSan, fuzz targets
t=$(now)
configure build-asan -DDECONV_SANITIZE="address;undefined" -DDECONV_FUZZ=ON
cmake --build build-asan -j "$JOBS"
asan_build=$(( $(now) - t ))
t=$(now)
# Batched (scripts/ctest_batched.py): an ASan process takes 0.2 s to start, half of this step's
# time when each case ran alone.
scripts/ctest_batched.py --jobs "$JOBS" --timeout 900 -- --test-dir build-asan \
  -E '^(avx2|sse41|unbordered_positions|unbordered_channels|build_options)\.'
asan_tests=$(( $(now) - t ))

t=$(now)
# One fuzz target per core at a time: each still runs FUZZ_SECONDS from the same seed.
fuzz_one() {  # target; its log is build-asan/<target>.log
  local target="$1" corpus regressions=()
  corpus="$(mktemp -d)"
  cp tests/fuzz/corpus/"$target"/* "$corpus"/
  # -error_exitcode: any crash, leak or sanitizer report fails the job; the log's last lines
  # give the executions and coverage.
  # New inputs go to the first folder (the copy); the inputs that once crashed it are read too.
  [ -d tests/fuzz/regressions/"$target" ] && regressions=(tests/fuzz/regressions/"$target")
  local rc=0
  build-asan/tests/fuzz/"$target" -seed=1 -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -timeout=30 \
    -print_final_stats=1 "$corpus" "${regressions[@]}" 2> "build-asan/$target.log" || rc=$?
  rm -rf "$corpus"
  return "$rc"
}
targets=($(cd tests/fuzz/corpus && ls))
pids=()
for target in "${targets[@]}"; do
  echo "fuzz: $target for ${FUZZ_SECONDS} s"
  fuzz_one "$target" &
  pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
done
failed=0
for i in "${!targets[@]}"; do
  if wait "${pids[$i]}"; then
    grep -E "^#[0-9]+[[:space:]]+DONE" "build-asan/${targets[$i]}.log" | tail -n 1
  else
    echo "fuzz: ${targets[$i]} failed"; tail -n 60 "build-asan/${targets[$i]}.log"; failed=1
  fi
done
[ "$failed" = 0 ] || exit 1
fuzz=$(( $(now) - t ))

# ---------------------------------------------------------------- TSan: the threading tests
t=$(now)
configure build-tsan -DDECONV_SANITIZE=thread -DDECONV_BUILD_CLI=OFF
cmake --build build-tsan -j "$JOBS" --target deconv_correctness_tests deconv_concurrency_tests
tsan_build=$(( $(now) - t ))
t=$(now)
scripts/ctest_batched.py --jobs "$JOBS" --timeout 900 -- --test-dir build-tsan \
  -R 'ThreadPool\.|PlanApi\.Concurrent|ConcurrentRuns|PackedFilter\.|OnTwoThreads|CudaUnavailable\.|Concurrency\.'
tsan_tests=$(( $(now) - t ))

echo "sanitizers: asan build ${asan_build} s, tests ${asan_tests} s, fuzz ${fuzz} s;" \
     "tsan build ${tsan_build} s, tests ${tsan_tests} s; total $(( $(now) - t0 )) s"
