// The buffers of the group-block kernels (schedules/group_block_facts.h) seen in the logical
// order of conv_stages.h, as data_layout.h does for the others. The input is the dispatcher's
// block-interleaved copy: an NXC buffer [c2, go, x.., n] of b * C_in channels per block of b
// groups, channel ci of group g = b * go + gi at c2 = b * ci + gi. The filter is the channel-major
// packing [co, ci, g, k..], read through `blocked`, a copy in block order [gi, co, ci, go, k..]
// that the schedule computes once per call, so that one vector of lanes gi + b * co is one dense
// load.
#pragma once

#include "data_layout.h"

namespace deconv {
namespace gen {

// Logical input [x.., ci, g, n] of the block-interleaved buffer (no bounds: interior kernels).
inline Halide::Func group_block_input(const Halide::Func &buffer, int rank, int block) {
    using namespace Halide;
    std::vector<Var> args;
    for (int i = 0; i < rank + 3; i++) args.emplace_back("i" + std::to_string(i));
    const Expr ci = args[rank], g = args[rank + 1];
    std::vector<Expr> at = {ci * block + g % block, g / block};
    for (int i = 0; i < rank; i++) at.push_back(args[i]);
    at.push_back(args[rank + 2]);
    Func f("input_logical");
    f(args) = buffer(at);
    return f;
}

struct GroupBlockFilter {
    Halide::Func logical;  // [k.., co, ci, g], as logical_filter's
    Halide::Func blocked;  // [gi, co, ci, go, k..]
    Halide::Var gi{"w_gi"};
};

inline GroupBlockFilter group_block_filter(const Halide::Func &buffer, int rank, int block) {
    using namespace Halide;
    GroupBlockFilter w;
    std::vector<Var> bargs = {w.gi, Var("w_co"), Var("w_ci"), Var("w_go")};
    for (int i = 0; i < rank; i++) bargs.emplace_back("w_k" + std::to_string(i));
    std::vector<Expr> from = {bargs[1], bargs[2], bargs[3] * block + bargs[0]};
    for (int i = 0; i < rank; i++) from.push_back(bargs[4 + i]);
    w.blocked = Func("filter_blocked");
    w.blocked(bargs) = buffer(from);

    std::vector<Var> args;
    for (int i = 0; i < rank + 3; i++) args.emplace_back("k" + std::to_string(i));
    const Expr co = args[rank], ci = args[rank + 1], g = args[rank + 2];
    std::vector<Expr> at = {g % block, co, ci, g / block};
    for (int i = 0; i < rank; i++) at.push_back(args[i]);
    w.logical = Func("filter_logical");
    w.logical(args) = w.blocked(at);
    return w;
}

}  // namespace gen
}  // namespace deconv
