// Strategy: turns a CPU layer and its policy (Plan::Impl::policy) into the kernels and steps its
// plan runs (strategy.cpp). A pure function of the layer, the policy, the CPU variant and the
// kernels this build has.
#pragma once

#include "plan/plan_impl.h"

#include <string>

namespace deconv {
namespace detail {

// The CPU schedule (channel- or position-vectorized) and its bounded and interior kernels; needs
// only the layer's geometry and shape information. Leaves p.kernel null when this build has none.
void choose_cpu_kernels(Plan::Impl &p);
// Everything else, once the phases are known: the channels-last twin, batch rows, the bordered
// input and interleaved kernels, the filter's channel blocks, running serially. Nothing when the
// plan runs as f32 (`via_f32`: its f32 plan chose for it).
void choose_cpu_strategy(Plan::Impl &p, bool via_f32);
// What the plan runs, in words (Plan::describe): kernels, copies, splits.
std::string describe_execution(const Plan::Impl &p);
// The Winograd path's tile (outputs m per axis of F(m, r)) for the layer, or 0 for the direct
// kernels: by `algorithm` (ExecOptions::algorithm), then the policy's pins, then the rules.
// Throws Error(Unsupported), saying why, when `algorithm` is Winograd and the layer cannot take it.
int choose_winograd_tile(const Plan::Impl &p, Algorithm algorithm);
// The key of the plan's CPU kernel of `rank` spatial axes.
KernelKey cpu_kernel_key(const Plan::Impl &p, int rank, bool channel_major, bool interior, bool ci_pairs = false);

}  // namespace detail
}  // namespace deconv
