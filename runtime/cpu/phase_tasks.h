// Phase tasks (Plan::Impl::phase_tasks, policy phase_tasks): a layer's phases run as the tasks of
// one parallel loop, each phase's kernel calls on one thread, instead of one parallel loop (and
// one hand-off to the other threads) per call. The tasks come largest first; each thread runs its
// range of them, then helps with the others'.
// A tuning knob, off unless pinned: on small layers of many phase calls it ran 1.1-2.9x faster
// (a quarter of 24 random 1D channels-last depthwise layers; 4 of 120 random class layers), and
// as slow as 0.7x on others, with no rule found between them (docs/performance.md).
#pragma once

#include "plan/plan_impl.h"

#include <cstdint>
#include <vector>

namespace deconv {
namespace detail {

// A task: the phases (one entry per spatial axis, spec order; `entries` per axis as the executor
// counts them: interleaved, the innermost axis's call, then its tail outputs) that run in it, in
// order. The innermost axis's phases share a task where they would write neighbouring lines of
// the output (channels first, or fewer than kSplitInnerBytes per position) and where the layer is
// interleaved (its tail outputs overwrite some of the interleaved call's).
struct PhaseTask {
    std::vector<std::vector<size_t>> phases;
    int64_t products = 0;  // output-tap products: the task's share of the layer's work
};

// The tasks, largest first; the output's positions along the innermost axis `x_step` elements
// apart.
std::vector<PhaseTask> phase_tasks(const Plan::Impl &p, const std::vector<size_t> &entries, bool interleave,
                                   int64_t x_step);

// Whether a plan runs its phases as tasks: where pinned on, on the phase executor.
bool choose_phase_tasks(const Plan::Impl &p);

}  // namespace detail
}  // namespace deconv
