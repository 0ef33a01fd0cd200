// The OpenCL backend of the GPU executor (runtime/gpu/gpu_backend.h), over the test-only OpenCL
// kernels (cmake/DeconvOpenCLTestKernels.cmake): the same GPU schedule and dispatch as CUDA,
// run on the CPU by pocl.
#pragma once

#include "gpu/gpu_backend.h"
#include "kernels/kernel_registry.h"

#include <string>

namespace deconv_ocl {

// Phase views start inside the output and the filter, and an OpenCL launch turns such a view into
// a sub-buffer, whose offset the device must align to CL_DEVICE_MEM_BASE_ADDR_ALIGN: 1024 bits on
// pocl, the least OpenCL 1.2 allows (the size of a long16). The backend's view_alignment, and the
// slot the tests give each element of their device tensors.
constexpr int64_t kViewAlignment = 128;

const deconv::detail::GpuBackend &opencl_backend();

// Why this process cannot run OpenCL kernels (no loader, no platform, no device), or "" when it
// can: a one-byte device buffer is allocated and freed through Halide's OpenCL runtime.
std::string opencl_device_problem();

// The OpenCL kernel of `key` (the key the CUDA plan looks up: cuda_kernel_key), or nullptr when
// DECONV_OPENCL_TEST_KERNELS left it out.
const deconv::detail::KernelEntry *find_opencl_kernel(const deconv::detail::KernelKey &key);

}  // namespace deconv_ocl
