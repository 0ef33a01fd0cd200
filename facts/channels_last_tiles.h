// The register tiles of the channels-last schedule (cpu_channels_last_schedule.h) in the order
// its branches are tried, written once: the schedule specializes one branch per entry, and the
// dispatcher (runtime/dispatch/layer_classes.cpp, runtime/cpu/cpu_executor.cpp) finds the entry a call takes
// from the same conditions, to count the channels and positions it computes. No Halide here: the
// conditions are templates over the extents' type (a Halide Expr or an integer), like
// row_tiles.h's, and the runtime includes this header.
#pragma once

#include "row_tiles.h"

#include <cstdint>

namespace deconv {
namespace tiles {

// Which rows of the innermost axis a tile takes, by their width.
enum class RowFit {
    FourTiles,   // four_position_tiles_fit (the full channel tile's exact short rows)
    FitTiles,    // fit_position_tiles_fit
    RowTiles,    // q_tile positions or more
    FourWide,    // four positions or more
    FourNarrow,  // four positions or more, narrower than q_tile or where four-position tiles
                 // compute a tenth fewer (32 -> 32 channels, 8^3, kernel 4 stride 2, rows of 8:
                 // 40% of the FMA peak on q_tile's tiles)
    Any,         // any row, one position per step
};

struct ChannelTile {
    int channels;   // per tile, before the square-tile rule (tile_channels)
    int vector;     // lanes of its vectors
    int positions;  // per tile of a row
    int rows;       // rows of the next axis per tile
    RowFit fit;
};

struct ChannelTiles {
    static constexpr int kMax = 14;
    int count = 0;
    ChannelTile tile[kMax] = {};
    int q_tile = 0, fit_q = 0;
    constexpr void add(const ChannelTile &t) { tile[count++] = t; }
};

// The branches, for `vectors` x `lanes` full channel tiles of `q_tile` positions (fit_q:
// channels_last_fit_q_tile) on layers of `rank` spatial axes:
//   the full tile on the rows of its four-position and fit tiles, then of q_tile;
//   3 channel vectors x 4 positions x 2 rows (narrow rows of 48-63 channels; 32 registers,
//   ranks 2-3): a third fewer weight loads per multiply-add than one row (dcgan_l2: 4x4 phases,
//   2048 input channels x taps, whose weights stream from L2);
//   the full tile on four positions (rows narrower than q_tile);
//   two channel vectors (32-63 channels per group: vnet_up_3x3x3) on four positions, then q_tile
//   (one row: two rows, 24 accumulators, ran vnet_up_3x3x3 at 10.4-10.8 ms against 8.4-8.6);
//   one channel vector on two rows of four positions, then of q_tile (ranks 2-3): one row's
//   q_tile accumulators were too few to hide the multiply-add latency over a reduction of few
//   input channels x taps (grouped32_up_nxc, 8 -> 8 per group, AVX2: 0.50 ms, oneDNN 0.21);
//   one channel vector on q_tile positions, then one position per step;
//   8-lane half vectors on q_tile positions, two rows then one (8-15 channels, 32 registers:
//   4-lane vectors ran them);
//   4-lane vectors, one position per step.
// Fewer channels than the last run scalar.
constexpr ChannelTiles channels_last_tiles(int vectors, int lanes, int q_tile, int fit_q, int rank) {
    ChannelTiles t;
    t.q_tile = q_tile;
    t.fit_q = fit_q;
    const int full = vectors * lanes, four = kChannelsLastShortTile;
    const bool two_rows = rank >= 2, three_vectors = vectors > 2;
    t.add({full, lanes, four, 1, RowFit::FourTiles});
    if (has_fit_tiles(q_tile, fit_q)) t.add({full, lanes, fit_q, 1, RowFit::FitTiles});
    t.add({full, lanes, q_tile, 1, RowFit::RowTiles});
    if (two_rows && three_vectors) t.add({(vectors - 1) * lanes, lanes, four, 2, RowFit::FourWide});
    t.add({full, lanes, four, 1, RowFit::FourWide});
    if (three_vectors) {
        t.add({2 * lanes, lanes, four, 1, RowFit::FourNarrow});
        t.add({2 * lanes, lanes, q_tile, 1, RowFit::RowTiles});
    }
    if (two_rows) {
        t.add({lanes, lanes, four, 2, RowFit::FourNarrow});
        t.add({lanes, lanes, q_tile, 2, RowFit::RowTiles});
    }
    t.add({lanes, lanes, q_tile, 1, RowFit::RowTiles});
    t.add({lanes, lanes, 1, 1, RowFit::Any});
    if (lanes > 8) {
        if (two_rows) t.add({8, 8, q_tile, 2, RowFit::RowTiles});
        t.add({8, 8, q_tile, 1, RowFit::RowTiles});
    }
    if (lanes > 4) t.add({4, 4, 1, 1, RowFit::Any});
    return t;
}

// The branches of a bounded kernel (a bounds test per read): the full tile on rows of q_tile or
// of four positions, one vector on q_tile positions or one, and the narrower vectors. The
// dispatcher runs bounded kernels only where no zero-bordered input copy is made (inputs past
// its size limit, the few outputs at the ends of 1D rows read in place), so their tiles for
// exact and narrow rows earned little, and each branch is compiled again for every loop level
// (rank 2 on AVX-512: 76 s of generator time with every branch, 194 s with Halide's boundary
// helper's loop partitioning too).
constexpr ChannelTiles channels_last_bounded_tiles(const ChannelTiles &all) {
    ChannelTiles t;
    t.q_tile = all.q_tile;
    t.fit_q = all.fit_q;
    const int full = all.tile[0].channels;
    for (int i = 0; i < all.count; i++) {
        const ChannelTile &c = all.tile[i];
        const bool kept_fit = c.fit == RowFit::RowTiles || c.fit == RowFit::FourWide || c.fit == RowFit::Any;
        if (c.rows == 1 && kept_fit && (c.channels == full || c.channels == c.vector)) t.add(c);
    }
    return t;
}

// Channels per tile. A square tile (as many channels as positions: 4-lane vectors on four
// positions) holds twice its channels: Halide 14 drops the reduction of a branch whose tile is
// square (cpu_schedule.h says how).
constexpr bool square_tile(const ChannelTile &t) { return t.channels == t.positions; }
constexpr int tile_channels(const ChannelTile &t) { return square_tile(t) ? 2 * t.channels : t.channels; }

// Whether a call of `channels` per group over rows of `width` (and `height` rows of the next
// axis: read by two-row tiles only) takes tile `t` of `list`, where no earlier tile takes it.
template <typename T>
auto channel_tile_fits(const ChannelTiles &list, const ChannelTile &t, const T &channels, const T &width,
                       const T &height) {
    auto fits = channels >= t.channels;
    switch (t.fit) {
    case RowFit::FourTiles: fits = fits && four_position_tiles_fit(width, list.q_tile, list.fit_q); break;
    case RowFit::FitTiles: fits = fits && fit_position_tiles_fit(width, list.q_tile, list.fit_q); break;
    case RowFit::RowTiles: fits = fits && width >= list.q_tile; break;
    case RowFit::FourWide: fits = fits && width >= kChannelsLastShortTile; break;
    case RowFit::FourNarrow:
        fits = fits && (width >= kChannelsLastShortTile &&
                        (width < list.q_tile || four_position_tiles_fit(width, list.q_tile, 0)));
        break;
    case RowFit::Any: break;
    }
    if (t.rows > 1) fits = fits && height >= t.rows;
    if (square_tile(t)) fits = fits && channels >= tile_channels(t);
    return fits;
}

// The tile a call takes (the first that fits); nullptr where none does (scalar).
inline const ChannelTile *channels_last_tile(const ChannelTiles &list, int64_t channels, int64_t width,
                                             int64_t height) {
    for (int i = 0; i < list.count; i++)
        if (channel_tile_fits(list, list.tile[i], channels, width, height)) return &list.tile[i];
    return nullptr;
}

// The positions the full channel tile computes over a row of `width` (its last tile shifted back;
// one per step where no four-position tile fits).
inline int64_t channels_last_row_computed(const ChannelTiles &list, int64_t width) {
    const ChannelTile *t = channels_last_tile(list, list.tile[0].channels, width, 2);
    return t ? tiled_positions<int64_t>(width, t->positions) : width;
}

}  // namespace tiles
}  // namespace deconv
