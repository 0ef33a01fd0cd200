// CPU schedule of the quantized channels-last kernel (phase_conv_quant_generator.cpp): u8 data
// times i8 weights, four input channels per 32-bit lane, one vpdpbusd (AVX512-VNNI) per vector
// of output channels and input-channel quad.
//
// The register tile is the channels-last micro-kernel's (cpu_channels_last_schedule.h) with a
// quad of input channels in each step: per step it loads `vectors` weight vectors (16 output
// channels x 4 input channels each) and broadcasts one 32-bit input quad per position, and does
// vectors x positions dot-product instructions into i32 accumulators. Quads make the reduction a
// 4-way VectorReduce of widening u8 x i8 products, which Halide lowers to vpdpbusd on its
// Sapphire Rapids target (the kernels are built through llc for Cascade Lake: cmake says how).
#pragma once

#include "../conv_stages.h"

#include <vector>

namespace deconv {
namespace gen {

// `out_param`: the output buffer [c, g, y.., n]. `vectors` x `q_tile`: the full tile.
inline void schedule_cpu_quant_dots(ConvStages &p, Halide::OutputImageParam out_param, int vectors, int q_tile) {
    using namespace Halide;
    const int rank = (int)p.q.size();
    const int lanes = 16;  // i32 accumulators per AVX-512 vector
    const Expr channels = out_param.dim(0).extent();
    const Expr width = out_param.dim(2).extent();
    struct Tile {
        int c, q;
    };
    // The full tile, then narrower channel tiles for layers of fewer channels per group, then
    // one position per tile for rows narrower than the tile.
    std::vector<Tile> tiles;
    for (int v = vectors; v >= 1; v /= 2) tiles.push_back({v * lanes, q_tile});
    tiles.push_back({lanes, 1});
    Var qo("qo"), qi("qi"), co_o("co_o"), co_i("co_i");
    RVar quad("quad"), quads("quads");
    Stage u = p.acc.update();
    u.split(p.r[rank], quads, quad, 4);
    std::vector<VarOrRVar> acc_order = {quad, p.co, p.q[0], p.g, quads};
    for (int i = 0; i < rank; i++) acc_order.push_back(p.r[i]);
    for (int i = 1; i < rank; i++) acc_order.push_back(p.q[i]);
    acc_order.push_back(p.n);
    u.reorder(acc_order);
    u.atomic().vectorize(quad);

    auto outer = [&](Stage s) {
        std::vector<VarOrRVar> order = {co_i, qi, qo};
        for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
        order.insert(order.end(), {p.n, co_o, p.g});
        s.reorder(order);
        s.parallel(rank >= 2 ? p.q[rank - 1] : qo).parallel(p.n).parallel(co_o).parallel(p.g);
    };
    for (const Tile &t : tiles) {
        const Expr fits = channels >= t.c && width >= t.q;
        Stage s = p.out.specialize(fits);
        s.split(p.q[0], qo, qi, t.q, TailStrategy::ShiftInwards)
            .split(p.co, co_o, co_i, t.c, TailStrategy::ShiftInwards);
        outer(s);
        s.vectorize(co_i, lanes);
        if (t.c > lanes) s.unroll(co_i);
        if (t.q > 1) s.unroll(qi);
        Stage a = p.acc.specialize(fits);
        Stage au = u.specialize(fits);
        for (Stage st : {a, au}) {
            st.vectorize(p.co, lanes);
            if (t.c > lanes) st.unroll(p.co);
            if (t.q > 1) st.unroll(p.q[0]);
        }
    }
    // Fewer than a vector of output channels per group: the dispatcher runs such layers elsewhere.
    p.out.specialize_fail("the quantized dot-product kernel needs 16 or more output channels per group");
    p.out.split(p.q[0], qo, qi, 1).split(p.co, co_o, co_i, 1);
    outer(p.out);
    p.acc.compute_at(p.out, qo).store_in(MemoryType::Register);
}

}  // namespace gen
}  // namespace deconv
