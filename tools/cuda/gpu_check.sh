#!/bin/bash
# The CUDA check on a GPU machine, in one call: the CUDA tests, compute-sanitizer memcheck over the
# GPU tests, `deconv bench --target cuda` at the library's register cap (twice, to see the noise),
# at JIT caps 64 and 255 and with the filter packed in every run, PyTorch/cuDNN on the same
# layers, and ncu on the two layers furthest behind cuDNN.
# DIR is what tools/cuda/stage.sh packed; logs go to OUT (at most 8 files).
# Usage: OUT=logs tools/cuda/gpu_check.sh DIR
D=$(cd "${1:?staged dir}" && pwd); OUT=${OUT:?set OUT}; W=$(mktemp -d); mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin
unx() { if command -v xz >/dev/null; then xz -dc "$1" >"$2"; else python3 -c "import lzma,sys;open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" "$1" "$2"; fi; chmod +x "$2"; }
unx "$D/tests.xz" "$W/tests"; unx "$D/deconv.xz" "$W/deconv"
[ -f "$D/libdnnl.so.2.xz" ] && unx "$D/libdnnl.so.2.xz" "$W/libdnnl.so.2"
cp "$D"/lib*.so.1 "$W/" 2>/dev/null
export LD_LIBRARY_PATH=$W:${LD_LIBRARY_PATH:-}; unset HL_CUDA_JIT_MAX_REGISTERS
I=$OUT/info.txt; SECONDS=0; status=0
nvidia-smi -L >/dev/null 2>&1 || { echo "nvidia-smi finds no GPU: this script is for a GPU machine" | tee "$I"; exit 1; }
{ nvidia-smi; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv; } >"$I" 2>&1
# The CUDA tests skip (saying so) without a usable GPU: on a GPU machine that skip is a failure.
# (Shards of dtypes or ranks the staged build lacks skip too, saying "no CUDA kernel in this build".)
timeout 200 "$W/tests" --gtest_filter='*Cuda*:*CUDA*' >"$OUT/gtest.txt" 2>&1; rc=$?; echo "gtest rc=$rc ${SECONDS}s" | tee -a "$I"; [ $rc = 0 ] || status=1
if grep -q "no usable CUDA GPU here" "$OUT/gtest.txt"; then
    echo "FAIL: CudaGpu tests skipped on a GPU machine" | tee -a "$I"; status=1
fi
grep -E "^\[  (PASSED|FAILED) " "$OUT/gtest.txt" | tee -a "$I"
# --leak-check is left off: Halide's CUDA runtime keeps freed device buffers for reuse
# (halide_reuse_device_allocations defaults to true) and they are still held at exit.
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 "$W/tests" --gtest_filter='CudaGpu*:Shards/CudaGpu*' >"$OUT/memcheck.txt" 2>&1
rc=$?; echo "memcheck rc=$rc ${SECONDS}s" | tee -a "$I"; [ $rc = 0 ] || status=1; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " "$OUT/memcheck.txt" | tee -a "$I"
B="--suite $D/suite.json --target cuda --no-onednn --json --repeats 20 --warmup 3 --max-seconds 2"
# Runs: the library's register cap twice (the noise), the JIT caps 64 and 255 once, and the
# filter packed in every run (--pack-per-run) once.
for run in lib:1 64:1 255:1 lib:2 perrun:1; do
    cap=${run%:*}; round=${run#*:}; extra=""
    [ "$cap" = perrun ] && extra="--pack-per-run"
    if [ "$cap" = lib ] || [ "$cap" = perrun ]; then
        timeout 90 "$W/deconv" bench $B $extra >"$W/b_${cap}_$round.json" 2>>"$W/bench_err.txt"
    else
        HL_CUDA_JIT_MAX_REGISTERS=$cap timeout 90 "$W/deconv" bench $B >"$W/b_${cap}_$round.json" 2>>"$W/bench_err.txt"
    fi
    echo "bench $cap r$round rc=$? ${SECONDS}s" >>"$I"
done
(cd "$W" && tar czf "$OUT/bench.tgz" b_*.json bench_err.txt)
python3 - "$W" <<'PY' | tee "$OUT/bench_table.txt"
import glob, json, math, os, sys
w = sys.argv[1]
runs = {}
for f in sorted(glob.glob(f"{w}/b_*.json")):
    if os.path.getsize(f):
        runs[os.path.basename(f)[2:-5]] = {l["name"]: l["ms_median"] for l in json.load(open(f))["layers"]}
if "lib_1" not in runs:
    sys.exit("no bench results at the library's cap: see bench_err.txt in bench.tgz")
cols = [c for c in ("lib_1", "lib_2", "64_1", "255_1", "perrun_1") if c in runs]
names = list(runs["lib_1"])
print(f"{'layer':22}" + "".join(f"{c:>11}" for c in cols) + "   (ms, median of 20)")
for n in names:
    print(f"{n:22}" + "".join(f"{runs[c].get(n, 0):11.4f}" for c in cols))
base = {n: min(runs[c][n] for c in ("lib_1", "lib_2") if c in runs) for n in names}
for c in cols:
    print(f"{c}: geomean time over the library cap's best {math.exp(sum(math.log(runs[c][n] / base[n]) for n in names) / len(names)):.3f}")
PY
python3 -c "import torch" 2>/dev/null && PYTHONUNBUFFERED=1 timeout 150 python3 "$D/torch_cuda_baseline.py" --suite "$D/suite.json" \
    --ours "$W/b_lib_1.json" --repeats 50 --warmup 10 --json "$OUT/torch.json" >"$OUT/torch.txt" 2>&1; echo "torch rc=$? ${SECONDS}s" >>"$I"
# ncu on the two layers furthest behind cuDNN (NCU_LAYERS names others).
layers=${NCU_LAYERS:-$(python3 -c "import json,sys; r=[x for x in json.load(open(sys.argv[1]))['rows'] if x['torch_over_ours']]; print(' '.join(x['name'] for x in sorted(r, key=lambda x: x['torch_over_ours'])[:2]))" "$OUT/torch.json" 2>/dev/null)}
for l in ${layers:-dcgan_l2 centernet_up3}; do
    [ $SECONDS -gt 300 ] && break
    echo "==== ncu $l" >>"$OUT/ncu.txt"
    timeout 90 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
        --section ComputeWorkloadAnalysis --launch-count 6 "$W/deconv" bench --suite "$D/suite.json" --only $l --target cuda --no-onednn \
        --repeats 1 --warmup 0 --warmup-ms 0 --max-seconds 0 >>"$OUT/ncu.txt" 2>&1; echo "ncu $l rc=$? ${SECONDS}s" >>"$I"
done
cat "$OUT/torch.txt" "$I"
exit $status
