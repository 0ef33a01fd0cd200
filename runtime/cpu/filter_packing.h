// Filter packing: the caller's filter, whatever its layout (op_geometry.h's FilterAxes), copied
// once into the layout the plan's CPU kernels read (Plan::pack_filter, or every run that takes
// an unpacked filter).
#pragma once

#include "plan/plan_impl.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace deconv {
namespace detail {

// The filter of the interleaved kernel, from the position kernels' packing: logical
// [j, ph, k_1 .. k_{D-1}, co, ci, g] (innermost axis first) where (j, ph) is tap
// tap_first(ph) + s*j of the innermost axis (stride s, one phase per output residue), zero where that phase has fewer taps; stored
// [g, k_outer.., ph, j, ci, co] (outermost first).
struct InterleavedFilter {
    std::vector<uint8_t> data;
    int64_t taps = 0;                  // j extent: the most taps of a phase
    int64_t j = 0, ph = 0, g = 0;      // strides
    std::vector<int64_t> k;            // outer axes' tap strides, spec order (rank - 1)
};

// The packed filter the kernels read: position-vectorized kernels [g, k.., ci, co],
// channel-vectorized kernels [k.., g, ci, co] (outermost first). Output channels are innermost
// in both: the former broadcast co_tile consecutive weights per (ci, tap), which then share a
// cache line; the latter load them as vectors.
struct FilterPacking {
    std::vector<uint8_t> data;
    int64_t co = 1, ci = 0, g = 0;
    std::vector<int64_t> k;  // spec order
    // Channel-vectorized kernels (channel_block_width): blocks of block_channels output channels,
    // each a whole packing of its own, [k.., g, ci, block_channels] or, for channel pairs,
    // [k.., g, ci/2, block_channels, 2] (the last block zero-padded), so that a kernel call on
    // one block streams its weights from one contiguous array.
    int64_t block = 0;           // elements per block; 0: one packing of every output channel
    int64_t block_channels = 0;  // output channels per block
    // Plans with an interleaved kernel: its filter too, packed with the rest (once per
    // Plan::pack_filter; repacked per run, it cost hifigan_up3 a fresh 128 KiB mapping, zeroed
    // and faulted in, every run).
    InterleavedFilter interleaved;
};

// Packs `src` (element strides `st`, the caller's filter layout) for plan `p`'s kernels: blocked
// by p.channel_block output channels, pairs for p.ci_pairs, the interleaved kernel's copy too.
// With `recycled`, the packing's buffers are taken from it (recycle_packing hands them back).
FilterPacking pack_filter(const void *src, const std::vector<int64_t> &st, const Plan::Impl &p, size_t elem,
                          RecycledVectors *recycled = nullptr);
void recycle_packing(FilterPacking &f, RecycledVectors &recycled);

}  // namespace detail
}  // namespace deconv
