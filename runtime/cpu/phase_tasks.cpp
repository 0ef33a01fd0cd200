#include "cpu/phase_tasks.h"

#include "kernels/kernel_call.h"
#include "plan/thresholds.h"

#include <algorithm>

namespace deconv {
namespace detail {

namespace {

int64_t products(const AxisPhase &a) { return a.out_count * a.tap_count; }

}  // namespace

std::vector<PhaseTask> phase_tasks(const Plan::Impl &p, const std::vector<size_t> &entries, bool interleave,
                                   int64_t x_step) {
    const int in = p.geo.rank - 1;
    // Outputs far enough apart keep the innermost axis's phases in tasks of their own: closer, two
    // threads writing neighbouring phases contend for lines (128 bytes a position: 0.68-0.8x).
    const bool split_inner =
        !interleave && x_step * (int64_t)dtype_size(p.dtype) >= threshold(p, Threshold::SplitInnerBytes);
    std::vector<PhaseTask> tasks;
    for_each_combination(entries, [&](const std::vector<size_t> &ph) {
        if (!split_inner && ph[in] != 0) {
            tasks.back().phases.push_back(ph);  // (the odometer turns the innermost axis fastest)
            return;
        }
        int64_t outer = 1;
        for (int i = 0; i < in; i++) outer *= products(p.phases[i][ph[i]]);
        int64_t inner = 0;
        if (split_inner) {
            inner = products(p.phases[in][ph[in]]);
        } else {
            for (const AxisPhase &a : p.phases[in]) inner += products(a);
        }
        tasks.push_back({{ph}, outer * inner});
    });
    std::stable_sort(tasks.begin(), tasks.end(),
                     [](const PhaseTask &a, const PhaseTask &b) { return a.products > b.products; });
    return tasks;
}

bool choose_phase_tasks(const Plan::Impl &p) {
    if (p.geo.forward || p.winograd.f || p.batch_rows_kernel) return false;
    if (p.policy.phase_tasks != Toggle::Auto) return p.policy.phase_tasks == Toggle::On;
    // Few outputs per phase and many weights (1024 -> 512 on 8x8): each phase's kernel call has
    // too few position tiles to share between the threads without both streaming the weights,
    // so the phases run as tasks, a phase's weights on one thread.
    int64_t phases = 1, positions = p.geo.n, taps = 1;
    for (const auto &axis : p.phases) {
        phases *= (int64_t)axis.size();
        int64_t most = 0, most_taps = 0;
        for (const AxisPhase &a : axis) {
            most = std::max(most, a.out_count);
            most_taps = std::max(most_taps, a.tap_count);
        }
        positions *= most;
        taps *= most_taps;
    }
    const int64_t weights = p.geo.groups * p.geo.c_in * p.geo.c_out * taps;
    const int64_t max_positions = threshold(p, Threshold::PhaseTasksMaxPositions);
    return phases >= 2 && positions <= max_positions && max_positions > 0 &&
           weights >= threshold(p, Threshold::PhaseTasksMinWeights);
}

}  // namespace detail
}  // namespace deconv
