#!/usr/bin/env bash
# Configures and builds deconv into ./build (Release, Ninja). Extra arguments go to cmake's
# configure step, e.g. -DDECONV_DTYPES="f32;bf16" -DDECONV_RANKS=2 for a smaller kernel matrix.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}"
