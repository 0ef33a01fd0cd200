// The rules the CPU implementations share (dispatch/implementations.h): the kernel choice every
// one starts from, and the steps of their confs. Pure functions of the layer, its policy, the CPU
// variant and the kernels this build has; a pin that does not apply to a layer falls back to the
// rule. Their thresholds are rows of plan/thresholds.cpp.
#pragma once

#include "plan/plan_impl.h"

#include <initializer_list>
#include <memory>
#include <string>

namespace deconv {
namespace detail {

// --- The kernel choice (kernel_choice.cpp) ---

// The CPU schedule (channel- or position-vectorized) and its bounded and interior kernels; needs
// only the layer's geometry and shape information. Leaves p.kernel null when this build has none.
void choose_cpu_kernels(Plan::Impl &p);
// The key of the plan's CPU kernel of `rank` spatial axes.
KernelKey cpu_kernel_key(const Plan::Impl &p, int rank, bool channel_major, bool interior, bool ci_pairs = false);
// Whether a phase's reduction (input channels x taps) is long enough for the channel tiles.
bool long_reduction(const Plan::Impl &p);
// Channels-first backprop layers: the channel-vectorized schedule, or the position-vectorized one.
bool choose_channel_major(const Plan::Impl &p);
// Sets the plan's schedule (channel_major) and its bounded and interior kernels.
void set_cpu_kernels(Plan::Impl &p, bool channel_major);
// The interleaved kernel (plain or `blocked`) the layer can run, or null.
const KernelEntry *interleaved_kernel_for(const Plan::Impl &p, bool channel_major, bool blocked);
// 1D-2D layers of one-tap phases on the channel-vectorized channels-first kernels.
bool one_tap_channel_tiles(const Plan::Impl &p);
// Layers that run on the blocked interleaved kernel.
bool prefers_blocked_interleave(const Plan::Impl &p);
// A database entry that pins kernels this build lacks: one warning per entry and process.
void warn_once(const std::string &message);

// --- The phase-kernel conf (impl_phase_kernels.cpp) ---

// Whether the layer reads a zero-bordered input copy, and whether it runs the interleaved
// kernel. `in_place`: its runs read their input as the caller hands it (a twin's runs read a
// transposed copy, which takes the margins at no further cost).
void choose_bordered_input(Plan::Impl &p, bool in_place);
// Output channels per block of the packed filter; 0: one packing.
int64_t choose_channel_block(const Plan::Impl &p);
// The interior calls on the tap-row kernels, where they serve the layer.
void choose_tap_rows(Plan::Impl &p);
// Whether the output is zeroed in one dense pass first.
bool choose_zero_first(const Plan::Impl &p);
// Flat rows for the narrow-row channels-first layers on a bordered copy.
void choose_flat_rows(Plan::Impl &p);
// The steps every plan on its own kernels takes last: channel blocks, tap rows, zero first,
// flat rows, phase tasks (phase_kernels and batch_rows).
void finish_phase_kernels_conf(Plan::Impl &p);
// Whether the plan runs on the calling thread alone.
bool choose_serial(const Plan::Impl &p);

// --- The layout twins (impl_layout_twins.cpp) ---

// Bytes of the layer's tensors `shapes`, together.
int64_t tensors_bytes(const Plan::Impl &p, std::initializer_list<const std::vector<int64_t> *> shapes);
// The copies of a layout change stay within their limit.
bool layout_copies_fit(const Plan::Impl &p);
// Channels-first layers that run on the channels-last kernels (the channels-last twin).
bool choose_via_channels_last(const Plan::Impl &p);
// Channels-last layers that run on the channels-first kernels (the channels-first twin).
bool choose_via_channels_first(const Plan::Impl &p);
// The plan of the same layer in the other data layout (`format`), with its own kernels and
// implementation.
std::shared_ptr<const Plan::Impl> layout_twin(const Plan::Impl &p, DataFormat format);

// --- Batch rows (impl_batch_rows.cpp) ---

// Channels-last layers of narrow phase rows and a wide batch: sets the batch-rows kernel and
// tap windows and returns true, or returns false leaving the plan as it was.
bool choose_batch_rows(Plan::Impl &p);

// --- Winograd (impl_winograd.cpp) ---

// The Winograd path's tile (outputs m per axis of F(m, r)) for the layer, or 0 for the direct
// kernels: by `algorithm` (ExecOptions::algorithm), then the policy's pins, then the rules.
// Throws Error(Unsupported), saying why, when `algorithm` is Winograd and the layer cannot take it.
int choose_winograd_tile(const Plan::Impl &p, Algorithm algorithm);

}  // namespace detail
}  // namespace deconv
