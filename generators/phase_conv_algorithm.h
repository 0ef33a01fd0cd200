// The algorithm of every backprop kernel: one stride phase of a transposed convolution.
//
// A transposed convolution writes output[y] = sum over (x, k) with x*s + k*d = y + pad_begin of
// input[x] * w[k]. Split the output by stride phase (the residue of y + pad_begin modulo s):
// inside one phase only the taps k = k0 + j*s/gcd(s,d) contribute, and the input index moves by
// exactly one per output step. So each phase is a dense, dilated correlation
//
//     out[q] = sum_{ci, j} input[q - j*in_step] * w[j]                      (per spatial axis)
//
// over views the dispatcher prepares (runtime/phase_decomposition.cpp): `input`'s coordinate
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
                                    const std::vector<Halide::Expr> &in_step, const Halide::Type &storage) {
    return define_correlation(input, filter, filter_param, layout, channel_major, rank, storage,
                              [&](int axis, Halide::Expr q, Halide::Expr j) { return q - j * in_step[axis]; });
}

}  // namespace gen
}  // namespace deconv
