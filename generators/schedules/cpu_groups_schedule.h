// CPU schedule of depthwise layers on channels-last data (one input and one output channel per
// group): vectorizes the groups, which are the innermost, dense axis of the input, the output and
// the repacked filter ([co, ci, g, k..] with co = ci = 1), so every operand is a vector load. The
// channels-last schedule vectorizes output channels within a group and ran such layers scalar
// (centernet_dla_dw_nxc: 10.3 ms); its layout twin, the channels-first kernels over transposed
// copies, spent three times the kernels' time in the transposes.
//
// The register tile: `vectors` native vectors of groups times `q_tile` output positions of the
// innermost spatial axis; per tap, `vectors` weight loads serve the tile. Branches, in order: the
// exact tiles of three and two vectors (groups a whole number of them); the full tile; one vector
// of groups x 8 positions, then x q_tile; one vector per position; 4-lane vectors; scalar (fewer
// than four groups). Loops, outermost first: batch, rows, group tiles, position tiles.
#pragma once

#include "../conv_stages.h"
#include "cpu_parallel.h"
#include "schedule_params.h"
#include "../../facts/tile_facts.h"

namespace deconv {
namespace gen {

// `out_param`: the output buffer, NXC ([co, g, q.., n]; co of extent 1).
inline void schedule_cpu_groups(ConvStages &p, Halide::OutputImageParam out_param, const Halide::Target &target,
                                const Halide::Type &acc_t, ScheduleParams sp) {
    using namespace Halide;
    const bool many = tiles::many_registers(target.has_feature(Target::AVX512), target.arch == Target::ARM);
    const int vectors = sp.vectors > 0 ? sp.vectors : tiles::groups_vectors(many);
    const int q_tile = sp.q_tile > 0 ? sp.q_tile : tiles::groups_q_tile();
    const int rank = (int)p.q.size();
    const int lanes = target.natural_vector_size(acc_t);
    const Expr groups = out_param.dim(1).extent(), width = out_param.dim(2).extent();

    struct Branch {
        Expr cond;
        int g_tile, vec, q_tile;
    };
    std::vector<Branch> branches;
    // The exact tiles (tile_facts.h) unless the tile is pinned; not on 2-lane vectors (SSE4.1
    // f64), where Halide 14 stored zeros from the branches after a three-vector one (found by
    // LayoutWide.DepthwiseEveryGroupTile).
    const bool exact = sp.vectors == 0 && sp.q_tile == 0 && lanes >= 4;
    const int exact_q[2] = {tiles::groups_three_vector_q_tile(many), tiles::groups_two_vector_q_tile(many)};
    for (int v = 3; exact && v >= 2; v--) {
        const int q = exact_q[3 - v];
        if (q == 0 || v == vectors) continue;
        // A tile smaller than the default one only where that one would compute groups twice.
        Expr cond = groups % (v * lanes) == 0 && width >= q;
        if (v < vectors) cond = cond && groups % (vectors * lanes) != 0;
        branches.push_back({cond, v * lanes, lanes, q});
    }
    branches.push_back({groups >= vectors * lanes && width >= q_tile, vectors * lanes, lanes, q_tile});
    // Not where it would be square (8 lanes of f64 or of i64 accumulators on AVX-512): see below.
    if (exact && tiles::groups_one_vector_q_tile(many) != lanes) {
        const int q = tiles::groups_one_vector_q_tile(many);
        branches.push_back({groups >= lanes && width >= q, lanes, lanes, q});
    }
    branches.push_back({groups >= lanes && width >= q_tile, lanes, lanes, q_tile});
    branches.push_back({groups >= lanes, lanes, lanes, 1});
    if (lanes > 4) branches.push_back({groups >= 4, 4, 4, 1});
    // No square tiles (cpu_schedule.h: Halide 14 drops the reduction of such a branch). On ARM64
    // the doubled branch (the 4-lane x 4 tile: groups >= lanes && width >= q_tile) is written as
    // two plain bounds: as `(groups >= 4 && width >= 4) && groups >= 8` behind the full tile's
    // `groups >= 16 && width >= 4`, Halide 14's first simplification dropped the branch's whole
    // reduction and the kernels stored zeros for 8-15 groups on rows of 4-7 (the update stage keeps
    // its specialization conditions as written, the pure stage's are simplified; a bare JIT
    // pipeline of that shape computes zeros on x86 too). On x86 the doubled branch is never taken
    // (SSE4.1 f32: the full tile before it has the same condition) and stays as it was. A doubled
    // tile that an earlier branch has is left out on ARM64 (pinned tiles).
    const bool arm = target.arch == Target::ARM;
    for (size_t i = 0; i < branches.size(); i++) {
        Branch &b = branches[i];
        if (b.g_tile == b.q_tile) {
            b.g_tile *= 2;
            b.cond = arm ? (groups >= b.g_tile && width >= b.q_tile) : (b.cond && groups >= b.g_tile);
            bool seen = false;
            for (size_t j = 0; j < i; j++) {
                const Branch &d = branches[j];
                seen = seen || (d.g_tile == b.g_tile && d.vec == b.vec && d.q_tile == b.q_tile);
            }
            if (arm && seen) {
                branches.erase(branches.begin() + i);
                i--;
            }
        }
    }

    Var qo("qo"), qi("qi"), go("go"), gi("gi");
    // Position tiles inside group tiles inside rows; rows and batch in parallel. 1D rows run in
    // tasks of several position tiles (cpu_parallel.h): a task per tile made two threads slower
    // than one (4 images of 32 groups x 250, kernel 3 stride 4: 0.031 ms, 0.014 on one thread).
    const Expr batch = out_param.dim(rank + 2).extent();
    Var tile_loop = qo;  // the position tile loop (1D: inside a task)
    auto outer = [&](Stage s, std::vector<VarOrRVar> order, const VarOrRVar &g_outer, int tile) {
        order.push_back(qo);
        order.push_back(g_outer);
        for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
        order.push_back(p.n);
        s.reorder(order);
        if (rank >= 2) {
            s.parallel(p.q[rank - 1]);
        } else {
            tile_loop = parallel_row_tasks(s, qo, (width + tile - 1) / tile, Expr(1), batch).in_task;
        }
        s.parallel(p.n);
    };
    for (const Branch &b : branches) {
        Stage s = p.out.specialize(b.cond);
        s.split(p.q[0], qo, qi, b.q_tile, TailStrategy::ShiftInwards);
        s.split(p.g, go, gi, b.g_tile, TailStrategy::ShiftInwards);
        outer(s, {gi, qi}, go, b.q_tile);
        s.vectorize(gi, b.vec);
        if (b.g_tile > b.vec) s.unroll(gi);
        if (b.q_tile > 1) s.unroll(qi);
    }
    p.out.split(p.q[0], qo, qi, 1);
    outer(p.out, {qi}, p.g, 1);

    // The accumulator lives in registers at the position tile; the reduction (taps) outside the
    // tile's groups and positions.
    p.acc.compute_at(p.out, tile_loop).store_in(MemoryType::Register);
    Stage u = p.acc.update();
    std::vector<VarOrRVar> order = {p.g, p.q[0], p.co, p.r[rank]};
    for (int i = 0; i < rank; i++) order.push_back(p.r[i]);
    for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
    order.push_back(p.n);
    u.reorder(order);
    for (const Branch &b : branches) {
        for (Stage st : {p.acc.specialize(b.cond), u.specialize(b.cond)}) {
            st.vectorize(p.g, b.vec);
            if (b.g_tile > b.vec) st.unroll(p.g);
            if (b.q_tile > 1) st.unroll(p.q[0]);
        }
    }
}

}  // namespace gen
}  // namespace deconv
