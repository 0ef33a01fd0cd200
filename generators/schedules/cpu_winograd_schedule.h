// CPU schedules of the Winograd transforms (winograd_algorithm.h): memory-bound passes over
// channels-last tensors, channels vectorized, tile indices unrolled so that every coefficient is
// a constant (the zeros of BT and AT fold away). Each transform computes its first stages per
// channel vector of one tile (compute_at), so an input value is read from memory once per tile.
// Parallel over images and the outermost axis's tiles.
//
// Fewer channels than one vector per group take the scalar branch: the plans send layers with
// so few channels to the direct kernels (runtime/dispatch/), but the kernels stay correct.
#pragma once

#include "../winograd_algorithm.h"

namespace deconv {
namespace gen {

// The last stage's two branches, `vector_ok` (the channels fill one vector: vectorized) and the
// scalar fallback: channels innermost, split by a vector or by one (the earlier stages are
// computed at `c_o` in both), then what `inner` adds (the tile's unrolled loops), the channel
// vectors, `outer` and the images. Parallel over the images and `tile_axis`, the outermost tile
// axis; in blocks of 16 tiles when it is the only one (1D).
template <typename Inner>
void schedule_channel_branches(Halide::Func f, const Halide::Expr &vector_ok, int lanes, const Halide::Var &c,
                               const Halide::Var &c_o, const Halide::Var &c_i, Inner inner,
                               const std::vector<Halide::VarOrRVar> &outer, const Halide::Var &tile_axis, bool blocks,
                               const Halide::Var &n) {
    using namespace Halide;
    const Var block(tile_axis.name() + "_block");
    for (bool vectorized : {true, false}) {
        Stage b = vectorized ? Stage(f.specialize(vector_ok)) : Stage(f);
        b.split(c, c_o, c_i, vectorized ? lanes : 1, TailStrategy::ShiftInwards);
        if (vectorized) b.vectorize(c_i);
        std::vector<VarOrRVar> order = {c_i};
        inner(b, order);
        order.push_back(c_o);
        order.insert(order.end(), outer.begin(), outer.end());
        order.push_back(n);
        b.reorder(order);
        if (blocks) {
            b.split(tile_axis, block, tile_axis, 16, TailStrategy::GuardWithIf).parallel(block);
        } else {
            b.parallel(tile_axis);
        }
        b.parallel(n);
    }
}

inline void schedule_cpu_winograd_input(WinogradInputStages &s, const Halide::Expr &vector_ok, int lanes) {
    using namespace Halide;
    const int rank = (int)s.xi.size();
    Func v = s.stage.back();
    Var ci_o("ci_o"), ci_i("ci_i");
    std::vector<VarOrRVar> outer = {s.g};
    outer.insert(outer.end(), s.t.begin(), s.t.end());
    schedule_channel_branches(
        v, vector_ok, lanes, s.ci, ci_o, ci_i,
        [&](Stage &b, std::vector<VarOrRVar> &order) {
            for (int a = 0; a < rank; a++) {
                b.unroll(s.xi[a]);
                order.push_back(s.xi[a]);
            }
        },
        outer, s.t[rank - 1], rank == 1, s.n);
    // The earlier stages per tile and channel vector (scalar channel in the fallback).
    for (int a = 0; a + 1 < rank; a++) {
        Func st = s.stage[a];
        // (Unrolled before specialize(), which copies the schedule made so far.)
        st.compute_at(v, ci_o);
        for (int i = 0; i <= a; i++) st.unroll(s.xi[i]);
        st.unroll(s.x[a + 1]);
        st.specialize(vector_ok).vectorize(s.ci, lanes);
    }
}

inline void schedule_cpu_winograd_output(WinogradOutputStages &s, const Halide::Expr &vector_ok, int lanes, int m) {
    using namespace Halide;
    const int rank = (int)s.q.size();
    Func out = s.stage.back();
    Var co_o("co_o"), co_i("co_i");
    std::vector<Var> qo, qi;
    for (int a = 0; a < rank; a++) {
        qo.emplace_back("q" + std::to_string(a) + "_o");
        qi.emplace_back("q" + std::to_string(a) + "_i");
    }
    std::vector<VarOrRVar> outer(qo.begin(), qo.end());
    outer.push_back(s.g);
    schedule_channel_branches(
        out, vector_ok, lanes, s.co, co_o, co_i,
        [&](Stage &b, std::vector<VarOrRVar> &order) {
            // Whole tiles: the last one guarded where the phase's outputs end inside it.
            for (int a = 0; a < rank; a++) {
                b.split(s.q[a], qo[a], qi[a], m, TailStrategy::GuardWithIf).unroll(qi[a]);
                order.push_back(qi[a]);
            }
        },
        outer, qo[rank - 1], rank == 1, s.n);
    for (int a = 0; a + 1 < rank; a++) {
        Func st = s.stage[a];
        st.compute_at(out, co_o);
        // One tile's rows (the loop then has the constant extent unrolling needs, and starts at
        // a multiple of m: the rows' coefficients fold).
        for (int i = 0; i <= a; i++) st.bound_extent(s.q[i], m).unroll(s.q[i]);
        // One tile of the axes still transformed: a constant size, so the stage lives on the
        // stack. Sized by the guarded last tile, it was a heap block per tile and channel vector
        // (its free held 10% of dcgan_l4's samples on the Winograd path).
        for (int i = a + 1; i < rank; i++) st.bound_extent(s.t[i], 1);
        for (int i = a + 1; i < rank; i++) st.unroll(s.xi[i]);
        st.specialize(vector_ok).vectorize(s.co, lanes);
    }
}

}  // namespace gen
}  // namespace deconv
