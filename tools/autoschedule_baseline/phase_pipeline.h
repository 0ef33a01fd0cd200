// One stride phase of a transposed convolution as a JIT Halide pipeline, built from the
// project's own algorithm (generators/phase_conv_algorithm.h) exactly as the AOT generator
// builds it (generators/phase_conv_generator.cpp), but with the layer's shapes given to Halide as
// estimates and no hand schedule: an autoscheduler, or Halide's default, schedules it.
#pragma once

#include "Halide.h"
#include "suite_layer.h"

#include <cstdint>
#include <tuple>
#include <vector>

namespace deconv_asb {

// What a phase pipeline's estimates describe, per spatial axis in the spec's order (outermost
// first): the phase's output positions, its taps and the input index of its first output.
// Phases with equal shapes share one pipeline, scheduled once.
struct PhaseShape {
    std::vector<int64_t> out_count, tap_count, in_offset;
    // false: every tap of every output lands inside the input, and the pipeline reads it
    // without the zero boundary (the generator's interior variant, as the runtime picks it).
    bool bounded = true;

    bool operator<(const PhaseShape &o) const {
        return std::tie(out_count, tap_count, in_offset, bounded) <
               std::tie(o.out_count, o.tap_count, o.in_offset, o.bounded);
    }
};

struct PhasePipeline {
    Halide::ImageParam input, filter;                // the generator's buffers, f32, NCX
    std::vector<Halide::Param<int32_t>> in_step;     // per axis, Halide order (innermost first)
    Halide::Func output;
    Halide::Pipeline pipeline;
};

// The unscheduled pipeline of phases of `shape` in `layer`, with estimates for every buffer,
// scalar and the output. `in_step`: the input step per tap (spec axis order).
PhasePipeline build_phase_pipeline(const SuiteLayer &layer, const PhaseShape &shape,
                                   const std::vector<int64_t> &in_step);

}  // namespace deconv_asb
