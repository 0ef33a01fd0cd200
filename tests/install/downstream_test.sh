#!/usr/bin/env bash
# Installs the built tree into a temporary prefix, then builds and runs examples/downstream
# against it twice: through find_package(deconv) and through pkg-config. With a third argument
# (a python3), also imports the installed Python package from the prefix and runs a layer.
set -euo pipefail
build_dir="$1"; source_dir="$2"; python="${3:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" > /dev/null
cmake -S "$source_dir/examples/downstream" -B "$work/cmake-build" -G Ninja \
      -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/cmake-build" > /dev/null
"$work/cmake-build/upsample"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
g++ -std=c++17 -O1 "$source_dir/examples/downstream/main.cpp" -o "$work/upsample_pc" \
    $(pkg-config --cflags --libs --static deconv)
"$work/upsample_pc"

if [ -n "$python" ]; then
  package="$(find "$work/prefix" -name '_deconv*.so' -path '*/deconv/*')"
  [ -n "$package" ] || { echo "install: the Python package is not under $work/prefix" >&2; exit 1; }
  PYTHONPATH="$(dirname "$(dirname "$package")")" "$python" - "$work/prefix" <<'PY'
import sys
import numpy as np
import deconv
assert deconv.__file__.startswith(sys.argv[1]), deconv.__file__
x = np.arange(2 * 4 * 3, dtype=np.float32).reshape(1, 4, 2, 3)
w = np.ones((4, 1, 2, 2), dtype=np.float32)
y = deconv.conv_transpose2d(x, w, stride=2, groups=2)
# Stride 2 with a 2x2 kernel: every output element is one input element summed over its group's
# 2 input channels.
assert y.shape == (1, 2, 4, 6), y.shape
assert y[0, 0, 1, 3] == x[0, 0, 0, 1] + x[0, 1, 0, 1] and y[0, 1, 2, 5] == x[0, 2, 1, 2] + x[0, 3, 1, 2]
print("installed Python package:", deconv.__file__)
PY
fi
