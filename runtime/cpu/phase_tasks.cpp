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
    return p.policy.phase_tasks == Toggle::On;
}

}  // namespace detail
}  // namespace deconv
