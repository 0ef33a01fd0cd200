// Which quantized layers and epilogues a plan takes (Plan::create with DataTypes and an Epilogue),
// checked once when the plan is made, each refusal naming the value: the dtype combinations of
// oneDNN 2.6's int8 (de)convolution, zero points in their source's range, scale and bias counts
// per output channel, post-op parameters.
#pragma once

#include "deconv/deconv.h"

#include <cstdint>

namespace deconv {
namespace detail {

// u8 or i8 data with i8 weights.
bool is_quantized(const DataTypes &t);
// Throws InvalidArgument or Unsupported naming what `types` and `e` get wrong for `op` with
// `out_channels` (G*C_OUT) output channels.
void check_epilogue(Op op, const DataTypes &types, const Epilogue &e, int64_t out_channels);
// Checks a run's arguments against the plan's epilogue: the bias and the run-time scales it
// needs, and nothing it does not take.
void check_run_args(const Epilogue &e, const RunArgs &args, int64_t out_channels);

}  // namespace detail
}  // namespace deconv
