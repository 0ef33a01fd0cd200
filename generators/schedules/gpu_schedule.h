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
// A block is threads_x threads along the thread axis times threads_y along the tile axis; every
// other axis (outer positions, groups, batch, and the tile indices) is fused into the one block
// index, grid x, the only grid dimension CUDA lets exceed 65535; grid y counts tiles of threads_x
// along the thread axis, grid z tiles of threads_y x tile along the tile axis (each at most
// 65535: the dispatcher checks, runtime/plan.cpp).
//
// Extents are arbitrary: thread splits are guarded (TailStrategy::GuardWithIf); the register tile
// is specialised on the tile axis holding at least a tile (ShiftInwards: a short last tile
// recomputes a few elements, which every thread writes with the same value), else one element
// per thread.
#pragma once

#include "../conv_stages.h"
#include "schedule_params.h"

namespace deconv {
namespace gen {

inline ScheduleParams gpu_defaults(ScheduleParams p) {
    if (p.threads_x <= 0) p.threads_x = 32;
    if (p.threads_y <= 0) p.threads_y = 4;
    if (p.co_tile <= 0) p.co_tile = 4;
    if (p.q_tile <= 0) p.q_tile = 4;
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

    Var ao("ao"), tx("tx"), bo("bo"), bi("bi"), boo("boo"), ty("ty"), block("block");

    // Remaining axes of the output, innermost first: the outer positions, then the channel /
    // group axes not already used, then batch. (`a` and `b` are q0 and co in either order.)
    std::vector<VarOrRVar> rest;
    for (int i = 1; i < rank; i++) rest.push_back(p.q[i]);
    rest.push_back(p.g);
    rest.push_back(p.n);

    // `tiled`: the tile axis split into register tiles of `tile` (else one element per thread).
    auto schedule_out = [&](Stage s, bool tiled) {
        s.split(a, ao, tx, sp.threads_x, TailStrategy::GuardWithIf);
        if (tiled) {
            s.split(b, bo, bi, tile, TailStrategy::ShiftInwards);
            s.split(bo, boo, ty, sp.threads_y, TailStrategy::GuardWithIf);
        } else {
            s.split(b, boo, ty, sp.threads_y, TailStrategy::GuardWithIf);
        }
        std::vector<VarOrRVar> order;
        if (tiled) order.push_back(bi);
        order.push_back(tx);
        order.push_back(ty);
        order.push_back(ao);
        order.push_back(boo);
        order.insert(order.end(), rest.begin(), rest.end());
        s.reorder(order);
        // The remaining axes fused into one block index (grid x, which may exceed 65535).
        Var cur("blk0");
        s.fuse(rest[0], rest[1], cur);
        for (size_t i = 2; i < rest.size(); i++) {
            Var next("blk" + std::to_string(i - 1));
            s.fuse(cur, rest[i], next);
            cur = next;
        }
        s.rename(cur, block);
        s.gpu_blocks(block, ao, boo);
        s.gpu_threads(tx, ty);
        if (tiled) s.unroll(bi);
    };

    const Expr full = b_extent >= tile;
    if (tile > 1) schedule_out(p.out.specialize(full), true);
    schedule_out(p.out, false);

    // The accumulator: per thread, in registers; the tile axis innermost and unrolled, then the
    // input channels, then the taps.
    p.acc.compute_at(p.out, tx).store_in(MemoryType::Register);
    // Bounds inference does not see through the fused block index (it cannot find a constant
    // size for the accumulator); each thread needs exactly one point of the fused axes.
    for (const VarOrRVar &v : rest) p.acc.bound_extent(v.var, 1);
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
