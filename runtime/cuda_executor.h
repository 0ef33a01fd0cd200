// The CUDA side of a plan: its kernel, the limits of the kernels' grid, and running it.
#pragma once

#include "plan_impl.h"

#include <cstdint>
#include <string>
#include <vector>

namespace deconv {
namespace detail {

// The CUDA kernel of a layer: one per op and data layout (generators/CMakeLists.txt).
KernelKey cuda_kernel_key(const OpGeometry &g, DType dtype);
// Why the CUDA kernels' grid (generators/schedules/tile_facts.h's blocks; y and z at most 65535, x
// at most 2^31 - 1) cannot hold the layer, bounded by the layer's extents; empty when it fits.
std::string cuda_grid_problem(const OpGeometry &g, const std::vector<int64_t> &out_spatial);

#if defined(DECONV_HAVE_CUDA)
// Runs a validated CUDA plan (strides in elements, checked against the 32-bit kernel fields).
void run_cuda(const Plan::Impl &p, const ConstTensorView &input, const ConstTensorView &filter,
              const TensorView &output, const std::vector<int64_t> &in_st0, const std::vector<int64_t> &w_st0,
              const std::vector<int64_t> &out_st0);
#endif

}  // namespace detail
}  // namespace deconv
