#!/usr/bin/env bash
# CI's x86 variant job, after the main x86-64 build (./build, native: the machine's best variant).
# The redistributable library's other variants (DECONV_CPU_VARIANTS=all: AVX2 and SSE4.1 below
# AVX-512) are the same schedules at narrower vectors and fewer registers, where Halide's code
# generation has failed before (square register tiles stored zeros under AVX2 and SSE4.1). This
# builds f32, f16, bf16, f64, i8 and u8 at every rank for every variant (the best one's kernels
# copied from the kernel cache), and runs the correctness suite's repeats under each lower
# variant (DECONV_CPU_VARIANT). f32 reaches every schedule; SSE4.1, the fallback, has the core
# families only and runs 16-bit layers as f32 through software conversions, and i8 and u8 layers
# run as f64 on every variant (cmake/DeconvKernels.cmake, kernel tiers): the f64 kernels of both
# variants are this job's own. The quantized tests run there too: below avx512 their layers take
# the i16-pair kernels.
# Environment: JOBS (default 2), BUILD_DIR (default build-variants).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS="${JOBS:-2}"
dir="${BUILD_DIR:-build-variants}"
t0=$(date +%s)
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDECONV_CPU_VARIANTS=all -DDECONV_DTYPES="f32;f16;bf16;f64;i8;u8" \
  -DDECONV_RANKS="1;2;3" -DDECONV_CUDA=OFF -DDECONV_BF16_DOT=OFF -DDECONV_BUILD_CLI=OFF -DDECONV_PYTHON=OFF > /dev/null
cmake --build "$dir" -j "$JOBS" --target deconv_correctness_tests deconv_quantized_tests
t_build=$(( $(date +%s) - t0 ))
ctest --test-dir "$dir" -j "$JOBS" -R '^(avx2|sse41)\.' --output-on-failure --no-tests=error
echo "lower variants: build ${t_build} s, tests $(( $(date +%s) - t0 - t_build )) s"
