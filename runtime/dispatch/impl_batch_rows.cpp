// The batch-rows implementation (dispatch/implementations.h): channels-last layers of narrow
// phase rows and a wide batch, run with the images as the innermost row.
#include "cpu/bordered_input.h"
#include "cpu/cpu_executor.h"
#include "cpu/phase_tasks.h"
#include "cpu/winograd_executor.h"
#include "dispatch/implementations.h"
#include "dispatch/channels_last_families.h"
#include "dispatch/layer_classes.h"
#include "dispatch/strategy.h"
#include "kernels/cpu_thread_pool.h"
#include "kernels/cpu_tiles.h"
#include "kernels/halide_glue.h"
#include "kernels/kernel_call.h"
#include "layer/checked_math.h"
#include "plan/thresholds.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <set>

namespace deconv {
namespace detail {

// Batch rows: 1D-2D channels-last plans of phase rows narrower than the position tile and a batch
// of batch_rows_min_images or more run each phase with the images as the innermost row, in tap
// windows (dcgan_l2, batch 64: 25.7-27.2 -> 18.9-19.3 ms). DECONV_BATCH_ROWS=0 turns it off.

bool choose_batch_rows(Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NXC || !p.channel_major || p.groups || p.dots || p.group_block ||
        g.rank > 2 || p.policy.batch_rows == Toggle::Off)
        return false;
    if (p.policy.batch_rows != Toggle::On) {
        if (g.n < threshold(p, Threshold::BatchRowsMinImages)) return false;
        for (const AxisPhase &a : p.phases[g.rank - 1])
            if (a.out_count >= p.tiles.row_positions) return false;
    }
    const KernelEntry *k = find_kernel(cpu_kernel_key(p, g.rank + 1, true, true, p.ci_pairs), p.variant);
    if (!k) return false;
    if (!layout_copies_fit(p)) return false;
    p.batch_rows_kernel = k;
    p.tap_windows.clear();
    for (int i = 0; i < g.rank; i++) {
        std::vector<std::vector<TapWindow>> axis;
        for (const AxisPhase &a : p.phases[i]) axis.push_back(tap_windows(a, g.in_spatial[i]));
        p.tap_windows.push_back(std::move(axis));
    }
    return true;
}

namespace {

void run_batch_rows_entry(const Plan::Impl &p, const ConstTensorView &input, std::vector<int64_t> in_st,
                          const TensorView &output, std::vector<int64_t> out_st, const FilterPacking &packed) {
    run_batch_rows(p, input, in_st, output, out_st, packed);
}

std::string accept_batch_rows(Plan::Impl &p, const PlanRequest &request) {
    if (!request.twin) p.serial = choose_serial(p);
    if (!choose_batch_rows(p))
        return "not a channels-last layer of narrow phase rows and a wide batch with the next rank's kernel "
               "(choose_batch_rows), or the policy's batch_rows=off";
    finish_phase_kernels_conf(p);
    return "";
}

}  // namespace

// The images as the innermost row of the next rank's channels-last kernel, one call per tap
// window (cpu/batch_rows_executor.cpp).
extern const Implementation kBatchRows{"batch_rows", accept_batch_rows, run_batch_rows_entry, true};

}  // namespace detail
}  // namespace deconv
