// What every convolution algorithm of this project hands to its schedules: the Vars and RDom of
// the loop nest, and the three Funcs (the bounded input, the accumulator and the stored result).
// Both the backprop phase convolution (phase_conv_algorithm.h) and the forward convolution
// (group_conv_algorithm.h) produce this, so the CPU schedules serve both.
//
// Logical axis order, innermost first (Halide's order):
//   input  [x_0 .. x_{D-1}, ci, g, n]   (x_0 is the innermost spatial axis: X_D of the spec)
//   filter [k_0 .. k_{D-1}, co, ci, g]
//   output [q_0 .. q_{D-1}, co, g, n]
// The buffers' memory order depends on the data layout (data_layout.h); the Funcs below keep the
// logical argument order except `acc` and `out`, whose arguments are in storage order
// (out_args(), acc_args()).
#pragma once

#include "Halide.h"

#include <vector>

namespace deconv {
namespace gen {

enum class Layout {
    NCX,  // channels first: [x.., c, g, n] innermost first
    NXC,  // channels last:  [c, g, x.., n] innermost first
};

struct ConvStages {
    Layout layout = Layout::NCX;
    // The accumulator keeps output channels innermost (the channels-last schedule vectorizes
    // them), whatever the buffers' layout: always under NXC, by choice under NCX.
    bool channel_major = false;
    // The filter holds input channels in pairs (data_layout.h, logical_filter): the schedule
    // reduces each pair with one bf16 dot-product instruction.
    bool ci_pairs = false;
    std::vector<Halide::Var> q;  // output spatial axes, innermost first
    Halide::Var co{"co"}, g{"g"}, n{"n"};
    Halide::RDom r;              // taps r[0..D-1] (innermost first), then ci as r[D]
    Halide::Func acc{"acc"};     // accumulator, in the accumulation type
    Halide::Func out{"out"};     // rounded / saturated to the storage type

    // The pure arguments of the output in its buffer's order (innermost first).
    std::vector<Halide::Var> out_args() const { return args(layout == Layout::NXC); }
    // The pure arguments of the accumulator in storage order.
    std::vector<Halide::Var> acc_args() const { return args(channel_major); }

private:
    std::vector<Halide::Var> args(bool channels_first) const {
        std::vector<Halide::Var> a;
        if (channels_first) {
            a = {co, g};
            a.insert(a.end(), q.begin(), q.end());
        } else {
            a.assign(q.begin(), q.end());
            a.push_back(co);
            a.push_back(g);
        }
        a.push_back(n);
        return a;
    }
};

// Accumulation type per storage type (documented in include/deconv/deconv.h).
inline Halide::Type accumulator_type(const Halide::Type &t) {
    if (t.is_float()) return t.bits() == 64 ? Halide::Float(64) : Halide::Float(32);
    if (t.bits() == 32) return Halide::Int(64);
    return Halide::Int(32);
}

// f16: Halide 14's software f32 -> f16 conversion on x86 (it emits no vcvtps2ph) turns a NaN into
// an infinity of its sign, so NaNs are stored explicitly (one compare and select per stored vector).
inline Halide::Expr store_cast(const Halide::Type &t, const Halide::Expr &e) {
    using namespace Halide;
    if (t.is_float() && t.bits() == 16 && !t.is_bfloat()) {
        return select(is_nan(e), reinterpret(t, cast(UInt(16), 0x7e00)), cast(t, e));
    }
    return t.is_float() ? cast(t, e) : saturating_cast(t, e);
}

// The epilogue of float CPU kernels: a layer's bias and a relu, bounded_relu or clip list that
// folds into v = min(max(alpha * v, v), hi) with alpha <= 1 (runtime/cpu/fused_epilogue.h), in
// the kernels themselves, where the epilogue pass read and wrote the whole output a second time
// (1.38x the plain run in geomean over bench/layers.json, 2.6x on the memory-bound depthwise
// layers). The bias starts the sum (the accumulator's first value: no instruction of its own),
// and the slot costs three per stored vector, as a plain run's identity (alpha 1, hi +inf) costs
// too: the general two-bound slot's six cost the depthwise layers, whose outputs take four
// products each, 17% of their plain run. Every value is a run-time input. The selects keep a NaN
// (strict: under Halide's no-NaN arithmetic LLVM makes the bound a plain vminps, which returns the
// bound for a NaN). Integer and GPU kernels take the inputs and leave them unread.
struct StoreEpilogue {
    Halide::Func bias;  // [co, g], in the accumulator's type; undefined: none
    Halide::Expr alpha, hi;
};

// The accumulator's first value: the bias of output channel (co, g), or zero.
inline Halide::Expr accumulator_start(const Halide::Type &acc_t, const Halide::Func &bias, const Halide::Expr &co,
                                      const Halide::Expr &g) {
    return bias.defined() ? Halide::cast(acc_t, bias(co, g)) : Halide::Internal::make_zero(acc_t);
}

inline Halide::Expr epilogue_store(const Halide::Type &storage, const Halide::Expr &acc, const StoreEpilogue &e) {
    using namespace Halide;
    if (!storage.is_float() || !e.alpha.defined()) return store_cast(storage, acc);
    const Type t = acc.type();
    const Expr scaled = acc * cast(t, e.alpha), hi = cast(t, e.hi);
    Expr v = select(scaled > acc, scaled, acc);  // v > 0 ? v : alpha * v, for alpha <= 1
    v = select(hi < v, hi, v);
    return store_cast(storage, strict_float(v));
}

}  // namespace gen
}  // namespace deconv
