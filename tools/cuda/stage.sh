#!/bin/bash
# Packs what tools/cuda/gpu_check.sh needs on a GPU machine that has no network and no Debian
# packages: the stripped test binary and CLI (xz: a full kernel matrix is ~66 MB each stripped,
# ~12 MB compressed), the shared libraries the CLI links beyond libc/libstdc++ (oneDNN, pugixml,
# libgomp, the OpenCL loader), a suite of layers and the cuDNN baseline script.
# Usage: tools/cuda/stage.sh BUILD_DIR DEST_DIR [LAYER,LAYER,...]
set -euo pipefail
build=${1:?build dir}; dest=${2:?destination dir}
layers=${3:-dcgan_l2,dcgan_l4,dcgan_l5,unet_up1,unet_up1_nxc,unet_up4,fcn8s_upscore8,centernet_up3,centernet_up3_f16,centernet_dla_dw,grouped32_up,dilated_s1,hifigan_up1,hifigan_up3,unet3d_up,vnet_up_3x3x3,ov_spec_1d,ov_spec_2d,ov_spec_2d_nxc,dcgan_l5_nxc,fcn8s_upscore8_nxc,centernet_dla_dw_nxc,grouped32_up_nxc,dilated_s1_nxc}
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dest"
strip -o "$dest/tests" "$build/tests/correctness/deconv_correctness_tests"
strip -o "$dest/deconv" "$build/tools/deconv"
xz -T2 -6 -f "$dest/tests" "$dest/deconv"
# Libraries the CLI needs that a bare CUDA image lacks (ldd names them; libcuda comes with the driver).
for lib in $(ldd "$build/tools/deconv" | awk '/dnnl|pugixml|gomp|OpenCL/ {print $3}'); do
    cp -L "$lib" "$dest/"
done
[ -f "$dest/libdnnl.so.2" ] && xz -T2 -6 -f "$dest/libdnnl.so.2"
python3 - "$src/bench/layers.json" "$dest/suite.json" "$layers" <<'PY'
import json, sys
suite = json.load(open(sys.argv[1]))
want = sys.argv[3].split(",")
suite["layers"] = [l for l in suite["layers"] if l["name"] in want]
missing = set(want) - {l["name"] for l in suite["layers"]}
if missing:
    sys.exit(f"not in {sys.argv[1]}: {', '.join(sorted(missing))}")
json.dump(suite, open(sys.argv[2], "w"), indent=1)
PY
cp "$src/bench/torch_cuda_baseline.py" "$src/tools/cuda/gpu_check.sh" "$dest/"
du -sh "$dest"
