// The output channels per group that the channel-dot schedule (cpu_channel_dots_schedule.h)
// specializes, written once: the dispatcher (runtime/strategy.cpp) sends it layers with at most
// that many. No Halide here: the runtime includes this header. (Apart from tile_facts.h, whose
// every user is a generator of the whole kernel matrix.)
#pragma once

namespace deconv {
namespace tiles {

constexpr int kDotsMaxChannels = 3;

}  // namespace tiles
}  // namespace deconv
