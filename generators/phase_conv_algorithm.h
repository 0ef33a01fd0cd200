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
// border clipping. Input positions outside the buffer read as zero.
//
// Axis order in Halide is innermost first:
//   input  [x_0 .. x_{D-1}, ci, g, n]   (x_0 is the innermost spatial axis: X_D of the spec)
//   filter [k_0 .. k_{D-1}, co, ci, g]  (taps of this phase only)
//   output [q_0 .. q_{D-1}, co, g, n]   (positions of this phase only)
#pragma once

#include "Halide.h"

#include <string>
#include <vector>

namespace deconv {
namespace gen {

struct PhaseConv {
    std::vector<Halide::Var> q;  // output spatial axes, innermost first
    Halide::Var co{"co"}, g{"g"}, n{"n"};
    Halide::RDom r;              // taps r[0..D-1] (innermost first), then ci as r[D]
    Halide::Func input_ext{"input_ext"};
    Halide::Func acc{"acc"};     // accumulator, in the accumulation type
    Halide::Func out{"out"};     // rounded / saturated to the storage type
};

// Accumulation type per storage type (documented in include/deconv/deconv.h).
inline Halide::Type accumulator_type(const Halide::Type &t) {
    if (t.is_float()) return t.bits() == 64 ? Halide::Float(64) : Halide::Float(32);
    if (t.bits() == 32) return Halide::Int(64);
    return Halide::Int(32);
}

inline Halide::Expr store_cast(const Halide::Type &t, const Halide::Expr &e) {
    return t.is_float() ? Halide::cast(t, e) : Halide::saturating_cast(t, e);
}

// `input`, `filter` are the pipeline's buffer parameters; `in_step` one Expr per spatial axis.
// `bounded`: input positions outside the buffer read as zero. The dispatcher runs the unbounded
// variant on phases where no tap leaves the input (e.g. kernel == stride, as in U-Net's 2x2 s2
// up-convolutions), whose inner loop then carries no boundary test.
inline PhaseConv define_phase_conv(const Halide::Func &input, const Halide::OutputImageParam &input_param,
                                   const Halide::Func &filter, const Halide::OutputImageParam &filter_param,
                                   int rank, const std::vector<Halide::Expr> &in_step,
                                   const Halide::Type &storage, bool bounded) {
    using namespace Halide;
    PhaseConv p;
    for (int i = 0; i < rank; i++) p.q.emplace_back("q" + std::to_string(i));

    // Zero outside the input's runtime bounds; loop partitioning removes the test from the
    // interior of the image.
    // Only the spatial axes have an exterior: channel, group and batch are always in range.
    Region in_bounds;
    for (int i = 0; i < input_param.dimensions(); i++) {
        if (i < rank) {
            in_bounds.push_back({input_param.dim(i).min(), input_param.dim(i).extent()});
        } else {
            in_bounds.push_back(Range());
        }
    }
    if (bounded) {
        p.input_ext = BoundaryConditions::constant_exterior(input, Internal::make_zero(storage), in_bounds);
    } else {
        p.input_ext(_) = input(_);
    }

    Region taps;
    for (int i = 0; i < rank; i++) taps.push_back({0, filter_param.dim(i).extent()});
    taps.push_back({0, filter_param.dim(rank + 1).extent()});  // ci
    p.r = RDom(taps, "r");

    const Type acc_t = accumulator_type(storage);
    std::vector<Expr> in_idx, w_idx;
    for (int i = 0; i < rank; i++) {
        in_idx.push_back(p.q[i] - p.r[i] * in_step[i]);
        w_idx.push_back(p.r[i]);
    }
    Expr ci = p.r[rank];
    in_idx.push_back(ci);
    in_idx.push_back(p.g);
    in_idx.push_back(p.n);
    w_idx.push_back(p.co);
    w_idx.push_back(ci);
    w_idx.push_back(p.g);

    std::vector<Var> pure(p.q.begin(), p.q.end());
    pure.push_back(p.co);
    pure.push_back(p.g);
    pure.push_back(p.n);

    p.acc(pure) = Internal::make_zero(acc_t);
    p.acc(pure) += cast(acc_t, p.input_ext(in_idx)) * cast(acc_t, filter(w_idx));
    p.out(pure) = store_cast(storage, p.acc(pure));
    return p;
}

}  // namespace gen
}  // namespace deconv
