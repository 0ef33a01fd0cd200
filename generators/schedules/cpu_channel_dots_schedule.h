// CPU schedule of channels-last backprop layers with at most tiles::kDotsMaxChannels output channels
// per group and many input channels (RGB outputs of GAN and decoder heads: dcgan_l5_nxc, 64 -> 3):
// the input channels, the reduction's dense axis in the channels-last input, are vectorized, and
// each output is a dot product. The channels-last schedule (cpu_channels_last_schedule.h)
// vectorizes output channels, which fill no vector here, and the channels-first twin the
// dispatcher took instead spent more than the kernels in transposing the input.
//
// The reduction is factored (rfactor) into a vector of partial sums per output, one lane per
// input channel residue: per reduction step, each of the tile's `q_tile` positions loads one
// input vector and multiplies it into its C_out partial sums, whose weight vectors (one per
// output channel) serve every position of the tile. The partial sums are added across their
// lanes once per output. The weights are copied once per call with the input channels
// innermost (the channel-major packing holds output channels innermost).
//
// Branches: 1 to kDotsMaxChannels output channels (the sums unrolled) x rows of at least the
// tile's positions or not (the tile: q_tile positions, fewer where channels x positions partial
// sums would pass 24 registers, 12 on CPUs of 16); input channels a multiple of the vector or
// not (the last partial vector masked). Bounded kernels (a bounds test per read), which the
// dispatcher runs only where it makes no zero-bordered input copy, keep the masked branches alone:
// half the branches, 49.6 -> 16.7 s of generator time at rank 3 on AVX-512.
#pragma once

#include "../conv_stages.h"
#include "../../facts/channel_dots_facts.h"
#include "schedule_params.h"
#include "../../facts/tile_facts.h"

namespace deconv {
namespace gen {

// `out_param`: the output buffer, NXC ([co, g, q.., n]); `filter`: the logical filter the
// algorithm reads ([k.., co, ci, g]).
inline void schedule_cpu_channel_dots(ConvStages &p, Halide::Func filter, Halide::OutputImageParam out_param,
                                      const Halide::Target &target, const Halide::Type &acc_t, ScheduleParams sp,
                                      bool bounded = false) {
    using namespace Halide;
    const int rank = (int)p.q.size();
    const int lanes = target.natural_vector_size(acc_t);
    const int q_tile = sp.q_tile > 0 ? sp.q_tile : 4;
    const Expr channels = out_param.dim(0).extent(), width = out_param.dim(2).extent();
    const Expr whole_vectors = p.r[rank].extent() % lanes == 0;

    // The partial sums: part(v, co, g, q.., n), lane v summing input channels v, v + lanes, ...
    RVar ci_o("ci_o"), ci_i("ci_i");
    Var v("v");
    Stage u = p.acc.update();
    u.split(p.r[rank], ci_o, ci_i, lanes, TailStrategy::GuardWithIf);
    Func part = u.rfactor(ci_i, v);

    struct Branch {
        Expr cond;
        int co, q_tile;
    };
    std::vector<Branch> branches;
    const bool many = tiles::many_registers(target.has_feature(Target::AVX512), target.arch == Target::ARM);
    for (int co = tiles::kDotsMaxChannels; co >= 1; co--) {
        const int tile = tiles::dots_q_tile(co, q_tile, many ? 24 : 12);
        std::vector<Expr> vector_cases = {whole_vectors, Halide::Internal::const_true()};
        if (bounded) vector_cases.erase(vector_cases.begin());
        for (const Expr &whole : vector_cases) {
            if (tile > 1) branches.push_back({channels == co && width >= tile && whole, co, tile});
            branches.push_back({channels == co && whole, co, 1});
        }
    }

    Var qo("qo"), qi("qi");
    auto outer = [&](Stage s, int tile_q) {
        s.split(p.q[0], qo, qi, tile_q, TailStrategy::ShiftInwards);
        std::vector<VarOrRVar> order = {p.co, qi, qo};
        for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
        order.insert(order.end(), {p.n, p.g});
        s.reorder(order);
        s.parallel(rank >= 2 ? p.q[rank - 1] : qo).parallel(p.g).parallel(p.n);
        return s;
    };
    for (const Branch &b : branches) {
        Stage s = outer(p.out.specialize(b.cond), b.q_tile);
        s.unroll(p.co);
        if (b.q_tile > 1) s.unroll(qi);
    }
    outer(p.out, 1);

    // The sums across lanes, once per output (a vector reduction).
    p.acc.compute_at(p.out, qo);
    // (rfactor names it after the split's inner RVar, qualified by the RDom's: scheduling
    // directives match it by the unqualified name.)
    const RVar across(ci_i.name());
    p.acc.update().atomic().vectorize(across);
    // The partial sums at the tile, lanes x co x q_tile (in registers where the branch unrolls
    // them).
    // Lanes innermost in its storage (rfactor puts the new Var last): whole-vector accesses.
    std::vector<Var> part_storage = {v};
    for (const Var &a : part.args())
        if (a.name() != v.name()) part_storage.push_back(a);
    part.compute_at(p.out, qo).reorder_storage(part_storage).vectorize(v);
    Stage pu = part.update();
    std::vector<VarOrRVar> order = {v, p.co, p.q[0], ci_o};
    for (int i = 0; i < rank; i++) order.push_back(p.r[i]);
    order.push_back(p.g);
    for (int i = 1; i < rank; i++) order.push_back(p.q[i]);
    order.push_back(p.n);
    pu.reorder(order).vectorize(v);
    for (const Branch &b : branches) {
        for (Stage st : {Stage(part.specialize(b.cond)), part.update().specialize(b.cond),
                         p.acc.specialize(b.cond), p.acc.update().specialize(b.cond)}) {
            st.unroll(p.co);
            if (b.q_tile > 1) st.unroll(p.q[0]);
        }
    }
    // The weights once per call, input channels innermost.
    Func w = filter.in(part);
    const std::vector<Var> wa = w.args();  // k.., co, ci, g
    std::vector<Var> storage = {wa[rank + 1], wa[rank]};
    for (int i = 0; i < rank; i++) storage.push_back(wa[i]);
    storage.push_back(wa[rank + 2]);
    w.compute_root().reorder_storage(storage);
}

}  // namespace gen
}  // namespace deconv
