// CPU schedule (x86-64 and ARM64) of the phase convolution.
//
// Register tile: `vectors` native vectors of output positions along the innermost spatial axis
// times `co_tile` output channels, all accumulators live in registers while the reduction over
// (ci, taps) streams one input vector load and co_tile weight broadcasts per step. Sizes follow
// the register count: 32 vector registers on AVX-512 and ARM64 (a 2x8 = 16 accumulator tile
// leaves room for loads and broadcasts), 16 on AVX2/SSE (2x4 = 8 accumulators).
//
// Three specializations keep the general kernel correct for every shape while the common case
// runs the tiled code: (1) enough channels and positions for a full tile, (2) few channels
// (depthwise, RGB outputs): vectorize positions only, (3) tiny rows: scalar.
// Parallelism: one task per (outer spatial row, channel tile, group, batch), fused.
#pragma once

#include "../phase_conv_algorithm.h"
#include "schedule_params.h"

namespace deconv {
namespace gen {

inline ScheduleParams cpu_defaults(const Halide::Target &t, ScheduleParams p) {
    const bool many_regs = t.has_feature(Halide::Target::AVX512) || t.arch == Halide::Target::ARM;
    if (p.vectors <= 0) p.vectors = 2;
    if (p.co_tile <= 0) p.co_tile = many_regs ? 8 : 4;
    return p;
}

inline void schedule_cpu(PhaseConv &p, Halide::OutputImageParam out_param, const Halide::Target &target,
                         const Halide::Type &acc_t, ScheduleParams sp) {
    using namespace Halide;
    sp = cpu_defaults(target, sp);
    const int rank = (int)p.q.size();
    const int lanes = target.natural_vector_size(acc_t);
    const int qt = lanes * sp.vectors;

    Expr width = out_param.dim(0).extent();
    Expr channels = out_param.dim(rank).extent();

    Var qo("qo"), qi("qi"), coo("coo"), coi("coi"), task("task");

    // Outer loop nest shared by all branches: positions tile, outer spatial rows, channel tile.
    auto parallel_outer = [&](Stage s, bool co_split) {
        // Loops innermost first: [qi, coi], qo, q1.., coo|co, g, n. Fuse everything above the
        // second-innermost spatial row into one parallel loop.
        std::vector<VarOrRVar> order;
        order.push_back(qi);
        if (co_split) order.push_back(coi);
        order.push_back(qo);
        for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
        order.push_back(co_split ? coo : p.co);
        order.push_back(p.g);
        order.push_back(p.n);
        s.reorder(order);
        Var c_outer = co_split ? coo : p.co;
        Var fused = c_outer;
        if (rank >= 2) {
            // q_{D-1} (outermost spatial) joins the parallel loop; inner rows stay serial so
            // each task walks memory in order.
            Var outer_row = p.q[rank - 1];
            s.fuse(outer_row, c_outer, task);
            fused = task;
        }
        Var t2("t2"), t3("t3");
        s.fuse(fused, p.g, t2).fuse(t2, p.n, t3).parallel(t3);
    };

    // (1) full register tile
    {
        Stage s = p.out.specialize(channels >= sp.co_tile && width >= qt);
        s.split(p.q[0], qo, qi, qt, TailStrategy::ShiftInwards)
            .split(p.co, coo, coi, sp.co_tile, TailStrategy::ShiftInwards);
        parallel_outer(s, true);
        s.vectorize(qi, lanes).unroll(qi).unroll(coi);
    }
    // (2) few channels: vectorize positions only
    {
        Stage s = p.out.specialize(width >= lanes);
        s.split(p.q[0], qo, qi, lanes, TailStrategy::ShiftInwards);
        parallel_outer(s, false);
        s.vectorize(qi);
    }
    // (3) scalar rows (at most lanes-1 wide)
    {
        p.out.split(p.q[0], qo, qi, 1);
        parallel_outer(p.out, false);
    }

    // The accumulator lives in registers at the position tile of whichever branch runs.
    p.acc.compute_at(p.out, qo);
    p.acc.specialize(channels >= sp.co_tile && width >= qt)
        .vectorize(p.q[0], lanes).unroll(p.q[0]).unroll(p.co);
    p.acc.specialize(width >= lanes).vectorize(p.q[0], lanes);
    {
        std::vector<VarOrRVar> order;
        order.push_back(p.q[0]);
        order.push_back(p.co);
        for (int i = 0; i <= rank; i++) order.push_back(p.r[i]);
        for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
        order.push_back(p.g);
        order.push_back(p.n);
        Stage u = p.acc.update();
        u.reorder(order);
        Stage u1 = u.specialize(channels >= sp.co_tile && width >= qt);
        u1.vectorize(p.q[0], lanes).unroll(p.q[0]).unroll(p.co);
        if (sp.unroll_taps) u1.unroll(p.r[0]);
        u.specialize(width >= lanes).vectorize(p.q[0], lanes);
    }
}

}  // namespace gen
}  // namespace deconv
