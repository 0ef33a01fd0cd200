#!/usr/bin/env bash
# Installs the built tree into a temporary prefix, then builds and runs examples/downstream
# against it twice: through find_package(deconv) and through pkg-config.
set -euo pipefail
build_dir="$1"; source_dir="$2"
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
