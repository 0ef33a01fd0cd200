// The CPU executors: a validated plan run on its kernels (cpu_executor.cpp), the batch-rows
// layout among them (batch_rows_executor.cpp).
#pragma once

#include "filter_packing.h"
#include "plan_impl.h"

#include <cstdint>
#include <vector>

struct halide_dimension_t;

namespace deconv {
namespace detail {

// Runs a validated CPU layer: views checked, strides fitting the kernels' 32-bit fields (`in_st`,
// `out_st`: the caller's, in the plan's layout), the filter packed for `p`.
void run_cpu(const Plan::Impl &p, const ConstTensorView &input, std::vector<int64_t> in_st, const TensorView &output,
             std::vector<int64_t> out_st, const FilterPacking &packed);
void run_batch_rows(const Plan::Impl &p, const ConstTensorView &input, const std::vector<int64_t> &in_st,
                    const TensorView &output, const std::vector<int64_t> &out_st, const FilterPacking &packed);

// One call of a phase kernel (`kernel_rank` spatial axes) on the packed filter from element
// `w_off`, per block of output channels; with its rows (data axis `x`) split at `row_tile` where
// the kernels' tiles would recompute part of a row (call_phase_kernel_rows).
void call_phase_kernel_rows(const Plan::Impl &p, int64_t row_tile, int x, const KernelEntry *kernel,
                            const FilterPacking &packed, const int32_t steps[3], int kernel_rank, const uint8_t *in_base,
                            int64_t w_off, uint8_t *out_base, int64_t out_c_stride, const halide_dimension_t *in_dims,
                            const halide_dimension_t *w_dims, const halide_dimension_t *out_dims);
// The channels-last kernels' positions per row tile on this CPU (0: rows run whole).
int64_t channels_last_row_tile(const Plan::Impl &p);
// Whether a phase of an outer axis runs in tap windows (policy tap_windows): its edge outputs
// called with only the taps that read the input.
bool tap_windowed(const Plan::Impl &p);

}  // namespace detail
}  // namespace deconv
