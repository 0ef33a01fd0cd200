// GPU schedule (CUDA) of the same algorithms the CPU schedules serve: the backprop phase
// convolution and the forward convolution, in either data layout.
//
// One thread per register tile, with the whole reduction over (ci, taps) inside the thread. Two
// mappings, picked per launch by specializations on its extents (first match wins):
//   - threads along channels (channels-last layers with tiles::gpu_channel_threads_min()
//     channels per group or more, and channels-first phases narrower than
//     tiles::gpu_narrow_width() with a warp of channels): tx along output channels (consecutive
//     weights in the packed filter; coalesced stores under NXC; the input value is a broadcast),
//     `q_tile` positions q0 per thread, ty along the rows;
//   - threads along positions (every other layer): tx along the innermost output positions q0
//     (coalesced input loads and stores under NCX; the warp shares each weight), a tile of
//     `co_tile` channels x `row_tile` rows where the launch has tiles::gpu_big_tile_outputs()
//     outputs or more, else gpu_small_co_tile x gpu_small_row_tile, rows alone for fewer
//     channels, and one element where even that does not fit; ty along the channel tiles.
// A block is threads_x x threads_y threads. The grid:
//   x: the thread-axis blocks fused with the next tiled or row axis;
//   y: the ty blocks fused with q2 (rank 3);
//   z: groups fused with batch.
// Only grid x may exceed 65535 (the dispatcher checks y and z, runtime/gpu/cuda_executor.cpp). Each
// grid axis fuses at most two loops on purpose: Halide 14's bounds inference loses the exact
// position of the inner variable of a fuse of a fused loop (its `%` of a `%`), so a thread's
// accumulator would span that whole axis and the bound_extent below would trap on the GPU.
//
// Extents are arbitrary: thread splits are guarded (TailStrategy::GuardWithIf); register tiles are
// ShiftInwards (a short last tile recomputes a few elements, which every thread writes with the
// same value), taken only where the axis holds a whole tile.
#pragma once

#include "../conv_stages.h"
#include "schedule_params.h"
#include "../../facts/tile_facts.h"

#include <algorithm>
#include <vector>

