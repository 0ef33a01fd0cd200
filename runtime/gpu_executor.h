// The GPU executor: a validated GPU plan run on a backend's kernels (gpu_backend.h), one launch per
// combination of stride phases (zero fills for phases without taps), on the caller's device memory
// or on device copies of host views. CUDA plans run here (cuda_executor.cpp); the OpenCL tests run
// the same code on pocl (tests/opencl/).
#pragma once

#include "gpu_backend.h"
#include "plan_impl.h"

#include <cstdint>
#include <vector>

namespace deconv {
namespace detail {

// Runs `kernel` (a GPU-scheduled kernel of the plan's op family, rank, dtype and layout, built for
// `backend`) over the plan's phases. Strides are in elements, checked against the 32-bit kernel
// fields. Views with Memory::CudaDevice hold a device handle of `backend` in `data`.
void run_gpu(const GpuBackend &backend, const Plan::Impl &p, const KernelEntry &kernel, const ConstTensorView &input,
             const ConstTensorView &filter, const TensorView &output, const std::vector<int64_t> &in_st0,
             const std::vector<int64_t> &w_st0, const std::vector<int64_t> &out_st0);

}  // namespace detail
}  // namespace deconv
