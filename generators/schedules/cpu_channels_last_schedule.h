// CPU schedule (x86-64 and ARM64) that vectorizes output channels: every kernel on channels-last
// (NXC) data, and the channel-vectorized kernels on channels-first data.
//
// Output channels are contiguous in the repacked filter ([co, ci, g, k..]) and, under NXC, in
// the output; the input is read by scalar broadcasts, so its layout does not matter. (Under NCX
// the tile's stores scatter across channel planes: one store per accumulator after the whole
// reduction.) The register tile: `vectors` native vectors
// of channels times `q_tile` output positions along the innermost spatial axis. Per step of the
// reduction over (ci, taps) the tile loads `vectors` weight vectors and broadcasts `q_tile`
// input values, the classic direct-convolution micro-kernel. Sizes follow the register count:
// 4x6 = 24 accumulators of 32 vector registers on AVX-512 and ARM64, 2x5 of 16 on AVX2/SSE.
// (Wider position tiles, 2x12, measured 1.1-2.2x slower on the suite: each position is a
// broadcast from its own address, and twelve of them spill the general registers.)
//
// Branches (specializations of the same algorithm): the tiles of channels_last_tiles.h (bounded
// kernels: channels_last_bounded_tiles), tried in its order, each ahead of the scalar schedule of fewer than four channels per group (depthwise
// layers run there; vectorizing groups needs their stride known at compile time, left for later).
// Loops, outermost first: groups, channel tiles, batch, rows, position tiles. Channel tiles sit
// outside the rows and the batch so one tile's weights (input channels x taps x tile channels)
// stay in L2 while every row of every image streams past them. With the batch outermost,
// dcgan_l2 (batch 64, 2 MiB of weights per phase) fetched its weights from L3 once per image.
// Tiles of up to two cache lines of accumulators (8-32 f32 channels per group on AVX-512, 8-16 on
// AVX2) run every group at each position tile instead, so that the lines a tile reads and stores
// hold every group's channels while they are in L1, and one thread stores both halves of a line.
// (With groups outermost, or outside a row's tiles, each group's pass evicted the lines the next
// group needed: 8 -> 8 channels per group, kernel 2 stride 2, 56x56 input: 3.2 ms, 16 GFLOP/s on
// one core; 0.95 ms in this order.)
#pragma once

#include "../conv_stages.h"
#include "schedule_params.h"
#include "../../facts/channels_last_tiles.h"
#include "../../facts/tile_facts.h"

