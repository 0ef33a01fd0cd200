// GPU schedule (CUDA) of the same algorithms the CPU schedules serve: the backprop phase
// convolution and the forward convolution, in either data layout.
//
// One thread per output element along the "thread axis", each thread accumulating a small
// register tile along the "tile axis", with the whole reduction over (ci, taps) inside the thread:
//   - positions-major accumulators (channels-first data): threads over the innermost output
//     positions q0 (coalesced input loads and output stores), `co_tile` output channels per
//     thread (their weights are the same for every thread of a warp: broadcast loads);
//   - channel-major accumulators (channels-last data): threads over output channels (coalesced
//     weight loads and output stores; the input value is the same for the warp), `q_tile`
//     positions per thread.
// A block is threads_x threads along the thread axis times threads_y along the tile axis. The grid:
//   x: the blocks along the thread axis, fused with the next output axis q1 (rank >= 2);
//   y: the blocks along the tile axis, fused with q2 (rank 3);
//   z: groups fused with batch.
// Only grid x may exceed 65535 (the dispatcher checks y and z, runtime/plan.cpp). Each grid axis
// fuses at most two loops on purpose: Halide 14's bounds inference loses the exact position of
// the inner variable of a fuse of a fused loop (its `%` of a `%`), so a thread's accumulator would
// span that whole axis and the bound_extent below would trap on the GPU.
//
// Extents are arbitrary: thread splits are guarded (TailStrategy::GuardWithIf); the register tile
// is specialised on the tile axis holding at least a tile (ShiftInwards: a short last tile
// recomputes a few elements, which every thread writes with the same value), else one element
// per thread.
#pragma once

#include "../conv_stages.h"
#include "schedule_params.h"
#include "tile_facts.h"

namespace deconv {
namespace gen {

inline ScheduleParams gpu_defaults(ScheduleParams p) {
    if (p.threads_x <= 0) p.threads_x = tiles::gpu_threads_x();
    if (p.threads_y <= 0) p.threads_y = tiles::gpu_threads_y();
    if (p.co_tile <= 0) p.co_tile = tiles::gpu_tile();
    if (p.q_tile <= 0) p.q_tile = tiles::gpu_tile();
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

    // Thread axis and tile axis (see above).
    const Var a = p.channel_major ? p.co : p.q[0];
    const Var b = p.channel_major ? p.q[0] : p.co;
    const Expr b_extent = p.channel_major ? width : channels;
    const int tile = p.channel_major ? sp.q_tile : sp.co_tile;

    Var ao("ao"), tx("tx"), bo("bo"), bi("bi"), boo("boo"), ty("ty"), gx("gx"), gy("gy"), gz("gz");

    // Outer positions, innermost first: q1 joins grid x, q2 grid y.
    std::vector<Var> outer(p.q.begin() + 1, p.q.end());

    // `tiled`: the tile axis split into register tiles of `tile` (else one element per thread).
    auto schedule_out = [&](Stage s, bool tiled) {
        s.split(a, ao, tx, sp.threads_x, TailStrategy::GuardWithIf);
        if (tiled) {
            s.split(b, bo, bi, tile, TailStrategy::ShiftInwards);
            s.split(bo, boo, ty, sp.threads_y, TailStrategy::GuardWithIf);
        } else {
            s.split(b, boo, ty, sp.threads_y, TailStrategy::GuardWithIf);
        }
        // Loop order, innermost first: [bi] tx ty | ao [q1] | boo [q2] | g n (fused pairs adjacent).
        std::vector<VarOrRVar> order;
        if (tiled) order.push_back(bi);
        order.insert(order.end(), {tx, ty, ao});
        if (rank >= 2) order.push_back(outer[0]);
        order.push_back(boo);
        if (rank >= 3) order.push_back(outer[1]);
        order.insert(order.end(), {p.g, p.n});
        s.reorder(order);
        if (rank >= 2) s.fuse(ao, outer[0], gx);
        else s.rename(ao, gx);
        if (rank >= 3) s.fuse(boo, outer[1], gy);
        else s.rename(boo, gy);
        s.fuse(p.g, p.n, gz);
        s.gpu_blocks(gx, gy, gz);
        s.gpu_threads(tx, ty);
        if (tiled) s.unroll(bi);
    };

    const Expr full = b_extent >= tile;
    if (tile > 1) schedule_out(p.out.specialize(full), true);
    schedule_out(p.out, false);

    // The accumulator: per thread, in registers; the tile axis innermost and unrolled, then the
    // input channels, then the taps.
    p.acc.compute_at(p.out, tx).store_in(MemoryType::Register);
    // Each thread needs exactly one point of the axes fused into the grid; saying so gives the
    // accumulator a constant size (bounds inference proves it, see the grid above).
    for (const Var &v : outer) p.acc.bound_extent(v, 1);
    p.acc.bound_extent(p.g, 1).bound_extent(p.n, 1);
    std::vector<VarOrRVar> order = {b, a, p.r[rank]};
    for (int i = 0; i < rank; i++) order.push_back(p.r[i]);
    for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
    order.push_back(p.g);
    order.push_back(p.n);
    Stage u = p.acc.update();
    u.reorder(order);
    if (tile > 1) {
        Stage init = p.acc.specialize(full);
        Stage upd = u.specialize(full);
        init.unroll(b);
        upd.unroll(b);
        if (sp.unroll_taps) upd.unroll(p.r[0]);
    }
}

}  // namespace gen
}  // namespace deconv
