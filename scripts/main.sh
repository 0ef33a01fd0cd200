#!/usr/bin/env bash
# The main job. It builds in two steps so that the first results come within minutes:
#   1. a demo build (./build-demo: the f32 2D backprop kernels for this CPU's variant, no
#      tests) that prints
#      the shape inference of the spec's example layers, runs the spec's 2D example checked
#      against a numpy reference, and benchmarks a few layers of the suite against oneDNN;
#   2. the full build (./build: the whole kernel matrix, scripts/build.sh) and the benchmark of
#      the whole suite, with its charts where tools/plot_bench.py is present; then real PyTorch
#      models run with their ConvTransposes on deconv (examples/python/run_models.py).
# Extra arguments go to CMake's configure step of the full build, e.g. -DDECONV_DTYPES=f32.
# Environment: BUILD_DIR (build), DEMO_BUILD_DIR (build-demo), JOBS (every core), DEMO_ONLY=1
# (stop after the demonstration).
# The suite is bench/layers.json; where ../shared/bench/layers.json exists beside the checkout
# (where new reference layers arrive), its layers that bench/layers.json lacks are merged in.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build}"
DEMO_BUILD_DIR="${DEMO_BUILD_DIR:-build-demo}"
JOBS="${JOBS:-$(nproc)}"
SHARED_SUITE="$(cd .. && pwd)/shared/bench/layers.json"
DEMO_LAYERS=ov_spec_2d,dcgan_l4,dcgan_l5,fcn8s_upscore8,grouped32_up,unet_up1
# The numpy check wants Debian's python3-numpy; the first python3 on PATH may be another
# installation (pyenv, a venv) without it.
PYTHON=python3
"$PYTHON" -c "import numpy" 2> /dev/null || PYTHON=/usr/bin/python3

t0=$(date +%s)
stage_name=""
stage_start=$t0
# stage TITLE ESTIMATE: closes the previous stage with its time and announces the next.
stage() {
  local now
  now=$(date +%s)
  [ -z "$stage_name" ] || echo "-- $stage_name: $((now - stage_start)) s"
  stage_name="$1"
  stage_start=$now
  [ -n "$1" ] || return 0
  printf '\n== [%d:%02d] %s (%s)\n' $(((now - t0) / 60)) $(((now - t0) % 60)) "$1" "$2"
}

stage "Setup: the Debian packages" "seconds when present; a few minutes to install"
scripts/setup.sh

stage "Demo build in $DEMO_BUILD_DIR: f32 2D backprop kernels for this CPU, no tests" \
      "about 3 min on 2 idle cores, seconds where the kernel cache holds them"
cmake -S . -B "$DEMO_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDECONV_DTYPES=f32 \
      -DDECONV_RANKS=2 -DDECONV_CUDA=OFF -DDECONV_FORWARD=OFF -DDECONV_QUANTIZED=OFF -DDECONV_BUILD_TESTS=OFF > /dev/null
cmake --build "$DEMO_BUILD_DIR" -j "$JOBS" --target deconv_cli | grep -E '^\[[0-9]+/[0-9]+\] Linking' || true
DEMO="$DEMO_BUILD_DIR/tools/deconv"

stage "Shape inference of the spec's example layers" "instant"
for xml in tests/cli/data/gcbd_2d.xml tests/cli/data/cbd_2d.xml tests/cli/data/gcbd_3d.xml \
           tests/cli/data/gc_1d.xml tests/cli/data/gc_2d.xml tests/cli/data/gc_3d.xml; do
  printf '%-45s -> %s\n' "$(basename "$xml")" "$("$DEMO" infer-shape --layer "$xml")"
done
echo "g4mb1ic20ih224oc8oh447kh3sh2ph1 (benchdnn)     -> $("$DEMO" infer-shape --desc g4mb1ic20ih224oc8oh447kh3sh2ph1)"

stage "The spec's 2D example (GroupConvolutionBackpropData) on random data, checked against numpy" \
      "about 10 s"
work="$DEMO_BUILD_DIR/example"
mkdir -p "$work"
"$DEMO" run --layer tests/cli/data/gcbd_2d.xml --random --seed 1 --output "$work/y.npy" \
  --save-input "$work/x.npy" --save-filter "$work/w.npy"
"$PYTHON" scripts/check_example.py "$work/x.npy" "$work/w.npy" "$work/y.npy"

suite=bench/layers.json
if [ -f "$SHARED_SUITE" ]; then
  mkdir -p "$DEMO_BUILD_DIR"
  "$PYTHON" scripts/merge_suite.py bench/layers.json "$SHARED_SUITE" "$DEMO_BUILD_DIR/layers.json"
  suite="$DEMO_BUILD_DIR/layers.json"
fi

stage "Short benchmark against oneDNN: $DEMO_LAYERS" "under a minute"
"$DEMO" bench --suite "$suite" --only "$DEMO_LAYERS"

if [ "${DEMO_ONLY:-0}" = 1 ]; then
  stage "" ""
  echo "DEMO_ONLY=1: stopping after the demonstration ($(($(date +%s) - t0)) s in all)"
  exit 0
fi

stage "Full build in $BUILD_DIR: every kernel of the matrix (scripts/build.sh $*)" \
      "about 25 min on 2 cores for the default matrix, less what the kernel cache holds; see docs/build-matrix.md"
BUILD_DIR="$BUILD_DIR" JOBS="$JOBS" scripts/build.sh "$@"
BIN="$BUILD_DIR/tools/deconv"

stage "Benchmark of the whole suite against oneDNN ($suite; scale layers omitted)" \
      "about a minute"
"$BIN" bench --suite "$suite"

if [ -f tools/plot_bench.py ]; then
  stage "The suite once more as JSON, for the charts (tools/plot_bench.py)" "about a minute"
  mkdir -p "$BUILD_DIR/bench"
  "$BIN" bench --suite "$suite" --json > "$BUILD_DIR/bench/suite.json"
  if "$PYTHON" tools/plot_bench.py "$BUILD_DIR/bench/suite.json" --out "$BUILD_DIR/bench"; then
    echo "charts: $BUILD_DIR/bench/roofline.png and $BUILD_DIR/bench/speedup.png" \
         "(data: $BUILD_DIR/bench/suite.json)"
  else
    echo "charts: tools/plot_bench.py failed (see above); the data is in $BUILD_DIR/bench/suite.json"
  fi
fi
if [ -f "$BUILD_DIR/python/deconv/__init__.py" ] && /usr/bin/python3 -c "import torch" 2> /dev/null; then
  stage "PyTorch models through the Python package: their ConvTransposes swapped for deconv's" \
        "about a minute"
  PYTHONPATH="$BUILD_DIR/python" /usr/bin/python3 examples/python/run_models.py --threads "$JOBS"
fi
stage "" ""
echo "main: done in $(($(date +%s) - t0)) s"
