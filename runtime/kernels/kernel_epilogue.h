// The store epilogue's arguments of a kernel call (generators/conv_stages.h, StoreEpilogue):
// every CPU and GPU kernel takes a bias view and a post-op slot after its filter, which a plain
// run gives as the identity. cpu/fused_epilogue.h says which runs store an epilogue.
#pragma once

#include "deconv/deconv.h"

#include "HalideRuntime.h"

#include <cstdint>
#include <vector>

namespace deconv {
namespace detail {

// One run's epilogue in the kernels: per output channel c = g * C_OUT + co, the sum starts from
// bias[c]; then v = max(alpha * v, v) (relu with slope alpha <= 1: v > 0 ? v : alpha * v), v =
// min(v, hi); in the accumulator's type (f64 for f64 layers, f32 otherwise). A NaN stays NaN.
struct KernelEpilogue {
    DType acc = DType::f32;
    std::vector<uint8_t> bias;  // G * C_OUT values of `acc`, zeros without a bias
    int64_t c_out = 0;          // output channels per group
    float alpha = 1, hi = 0;
};

// The epilogue arguments of one kernel call over output channels `co` x `g` (the call's output
// dims) whose first channel is (co0, g0) of the layer: the bias view and the slot, or the
// identity (zeros, 1, +inf) without an epilogue.
struct KernelEpilogueArgs {
    halide_buffer_t bias{};
    halide_dimension_t dims[2]{};
    float alpha = 1, hi;
    KernelEpilogueArgs(const KernelEpilogue *e, DType layer_dtype, const halide_dimension_t &co,
                       const halide_dimension_t &g, int64_t co0, int64_t g0);
};

// The value every output of channel (co0 + co, g0 + g) of the call gets where no tap reaches it:
// the epilogue of 0, or 0 without one; then the fill, as zero_fill_view's (kernel_call.h), channel
// axes `co_dim` and `g_dim` of `dims`.
void fill_tapless_view(const KernelEpilogue *e, DType dtype, uint8_t *base, const halide_dimension_t *dims, int n,
                       int co_dim, int g_dim, int64_t co0, int64_t g0, int64_t copies = 1, int64_t step = 0);

}  // namespace detail
}  // namespace deconv
