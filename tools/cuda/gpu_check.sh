#!/bin/bash
# The CUDA check on a GPU machine, in one call: the CUDA tests, compute-sanitizer memcheck over the
# GPU tests, `deconv bench --target cuda` at several JIT register caps (twice each, to see the
# noise) and at the library's own cap, PyTorch/cuDNN on the same layers, and ncu on two layers.
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
# The CUDA tests skip (saying so) without a usable GPU: on a GPU machine a skipped CudaGpu test is a failure.
timeout 200 "$W/tests" --gtest_filter='*Cuda*:*CUDA*' >"$OUT/gtest.txt" 2>&1; rc=$?; echo "gtest rc=$rc ${SECONDS}s" | tee -a "$I"; [ $rc = 0 ] || status=1
if grep -q "SKIPPED \] CudaGpu\|SKIPPED \] Shards/CudaGpu" "$OUT/gtest.txt"; then
    echo "FAIL: CudaGpu tests skipped on a GPU machine" | tee -a "$I"; status=1
fi
grep -E "^\[  (PASSED|FAILED) " "$OUT/gtest.txt" | tee -a "$I"
# --leak-check is left off: Halide's CUDA runtime keeps freed device buffers for reuse
# (halide_reuse_device_allocations defaults to true) and they are still held at exit.
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 3 "$W/tests" --gtest_filter='CudaGpu*:Shards/CudaGpu*' >"$OUT/memcheck.txt" 2>&1
rc=$?; echo "memcheck rc=$rc ${SECONDS}s" | tee -a "$I"; [ $rc = 0 ] || status=1; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " "$OUT/memcheck.txt" | tee -a "$I"
B="--suite $D/suite.json --target cuda --no-onednn --json --repeats 20 --warmup 3 --max-seconds 2"
for round in 1 2; do
    for cap in 64 128 255; do
        HL_CUDA_JIT_MAX_REGISTERS=$cap timeout 90 "$W/deconv" bench $B >"$W/b_${cap}_$round.json" 2>>"$W/bench_err.txt"
        echo "bench cap$cap r$round rc=$? ${SECONDS}s" >>"$I"
    done
    timeout 90 "$W/deconv" bench $B >"$W/b_lib_$round.json" 2>>"$W/bench_err.txt"; echo "bench library cap r$round rc=$? ${SECONDS}s" >>"$I"
done
(cd "$W" && tar czf "$OUT/bench.tgz" b_*.json bench_err.txt)
python3 - "$W" <<'PY' | tee "$OUT/bench_table.txt"
import json, math, os, sys
w = sys.argv[1]; caps = ["64", "128", "255", "lib"]
runs = {(c, r): {l["name"]: l["ms_median"] for l in json.load(open(f"{w}/b_{c}_{r}.json"))["layers"]}
        for c in caps for r in (1, 2) if os.path.getsize(f"{w}/b_{c}_{r}.json")}
if ("64", 1) not in runs:
    sys.exit("no bench results at cap 64: see bench_err.txt in bench.tgz")
names = list(runs[("64", 1)])
print(f"{'layer':20}" + "".join(f"{'cap ' + c:>18}" for c in caps) + "   (ms, median of 20, two rounds)")
for n in names:
    print(f"{n:20}" + "".join(f"{runs.get((c, 1), {}).get(n, 0):9.4f}{runs.get((c, 2), {}).get(n, 0):9.4f}" for c in caps))
best = {c: {n: min(runs[(c, r)][n] for r in (1, 2) if (c, r) in runs) for n in names} for c in caps}
for c in caps:
    print(f"cap {c}: geomean speedup over cap 64 (best of two rounds) "
          f"{math.exp(sum(math.log(best['64'][n] / best[c][n]) for n in names) / len(names)):.3f}")
PY
python3 -c "import torch" 2>/dev/null && PYTHONUNBUFFERED=1 timeout 120 python3 "$D/torch_cuda_baseline.py" --suite "$D/suite.json" \
    --ours "$W/b_lib_1.json" --repeats 50 --warmup 10 >"$OUT/torch.txt" 2>&1; echo "torch rc=$? ${SECONDS}s" >>"$I"
for l in dcgan_l2 centernet_up3; do
    [ $SECONDS -gt 420 ] && break
    echo "==== ncu $l" >>"$OUT/ncu.txt"
    timeout 60 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
        --launch-count 6 "$W/deconv" bench --suite "$D/suite.json" --only $l --target cuda --no-onednn --repeats 1 --warmup 0 \
        --warmup-ms 0 --max-seconds 0 >>"$OUT/ncu.txt" 2>&1; echo "ncu $l rc=$? ${SECONDS}s" >>"$I"
done
cat "$OUT/torch.txt" "$I"
exit $status
