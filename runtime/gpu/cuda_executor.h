// The CUDA side of a plan: its kernel, the limits of the kernels' grid, and running it.
#pragma once

#include "gpu/gpu_executor.h"
#include "plan/plan_impl.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace deconv {
namespace detail {

// The CUDA kernel of a layer: one per op and data layout (generators/CMakeLists.txt).
KernelKey cuda_kernel_key(const OpGeometry &g, DType dtype);
// Why the CUDA kernels cannot run the layer: their grid (facts/tile_facts.h's
// blocks; y and z at most 65535, x at most 2^31 - 1) or their 32-bit indexing (2^31 - 1 elements
// per tensor) cannot hold it, bounded by the layer's extents; empty when it fits.
std::string cuda_launch_problem(const OpGeometry &g, const std::vector<int64_t> &out_spatial);

#if defined(DECONV_HAVE_CUDA)
// Runs a validated CUDA plan (strides in elements, checked against the 32-bit kernel fields);
// `packed`: the filter as pack_filter_cuda made it, or null to pack `filter` for this run.
void run_cuda(const Plan::Impl &p, const ConstTensorView &input, const ConstTensorView &filter,
              const TensorView &output, const std::vector<int64_t> &in_st0, const std::vector<int64_t> &w_st0,
              const std::vector<int64_t> &out_st0, const GpuPackedFilter *packed = nullptr);
// The filter packed once on the GPU for plan `p` (host or device memory).
std::shared_ptr<const GpuPackedFilter> pack_filter_cuda(const Plan::Impl &p, const ConstTensorView &filter,
                                                        const std::vector<int64_t> &w_st0);
#endif

}  // namespace detail
}  // namespace deconv
