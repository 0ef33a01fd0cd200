// The calls that compute a whole layer from its phases, the way the runtime's CPU executor
// makes them (runtime/cpu/cpu_executor.cpp): one call per combination of per-axis stride phases
// (runtime/layer/phase_decomposition.h decides them), each on strided views of the caller's dense
// tensors, so that the phases together write every output element once.
#pragma once

#include "Halide.h"
#include "phase_pipeline.h"
#include "suite_layer.h"

#include <cstdint>
#include <vector>

namespace deconv_asb {

struct PhaseCall {
    PhaseShape shape;
    std::vector<int32_t> in_step;  // Halide axis order
    // Views of x, w and y: the input's origin moved so that output q reads input q at tap 0,
    // the phase's taps of the filter, and the phase's output positions.
    Halide::Buffer<float> input, filter, output;
};

// Dense C-order x [N, G*C_in, X..], w [G, C_in, C_out, K..], y [N, G*C_out, Y..]; `out_spatial`
// and `pads_begin` as deconv::infer_shape resolves them. Throws std::runtime_error for a phase
// that no tap reaches (the runtime zero-fills those; none of the measured layers has one).
std::vector<PhaseCall> layer_phase_calls(const SuiteLayer &layer, const std::vector<int64_t> &out_spatial,
                                         const std::vector<int64_t> &pads_begin, float *x, float *w, float *y);

}  // namespace deconv_asb
