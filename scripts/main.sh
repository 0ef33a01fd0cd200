#!/usr/bin/env bash
# The main job: sets up, builds, then shows what deconv does on the spec's example layers and
# benchmarks the suite of real layers against oneDNN.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh "$@"
BIN="${BUILD_DIR:-build}/tools/deconv"
SHARED="$(cd .. && pwd)/shared"

echo
echo "== Shape inference of the spec's example layers"
for xml in tests/cli/data/gcbd_2d.xml tests/cli/data/cbd_2d.xml tests/cli/data/gcbd_3d.xml tests/cli/data/gc_1d.xml tests/cli/data/gc_2d.xml tests/cli/data/gc_3d.xml; do
  [ -f "$xml" ] || continue
  printf '%-45s -> %s\n' "$(basename "$xml")" "$("$BIN" infer-shape --layer "$xml")"
done
echo "g4mb1ic20ih224oc8oh447kh3sh2ph1 (benchdnn)     -> $("$BIN" infer-shape --desc g4mb1ic20ih224oc8oh447kh3sh2ph1)"

echo
echo "== The spec's 2D example layer run on random data (GroupConvolutionBackpropData)"
"$BIN" run --layer tests/cli/data/gcbd_2d.xml --random --seed 1

echo
echo "== Benchmark of the suite against oneDNN (2 threads; scale layers omitted)"
if [ -f "$SHARED/bench/layers.json" ]; then
  "$BIN" bench --suite "$SHARED/bench/layers.json"
else
  echo "(no $SHARED/bench/layers.json beside the checkout: skipped)"
fi
