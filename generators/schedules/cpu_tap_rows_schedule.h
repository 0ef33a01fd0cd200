// CPU schedule of the tap-row kernels: channels-last layers (ranks 2-3) whose weights per call
// (channel block x input channels x taps) are too many to stay in L2 while one position tile
// reads them all, as the channels-last schedule (cpu_channels_last_schedule.h) has every tile do.
//
// The reduction over the outer axes' taps (one tap row of the innermost axis each: rank 2's
// kernel rows, rank 3's rows of every plane) becomes a loop outside the position tiles of a band
// of output rows: `rfactor` lifts those taps into pure variables of an intermediate, whose
// position tiles sum one tap row's taps x input channels in registers (the same register tile
// and loop order as the channels-last schedule), and the band's accumulator, in memory, adds
// each tap row's tiles in turn. So one tap row's weights serve every tile of the band from L2
// instead of each tile streaming every tap's. (1024 -> 64 channels, kernel 2, 16x16, one direct call,
// two threads, Sapphire Rapids: 1.43-1.67 -> 0.96-1.01 ms; the dispatcher's rule is
// runtime/dispatch/layer_classes.cpp, tap_rows_class.)
//
// The sum is the same, added in another order (each tap row's partial sum, then the rows), so a
// float result may differ from the channels-last kernels' in its last bits.
//
// Branches: the full channel tile, one channel vector, scalar (fewer channels than a vector).
// Position tiles guard their last tile (an update cannot shift it inwards: its positions would
// be added twice).
#pragma once

#include "../conv_stages.h"
#include "cpu_channels_last_schedule.h"
#include "schedule_params.h"
#include "../../facts/tile_facts.h"

#include <cstdlib>
#include <iostream>

namespace deconv {
namespace gen {

inline void schedule_cpu_tap_rows(ConvStages &p, Halide::OutputImageParam out_param, const Halide::Target &target,
                                  const Halide::Type &acc_t, ScheduleParams sp) {
    using namespace Halide;
    const int rank = (int)p.q.size();
    if (rank < 2 || p.layout != Layout::NXC || p.ci_pairs) {
        std::cerr << "deconv generator: tap_rows needs layout=nxc, rank 2 or 3 and no ci_pairs\n";
        std::exit(1);
    }
    sp = cpu_channels_last_defaults(target, sp);
    const int lanes = target.natural_vector_size(acc_t);
    const int band = tiles::kTapRowsBandRows;
    const Expr channels = out_param.dim(0).extent();  // NXC: [co, g, q0 .. q_{D-1}, n]

    // The outer axes' taps as pure variables of `part`; acc's update then adds part over them.
    std::vector<std::pair<RVar, Var>> lifted;
    std::vector<RVar> tap_rows;
    for (int i = 1; i < rank; i++) {
        lifted.push_back({p.r[i], Var("tap_row_" + std::to_string(i))});
        tap_rows.push_back(p.r[i]);
    }
    Func part = p.acc.update().rfactor(lifted);

    struct Branch {
        Expr cond;
        int c_tile, vec, q_tile;
    };
    const int full = sp.vectors * lanes;
    const std::vector<Branch> branches = {
        {channels >= full, full, lanes, sp.q_tile},
        {channels >= lanes, lanes, lanes, sp.q_tile},
    };

    Var co_o("co_o"), co_i("co_i"), bo("bo"), bi("bi"), qo("qo"), qi("qi");
    // Output: channel tiles, then bands of rows (axis 1) in parallel, the band's accumulator
    // computed per band. Loops, innermost first: channels, positions, the band's rows, bands,
    // outer axes, groups, channel tiles, batch.
    auto schedule_out = [&](Stage s, int c_tile, int vec) {
        s.split(p.co, co_o, co_i, c_tile, TailStrategy::ShiftInwards);
        s.split(p.q[1], bo, bi, band, TailStrategy::GuardWithIf);
        std::vector<VarOrRVar> order = {co_i, p.q[0], bi, bo};
        for (int i = 2; i < rank; i++) order.push_back(p.q[i]);
        order.insert(order.end(), {p.g, co_o, p.n});
        s.reorder(order);
        s.parallel(bo).parallel(p.g).parallel(co_o).parallel(p.n);
        for (int i = 2; i < rank; i++) s.parallel(p.q[i]);
        if (vec > 1) s.vectorize(co_i, vec);
        if (c_tile > vec) s.unroll(co_i);
    };
    // The band's accumulator: zeroed, then for each tap row (outermost) every position tile of
    // every row of the band, whose partial sum `part` holds in registers.
    std::vector<VarOrRVar> acc_order = {p.co, qi, qo};
    for (int i = 1; i < rank; i++) acc_order.push_back(p.q[i]);
    acc_order.insert(acc_order.end(), {p.g, p.n});
    acc_order.insert(acc_order.end(), tap_rows.begin(), tap_rows.end());
    auto schedule_acc = [&](Stage init, Stage update, int c_tile, int vec, int q_tile) {
        update.split(p.q[0], qo, qi, q_tile, TailStrategy::GuardWithIf);
        update.reorder(acc_order);
        if (vec > 1) {
            init.vectorize(p.co, vec);
            update.vectorize(p.co, vec);
        }
        if (c_tile > vec) {
            init.unroll(p.co);
            update.unroll(p.co);
        }
        if (q_tile > 1) update.unroll(qi);
    };
    // One tap row's sum over a position tile: channels, positions (unrolled), then input channels
    // and the row's taps, as the channels-last schedule's tiles.
    auto schedule_part = [&](Stage init, Stage update, int c_tile, int vec, int q_tile) {
        update.reorder({p.co, p.q[0], p.g, p.r[rank], p.r[0]});
        for (Stage st : {init, update}) {
            if (vec > 1) st.vectorize(p.co, vec);
            if (c_tile > vec) st.unroll(p.co);
            if (q_tile > 1) st.unroll(p.q[0]);
        }
    };

    Stage acc_update = p.acc.update();
    Stage part_update = part.update();
    for (const Branch &b : branches) {
        schedule_out(p.out.specialize(b.cond), b.c_tile, b.vec);
        schedule_acc(p.acc.specialize(b.cond), acc_update.specialize(b.cond), b.c_tile, b.vec, b.q_tile);
        schedule_part(part.specialize(b.cond), part_update.specialize(b.cond), b.c_tile, b.vec, b.q_tile);
    }
    // Fewer channels than a vector: scalar, one position per tile.
    schedule_out(p.out, 1, 1);
    schedule_acc(p.acc, acc_update, 1, 1, 1);
    schedule_part(part, part_update, 1, 1, 1);

    p.acc.compute_at(p.out, bo);
    part.compute_at(p.acc, qo).store_in(MemoryType::Register);
}

}  // namespace gen
}  // namespace deconv
