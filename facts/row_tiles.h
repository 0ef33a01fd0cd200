// Which position tile the channels-last schedule's full channel tiles take for a row of `width`
// outputs of the innermost axis: the conditions of channels_last_tiles.h's row fits, as templates
// over the width's type (a Halide Expr in the schedule, an integer in the dispatcher). No Halide
// here: the runtime includes this header.
#pragma once

#include "tile_facts.h"

#include <cstdint>

namespace deconv {
namespace tiles {

// Positions that tiles of `tile` compute over a row of `width`, the last one shifted back over
// its neighbour (TailStrategy::ShiftInwards).
template <typename T>
T tiled_positions(const T &width, int tile) {
    return (width + tile - 1) / tile * tile;
}

// Whether a kernel of q_tile positions has the fit tiles' branch (fit_q 0: none on this target;
// equal to q_tile: they would be its own tiles).
constexpr bool has_fit_tiles(int q_tile, int fit_q) { return fit_q > 0 && fit_q != q_tile; }

// The fit tiles (channels_last_fit_q_tile) take rows that they cover with fewer positions
// computed than q_tile's.
template <typename T>
auto fit_position_tiles_fit(const T &width, int q_tile, int fit_q) {
    return width >= fit_q && tiled_positions(width, fit_q) < tiled_positions(width, q_tile);
}

// The four-position tiles take rows a multiple of four whose q_tile tiles would recompute more
// than a tenth of the row (dcgan_l4: phases of 16, 18 computed), and rows that they cover with a
// tenth fewer positions computed than the wider tiles do (rows of 7: 8 against 10 on AVX-512, 10
// on AVX2). On Zen 4 they run at the wider tiles' rate: 88.4% of the FMA peak on rows of 32
// against 88.2% for six-position tiles on rows of 30 (256 -> 64 channels, one thread).
template <typename T>
auto four_position_tiles_fit(const T &width, int q_tile, int fit_q) {
    const int four = kChannelsLastShortTile;
    const auto tenth_fewer_than = [&](int tile) {
        return tiled_positions(width, four) * 10 < tiled_positions(width, tile) * 9;
    };
    auto fewer = width >= four && tenth_fewer_than(q_tile);
    if (has_fit_tiles(q_tile, fit_q)) fewer = fewer && (width < fit_q || tenth_fewer_than(fit_q));
    return (width % four == 0 && (tiled_positions(width, q_tile) - width) * 10 > width) || fewer;
}

}  // namespace tiles
}  // namespace deconv
