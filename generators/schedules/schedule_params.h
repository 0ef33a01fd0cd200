// The knobs of a convolution schedule. Every field is a named generator parameter
// (kernel_generator.h), so an autotuner can search them and a schedule database can pin them per
// (op, rank, dtype, layout, target) through add_halide_library(... PARAMS ...).
#pragma once

#include "../../facts/tile_facts.h"

namespace deconv {
namespace gen {

struct ScheduleParams {
    // Register tile, in native vectors of the accumulator type, along the vectorized axis:
    // output positions (channels-first schedule) or output channels (channels-last schedule).
    // 0 = choose from the target.
    int vectors = 0;
    // Channels-first: output channels per register tile (each tile keeps vectors x co_tile
    // accumulators live). 0 = choose from the target.
    int co_tile = 0;
    // Channels-last: output positions per register tile (vectors x q_tile accumulators).
    // 0 = choose from the target.
    int q_tile = 0;
    // Blocked interleaved kernel (cpu_interleaved_schedule.h): the most position tiles per block
    // (1D), and the input bytes of a block (tile_facts.h, kBlockedInputBytes).
    int q_block = tiles::blocked_tiles_per_block();
    int l2_input_bytes = tiles::kBlockedInputBytes;
    // Unroll the innermost tap loop (helps when taps per phase are few and known small).
    bool unroll_taps = false;
    // GPU: threads per block along the thread axis (output positions, or output channels for
    // channel-major accumulators) and along the register-tile axis. 0 = 32 x 4.
    int threads_x = 0;
    int threads_y = 0;
    // GPU: output rows (the second spatial axis) per thread's register tile, beside co_tile
    // channels (threads along positions) or q_tile positions (threads along channels). 0 = default.
    int row_tile = 0;
    // GPU: outputs per launch from which threads along positions take the large tile (co_tile x
    // row_tile) rather than the small one. 0 = tiles::gpu_big_tile_outputs().
    int big_tile_outputs = 0;
};

}  // namespace gen
}  // namespace deconv