namespace deconv {
namespace gen {

constexpr int kCacheLineBytes = 64;

inline ScheduleParams cpu_channels_last_defaults(const Halide::Target &t, ScheduleParams p) {
    const bool many_regs = tiles::many_registers(t.has_feature(Halide::Target::AVX512), t.arch == Halide::Target::ARM);
    if (p.vectors <= 0) p.vectors = tiles::channels_last_vectors(many_regs);
    if (p.q_tile <= 0) p.q_tile = tiles::channels_last_q_tile(many_regs);
    return p;
}

// `out_param`: the output buffer, in p.layout's order.
inline void schedule_cpu_channels_last(ConvStages &p, Halide::OutputImageParam out_param, const Halide::Target &target,
                                       const Halide::Type &acc_t, ScheduleParams sp,
                                       const std::vector<Halide::Expr> &variants = {},
                                       const Halide::Expr &position_stride = Halide::Expr(), bool bounded = false) {
    using namespace Halide;
    sp = cpu_channels_last_defaults(target, sp);
    const int rank = (int)p.q.size();
    const int lanes = target.natural_vector_size(acc_t);
    const bool many = tiles::many_registers(target.has_feature(Target::AVX512), target.arch == Target::ARM);

    const bool nxc = p.layout == Layout::NXC;
    Expr channels = out_param.dim(nxc ? 0 : rank).extent();
    Expr width = out_param.dim(nxc ? 2 : 0).extent();

    struct Branch {
        Expr cond;
        int c_tile;      // channels per tile
        int vec;         // vector width
        int q_tile;      // positions per tile
        int rows = 1;    // rows of the next axis per tile (q_tile positions each)
        bool unroll_ci = false;  // the input channels' loop unrolled (dense groups, below)
    };
    // The branches of channels_last_tiles.h, in its order (the dispatcher reads the same list).
    const tiles::ChannelTiles all_tiles =
        tiles::channels_last_tiles(sp.vectors, lanes, sp.q_tile, tiles::channels_last_fit_q_tile(many), rank);
    const tiles::ChannelTiles tile_list = bounded ? tiles::channels_last_bounded_tiles(all_tiles) : all_tiles;
    const Expr height = rank >= 2 ? out_param.dim(nxc ? 3 : 1).extent() : Expr();
    std::vector<Branch> base;
    for (int i = 0; i < tile_list.count; i++) {
        const tiles::ChannelTile &t = tile_list.tile[i];
        base.push_back({tiles::channel_tile_fits(tile_list, t, channels, width, height), tiles::tile_channels(t), t.vector,
                        t.positions, t.rows});
    }
    // Dense groups (tiles::kDenseGroupChannels): ahead of each one-vector 8-lane tile of
    // positions, the same rows of channels over groups of that many input channels whose
    // positions are as many elements apart (`position_stride`: the input's, undefined for kernels
    // without the branch). (Grouped 8 -> 8 channels, kernel 3 stride 2, one thread, Zen 4: 1.26x
    // with one group, whose positions lie so; the channel loop unrolled without the dense
    // positions, 1.08x.)
    if (position_stride.defined() && !bounded && !p.ci_pairs && acc_t == Float(32) && tiles::dense_group_target(lanes)) {
        const Expr ci_extent = p.r[rank].extent();
        const int q_tile = tiles::kDenseGroupQTile;
        std::vector<Branch> with;
        // Once per row count, ahead of the first such tile (the four-position one where it
        // exists): later copies would never run.
        bool dense_rows_placed[3] = {false, false, false};
        for (const Branch &b : base) {
            if (b.c_tile == b.vec && b.vec == tiles::kDenseGroupLanes && b.q_tile > 1 && !dense_rows_placed[b.rows]) {
                dense_rows_placed[b.rows] = true;
                // Their own position tiles: an exact one where a row is its multiple (but not of
                // q_tile), else q_tile, whose shifted last tile recomputes part of the row.
                Expr dense = channels >= b.c_tile && ci_extent == tiles::kDenseGroupChannels &&
                             position_stride == tiles::kDenseGroupChannels;
                if (b.rows > 1) dense = dense && out_param.dim(nxc ? 3 : 1).extent() >= b.rows;
                const tiles::DenseGroupExactTiles exact = tiles::dense_group_exact_q_tiles(many);
                for (int i = 0; i < exact.count; i++) {
                    const int q = exact.q[i];
                    Branch d = b;
                    d.q_tile = q;
                    d.cond = dense && width % q == 0 && width % q_tile != 0;
                    d.unroll_ci = tiles::dense_group_unrolled_channels(many);
                    with.push_back(d);
                }
                Branch d = b;
                d.q_tile = q_tile;
                d.cond = dense && width >= q_tile;
                d.unroll_ci = tiles::dense_group_unrolled_channels(many);
                with.push_back(d);
            }
            with.push_back(b);
        }
        base = with;
    }
    std::vector<Branch> branches;
    for (const Expr &v : variants) {
        for (Branch b : base) {
            b.cond = v && b.cond;
            branches.push_back(b);
        }
    }
    branches.insert(branches.end(), base.begin(), base.end());

    Var qo("qo"), qi("qi"), co_o("co_o"), co_i("co_i"), q1o("q1o"), q1i("q1i"), q_tiles("q_tiles"), q_tile_i("q_tile_i");
    // Outer loops shared by every branch, innermost first after the tile: rows, batch, channel
    // tiles, groups; all but the position tiles in parallel (nested loops rather than one fused
    // loop, which would hide the tile's constant bounds from bounds inference). `rows_split`:
    // axis 1 is split into q1o (outside) and q1i (in `inner`). `groups_per_tile`: axis 0 is split
    // into q_tiles and a one-tile qo, and the groups run between them.
    auto outer = [&](Stage s, VarOrRVar c_outer, VarOrRVar g_var, std::vector<VarOrRVar> inner, bool rows_split,
                     bool groups_per_tile = false) {
        std::vector<VarOrRVar> order = inner;
        order.push_back(qo);
        // qo (one tile, where the accumulator lives) inside the groups.
        if (groups_per_tile) order.insert(order.end(), {g_var, q_tiles});
        for (int i = 1; i < rank; i++) order.push_back(i == 1 && rows_split ? q1o : p.q[i]);
        order.push_back(p.n);
        order.push_back(c_outer);
        if (!groups_per_tile) order.push_back(g_var);
        s.reorder(order);
        // 1D: the position tiles too (a 1D layer may have one channel tile, one group, one batch).
        // (Tasks of 16 tiles instead made hifigan_up1 and _up3 1.2-1.3x slower.)
        if (rank == 2 && rows_split) {
            s.parallel(q1o);
        } else {
            s.parallel(rank >= 2 ? p.q[rank - 1] : groups_per_tile ? q_tiles : qo);
        }
        s.parallel(c_outer).parallel(p.n);
        if (!groups_per_tile) s.parallel(g_var);
    };

    for (const Branch &b : branches) {
        Stage s = p.out.specialize(b.cond);
        // (Counted in accumulator bytes: the full tiles of 8- and 16-bit outputs, 64 channels,
        // ran 1.05-1.4x slower in this order, one group or many.)
        const bool groups_per_tile = b.c_tile * acc_t.bytes() <= 2 * kCacheLineBytes;
        if (groups_per_tile) {
            s.split(p.q[0], q_tiles, q_tile_i, b.q_tile, TailStrategy::ShiftInwards);
            s.split(q_tile_i, qo, qi, b.q_tile);
        } else {
            s.split(p.q[0], qo, qi, b.q_tile, TailStrategy::ShiftInwards);
        }
        s.split(p.co, co_o, co_i, b.c_tile, TailStrategy::ShiftInwards);
        if (b.rows > 1) {
            s.split(p.q[1], q1o, q1i, b.rows, TailStrategy::ShiftInwards);
            outer(s, co_o, p.g, {co_i, qi, q1i}, true, groups_per_tile);
            s.unroll(q1i);
        } else {
            outer(s, co_o, p.g, {co_i, qi}, false, groups_per_tile);
        }
        s.vectorize(co_i, b.vec);
        if (b.c_tile > b.vec) s.unroll(co_i);
        if (b.q_tile > 1) s.unroll(qi);
    }
    // Fewer than four channels per group: scalar.
    p.out.split(p.q[0], qo, qi, 1);
    outer(p.out, p.co, p.g, {qi}, false);

    // The accumulator lives in registers at the position tile of whichever branch runs.
    p.acc.compute_at(p.out, qo).store_in(MemoryType::Register);
    // Reduction: input channels innermost (contiguous input, weights one row apart), then taps.
    // Channel pairs (p.ci_pairs): each pair is one lane pair of a vector twice the channel
    // vector's width, reduced into it (a VectorReduce, which Halide emits as vdpbf16ps); the
    // input pair is one 32-bit broadcast.
    // Two-row tiles keep axis 1 inside the reduction too.
    RVar ci_pair("ci_pair"), ci_pairs("ci_pairs");
    Stage u = p.acc.update();
    if (p.ci_pairs) u.split(p.r[rank], ci_pairs, ci_pair, 2);
    auto acc_order = [&](bool rows_inside) {
        std::vector<VarOrRVar> order = {p.co, p.q[0]};
        if (rows_inside) order.push_back(p.q[1]);
        order.push_back(p.g);
        if (p.ci_pairs) {
            order.insert(order.begin(), ci_pair);
            order.push_back(ci_pairs);
        } else {
            order.push_back(p.r[rank]);
        }
        for (int i = 0; i < rank; i++) order.push_back(p.r[i]);
        for (int i = rows_inside ? 2 : 1; i < rank; i++) order.push_back(p.q[i]);
        order.push_back(p.n);
        return order;
    };
    u.reorder(acc_order(false));
    if (p.ci_pairs) u.atomic().vectorize(ci_pair);
    for (const Branch &b : branches) {
        Stage a = p.acc.specialize(b.cond);
        Stage au = u.specialize(b.cond);
        if (b.rows > 1) au.reorder(acc_order(true));
        for (Stage st : {a, au}) {
            st.vectorize(p.co, b.vec);
            if (b.c_tile > b.vec) st.unroll(p.co);
            if (b.q_tile > 1) st.unroll(p.q[0]);
            if (b.rows > 1) st.unroll(p.q[1]);
        }
        if (sp.unroll_taps) au.unroll(p.r[0]);
        if (b.unroll_ci) au.unroll(p.r[rank]);
    }
}

}  // namespace gen
}  // namespace deconv
