// The GPU executor: a validated GPU plan run on a backend's kernels (gpu_backend.h), one launch per
// combination of stride phases (zero fills for phases without taps), on the caller's device memory
// or on device copies of host views. CUDA plans run here (cuda_executor.cpp); the OpenCL tests run
// the same code on pocl (tests/opencl/).
#pragma once

#include "gpu/gpu_backend.h"
#include "plan/plan_impl.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace deconv {
namespace detail {

// A filter packed on a backend's device for a plan (the layout the GPU kernels read best, see
// gpu_executor.cpp), freed on the device with its last reference: what Plan::pack_filter keeps
// for GPU plans, so that runs neither copy nor pack the filter.
class GpuPackedFilter {
public:
    virtual ~GpuPackedFilter() = default;
    virtual uint64_t handle() const = 0;
    // Element strides of the canonical axes [g, ci, k.., co].
    virtual const std::vector<int64_t> &strides() const = 0;
    virtual size_t bytes() const = 0;
};

// Packs `filter` (host or device memory of `backend`; `w_st0`: its element strides) for plan `p`.
std::shared_ptr<const GpuPackedFilter> pack_filter_on_gpu(const GpuBackend &backend, const Plan::Impl &p,
                                                          const ConstTensorView &filter,
                                                          const std::vector<int64_t> &w_st0);

// Runs `kernel` (a GPU-scheduled kernel of the plan's op family, rank, dtype and layout, built for
// `backend`) over the plan's phases. Strides are in elements, checked against the 32-bit kernel
// fields. Views with Memory::CudaDevice hold a device handle of `backend` in `data`. `packed`:
// the filter already packed by pack_filter_on_gpu (then `filter` and `w_st0` are not read), or
// null to pack it for this run.
void run_gpu(const GpuBackend &backend, const Plan::Impl &p, const KernelEntry &kernel, const ConstTensorView &input,
             const ConstTensorView &filter, const TensorView &output, const std::vector<int64_t> &in_st0,
             const std::vector<int64_t> &w_st0, const std::vector<int64_t> &out_st0,
             const GpuPackedFilter *packed = nullptr);

}  // namespace detail
}  // namespace deconv
