// GPU schedule (CUDA) of the same algorithms the CPU schedules serve: the backprop phase
// convolution and the forward convolution, in either data layout.
//
// One thread per point of a "thread axis", each accumulating a register tile, with the whole
// reduction over (ci, taps) inside the thread. Two mappings:
//   - positions-major (channels-first data): threads along the innermost output positions q0
//     (coalesced input loads and output stores); each thread holds `co_tile` output channels
//     (their weights are the same for every thread of a warp: broadcast loads) times `row_tile`
//     rows q1, so every weight load feeds row_tile products and every input load co_tile;
//   - channel-major (channels-last data, and channels-first phases narrower than
//     tiles::gpu_narrow_width() with a warp of output channels): threads along output channels
//     (coalesced weight loads and, under NXC, output stores; the input value is the same for the
//     warp); each thread holds `q_tile` positions q0 times `row_tile` rows q1.
// A block is threads_x threads along the thread axis times threads_y along the tile axis. The grid:
//   x: the blocks along the thread axis, fused with the row tiles of q1 (rank >= 2);
//   y: the blocks along the tile axis, fused with q2 (rank 3);
//   z: groups fused with batch.
// Only grid x may exceed 65535 (the dispatcher checks y and z, runtime/cuda_executor.cpp). Each
// grid axis fuses at most two loops on purpose: Halide 14's bounds inference loses the exact
// position of the inner variable of a fuse of a fused loop (its `%` of a `%`), so a thread's
// accumulator would span that whole axis and the bound_extent below would trap on the GPU.
//
// Extents are arbitrary: thread splits are guarded (TailStrategy::GuardWithIf); the register tile
// is specialised on the tiled axes holding at least a tile each (ShiftInwards: a short last tile
// recomputes a few elements, which every thread writes with the same value), else one element
// of the tile axis per thread.
#pragma once

#include "../conv_stages.h"
#include "schedule_params.h"
#include "tile_facts.h"

