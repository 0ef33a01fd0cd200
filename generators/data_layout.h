// Buffers in either data layout, seen through Funcs with the logical argument order of
// conv_stages.h. The algorithms are written once against the logical order; only the buffers'
// dimension order (and so what is contiguous, which the schedules exploit) differs.
#pragma once

#include "conv_stages.h"

#include <functional>
#include <string>
#include <vector>

namespace deconv {
namespace gen {

// Buffer dimension (innermost first) of logical data axis `logical` (0..D-1: spatial, D:
// channel, D+1: group, D+2: batch). NXC: [c, g, x.., n].
inline int data_buffer_dim(Layout layout, int rank, int logical) {
    if (layout == Layout::NCX) return logical;
    if (logical < rank) return 2 + logical;  // spatial after the two channel axes
    if (logical == rank) return 0;            // channel
    if (logical == rank + 1) return 1;        // group
    return rank + 2;                          // batch
}

// Buffer dimension of logical filter axis `logical` (0..D-1: taps, D: co, D+1: ci, D+2: g).
// Kernels that vectorize output channels (ConvStages::channel_major) read the filter as
// [co, ci, g, k..]: output channels contiguous, for vector loads of weights; the others as
// [k.., co, ci, g].
inline int filter_buffer_dim(bool channel_major, int rank, int logical) {
    if (!channel_major) return logical;
    if (logical < rank) return 3 + logical;
    return logical - rank;  // co, ci, g
}

// Arguments of a buffer access in buffer order, given the logical ones.
template <typename DimOf>
std::vector<Halide::Expr> to_buffer_order(const std::vector<Halide::Expr> &logical, DimOf dim_of) {
    std::vector<Halide::Expr> b(logical.size());
    for (int i = 0; i < (int)logical.size(); i++) b[dim_of(i)] = logical[i];
    return b;
}

// The input in logical order. `bounded`: positions outside the buffer's spatial bounds read as
// zero (channel, group and batch are always in range). `vector_positions`: the kernel vectorizes
// output positions of the innermost axis, whose reads are then vectors.
inline Halide::Func logical_input(const Halide::Func &buffer, const Halide::OutputImageParam &param, Layout layout,
                                  int rank, const Halide::Type &storage, bool bounded, bool vector_positions = false) {
    using namespace Halide;
    std::vector<Var> args;
    std::vector<Expr> logical;
    for (int i = 0; i < rank + 3; i++) {
        args.emplace_back("i" + std::to_string(i));
        logical.push_back(args.back());
    }
    Func f("input_logical");
    Expr inside;
    if (bounded) {
        // A clamped read and a select per tap, written out rather than through
        // BoundaryConditions::constant_exterior, whose likely() on every coordinate makes Halide
        // partition each loop around the reads into edge and steady-state copies, at every level
        // of every branch: the bounded channels-last kernel of rank 2 took 10x its interior
        // twin's compile time. Only vectors of positions keep it, on the innermost axis: there
        // the steady state's clamp vanishes and its reads are dense vector loads, not gathers.
        inside = Internal::const_true();
        for (int i = 0; i < rank; i++) {
            const int b = data_buffer_dim(layout, rank, i);
            const Expr lo = param.dim(b).min(), hi = param.dim(b).max();
            inside = inside && logical[i] >= lo && logical[i] <= hi;
            logical[i] = clamp(i == 0 && vector_positions ? likely(logical[i]) : logical[i], lo, hi);
        }
    }
    const Expr read = buffer(to_buffer_order(logical, [&](int i) { return data_buffer_dim(layout, rank, i); }));
    f(args) = bounded ? select(inside, read, Internal::make_zero(storage)) : read;
    return f;
}

// The filter in logical order. `ci_pairs` (channel_major only): the buffer holds input channels
// in pairs, [2*co + ci%2, ci/2, g, k..], so one vector load gives a bf16 dot-product
// instruction (vdpbf16ps) the two weights of each of its output channels; the buffer's ci extent
// is then half the layer's.
inline Halide::Func logical_filter(const Halide::Func &buffer, bool channel_major, int rank, bool ci_pairs = false) {
    using namespace Halide;
    std::vector<Var> args;
    std::vector<Expr> logical;
    for (int i = 0; i < rank + 3; i++) {
        args.emplace_back("k" + std::to_string(i));
        logical.push_back(args.back());
    }
    Func f("filter_logical");
    if (ci_pairs) {
        const Expr co = logical[rank], ci = logical[rank + 1];
        logical[rank] = 2 * co + ci % 2;
        logical[rank + 1] = ci / 2;
    }
    f(args) = buffer(to_buffer_order(logical, [&](int i) { return filter_buffer_dim(channel_major, rank, i); }));
    return f;
}

// The sum both ops reduce to on their views: for every output position q (per spatial axis),
//     out[q, co, g, n] = sum_{ci, j} input[index(axis, q, j), ci, g, n] * w[j, co, ci, g]
// `input` and `filter` in logical order (data_layout.h); `filter_param` gives the tap and
// channel extents. Each op's header supplies its own `index`.
inline ConvStages define_correlation(const Halide::Func &input, const Halide::Func &filter,
                                     const Halide::OutputImageParam &filter_param, Layout layout,
                                     bool channel_major, int rank, const Halide::Type &storage,
                                     const std::function<Halide::Expr(int, Halide::Expr, Halide::Expr)> &index,
                                     bool ci_pairs = false, const Halide::Func &bias = Halide::Func()) {
    using namespace Halide;
    ConvStages p;
    p.layout = layout;
    p.ci_pairs = ci_pairs;
    p.channel_major = channel_major || layout == Layout::NXC;
    for (int i = 0; i < rank; i++) p.q.emplace_back("q" + std::to_string(i));

    Region taps;
    for (int i = 0; i < rank; i++) taps.push_back({0, filter_param.dim(filter_buffer_dim(p.channel_major, rank, i)).extent()});
    const Expr ci_entries = filter_param.dim(filter_buffer_dim(p.channel_major, rank, rank + 1)).extent();
    taps.push_back({0, ci_pairs ? 2 * ci_entries : ci_entries});  // ci
    p.r = RDom(taps, "r");

    const Type acc_t = accumulator_type(storage);
    std::vector<Expr> in_idx, w_idx;
    for (int i = 0; i < rank; i++) {
        in_idx.push_back(index(i, p.q[i], p.r[i]));
        w_idx.push_back(p.r[i]);
    }
    Expr ci = p.r[rank];
    in_idx.insert(in_idx.end(), {ci, p.g, p.n});
    w_idx.insert(w_idx.end(), {p.co, ci, p.g});

    const std::vector<Var> acc = p.acc_args(), out = p.out_args();
    p.acc(acc) = accumulator_start(acc_t, bias, p.co, p.g);
    p.acc(acc) += cast(acc_t, input(in_idx)) * cast(acc_t, filter(w_idx));
    p.out(out) = store_cast(storage, p.acc(std::vector<Expr>(acc.begin(), acc.end())));
    return p;
}

}  // namespace gen
}  // namespace deconv
