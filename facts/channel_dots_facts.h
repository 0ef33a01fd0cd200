// The output channels per group that the channel-dot schedule (cpu_channel_dots_schedule.h)
// specializes, written once: the dispatcher (runtime/dispatch/) sends it layers with at most
// that many. No Halide here: the runtime includes this header. (Apart from tile_facts.h, whose
// every user is a generator of the whole kernel matrix.)
#pragma once

namespace deconv {
namespace tiles {

constexpr int kDotsMaxChannels = 6;

// Positions per register tile at `channels` output channels: the tile's partial sums (channels x
// positions vectors) within `accumulators` (24 of 32 registers, 12 of 16), at most `q_tile`.
// (16 of 32 at 8 channels ran 1.25x slower than 24, which spill some.)
constexpr int dots_q_tile(int channels, int q_tile, int accumulators) {
    const int fit = accumulators / channels;
    return fit < 1 ? 1 : fit < q_tile ? fit : q_tile;
}

}  // namespace tiles
}  // namespace deconv
