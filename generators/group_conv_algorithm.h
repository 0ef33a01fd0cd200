// The algorithm of the forward kernels: GroupConvolution-1, a strided, dilated correlation
//
//     out[n, g, co, y] = sum_{ci, k} input[n, g, ci, y*s + k*d - pad_begin] * w[g, co, ci, k]
//
// per spatial axis, with input positions outside the buffer reading as zero. The dispatcher
// shifts the input's coordinate origin by pad_begin, so the kernel indexes y*s + k*d. Stride and
// dilation are run-time scalars; the schedules specialise the common unit and stride-2 cases.
#pragma once

#include "data_layout.h"

namespace deconv {
namespace gen {

// `input` and `filter` in logical order (data_layout.h); `channel_major`: see ConvStages; `stride`, `dilation` one Expr per spatial axis.
inline ConvStages define_group_conv(const Halide::Func &input, const Halide::Func &filter,
                                    const Halide::OutputImageParam &filter_param, Layout layout,
                                    bool channel_major, int rank,
                                    const std::vector<Halide::Expr> &stride,
                                    const std::vector<Halide::Expr> &dilation, const Halide::Type &storage,
                                    bool ci_pairs = false, const Halide::Func &bias = Halide::Func()) {
    return define_correlation(
        input, filter, filter_param, layout, channel_major, rank, storage,
        [&](int axis, Halide::Expr q, Halide::Expr j) { return q * stride[axis] + j * dilation[axis]; }, ci_pairs,
        bias);
}

}  // namespace gen
}  // namespace deconv
