// A GPU API as the GPU executor (gpu_executor.h) sees it: Halide's device interface, the zero-fill
// and strided-copy kernels compiled for it, and how a view that starts inside a device allocation is addressed.
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
    using StridedCopyFn = int (*)(halide_buffer_t *, halide_buffer_t *);

    // The API's name in error messages ("... failed on CUDA").
    const char *name;
    const halide_device_interface_t *(*interface)();
    // The zero fill of phases without taps (generators/zero_fill_generator.cpp), by element size
    // 1, 2, 4 and 8 bytes; null where this backend has none for that size.
    ZeroFillFn zero_fill[4];
    // The copy between two six-axis views of any strides (generators/strided_copy_generator.cpp)
    // that packs a device filter, by element size as zero_fill.
    StridedCopyFn strided_copy[4];
    // The device handle of a view `bytes` past the start of `base` (a device handle of this
    // backend: the caller's device memory or one of the executor's allocations). CUDA handles
    // are addresses, so this is an addition; OpenCL handles name a buffer and an offset. Returns a
    // Halide error code (0: done).
    int (*view_at)(uint64_t base, int64_t bytes, uint64_t *view);
    // Releases a handle view_at made, after the launches that read it were queued; null where
    // views hold nothing.
    void (*release_view)(uint64_t view);
    // The byte alignment view_at's offsets need (OpenCL sub-buffers: the device's
    // CL_DEVICE_MEM_BASE_ADDR_ALIGN); 1 where any offset does. The executor's own buffers that
    // views start inside (the packed filter) space their elements by it.
    int64_t view_alignment = 1;

    // The slot of zero_fill and strided_copy for elements of `elem_bytes` (1, 2, 4, 8); -1 for others.
    static int element_slot(size_t elem_bytes) {
        switch (elem_bytes) {
        case 1: return 0;
        case 2: return 1;
        case 4: return 2;
        case 8: return 3;
        default: return -1;
        }
    }
    ZeroFillFn zero_fill_for(size_t elem_bytes) const {
        const int slot = element_slot(elem_bytes);
        return slot < 0 ? nullptr : zero_fill[slot];
    }
    StridedCopyFn strided_copy_for(size_t elem_bytes) const {
        const int slot = element_slot(elem_bytes);
        return slot < 0 ? nullptr : strided_copy[slot];
    }
};

}  // namespace detail
}  // namespace deconv
