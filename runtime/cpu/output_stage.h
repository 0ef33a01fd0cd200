// The epilogue pass as a stage of a plain plan's output: a plan whose epilogue the kernels cannot
// store (a quantized layer's scales, zero point and saturation; a post-op list the store slot
// does not fold; a 16-bit output of a run in f32) offers it to the executor of the plain plan it
// runs. An executor that computes in slices of its own takes it, and hands each slice's result
// to the stage while it is in the core's cache, which writes the caller's output from it. The
// accumulator then never goes to memory whole and back (fcn8s_upscore8 as u8: the pass over its
// 22.7 MB of f32 sums was 44% of the run).
#pragma once

#include "cpu/epilogue_pass.h"

#include <cstdint>
#include <vector>

namespace deconv {
namespace detail {

struct OutputStage {
    const EpilogueValues *values = nullptr;
    DType acc = DType::f32;           // the plain plan's dtype
    // The plain run's output, dense in the layer's order: the stage serves a run into that view
    // alone (not a layout twin's other view of the same memory).
    const void *scratch = nullptr;
    std::vector<int64_t> scratch_st;
    uint8_t *dst = nullptr;           // the caller's output, in the layer's data format order
    std::vector<int64_t> dst_st;
    int c_axis = 1;

    // The part `shape` of the output at index `origin` (every channel: origin 0 on c_axis), held
    // in `acc_data` with strides `acc_st`, through the epilogue into the caller's output, on the
    // calling thread.
    void write(const uint8_t *acc_data, const std::vector<int64_t> &acc_st, const std::vector<int64_t> &shape,
               const std::vector<int64_t> &origin) const;
};

}  // namespace detail
}  // namespace deconv
