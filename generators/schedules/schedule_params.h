// The knobs of a phase-convolution schedule. Every field is a named generator parameter
// (see phase_conv_generator.cpp), so an autotuner can search them and a schedule database can
// pin them per (op, rank, dtype, target) through add_halide_library(... PARAMS ...).
#pragma once

namespace deconv {
namespace gen {

struct ScheduleParams {
    // Output positions per register tile along the innermost spatial axis, in native vectors of
    // the accumulator type. 0 = choose from the target (see cpu_schedule.h).
    int vectors = 0;
    // Output channels per register tile (each tile keeps vectors x co_tile accumulators live).
    // 0 = choose from the target.
    int co_tile = 0;
    // Unroll the innermost tap loop (helps when taps per phase are few and known small).
    bool unroll_taps = false;
};

}  // namespace gen
}  // namespace deconv