namespace deconv {
namespace gen {

inline ScheduleParams gpu_defaults(ScheduleParams p) {
    if (p.threads_x <= 0) p.threads_x = tiles::gpu_threads_x();
    if (p.threads_y <= 0) p.threads_y = tiles::gpu_threads_y();
    if (p.co_tile <= 0) p.co_tile = tiles::gpu_co_tile();
    if (p.q_tile <= 0) p.q_tile = tiles::gpu_q_tile();
    if (p.row_tile <= 0) p.row_tile = tiles::gpu_row_tile();
    return p;
}

// `out_param`: the output buffer, in p.layout's order.
inline void schedule_gpu(ConvStages &p, Halide::OutputImageParam out_param, ScheduleParams sp) {
    using namespace Halide;
    sp = gpu_defaults(sp);
    const int rank = (int)p.q.size();
    const bool nxc = p.layout == Layout::NXC;
    const Expr channels = out_param.dim(nxc ? 0 : rank).extent();
    const Expr width = out_param.dim(nxc ? 2 : 0).extent();
    const Expr rows = rank >= 2 ? out_param.dim(nxc ? 3 : 1).extent() : Expr(1);
    const int row_tile = rank >= 2 ? sp.row_tile : 1;

    Var ao("ao"), tx("tx"), bo("bo"), bi("bi"), boo("boo"), ty("ty"), gx("gx"), gy("gy"), gz("gz");
    Var ro("ro"), ri("ri");

    // One mapping: the thread axis `a`, the tile axis `b` and its tile.
    struct Mapping {
        Var a, b;
        int tile;
    };
    const Mapping positions{p.q[0], p.co, sp.co_tile};
    const Mapping channels_major{p.co, p.q[0], sp.q_tile};

    // A register tile of `tile` elements of the tile axis (1: none) times `rows` rows (1: none).
    auto schedule_out = [&](Stage s, const Mapping &m, int tile, int rows_per_thread) {
        const bool tiled = tile > 1, row_tiled = rows_per_thread > 1;
        s.split(m.a, ao, tx, sp.threads_x, TailStrategy::GuardWithIf);
        if (tiled) {
            s.split(m.b, bo, bi, tile, TailStrategy::ShiftInwards);
            s.split(bo, boo, ty, sp.threads_y, TailStrategy::GuardWithIf);
        } else {
            s.split(m.b, boo, ty, sp.threads_y, TailStrategy::GuardWithIf);
        }
        if (row_tiled) s.split(p.q[1], ro, ri, rows_per_thread, TailStrategy::ShiftInwards);
        // Loop order, innermost first: [bi ri] tx ty | ao [q1 or ro] | boo [q2] | g n (fused pairs
        // adjacent).
        std::vector<VarOrRVar> order;
        if (tiled) order.push_back(bi);
        if (row_tiled) order.push_back(ri);
        order.insert(order.end(), {tx, ty, ao});
        const Var q1_outer = row_tiled ? ro : (rank >= 2 ? p.q[1] : Var());
        if (rank >= 2) order.push_back(q1_outer);
        order.push_back(boo);
        if (rank >= 3) order.push_back(p.q[2]);
        order.insert(order.end(), {p.g, p.n});
        s.reorder(order);
        if (rank >= 2) s.fuse(ao, q1_outer, gx);
        else s.rename(ao, gx);
        if (rank >= 3) s.fuse(boo, p.q[2], gy);
        else s.rename(boo, gy);
        s.fuse(p.g, p.n, gz);
        s.gpu_blocks(gx, gy, gz);
        s.gpu_threads(tx, ty);
        if (tiled) s.unroll(bi);
        if (row_tiled) s.unroll(ri);
    };

    // The accumulator's update in one specialization: the tile (b, then rows) innermost and
    // unrolled, then the input channels, then the taps.
    auto schedule_acc = [&](const Expr &when, const Mapping &m, int tile, int rows_per_thread) {
        Stage init = p.acc.specialize(when);
        Stage upd = p.acc.update().specialize(when);
        std::vector<VarOrRVar> order = {m.b};
        if (rank >= 2) order.push_back(p.q[1]);
        order.insert(order.end(), {m.a, p.r[rank]});
        for (int i = 0; i < rank; i++) order.push_back(p.r[i]);
        for (int i = 2; i < rank; i++) order.push_back(p.q[i]);
        order.push_back(p.g);
        order.push_back(p.n);
        upd.reorder(order);
        if (tile > 1) {
            init.unroll(m.b);
            upd.unroll(m.b);
        }
        if (rows_per_thread > 1) {
            init.unroll(p.q[1]);
            upd.unroll(p.q[1]);
        }
        if (sp.unroll_taps) upd.unroll(p.r[0]);
    };
    auto specialization = [&](const Expr &when, const Mapping &m, int tile, int rows_per_thread) {
        schedule_out(p.out.specialize(when), m, tile, rows_per_thread);
        schedule_acc(when, m, tile, rows_per_thread);
    };

    // Specializations, first match wins; the last is the fallback of one element per thread.
    const Expr rows_full = rows >= row_tile;
    if (nxc) {
        specialization(width >= channels_major.tile && rows_full, channels_major, channels_major.tile, row_tile);
        if (row_tile > 1) specialization(rows_full, channels_major, 1, row_tile);
        schedule_out(p.out, channels_major, 1, 1);
    } else {
        const Expr narrow = width < tiles::gpu_narrow_width() && channels >= sp.threads_x;
        specialization(narrow && width >= channels_major.tile && rows_full, channels_major, channels_major.tile,
                       row_tile);
        specialization(channels >= positions.tile && rows_full, positions, positions.tile, row_tile);
        // Few output channels (depthwise, RGB heads): rows alone.
        if (row_tile > 1) specialization(rows_full, positions, 1, row_tile);
        schedule_out(p.out, positions, 1, 1);
    }

    // The accumulator: per thread, in registers.
    p.acc.compute_at(p.out, tx).store_in(MemoryType::Register);
    // Each thread needs exactly one point of the outer axes fused into the grid; saying so gives
    // the accumulator a constant size (bounds inference proves it, see the grid above). Its rows
    // (q1) are a ShiftInwards tile or one row, constant either way.
    for (int i = 2; i < rank; i++) p.acc.bound_extent(p.q[i], 1);
    p.acc.bound_extent(p.g, 1).bound_extent(p.n, 1);
}

}  // namespace gen
}  // namespace deconv
