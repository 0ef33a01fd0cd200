// CPU schedule (x86-64 and ARM64) of the phase convolution.
//
// Register tile: `vectors` native vectors of output positions along the innermost spatial axis
// times `co_tile` output channels, all accumulators live in registers while the reduction over
// (ci, taps) streams one input vector load and co_tile weight broadcasts per step. Sizes follow
// the register count: 32 vector registers on AVX-512 and ARM64 (a 2x8 = 16 accumulator tile
// leaves room for loads and broadcasts), 16 on AVX2/SSE (2x4 = 8 accumulators).
//
// Three specializations keep the general kernel correct for every shape while the common case
// runs the tiled code: (1) enough channels and positions for a full tile, then tiles of 4 or 3
// channels (RGB outputs), (2) fewer channels (depthwise): vectorize positions only; both in 8-
// and 4-lane vectors on rows narrower than a native one, (3) rows of fewer than four positions:
// scalar.
// Depthwise layers (one input channel) take their branches of (2) with the channel loop known
// to be one, on dense rows with more position vectors.
// Parallelism: tasks of rows of the outermost spatial axis (cpu_parallel.h), groups and batch
// (1D: channel tiles x groups x batch).
#pragma once

#include "../conv_stages.h"
#include "cpu_parallel.h"
#include "schedule_params.h"
#include "../../facts/tile_facts.h"

