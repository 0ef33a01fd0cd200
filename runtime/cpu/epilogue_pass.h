// The epilogue of quantized layers and of layers with a bias or post-ops (Epilogue in
// deconv/deconv.h): a pass over the output that turns each accumulator into the stored value,
// and the conversions that feed a quantized layer's accumulating plan.
//
// It runs right after the plan that accumulates, over rows of at most kEpilogueChunk elements:
// each stage (bias, scales, post-ops, zero point and store) is a loop over one chunk held in
// registers and L1, so the compiler vectorizes every stage, and a run over several threads splits
// the rows between them.
#pragma once

#include "deconv/deconv.h"

#include <cstdint>
#include <vector>

namespace deconv {
namespace detail {

// What one run applies: the plan's epilogue and types, and the run's scales and bias.
struct EpilogueValues {
    const Epilogue *epilogue = nullptr;
    DataTypes types;
    const float *scales = nullptr;  // 1 or out_channels values; null: none
    int64_t scale_count = 0;
    const void *bias = nullptr;     // out_channels values of epilogue->bias
    int vector_bits = 256;          // the widest vectors of the run's CPU variant the pass may use
};

// dst[i] = epilogue(acc[i], dst[i]) for every index of `shape` (the output in its data format's
// order; channel axis `c_axis`). `acc` has dtype acc_t (f32, f64 or i32) and strides acc_st; `dst`
// has types.dst and strides dst_st. acc may be dst itself (same dtype and strides): each element
// is read before it is written. `parallel`: its rows split over the thread pool (false: on the
// calling thread, for a part of the output that a task computed; cpu/output_stage.h).
void apply_epilogue(const EpilogueValues &v, DType acc_t, const void *acc, const std::vector<int64_t> &acc_st,
                    void *dst, const std::vector<int64_t> &dst_st, const std::vector<int64_t> &shape, int c_axis,
                    bool parallel = true);

// `count` values of `from` (a run's bias: f32, i32, f16, bf16 or f64) as `to` (f32 or f64, the
// epilogue's compute type), dense: what the pass adds, and what the kernels' epilogue starts from
// (kernels/kernel_epilogue.h).
void channel_values(DType from, const void *src, int64_t count, DType to, void *dst);

// A quantized tensor (u8 or i8, strided) as its values less `zero_point`, into a dense tensor of
// `to` (f32, f64 or i32): exact.
void quantized_to_dense(DType from, int32_t zero_point, const void *src, const std::vector<int64_t> &src_st,
                        const std::vector<int64_t> &shape, DType to, void *dst);

// The largest sum of |w| over the weights of one output channel of a dense filter of `t` (i8 or
// u8), whose axes are [G?, A, B, K..]: the output channel is (g, axis `co_axis`) with `grouped`
// filters.
int64_t max_output_channel_weight_sum(DType t, const void *w, const std::vector<int64_t> &shape, bool grouped,
                                      int co_axis);

}  // namespace detail
}  // namespace deconv
