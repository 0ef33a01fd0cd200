// The CPU executors of the phase-kernel and batch-rows implementations (dispatch/
// implementations.h): a validated plan run on its kernels (cpu_executor.cpp), and in the
// batch-rows layout (batch_rows_executor.cpp).
#pragma once

#include "cpu/filter_packing.h"
#include "plan/plan_impl.h"

#include <cstdint>
#include <vector>

struct halide_dimension_t;

namespace deconv {
namespace detail {

// Runs a validated CPU layer: views checked, strides fitting the kernels' 32-bit fields (`in_st`,
// `out_st`: the caller's, in the plan's layout), the filter packed for `p`.
void run_phase_kernels(const Plan::Impl &p, const ConstTensorView &input, std::vector<int64_t> in_st,
                       const TensorView &output, std::vector<int64_t> out_st, const FilterPacking &packed);
void run_batch_rows(const Plan::Impl &p, const ConstTensorView &input, const std::vector<int64_t> &in_st,
                    const TensorView &output, const std::vector<int64_t> &out_st, const FilterPacking &packed);

// Whether a phase of an outer axis runs in tap windows (policy tap_windows): its edge outputs
// called with only the taps that read the input.
bool tap_windowed(const Plan::Impl &p);

}  // namespace detail
}  // namespace deconv