namespace deconv {
namespace gen {

inline ScheduleParams cpu_defaults(const Halide::Target &t, ScheduleParams p) {
    const bool many_regs = tiles::many_registers(t.has_feature(Halide::Target::AVX512), t.arch == Halide::Target::ARM);
    if (p.vectors <= 0) p.vectors = tiles::positions_vectors();
    if (p.co_tile <= 0) p.co_tile = tiles::positions_co_tile(many_regs);
    return p;
}

// `variants`: conditions under which the whole branch list is worth specialising again (e.g. unit
// stride, so that position vectors are dense loads), best first; the general list follows.
// `bounded` (a bounds test per read): only the full-tile and one-channel branches. The dispatcher
// gives layers of fewer than 16 output channels a zero-bordered input copy and the interior
// kernel, so a bounded kernel's RGB and depthwise branches ran only past that copy's size limit,
// at the cost of doubling its compile time.
inline void schedule_cpu(ConvStages &p, Halide::OutputImageParam out_param, const Halide::Target &target,
                         const Halide::Type &acc_t, ScheduleParams sp, const std::vector<Halide::Expr> &variants = {},
                         bool bounded = false) {
    using namespace Halide;
    sp = cpu_defaults(target, sp);
    const int rank = (int)p.q.size();
    const int lanes = target.natural_vector_size(acc_t);
    const int qt = lanes * sp.vectors;

    Expr width = out_param.dim(0).extent();
    Expr channels = out_param.dim(rank).extent();

    Var qo("qo"), qi("qi"), coo("coo"), coi("coi");

    // Outer loop nest shared by all branches. Loops innermost first:
    //   [qi, coi], qo, coo|co, q1 .. q_{D-1}, g, n
    // The outermost row axis (1D: channel tiles), groups and batch all run in parallel, so
    // there are enough tasks even when rows are few (e.g. batch 64 of 4x4 images).
    auto parallel_outer = [&](Stage s, bool co_split) {
        std::vector<VarOrRVar> order;
        order.push_back(qi);
        if (co_split) order.push_back(coi);
        order.push_back(qo);
        order.push_back(co_split ? coo : p.co);
        for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
        order.push_back(p.g);
        order.push_back(p.n);
        s.reorder(order);
        // Nested parallel loops rather than one fused loop: bounds inference cannot see through
        // a fused loop, and the accumulator tile must keep constant bounds.
        if (rank >= 2) {
            parallel_row_tasks(s, p.q[rank - 1], out_param.dim(rank - 1).extent(), out_param.dim(rank + 1).extent(),
                               out_param.dim(rank + 2).extent());
        } else {
            s.parallel(co_split ? coo : p.co);
        }
        s.parallel(p.g).parallel(p.n);
    };

    // Branches, tried in order (each a specialize() of the same algorithm). A branch tiles
    // q_tile output positions x co_tile output channels into registers and vectorizes positions
    // (input vectors, weight broadcasts) with vectors of `vec` lanes.
    struct Branch {
        Expr cond;
        int q_tile, co_tile;
        int vec;  // vector width
    };
    std::vector<Branch> base = {
        // full register tile
        {channels >= sp.co_tile && width >= qt, qt, sp.co_tile, lanes},
    };
    // Rows of one to two vectors.
    base.push_back({channels >= sp.co_tile && width >= lanes, lanes, sp.co_tile, lanes});
    if (lanes > 8) {
        // Rows of 8-15 positions (phases of 7x7 or 14x14 maps) on AVX-512: 8-lane vectors, which
        // the 4-lane branch below ran at a quarter of the vector. (The 8 x 8 tile is square: it
        // takes 16 channels, see below; fewer stay on 4 lanes.)
        base.push_back({channels >= sp.co_tile && width >= 8, 8, sp.co_tile, 8});
    }
    const int short_tile = tiles::kPositionsShortTile;
    if (lanes > short_tile) {
        // Rows narrower than a native vector (e.g. 4x4 phases of an 8x8 output): 4-lane vectors.
        // (Vectorizing channels instead would need the accumulator stored channel-major, and a
        // Func has one storage order for all its specializations: a later, separate Func.)
        base.push_back({channels >= sp.co_tile && width >= short_tile, short_tile, sp.co_tile, short_tile});
    }
    // Three to co_tile - 1 channels (RGB outputs): tiles of 4 (AVX-512) or 3 channels over the full
    // row tile. One channel per tile left two accumulators, each multiply-add waiting on the last
    // (dcgan_l5, 64 -> 3: 5.1 ms on AVX2, oneDNN 3.4).
    if (sp.co_tile > 4 && !bounded) base.push_back({channels >= 4 && width >= qt, qt, 4, lanes});
    if (sp.co_tile > 3 && !bounded) base.push_back({channels >= 3 && width >= qt, qt, 3, lanes});
    // Fewer (depthwise, two channels): positions only.
    base.push_back({width >= qt, qt, 1, lanes});
    base.push_back({width >= lanes, lanes, 1, lanes});
    // And rows narrower than a native vector (small maps: phase rows of 4-15 positions), which
    // otherwise ran scalar: a 3D layer of 16 groups of 4 -> 4 channels on 12^3 at 1.8 GFLOP/s.
    if (lanes > 8) base.push_back({width >= 8, 8, 1, 8});
    if (lanes > short_tile) base.push_back({width >= short_tile, short_tile, 1, short_tile});
    // No square tiles: Halide 14 drops the accumulator's reduction from a branch whose position
    // tile equals its channel tile (the kernel stores zeros: AVX2 4-lane x 4, SSE 4 x 4, AVX-512
    // f64 8 x 8; found by the adjoint tests, reproduced with the kernel alone). Such a branch
    // takes twice the channels instead.
    for (Branch &b : base) {
        if (b.co_tile > 1 && b.co_tile == b.q_tile) {
            b.co_tile *= 2;
            b.cond = channels >= b.co_tile && width >= b.q_tile;
        }
    }
    // Depthwise (one input channel per group): each one-channel branch again ahead of itself with
    // the channel loop's extent known, so that no loop of one iteration and its address
    // arithmetic stand between two taps' multiply-adds (128 groups of 112x112, kernel 5 stride 1:
    // 6.6 -> 2.7 ms); and ahead of that, on dense output rows (stride-1 phases), with vector
    // stores instead of the strided ones of phase views, and kDepthwiseDenseVectors position
    // vectors where the row holds them (2.7 -> 1.7 ms).
    if (!bounded) {
        const Expr one_ci = p.r[rank].extent() == 1;
        const Expr dense_rows = out_param.dim(0).stride() == 1;
        const int wide = tiles::kDepthwiseDenseVectors * lanes;
        std::vector<Branch> with;
        for (const Branch &b : base) {
            if (b.co_tile == 1) {
                Branch d = b;
                d.cond = b.cond && one_ci;
                if (b.vec == lanes) {
                    Branch dense = d;
                    dense.cond = d.cond && dense_rows;
                    if (b.q_tile == qt && wide > qt) {
                        Branch w = dense;
                        w.q_tile = wide;
                        w.cond = dense.cond && width >= wide;
                        with.push_back(w);
                    }
                    with.push_back(dense);
                }
                with.push_back(d);
            }
            with.push_back(b);
        }
        base = with;
    }
    std::vector<Branch> branches;
    for (const Halide::Expr &v : variants) {
        for (Branch b : base) {
            b.cond = v && b.cond;
            branches.push_back(b);
        }
    }
    branches.insert(branches.end(), base.begin(), base.end());

    for (const Branch &b : branches) {
        Stage s = p.out.specialize(b.cond);
        s.split(p.q[0], qo, qi, b.q_tile, TailStrategy::ShiftInwards);
        if (b.co_tile > 1) s.split(p.co, coo, coi, b.co_tile, TailStrategy::ShiftInwards);
        parallel_outer(s, b.co_tile > 1);
        s.vectorize(qi, b.vec);
        if (b.q_tile > b.vec) s.unroll(qi);
        if (b.co_tile > 1) s.unroll(coi);
    }
    // Rows narrower than a vector and few channels: scalar.
    p.out.split(p.q[0], qo, qi, 1);
    parallel_outer(p.out, false);

    // The accumulator lives in registers at the position tile of whichever branch runs.
    p.acc.compute_at(p.out, qo).store_in(MemoryType::Register);
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
            st.vectorize(p.q[0], b.vec);
            if (b.q_tile > b.vec) st.unroll(p.q[0]);
            if (b.co_tile > 1) st.unroll(p.co);
        }
        if (sp.unroll_taps) au.unroll(p.r[0]);
    }
}

}  // namespace gen
}  // namespace deconv
