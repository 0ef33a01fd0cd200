// The algorithm of every backprop kernel: one stride phase of a transposed convolution.
//
// A transposed convolution writes output[y] = sum over (x, k) with x*s + k*d = y + pad_begin of
// input[x] * w[k]. Split the output by stride phase (the residue of y + pad_begin modulo s):
// inside one phase only the taps k = k0 + j*s/gcd(s,d) contribute, and the input index moves by
// exactly one per output step. So each phase is a dense, dilated correlation
//
//     out[q] = sum_{ci, j} input[q - j*in_step] * w[j]                      (per spatial axis)
//
// over views the dispatcher prepares (runtime/layer/phase_decomposition.cpp): `input`'s coordinate
// origin is shifted so that q lines up, `w` is the strided subset of taps of this phase, and
// `out` is the strided subset of output positions of this phase. No multiplication by the zeros
// of a zero-stuffed input ever happens: the work is exactly the nominal MAC count less the
// border clipping. Input positions outside the buffer read as zero (data_layout.h).
#pragma once

#include "data_layout.h"

namespace deconv {
namespace gen {

// `input` and `filter` in logical order (data_layout.h); `channel_major`: see ConvStages; `in_step` one Expr per spatial axis.
inline ConvStages define_phase_conv(const Halide::Func &input, const Halide::Func &filter,
                                    const Halide::OutputImageParam &filter_param, Layout layout,
                                    bool channel_major, int rank,
                                    const std::vector<Halide::Expr> &in_step, const Halide::Type &storage,
                                    bool ci_pairs = false, const Halide::Func &bias = Halide::Func()) {
    return define_correlation(
        input, filter, filter_param, layout, channel_major, rank, storage,
        [&](int axis, Halide::Expr q, Halide::Expr j) { return q - j * in_step[axis]; }, ci_pairs, bias);
}

// The same phase convolution with every stride phase of the innermost axis in one kernel call,
// so that a vector of outputs of each phase is stored interleaved with the others as dense
// rows (the separate per-phase calls store them `stride` elements apart, one lane at a time).
// Axis 0's output position y = s*q + ph (ph < s, a pure variable) reads, for d = 1,
//
//     out[ph, q] = sum_{ci, j} input[q + floor((ph + pad_begin) / s) - j] * w[j, ph]
//
// where w[j, ph] is tap (ph + pad_begin) mod s + j*s, zero past the kernel (the dispatcher packs
// it). `short_phase` >= 0: that phase has one tap fewer than the others (an odd kernel at stride
// 2), and its last j is left out of the reduction rather than multiplied by the packed zero
// (with j and ph unrolled the condition folds away). The outer axes are phase views as above.
// Interior only: the dispatcher hands a zero-bordered input. Logical order: output [ph, q_0 .. q_{D-1}, co, g, n], filter
// [j, ph, k_1 .. k_{D-1}, co, ci, g], input as define_phase_conv's (channels first).
struct InterleavedStages {
    Halide::Var ph{"ph"};
    std::vector<Halide::Var> q;  // q[0]: groups of `s` outputs along axis 0
    Halide::Var co{"co"}, g{"g"}, n{"n"};
    Halide::RDom r;  // taps r[0..D-1] (axis 0: j), input channel r[D]
    Halide::Func acc{"acc"}, out{"out"};
    Halide::Func filter;  // as given (schedules may wrap it)

    std::vector<Halide::Var> args() const {
        std::vector<Halide::Var> a = {ph};
        a.insert(a.end(), q.begin(), q.end());
        a.insert(a.end(), {co, g, n});
        return a;
    }
};

inline InterleavedStages define_interleaved_phase_conv(const Halide::Func &input, const Halide::Func &filter,
                                                       const Halide::OutputImageParam &filter_param, int rank,
                                                       int stride, const Halide::Expr &pad_begin,
                                                       const std::vector<Halide::Expr> &in_step,
                                                       const Halide::Type &storage, int short_phase = -1,
                                                       const Halide::Func &bias = Halide::Func()) {
    using namespace Halide;
    InterleavedStages p;
    p.filter = filter;
    for (int i = 0; i < rank; i++) p.q.emplace_back("q" + std::to_string(i));
    Region taps = {{0, filter_param.dim(0).extent()}};
    for (int i = 1; i < rank; i++) taps.push_back({0, filter_param.dim(i + 1).extent()});
    taps.push_back({0, filter_param.dim(rank + 2).extent()});  // ci
    p.r = RDom(taps, "r");
    if (short_phase >= 0) p.r.where(p.ph != short_phase || p.r[0] < p.r[0].extent() - 1);

    const Type acc_t = accumulator_type(storage);
    Expr ci = p.r[rank];
    std::vector<Expr> in_idx = {p.q[0] + (p.ph + pad_begin) / stride - p.r[0]};
    std::vector<Expr> w_idx = {p.r[0], p.ph};
    for (int i = 1; i < rank; i++) {
        in_idx.push_back(p.q[i] - p.r[i] * in_step[i]);
        w_idx.push_back(p.r[i]);
    }
    in_idx.insert(in_idx.end(), {ci, p.g, p.n});
    w_idx.insert(w_idx.end(), {p.co, ci, p.g});

    const std::vector<Var> a = p.args();
    p.acc(a) = accumulator_start(acc_t, bias, p.co, p.g);
    p.acc(a) += cast(acc_t, input(in_idx)) * cast(acc_t, filter(w_idx));
    p.out(a) = store_cast(storage, p.acc(std::vector<Expr>(a.begin(), a.end())));
    return p;
}

}  // namespace gen
}  // namespace deconv
