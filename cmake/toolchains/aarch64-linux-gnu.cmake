# Cross-compiles deconv for 64-bit ARM Linux with Debian's GNU toolchain
# (g++-aarch64-linux-gnu, libc6-arm64-cross, libstdc++6-arm64-cross: `scripts/setup.sh --arm64`).
#
#   cmake --preset arm64          (CMakePresets.json), or by hand:
#   cmake -S . -B build-arm64 -G Ninja \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
#         -DHalideHelpers_DIR=/usr/lib/x86_64-linux-gnu/cmake/HalideHelpers14 \
#         -Ddeconv-halide_generators_DIR=<host build>/cmake   (the generator runs on x86)
#
# The Halide kernels come from the host-built generator (exported by add_halide_generator into
# <host build>/cmake/deconv-halide_generators-config.cmake; any host build dir of deconv, even
# one that built only the deconv_generators target) with ARM targets. Since the CMake target is
# arm-64-linux, add_halide_library asks for objects, which this toolchain archives and links.
# Test binaries run under qemu-user: ctest and gtest_discover_tests go through
# CMAKE_CROSSCOMPILING_EMULATOR (set QEMU_CPU=cortex-a53 etc. to pick the emulated CPU).

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(DECONV_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${DECONV_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${DECONV_CROSS_TRIPLE}-g++)
# The Debian cross sysroot (libc6-dev-arm64-cross and friends install into /usr/<triple>).
set(DECONV_CROSS_SYSROOT /usr/${DECONV_CROSS_TRIPLE} CACHE PATH "Target root of the aarch64 cross toolchain")

set(CMAKE_FIND_ROOT_PATH ${DECONV_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # build tools run on the host
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)    # libraries and headers only for the target
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# Packages from both: the host's arch-independent ones (nlohmann_json in /usr/share/cmake, the
# HalideHelpers CMake functions) are usable; the x86 ones live in /usr/lib/x86_64-linux-gnu,
# which is not searched since CMAKE_LIBRARY_ARCHITECTURE is aarch64-linux-gnu.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# Run target binaries (ctest, test discovery) under user-mode emulation.
find_program(DECONV_QEMU_AARCH64 qemu-aarch64)
if(DECONV_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${DECONV_QEMU_AARCH64};-L;${DECONV_CROSS_SYSROOT}")
endif()
