// A GPU API as the GPU executor (gpu_executor.h) sees it: Halide's device interface, the zero-fill
// kernels compiled for it, and how a view that starts inside a device allocation is addressed.
// The library's one backend is CUDA (cuda_executor.cpp); the tests add OpenCL (tests/opencl/),
// which runs the same GPU-scheduled kernels and the same dispatch on a CPU through pocl.
#pragma once

#include <cstddef>
#include <cstdint>

struct halide_buffer_t;
struct halide_device_interface_t;

namespace deconv {
namespace detail {

struct GpuBackend {
    using ZeroFillFn = int (*)(halide_buffer_t *);

    // The API's name in error messages ("... failed on CUDA").
    const char *name;
    const halide_device_interface_t *(*interface)();
    // The zero fill of phases without taps (generators/zero_fill_generator.cpp), by element size
    // 1, 2, 4 and 8 bytes; null where this backend has none for that size.
    ZeroFillFn zero_fill[4];
    // The device handle of a view `bytes` past the start of `base` (a device handle of this
    // backend: the caller's device memory or one of the executor's allocations). CUDA handles
    // are addresses, so this is an addition; OpenCL handles name a buffer and an offset. Returns a
    // Halide error code (0: done).
    int (*view_at)(uint64_t base, int64_t bytes, uint64_t *view);
    // Releases a handle view_at made, after the launches that read it were queued; null where
    // views hold nothing.
    void (*release_view)(uint64_t view);

    ZeroFillFn zero_fill_for(size_t elem_bytes) const {
        switch (elem_bytes) {
        case 1: return zero_fill[0];
        case 2: return zero_fill[1];
        case 4: return zero_fill[2];
        case 8: return zero_fill[3];
        default: return nullptr;
        }
    }
};

}  // namespace detail
}  // namespace deconv
