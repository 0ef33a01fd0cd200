// One phase's kernel call, and the splits of its rows that the executors choose between
// (phase_kernel_calls.cpp says why each exists). Every call takes the kernel's buffers as
// halide_dimension_t arrays in kernel order (kernel_call.h) and the packed filter from element
// `w_off`; the output's channels lie `out_c_stride` apart.
#pragma once

#include "cpu/filter_packing.h"
#include "cpu/fused_epilogue.h"
#include "kernels/kernel_registry.h"
#include "layer/phase_decomposition.h"
#include "plan/plan_impl.h"

#include <cstdint>

struct halide_dimension_t;

namespace deconv {
namespace detail {

// One call of a phase kernel (`kernel_rank` spatial axes), one per block of output channels.
void call_phase_kernel(const Plan::Impl &p, const KernelEntry *kernel, const FilterPacking &packed,
                       const int32_t steps[3], int kernel_rank, const uint8_t *in_base, int64_t w_off,
                       uint8_t *out_base, int64_t out_c_stride, const halide_dimension_t *in_dims,
                       const halide_dimension_t *w_dims, const halide_dimension_t *out_dims,
                       const CallEpilogue &epi = {});
// A stride-1 channels-first call whose planes are read as flat rows (Plan::Impl::flat_rows).
void call_flat_rows(const Plan::Impl &p, const KernelEntry *kernel, const FilterPacking &packed,
                    const int32_t steps[3], const uint8_t *in_base, int64_t w_off, uint8_t *out_base,
                    const halide_dimension_t *in_dims, const halide_dimension_t *w_dims,
                    const halide_dimension_t *out_dims,
                       const CallEpilogue &epi = {});
// A 2D channels-first call of one output column, its axes swapped.
void call_phase_kernel_transposed(const Plan::Impl &p, const KernelEntry *kernel, const FilterPacking &packed,
                                  const int32_t steps[3], const uint8_t *in_base, int64_t w_off, uint8_t *out_base,
                                  int64_t out_c_stride, const halide_dimension_t *in_dims,
                                  const halide_dimension_t *w_dims, const halide_dimension_t *out_dims,
                       const CallEpilogue &epi = {});
// The channels-last kernels' positions per row tile on this CPU (0: rows run whole).
int64_t channels_last_row_tile(const Plan::Impl &p);
// call_phase_kernel with its rows (data axis `x`) split at `row_tile` where the kernels' tiles
// would recompute part of a row.
void call_phase_kernel_rows(const Plan::Impl &p, int64_t row_tile, int x, const KernelEntry *kernel,
                            const FilterPacking &packed, const int32_t steps[3], int kernel_rank, const uint8_t *in_base,
                            int64_t w_off, uint8_t *out_base, int64_t out_c_stride, const halide_dimension_t *in_dims,
                            const halide_dimension_t *w_dims, const halide_dimension_t *out_dims,
                       const CallEpilogue &epi = {});
// A 1D phase `a` of a layer that reads its input (`in_size` positions) in place
// (Plan::Impl::in_place_edges): the row's inside on the interior kernel, its ends on the bounded one.
void call_phase_kernel_edges(const Plan::Impl &p, int64_t row_tile, int x, const AxisPhase &a, int64_t in_size,
                             const FilterPacking &packed, const int32_t steps[3], const uint8_t *in_base, int64_t w_off,
                             uint8_t *out_base, int64_t out_c_stride, const halide_dimension_t *in_dims,
                             const halide_dimension_t *w_dims, const halide_dimension_t *out_dims,
                       const CallEpilogue &epi = {});

}  // namespace detail
}  // namespace deconv
