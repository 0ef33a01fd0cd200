// CPU schedule of the quantized channels-last kernel (phase_conv_quant_generator.cpp): a group
// of `group` input channels per 32-bit lane, one dot-product instruction per vector of output
// channels and group: vpdpbusd (AVX512-VNNI) on u8 x i8 quads, vpmaddwd on i16 x i16 pairs.
//
// The register tile is the channels-last micro-kernel's (cpu_channels_last_schedule.h) with a
// group of input channels in each step: per step it loads `vectors` weight vectors (a lane's
// group per output channel) and broadcasts one 32-bit input group per position, and does
// vectors x positions dot-product instructions into i32 accumulators. The groups make the
// reduction a VectorReduce of widening products, which Halide lowers to vpdpbusd on its Sapphire
// Rapids target (those kernels are built through llc for Cascade Lake: cmake says how), and to
// vpmaddwd on every x86 target.
#pragma once

#include "../conv_stages.h"
#include "../../facts/tile_facts.h"

#include <vector>

namespace deconv {
namespace gen {

// `out_param`: the output buffer [c, g, y.., n]. `vectors` x `q_tile`: the full tile (0: the
// channels-last kernels' tile for the target's registers).
// `variants`: conditions on the run-time inputs, each ahead of every tile with a copy of its own
// (the store's cheaper forms: the definition's selects on them fold away there).
inline void schedule_cpu_quant_dots(ConvStages &p, Halide::OutputImageParam out_param, const Halide::Target &target,
                                    int group, int vectors, int q_tile, const std::vector<Halide::Expr> &variants = {}) {
    using namespace Halide;
    const int rank = (int)p.q.size();
    const int lanes = target.natural_vector_size(Int(32));
    const bool many = tiles::many_registers(target.has_feature(Target::AVX512), target.arch == Target::ARM);
    if (vectors <= 0) vectors = tiles::channels_last_vectors(many);
    // Pairs: vpmaddwd writes a product that a vpaddd then adds, one temporary register per
    // multiply; with six positions LLVM spilled and shuffled accumulators (24 + 4 + 6 + temps on
    // AVX-512), so four. vpdpbusd accumulates in place: the channels-last tile.
    if (q_tile <= 0) q_tile = tiles::quant_dots_q_tile(many, group);
    const Expr channels = out_param.dim(0).extent();
    const Expr width = out_param.dim(2).extent();
    struct Tile {
        int c, q;
    };
    // The full tile, then narrower channel tiles for layers of fewer channels per group, then
    // the full channel tile over fewer positions for rows narrower than the tile (phases of 4x4
    // inputs: 0.15x oneDNN's int8 on dcgan_l2 with one position per tile), then one vector.
    std::vector<Tile> tiles;
    for (int v = vectors; v >= 1; v /= 2) tiles.push_back({v * lanes, q_tile});
    for (int q : tiles::kQuantDotsShortTiles)
        if (q < q_tile) tiles.push_back({vectors * lanes, q});
    tiles.push_back({lanes, 1});
    Var qo("qo"), qi("qi"), co_o("co_o"), co_i("co_i");
    RVar quad("quad"), quads("quads");
    Stage u = p.acc.update();
    u.split(p.r[rank], quads, quad, group);
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
    std::vector<std::pair<Expr, Tile>> branches;
    for (const Expr &v : variants)
        for (const Tile &t : tiles) branches.push_back({v && channels >= t.c && width >= t.q, t});
    for (const Tile &t : tiles) branches.push_back({channels >= t.c && width >= t.q, t});
    for (const auto &[cond, t] : branches) {
        Stage s = p.out.specialize(cond);
        s.split(p.q[0], qo, qi, t.q, TailStrategy::ShiftInwards)
            .split(p.co, co_o, co_i, t.c, TailStrategy::ShiftInwards);
        outer(s);
        s.vectorize(co_i, lanes);
        if (t.c > lanes) s.unroll(co_i);
        if (t.q > 1) s.unroll(qi);
    }
    // The accumulator's tiles, once each (it is realized inside whichever branch of the store runs).
    for (const Tile &t : tiles) {
        const Expr fits = channels >= t.c && width >= t.q;
        Stage a = p.acc.specialize(fits);
        Stage au = u.specialize(fits);
        for (Stage st : {a, au}) {
            st.vectorize(p.co, lanes);
            if (t.c > lanes) st.unroll(p.co);
            if (t.q > 1) st.unroll(p.q[0]);
        }
    }
    // Fewer than a vector of output channels per group: the dispatcher runs such layers elsewhere.
    p.out.specialize_fail("the quantized dot-product kernel needs a vector or more of output channels per group");
    p.out.split(p.q[0], qo, qi, 1).split(p.co, co_o, co_i, 1);
    outer(p.out);
    p.acc.compute_at(p.out, qo).store_in(MemoryType::Register);
}

}  // namespace gen
}  // namespace deconv
