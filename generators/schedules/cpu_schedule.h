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
// Parallelism: rows of the outermost spatial axis (1D: channel tiles x groups x batch).
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
        if (rank >= 2) {
            // Rows of the outermost spatial axis are the parallel tasks: fusing them with the
            // channel loops would blur the bounds of the register tile below.
            s.parallel(p.q[rank - 1]);
        } else {
            // Channel tiles and (group, batch) in parallel, kept as separate loops for the same
            // reason.
            Var c_outer = co_split ? coo : p.co;
            s.fuse(p.g, p.n, task).parallel(task).parallel(c_outer);
        }
    };

    // Branches, tried in order. Each keeps vectors x co_tile accumulators in registers.
    struct Branch {
        Expr cond;
        int vecs, cot;
    };
    std::vector<Branch> branches = {
        {channels >= sp.co_tile && width >= qt, sp.vectors, sp.co_tile},     // full register tile
        {channels >= sp.co_tile && width >= lanes, 1, sp.co_tile},           // short rows
        {width >= qt, sp.vectors, 1},                                         // few channels
        {width >= lanes, 1, 1},
    };
    for (const Branch &b : branches) {
        Stage s = p.out.specialize(b.cond);
        s.split(p.q[0], qo, qi, lanes * b.vecs, TailStrategy::ShiftInwards);
        if (b.cot > 1) s.split(p.co, coo, coi, b.cot, TailStrategy::ShiftInwards);
        parallel_outer(s, b.cot > 1);
        s.vectorize(qi, lanes);
        if (b.vecs > 1) s.unroll(qi);
        if (b.cot > 1) s.unroll(coi);
    }
    // Rows narrower than a vector: scalar.
    p.out.split(p.q[0], qo, qi, 1);
    parallel_outer(p.out, false);

    // The accumulator lives in registers at the position tile of whichever branch runs.
    p.acc.compute_at(p.out, qo)
        .bound_extent(p.g, 1)
        .bound_extent(p.n, 1)
        .store_in(MemoryType::Register);
    std::vector<VarOrRVar> order;
    order.push_back(p.q[0]);
    order.push_back(p.co);
    // Input channels innermost: taps per phase are often a single one (kernel == stride), and
    // the channel loop is long.
    order.push_back(p.r[rank]);
    for (int i = 0; i < rank; i++) order.push_back(p.r[i]);
    for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
    order.push_back(p.g);
    order.push_back(p.n);
    Stage u = p.acc.update();
    u.reorder(order);
    for (const Branch &b : branches) {
        Stage a = p.acc.specialize(b.cond);
        Stage au = u.specialize(b.cond);
        for (Stage st : {a, au}) {
            st.vectorize(p.q[0], lanes);
            if (b.vecs > 1) st.unroll(p.q[0]);
            if (b.cot > 1) st.unroll(p.co);
        }
        if (sp.unroll_taps) au.unroll(p.r[0]);
    }
}

}  // namespace gen
}  // namespace deconv
