// The Winograd path of backprop layers (ExecOptions::algorithm, the policy knob `algorithm`):
// every stride phase, a dense correlation of r taps per axis (phase_decomposition.h), runs as
// F(m, r) nested over the spatial axes (facts/winograd_transforms.h) in three steps per
// phase and slice of images:
//   1. the input transform kernel: alpha^D transformed values per tile and input channel;
//   2. the 1D channels-last interior phase kernel: alpha^D * G matrix products, [tiles x C_in] by
//      [C_in x C_out], run as a 1x1 convolution whose groups are the products and whose row is
//      every tile of the slice;
//   3. the output transform kernel, into the phase's strided view of the output.
// The filter is transformed once per packing (Plan::pack_filter, or per run). Channels-last
// only: channels-first layers run it on their channels-last twin, f16 and bf16 ones on their f32
// plan.
#pragma once

#include "cpu/filter_packing.h"
#include "plan/plan_impl.h"

#include <string>
#include <vector>

namespace deconv {
namespace detail {

// Why the Winograd path cannot run layer `p` with tiles of `m` outputs per axis, in words naming
// the offending value; empty when it can (every phase with taps has the same r in {2, 3} taps on
// every axis, the layer is 1D or 2D, float, backprop, and this build has the kernels). Phases
// that read every in_step-th input (dilation) run as in_step sub-phases per axis.
std::string winograd_unsupported(const Plan::Impl &p, int m);
// Multiply-accumulates of the matrix products (the transforms' additions not counted), for
// comparing against Plan::Impl::macs; and the tiles of the phase with the most, over the batch.
int64_t winograd_macs(const Plan::Impl &p, int m);
int64_t winograd_phase_tiles(const Plan::Impl &p, int m);
// Puts p on F(m, r) (winograd_unsupported(p, m) must be empty).
void set_winograd(Plan::Impl &p, int m);

// The filter transformed per phase for the matrix products: [phase][g][xi_0][xi_1][ci][co]
// (outermost first; spec axis order, phases in the executors' odometer order), G g G^T of the
// phase's taps reversed, in f32.
FilterPacking pack_winograd_filter(const void *src, const std::vector<int64_t> &st, const Plan::Impl &p);

// Runs a validated channels-last f32 layer on the Winograd path (run_phase_kernels' contract).
void run_winograd(const Plan::Impl &p, const ConstTensorView &input, const std::vector<int64_t> &in_st,
                  const TensorView &output, const std::vector<int64_t> &out_st, const FilterPacking &packed);

}  // namespace detail
}  // namespace deconv
