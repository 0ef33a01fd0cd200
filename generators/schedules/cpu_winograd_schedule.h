// CPU schedules of the Winograd transforms (winograd_algorithm.h): memory-bound passes over
// channels-last tensors, channels vectorized, tile indices unrolled so that every coefficient is
// a constant (the zeros of BT and AT fold away). Each transform computes its first stages per
// channel vector of one tile (compute_at), so an input value is read from memory once per tile.
// Parallel over images and the outermost axis's tiles.
//
// Fewer channels than one vector per group take the scalar branch: the plans send layers with
// so few channels to the direct kernels (runtime/strategy.cpp), but the kernels stay correct.
#pragma once

#include "../winograd_algorithm.h"

namespace deconv {
namespace gen {

// `vector_ok`: the channels fill one vector (the specialization's condition).
inline void schedule_cpu_winograd_input(WinogradInputStages &s, const Halide::Expr &vector_ok, int lanes) {
    using namespace Halide;
    const int rank = (int)s.xi.size();
    Func v = s.stage.back();
    Var ci_o("ci_o"), ci_i("ci_i"), t0_o("t0_o");
    for (bool vectorized : {true, false}) {
        Stage b = vectorized ? Stage(v.specialize(vector_ok)) : Stage(v);
        std::vector<VarOrRVar> order;
        // Both branches split the channels (the earlier stages are computed at ci_o).
        b.split(s.ci, ci_o, ci_i, vectorized ? lanes : 1, TailStrategy::ShiftInwards);
        if (vectorized) b.vectorize(ci_i);
        order.push_back(ci_i);
        for (int a = 0; a < rank; a++) {
            b.unroll(s.xi[a]);
            order.push_back(s.xi[a]);
        }
        order.push_back(ci_o);
        order.push_back(s.g);
        for (int a = 0; a < rank; a++) order.push_back(s.t[a]);
        order.push_back(s.n);
        b.reorder(order);
        if (rank == 1) {
            b.split(s.t[0], t0_o, s.t[0], 16, TailStrategy::GuardWithIf).parallel(t0_o);
        } else {
            b.parallel(s.t[rank - 1]);
        }
        b.parallel(s.n);
    }
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
    Var t0_oo("t0_oo");
    for (bool vectorized : {true, false}) {
        Stage b = vectorized ? Stage(out.specialize(vector_ok)) : Stage(out);
        std::vector<VarOrRVar> order;
        b.split(s.co, co_o, co_i, vectorized ? lanes : 1, TailStrategy::ShiftInwards);
        if (vectorized) b.vectorize(co_i);
        order.push_back(co_i);
        // Whole tiles: the last one guarded where the phase's outputs end inside it.
        for (int a = 0; a < rank; a++) {
            b.split(s.q[a], qo[a], qi[a], m, TailStrategy::GuardWithIf).unroll(qi[a]);
            order.push_back(qi[a]);
        }
        order.push_back(co_o);
        for (int a = 0; a < rank; a++) order.push_back(qo[a]);
        order.push_back(s.g);
        order.push_back(s.n);
        b.reorder(order);
        if (rank == 1) {
            b.split(qo[0], t0_oo, qo[0], 16, TailStrategy::GuardWithIf).parallel(t0_oo);
        } else {
            b.parallel(qo[rank - 1]);
        }
        b.parallel(s.n);
    }
    for (int a = 0; a + 1 < rank; a++) {
        Func st = s.stage[a];
        st.compute_at(out, co_o);
        // One tile's rows (the loop then has the constant extent unrolling needs, and starts at
        // a multiple of m: the rows' coefficients fold).
        for (int i = 0; i <= a; i++) st.bound_extent(s.q[i], m).unroll(s.q[i]);
        for (int i = a + 1; i < rank; i++) st.unroll(s.xi[i]);
        st.specialize(vector_ok).vectorize(s.co, lanes);
    }
}

}  // namespace gen
}  // namespace deconv
