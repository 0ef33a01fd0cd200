// Quantized backprop layers on the dot-product kernels (deconv_phase_conv_quant: input-channel
// quads of u8 x i8 on vpdpbusd or of i8 x i8 on sdot, or i16 pairs): the filter packed in quads
// with each phase's zero-point compensation, a channels-last copy of the input bordered with the
// zero point, and one kernel
// call per combination of stride phases, each storing its outputs through the epilogue (bias,
// scale, up to two piecewise-linear post-ops, zero point, saturation) into a channels-last
// tensor of the kernel's dst type.
//
// Why the border holds the zero point (quads): every tap of a phase then reads a real element or
// one worth exactly zero after the subtraction, so sum((x - zp) * w) = sum(x * w) - zp * sum(w)
// over all the phase's taps, the same compensation for every output of the phase (the kernel
// subtracts it). i8 data is copied as u8 (x + 128, its zero point moved by 128 likewise), the
// operand vpdpbusd takes; for sdot, which multiplies i8 by i8, u8 data is copied as i8 (x - 128).
// Pairs read i16 copies of x - zp bordered with zeros: no compensation.
#pragma once

#include "kernels/kernel_registry.h"
#include "plan/plan_impl.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace deconv {
namespace detail {

struct QuantDotsFilter {
    // Input channels per dot product: 4 (u8 x i8 quads, the VNNI kernels) or 2 (i16 pairs).
    int group = 4;
    // The layer's groups that each of the kernel's groups holds (quant_dots_merge).
    int64_t merge = 1;
    // [G / merge][K_1..K_D][C_IN_G / group][merge * C_OUT_K][group]: the weights of a group of
    // input channels of an output channel side by side, i8 (quads) or i16 (pairs) (C_IN_G: the
    // input channels of a kernel group, merge * C_IN rounded up to a whole group, the extra ones
    // zero; a merged group's weights from one layer group's inputs to another's outputs zero).
    std::vector<uint8_t> data;
    int64_t c_in_g = 0;
    // Output channels per layer group in the kernel's output: the layer's, or a vector's worth
    // (quant_dots_channels), the extra ones of zero weight, into a scratch output.
    int64_t c_out_k = 0;
    // Whether the run's calls are tap windows of the phases (their bordered copy would hold most
    // of the products) rather than whole phases: decided once here, since the decision walks
    // every output of the innermost axis.
    bool windows = false;
    // Per kernel call of a run (a combination of phases, or of their tap windows, in the run's
    // order): [G][C_OUT_K], the zero point times the weight sums of the call's taps.
    std::vector<std::vector<int32_t>> comp;
};

// Whether `p` runs on the dot-product kernels: every backprop layer.
bool quant_dots_take(const Plan::Impl &p);

// The kernels' tiles need a vector of output channels per group (16 i32 lanes on AVX-512).
constexpr int64_t kQuantDotsMinChannels = 16;
// Layer groups of fewer output channels run merged, `merge` of them in one kernel group of
// merge * C_IN -> merge * C_OUT channels whose weights between different layer groups are zero
// (exact: the zeros add nothing, to the sums and the compensation alike): the smallest divisor
// of G that makes a vector of output channels, 1 where the layer has a vector already or no
// divisor does. Merged, the kernel writes the layer's channels as they lie (no scratch output)
// and sums merge * C_IN channels per output, where padding to a vector summed C_IN: 32 groups of
// 8 -> 8 as u8 x i8 -> u8 (Zen 4, channels-last): 0.36 -> 0.18 ms.
int64_t quant_dots_merge(const Plan::Impl &p);
// Output channels per layer group in the kernel's output: C_OUT merged, else a vector's worth
// at least (the extra ones of zero weight, into a scratch output).
int64_t quant_dots_channels(const Plan::Impl &p);
// Whether the dot-product kernels serve `p` better than the plain f32 plan where that is exact:
// a quad of input channels per kernel group, and a large enough share of the kernel's products
// the layer's own (the rest the zeros of padded or merged channels). A pinned quant_dots (quads
// or pairs) always.
bool quant_dots_prefer(const Plan::Impl &p);

// The epilogue the kernel applies in its store (its run-time inputs).
struct QuantDotsStore {
    std::vector<float> bias, scale;  // per output channel [G*C_OUT_K]: 0 and 1 where the layer has none
    // Post-op slot i: v = clamp(select(v > 0, v * pos, v * neg) + add, lo, hi).
    struct Slot {
        float pos = 1, neg = 1, add = 0, lo = -INFINITY, hi = INFINITY;
    } slot[2];
    float dst_zero_point = 0;
};
// The slots of a post-op list, when the kernel can run it: at most two of relu, clip,
// bounded_relu and linear, and no sum (false otherwise).
bool quant_dots_slots(const std::vector<PostOp> &ops, QuantDotsStore &store);

// Packs a dense i8 filter of the op's layout ([G, C_IN, C_OUT, K..] or [C_IN, C_OUT, K..]) for
// the kernels of `group` input channels.
QuantDotsFilter pack_quant_dots_filter(const Plan::Impl &p, const int8_t *w, int group);

// Runs the layer on `kernel` into `out`, a channels-last tensor [N, Y_1..Y_D, G*C_OUT_K] of the
// kernel's dst type with strides `out_st` (the channels' 1; C_OUT_K: f.c_out_k); `input` (u8 or i8, p.types.src) has
// strides `in_st` in the layer's data format.
void run_quant_dots(const Plan::Impl &p, const KernelEntry *kernel, const QuantDotsFilter &f, const QuantDotsStore &store,
                    const void *input, const std::vector<int64_t> &in_st, void *out, DType out_type,
                    const std::vector<int64_t> &out_st);

}  // namespace detail
}  // namespace deconv