namespace deconv {
namespace gen {

inline ScheduleParams gpu_defaults(ScheduleParams p) {
    if (p.threads_x <= 0) p.threads_x = tiles::gpu_threads_x();
    if (p.threads_y <= 0) p.threads_y = tiles::gpu_threads_y();
    if (p.co_tile <= 0) p.co_tile = tiles::gpu_co_tile();
    if (p.q_tile <= 0) p.q_tile = tiles::gpu_q_tile();
    if (p.row_tile <= 0) p.row_tile = tiles::gpu_row_tile();
    if (p.big_tile_outputs <= 0) p.big_tile_outputs = tiles::gpu_big_tile_outputs();
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

    Var ao("ao"), tx("tx"), bo("bo"), bi("bi"), boo("boo"), ty("ty"), gx("gx"), gy("gy"), gz("gz");
    Var ro("ro"), ri("ri");

    // Threads along positions (channels-first): tx along q0; a register tile of `co_tile` channels
    // (1: none) times `rows_per_thread` rows q1 (1: none); ty along the channel tiles.
    // Loop order, innermost first: [bi ri] tx ty | ao [q1 or ro] | boo [q2] | g n.
    auto schedule_positions = [&](Stage s, int co_tile, int rows_per_thread) {
        const bool tiled = co_tile > 1, row_tiled = rows_per_thread > 1;
        s.split(p.q[0], ao, tx, sp.threads_x, TailStrategy::GuardWithIf);
        if (tiled) {
            s.split(p.co, bo, bi, co_tile, TailStrategy::ShiftInwards);
            s.split(bo, boo, ty, sp.threads_y, TailStrategy::GuardWithIf);
        } else {
            s.split(p.co, boo, ty, sp.threads_y, TailStrategy::GuardWithIf);
        }
        if (row_tiled) s.split(p.q[1], ro, ri, rows_per_thread, TailStrategy::ShiftInwards);
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

    // Threads along channels: tx along co; a register tile of `q_tile` positions q0 (1: none); ty
    // along the rows q1 (rank 1: along the position tiles), so that a phase of a few positions
    // still fills the block. Loop order, innermost first: [bi] tx ty | ao bo | q1o [q2] | g n.
    auto schedule_channels = [&](Stage s, int q_tile) {
        const bool tiled = q_tile > 1;
        s.split(p.co, ao, tx, sp.threads_x, TailStrategy::GuardWithIf);
        if (tiled) s.split(p.q[0], bo, bi, q_tile, TailStrategy::ShiftInwards);
        const Var q0_outer = tiled ? bo : p.q[0];
        std::vector<VarOrRVar> order;
        if (tiled) order.push_back(bi);
        if (rank >= 2) {
            s.split(p.q[1], boo, ty, sp.threads_y, TailStrategy::GuardWithIf);
            order.insert(order.end(), {tx, ty, ao, q0_outer, boo});
            if (rank >= 3) order.push_back(p.q[2]);
        } else {
            s.split(q0_outer, boo, ty, sp.threads_y, TailStrategy::GuardWithIf);
            order.insert(order.end(), {tx, ty, ao, boo});
        }
        order.insert(order.end(), {p.g, p.n});
        s.reorder(order);
        s.fuse(p.g, p.n, gz);
        if (rank >= 2) {
            s.fuse(ao, q0_outer, gx);
            if (rank >= 3) s.fuse(boo, p.q[2], gy);
            else s.rename(boo, gy);
            s.gpu_blocks(gx, gy, gz);
        } else {
            s.fuse(ao, boo, gx);
            s.gpu_blocks(gx, gz);
        }
        s.gpu_threads(tx, ty);
        if (tiled) s.unroll(bi);
    };

    // The accumulator: one schedule for every specialization of the output, so that no condition
    // is restated (Halide 14 lowered some restated conditions of the accumulator's own
    // specializations, `a && b` after `c && b`, to empty bodies). In every specialization each
    // thread holds a constant extent of co, q0 and q1 (a tile, or one point), so all three are
    // unrolled innermost; then the input channels, then the taps. (Unrolling the input channels
    // by 2 or 4 as well, for more loads in flight, measured 1.16x slower over the suite on an
    // H200: the extra registers cost more occupancy than the loads gained.)
    {
        std::vector<VarOrRVar> order = {p.co};
        for (int i = 0; i < std::min(rank, 2); i++) order.push_back(p.q[i]);
        const size_t tile = order.size();
        order.push_back(p.r[rank]);
        for (int i = 0; i < rank; i++) order.push_back(p.r[i]);
        for (int i = 2; i < rank; i++) order.push_back(p.q[i]);
        order.push_back(p.g);
        order.push_back(p.n);
        Stage upd = p.acc.update();
        upd.reorder(order);
        for (size_t i = 0; i < tile; i++) {
            p.acc.unroll(order[i].var);
            upd.unroll(order[i].var);
        }
        if (sp.unroll_taps) upd.unroll(p.r[0]);
    }

    // Specializations, first match wins; the last is the fallback of one element per thread.
    const int big_rows = rank >= 2 ? sp.row_tile : 1, small_rows = rank >= 2 ? tiles::gpu_small_row_tile() : 1;
    Expr outputs = cast<int64_t>(channels) * width * rows;
    for (int i = 2; i < rank; i++) outputs *= out_param.dim(nxc ? 2 + i : i).extent();
    outputs *= out_param.dim(nxc ? 1 : rank + 1).extent() * out_param.dim(rank + 2).extent();
    // Threads along channels: channels-last layers with enough channels per group to fill half a
    // warp, and channels-first phases too narrow for threads along positions.
    const Expr channel_threads = nxc ? channels >= tiles::gpu_channel_threads_min()
                                     : width < tiles::gpu_narrow_width() && channels >= sp.threads_x;
    schedule_channels(p.out.specialize(channel_threads && width >= sp.q_tile), sp.q_tile);
    if (nxc) schedule_channels(p.out.specialize(channel_threads), 1);
    // Threads along positions. The large tile where the launch has outputs for enough threads to
    // fill a GPU with it.
    const Expr big = channels >= sp.co_tile && rows >= big_rows && outputs >= Expr(static_cast<int64_t>(sp.big_tile_outputs));
    schedule_positions(p.out.specialize(big), sp.co_tile, big_rows);
    const Expr small = channels >= tiles::gpu_small_co_tile() && rows >= small_rows;
    schedule_positions(p.out.specialize(small), tiles::gpu_small_co_tile(), small_rows);
    // Few output channels (depthwise, RGB heads): rows alone.
    if (rank >= 2) schedule_positions(p.out.specialize(rows >= sp.row_tile), 1, sp.row_tile);
    schedule_positions(p.out, 1, 1);

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
