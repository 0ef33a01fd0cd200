#!/usr/bin/env bash
# Installs the Debian 12 packages deconv needs to build, test and benchmark. Idempotent: it
# installs only what is missing, so it is cheap to run before every build.
#   scripts/setup.sh           the x86-64 build (default)
#   scripts/setup.sh --arm64   also the aarch64 cross toolchain and qemu-user (scripts/test_arm64.sh)
#   scripts/setup.sh --sanitizers   also clang-14 and its sanitizer and libFuzzer runtimes
#                                   (.ci/sanitizers.sh: -DDECONV_SANITIZE, -DDECONV_FUZZ)
set -euo pipefail

arm64=0
sanitizers=0
for a in "$@"; do
  case "$a" in
    --arm64) arm64=1 ;;
    --sanitizers) sanitizers=1 ;;
    *) echo "setup: unknown option '$a' (known: --arm64, --sanitizers)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build ccache   # ccache: a fresh clone's rebuild recompiles nothing it has seen
  libhalide14-0-dev llvm-14-dev          # Halide 14 and the LLVM it is built on
  libgtest-dev libgmock-dev              # tests
  libcli11-dev nlohmann-json3-dev libpugixml-dev   # command line: arguments, JSON, XML
  libdnnl-dev                            # oneDNN, the speed baseline of `deconv bench`
  ocl-icd-opencl-dev                     # oneDNN's CMake package requires OpenCL (a Recommends); also
                                         # libOpenCL.so, the loader Halide's OpenCL runtime dlopens
  pocl-opencl-icd                        # an OpenCL device on the CPU: the GPU schedule's tests (tests/opencl/)
  python3 python3-numpy                  # end-to-end tests of the command line
  python3-matplotlib                     # tools/plot_bench.py: the bench's roofline and speed-up charts
  pkgconf                                # the pkg-config check of the installed package
  python3-dev pybind11-dev libdlpack-dev # the Python package (python/): headers, bindings, DLPack
  python3-pytest python3-torch           # its tests, examples and the drop-in torch modules
)
if [ "$arm64" -eq 1 ]; then
  packages+=(
    g++-aarch64-linux-gnu libc6-arm64-cross libstdc++6-arm64-cross   # aarch64 cross compiler
    qemu-user                            # runs the aarch64 test binaries (qemu-aarch64)
    googletest                           # GoogleTest sources, built for aarch64 in the cross build
  )
fi
if [ "$sanitizers" -eq 1 ]; then
  packages+=(clang-14 libclang-rt-14-dev)  # ASan/UBSan/TSan and libFuzzer (-fsanitize=fuzzer)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
