// The OpenCL backend of the GPU executor (see opencl_backend.h).
#include "opencl_backend.h"

#include "kernels/halide_glue.h"

#include "HalideRuntime.h"
#include "HalideRuntimeOpenCL.h"

#include <climits>
#include <cstdlib>
#include <vector>

#include "opencl_kernel_table.inc"

namespace deconv_ocl {
namespace {

using deconv::detail::GpuBackend;

// pocl caches what it compiles in the build folder, not in the user's home (see CMakeLists.txt),
// unless the environment says otherwise; set before the first OpenCL call of the process.
const bool g_cache_dir_set = [] { return setenv("POCL_CACHE_DIR", DECONV_OPENCL_CACHE_DIR, 0) == 0; }();

const halide_device_interface_t *opencl_interface() { return halide_opencl_device_interface(); }

// An OpenCL device handle names a cl_mem and an offset into it. Halide makes such a handle with a
// crop, whose offset it computes from the buffers' mins: a byte buffer over the allocation, and
// the crop `bytes` into it. The launch turns a non-zero offset into a sub-buffer, whose offset
// the device must allow (CL_DEVICE_MEM_BASE_ADDR_ALIGN, 128 bytes on pocl): see kViewAlignment in
// opencl_dispatch_test.cpp.
int opencl_view_at(uint64_t base, int64_t bytes, uint64_t *view) {
    if (bytes < 0 || bytes > INT32_MAX) return halide_error_code_device_crop_failed;
    halide_dimension_t whole(0, INT32_MAX, 1), part((int32_t)bytes, 1, 1);
    halide_buffer_t src{}, dst{};
    src.device = base;
    src.device_interface = halide_opencl_device_interface();
    src.type = halide_type_t(halide_type_uint, 8);
    src.dimensions = 1;
    src.dim = &whole;
    dst.type = src.type;
    dst.dimensions = 1;
    dst.dim = &part;
    const int rc = halide_device_crop(nullptr, &src, &dst);
    *view = dst.device;
    return rc;
}

void opencl_release_view(uint64_t view) {
    halide_dimension_t part(0, 1, 1);
    halide_buffer_t b{};
    b.device = view;
    b.device_interface = halide_opencl_device_interface();
    b.type = halide_type_t(halide_type_uint, 8);
    b.dimensions = 1;
    b.dim = &part;
    halide_device_release_crop(nullptr, &b);
}

GpuBackend make_backend() {
    GpuBackend b{"OpenCL", &opencl_interface, {}, {}, &opencl_view_at, &opencl_release_view, kViewAlignment};
    for (const ElementKernelRow &k : kOpenClElementKernels) {
        const int slot = GpuBackend::element_slot(k.bits / 8);
        b.zero_fill[slot] = k.zero_fill;
        b.strided_copy[slot] = k.strided_copy;
    }
    return b;
}

}  // namespace

const GpuBackend &opencl_backend() {
    static const GpuBackend backend = make_backend();
    return backend;
}

std::string opencl_device_problem() {
    (void)g_cache_dir_set;
    // Halide's default error handler aborts: the library's turns messages into take_halide_error.
    deconv::detail::install_halide_hooks();
    uint8_t byte = 0;
    halide_dimension_t dim(0, 1, 1);
    halide_buffer_t b{};
    b.host = &byte;
    b.type = halide_type_t(halide_type_uint, 8);
    b.dimensions = 1;
    b.dim = &dim;
    const int rc = halide_device_malloc(nullptr, &b, halide_opencl_device_interface());
    if (rc != 0) {
        return "Halide's OpenCL runtime cannot allocate on any OpenCL device (error " + std::to_string(rc) +
               "): " + deconv::detail::take_halide_error();
    }
    halide_device_free(nullptr, &b);
    return "";
}

const deconv::detail::KernelEntry *find_opencl_kernel(const deconv::detail::KernelKey &key) {
    static const std::vector<deconv::detail::KernelEntry> entries = [] {
        std::vector<deconv::detail::KernelEntry> v;
        for (const auto &row : kOpenClKernelRows) v.push_back(deconv::detail::parse_kernel_row(row));
        return v;
    }();
    for (const auto &e : entries)
        if (e.key == key) return &e;
    return nullptr;
}

}  // namespace deconv_ocl
