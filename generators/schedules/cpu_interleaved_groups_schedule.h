// CPU schedule of the interleaved phase convolution (define_interleaved_phase_conv) on
// channels-last depthwise data: the groups, dense in the input, the output and the filter, are
// vectorized, as in cpu_groups_schedule.h; every stride phase of the innermost axis is in the
// register tile, as in cpu_interleaved_schedule.h.
//
// The register tile is `vectors` vectors of groups x s phases x `q_tile` groups of s outputs
// along the innermost axis, interleaved_accumulators in all (16 of 32 registers, 8 of 16):
// 1 x 8 x 2 at stride 8, 2 x 2 x 4 at stride 2 (1 x 8 x 1 and 1 x 2 x 4 with 16 registers). Its
// stores are whole runs of s * q_tile consecutive positions of the tile's groups, and a row's
// group tiles run inside its position tiles, so a call writes its rows front to back. Branches:
// the full tile; one vector of groups; 4-lane vectors; scalar (fewer than four groups). The full
// tile and the one-vector tile specialize the common residue of pads_begin (0 at stride 8, 1 at
// stride 2: where every phase's input address is a constant offset from one, as in
// cpu_interleaved_schedule.h), and
// under it two taps per phase along axis 0 (the packed zero of a phase one tap short included)
// and two or one along axis 1 (interleaved_depthwise_facts.h): the only layers the dispatcher
// runs here; the other branches keep the kernel correct for any.
// Loops, outermost first: batch, rows (in tasks), position tiles, group tiles.
#pragma once

#include "../phase_conv_algorithm.h"
#include "cpu_parallel.h"
#include "../../facts/interleaved_depthwise_facts.h"
#include "schedule_params.h"
#include "../../facts/tile_facts.h"

#include <algorithm>

namespace deconv {
namespace gen {

inline void schedule_cpu_interleaved_groups(InterleavedStages &p, Halide::OutputImageParam out_param, int stride,
                                            const Halide::Expr &pad_begin, const Halide::Target &target,
                                            const Halide::Type &acc_t, ScheduleParams sp) {
    using namespace Halide;
    const bool many = tiles::many_registers(target.has_feature(Target::AVX512), target.arch == Target::ARM);
    const int accumulators = tiles::interleaved_accumulators(many);
    const int vectors = sp.vectors > 0 ? sp.vectors : (many && 4 * stride <= accumulators ? 2 : 1);
    const int q_tile = sp.q_tile > 0 ? sp.q_tile : std::max(1, accumulators / (vectors * stride));
    const int rank = (int)p.q.size();
    const int lanes = target.natural_vector_size(acc_t);
    const Expr width = out_param.dim(1).extent();  // groups q of s outputs along axis 0
    const Expr groups = out_param.dim(rank + 2).extent(), batch = out_param.dim(rank + 3).extent();
    const int common_pad = tiles::interleaved_depthwise_pad_residue(stride);

    struct Branch {
        Expr cond;
        int g_tile, vec, q_tile;
        bool unroll_taps = false;  // two taps per phase along axes 0 and 1: unrolled
    };
    std::vector<Branch> general = {
        {groups >= vectors * lanes && width >= q_tile, vectors * lanes, lanes, q_tile},
        {groups >= lanes && width >= q_tile, lanes, lanes, q_tile},
    };
    if (lanes > 4) general.push_back({groups >= 4 && width >= std::min(q_tile, 2), 4, 4, std::min(q_tile, 2)});
    std::vector<Branch> branches;
    for (Branch b : general) {
        // No square tiles (cpu_schedule.h: Halide 14 drops the reduction of such a branch).
        if (b.g_tile == b.q_tile) {
            b.g_tile *= 2;
            b.cond = b.cond && groups >= b.g_tile;
        }
        bool seen = false;
        for (const Branch &d : branches) seen = seen || (d.g_tile == b.g_tile && d.q_tile == b.q_tile);
        if (seen) continue;
        if (b.vec == lanes) {
            // Upsampling by the stride with kernel 2s (centernet_dla_dw, fcn8s_upscore8): two taps
            // per phase and axis, unrolled with the tile, at the common residue; on the full tile
            // and on one vector of groups (16 groups of 32x32, kernel 4 stride 2, on one thread:
            // 0.111 ms on the rolled taps, oneDNN 0.026).
            const Expr x_taps = p.r[0].extent() == tiles::kInterleavedDepthwiseTaps;
            Expr two_taps = x_taps;
            if (rank >= 2) two_taps = two_taps && p.r[1].extent() == tiles::kInterleavedDepthwiseTaps;
            const Expr common = b.cond && pad_begin == common_pad;
            branches.push_back({common && two_taps, b.g_tile, b.vec, b.q_tile, true});
            // Kernel 2s - 1 (3 at stride 2, pad 1): the rows of the phases of one tap along axis 1.
            if (rank >= 2) {
                const Expr one_tap_rows = common && x_taps && p.r[1].extent() == 1;
                branches.push_back({one_tap_rows, b.g_tile, b.vec, b.q_tile, true});
            }
            branches.push_back({common, b.g_tile, b.vec, b.q_tile});
        }
        branches.push_back(b);
    }

    Var qo("qo"), qi("qi"), go("go"), gi("gi");
    // [gi, ph, qi] (the tile), go, qo, q_1 .. q_{D-1}, co, n; rows (1D: position tiles) in tasks.
    auto outer = [&](Stage s, int g_tile, int tile_q) {
        s.split(p.q[0], qo, qi, tile_q, TailStrategy::ShiftInwards);
        s.split(p.g, go, gi, g_tile, TailStrategy::ShiftInwards);
        std::vector<VarOrRVar> order = {gi, p.ph, qi, go, qo};
        for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
        order.insert(order.end(), {p.co, p.n});
        s.reorder(order);
        if (rank >= 2) {
            parallel_row_tasks(s, p.q[rank - 1], out_param.dim(rank).extent(), Expr(1), batch);
        } else {
            parallel_row_tasks(s, qo, (width + tile_q - 1) / tile_q, Expr(1), batch);
        }
        s.parallel(p.n);
        s.unroll(p.ph);
    };
    for (const Branch &b : branches) {
        Stage s = p.out.specialize(b.cond);
        outer(s, b.g_tile, b.q_tile);
        s.vectorize(gi, b.vec);
        if (b.g_tile > b.vec) s.unroll(gi);
        if (b.q_tile > 1) s.unroll(qi);
    }
    outer(p.out, 1, 1);

    // The accumulators in registers at the group tile; the taps outside the tile's groups,
    // phases and positions.
    p.acc.compute_at(p.out, go).store_in(MemoryType::Register);
    Stage u = p.acc.update();
    std::vector<VarOrRVar> order = {p.g, p.ph, p.q[0], p.co, p.r[rank]};
    for (int i = 0; i < rank; i++) order.push_back(p.r[i]);
    for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
    order.push_back(p.n);
    u.reorder(order);
    for (const Branch &b : branches) {
        for (Stage st : {p.acc.specialize(b.cond), u.specialize(b.cond)}) {
            st.vectorize(p.g, b.vec);
            if (b.g_tile > b.vec) st.unroll(p.g);
            st.unroll(p.ph);
            if (b.q_tile > 1) st.unroll(p.q[0]);
        }
        if (b.unroll_taps) {
            Stage au = u.specialize(b.cond);
            au.unroll(p.r[0]);
            if (rank >= 2) au.unroll(p.r[1]);
        }
    }
    p.acc.unroll(p.ph);
    u.unroll(p.ph);
}

}  // namespace gen
}  // namespace deconv
