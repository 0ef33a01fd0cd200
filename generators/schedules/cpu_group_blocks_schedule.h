// CPU schedule of the group-block kernels (group_block_facts.h): channels-last grouped layers
// whose output channels per group fill 1/b of a vector. Each vector holds the output channels of
// b groups, lane gi + b * co, so that one broadcast of b adjacent input elements (the block-
// interleaved copy, group_block_layout.h) serves a whole vector: the channels-last schedule's
// one-vector tiles fill 1/b of each vector there (32 groups of 8 -> 8 channels on AVX-512), and
// its layout twin transposes the whole output (64 groups of 4 -> 4, 56x56, kernel 3 stride 2:
// 8 ms, against 1.4 ms for these kernels' phases in a JIT copy).
//
// The register tile: one vector x group_block_q_tile positions x group_block_rows rows. Loops,
// outermost first: batch, outer axes, rows of tiles (parallel), position tiles, group blocks,
// the tile. Every block of groups at each position tile, so that the cache lines a tile stores
// (b groups' channels at a position: one line on AVX-512) lie beside the next block's. The
// accumulator is stored with the groups innermost (the lanes' order) and transposed to the
// output's order, channels innermost, when stored. Branches: the whole tile (first for blocks of
// as many input as output channels), one row of it, one position per step; a scalar branch for
// any other channel count (the dispatcher never takes it).
#pragma once

#include "../conv_stages.h"
#include "cpu_parallel.h"
#include "../../facts/group_block_facts.h"
#include "../../facts/tile_facts.h"

namespace deconv {
namespace gen {

// `out_param`: the output buffer, NXC ([co, g, q.., n]); `blocked`: the filter in block order
// (group_block_layout.h), `w_gi` its block axis; `position_stride`: the input's elements from one
// position of the innermost axis to the next.
inline void schedule_cpu_group_blocks(ConvStages &p, Halide::OutputImageParam out_param, Halide::Func blocked,
                                      const Halide::Var &w_gi, const Halide::Target &target, int block,
                                      const Halide::Expr &position_stride) {
    using namespace Halide;
    const int rank = (int)p.q.size();
    const int lanes = target.natural_vector_size(Float(32));
    const int vec = lanes / block;  // output channels per group
    const bool many = tiles::many_registers(target.has_feature(Target::AVX512), target.arch == Target::ARM);
    const Expr channels = out_param.dim(0).extent(), groups = out_param.dim(1).extent();
    const Expr width = out_param.dim(2).extent();
    const Expr height = rank >= 2 ? out_param.dim(3).extent() : Expr(1);  // (1D: one row)
    const Expr batch = out_param.dim(rank + 2).extent();

    struct Branch {
        Expr cond;
        int q_tile, rows;
    };
    const int q = tiles::group_block_q_tile(many), rows = tiles::group_block_rows(rank);
    const Expr fits = channels == vec && groups % block == 0;
    std::vector<Branch> branches;
    // (No vector branches where a vector holds fewer lanes than b groups of two channels: SSE4.1.)
    // The whole tile first where the block has as many input channels as output channels, its
    // positions a vector apart: the broadcasts' addresses are then constant offsets (with the
    // stride a run-time value, each took an address add beside its multiply-add).
    if (vec >= 2) {
        const Expr whole = fits && width >= q && height >= rows;
        branches.push_back({whole && position_stride == lanes, q, rows});
        if (rows > 1) branches.push_back({whole, q, rows});
        branches.push_back({fits && width >= q, q, 1});
        branches.push_back({fits, 1, 1});
    }

    Var go("go"), gi("gi"), qo("qo"), qi("qi"), q1o("q1o"), q1i("q1i");
    // Loops outside the tile: group blocks (go), then `beside` (the scalar branch's channels),
    // position tiles (qo), rows (q1o, or the axis whole), outer axes, batch; the outermost row
    // loop in parallel (1D: the position tiles, in tasks).
    auto outer = [&](Stage s, std::vector<VarOrRVar> order, bool rows_split, int tile,
                     const std::vector<VarOrRVar> &beside = {}) {
        order.push_back(go);
        order.insert(order.end(), beside.begin(), beside.end());
        order.push_back(qo);
        for (int i = 1; i < rank; i++) order.push_back(i == 1 && rows_split ? q1o : p.q[i]);
        order.push_back(p.n);
        s.reorder(order);
        if (rank >= 2) {
            s.parallel(rank == 2 && rows_split ? q1o : p.q[rank - 1]);
        } else {
            parallel_row_tasks(s, qo, (width + tile - 1) / tile, Expr(1), batch);
        }
        s.parallel(p.n);
    };
    for (const Branch &b : branches) {
        Stage s = p.out.specialize(b.cond);
        s.split(p.g, go, gi, block, TailStrategy::RoundUp);
        s.split(p.q[0], qo, qi, b.q_tile, TailStrategy::ShiftInwards);
        if (b.rows > 1) {
            s.split(p.q[1], q1o, q1i, b.rows, TailStrategy::ShiftInwards);
            outer(s, {p.co, gi, qi, q1i}, true, b.q_tile);
            s.unroll(q1i);
        } else {
            outer(s, {p.co, gi, qi}, false, b.q_tile);
        }
        s.vectorize(p.co, vec).unroll(gi);
        if (b.q_tile > 1) s.unroll(qi);
    }
    // Any other channel count: scalar, one output per accumulator.
    p.out.split(p.g, go, gi, 1).split(p.q[0], qo, qi, 1);
    outer(p.out, {gi, qi}, false, 1, {p.co});

    // The accumulator in registers at the group block, groups innermost (the lanes' order).
    p.acc.compute_at(p.out, go).store_in(MemoryType::Register);
    std::vector<Var> storage = {p.g, p.co};
    storage.insert(storage.end(), p.q.begin(), p.q.end());
    storage.push_back(p.n);
    p.acc.reorder_storage(storage);
    Stage u = p.acc.update();
    std::vector<VarOrRVar> order = {p.g, p.co, p.q[0]};
    if (rank >= 2) order.push_back(p.q[1]);
    order.push_back(p.r[rank]);
    for (int i = 0; i < rank; i++) order.push_back(p.r[i]);
    for (int i = 2; i < rank; i++) order.push_back(p.q[i]);
    order.push_back(p.n);
    u.reorder(order);
    for (const Branch &b : branches) {
        for (Stage st : {p.acc.specialize(b.cond), u.specialize(b.cond)}) {
            st.vectorize(p.g, block).vectorize(p.co, vec);
            if (b.q_tile > 1) st.unroll(p.q[0]);
            if (b.rows > 1) st.unroll(p.q[1]);
        }
    }
    // The filter in block order, once per call (a few KiB per phase).
    blocked.compute_root().unroll(w_gi);
}

}  // namespace gen
}  // namespace deconv
