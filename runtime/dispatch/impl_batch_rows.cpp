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

// Batch rows: 1D-2D channels-last plans run each phase with the images as the innermost row, in
// tap windows, where their phase rows are narrower than the position tile and the batch has
// batch_rows_min_images or more (dcgan_l2, batch 64: 25.7-27.2 -> 18.9-19.3 ms), or where the
// phase kernels would run the innermost axis in tap windows narrower than the four-position tile
// on average, the batch has batch_rows_narrow_min_images or more, wider than those windows, and
// the groups a full channel tile of outputs (1024 -> 512 channels, 2x2 inputs, kernel 4 stride 1,
// batch 8: 18.9 -> 2.0 ms; measured on such layers only, 64 to 1024 channels).

namespace {

// The innermost axis's rows as the phase kernels run them, in tap windows: the windows' widths,
// weighted by their products (width x taps).
double mean_window_width(const Plan::Impl &p) {
    const int inner = p.geo.rank - 1;
    double products = 0, weighted = 0;
    for (const AxisPhase &a : p.phases[inner])
        for (const TapWindow &w : tap_windows(a, p.geo.in_spatial[inner])) {
            const double work = (double)w.q_count * (double)std::max<int64_t>(w.j_count, 1);
            products += work;
            weighted += work * (double)w.q_count;
        }
    return products > 0 ? weighted / products : 0;
}

}  // namespace

bool choose_batch_rows(Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NXC || !p.channel_major || p.groups || p.dots || p.group_block ||
        g.rank > 2 || p.policy.batch_rows == Toggle::Off)
        return false;
    if (p.policy.batch_rows != Toggle::On) {
        bool narrow_phases = true;
        for (const AxisPhase &a : p.phases[g.rank - 1]) narrow_phases = narrow_phases && a.out_count < p.tiles.row_positions;
        const bool wide_batch = g.n >= threshold(p, Threshold::BatchRowsMinImages) && narrow_phases;
        const double width = mean_window_width(p);
        const bool narrow_windows = g.n >= threshold(p, Threshold::BatchRowsNarrowMinImages) &&
                                    g.c_out >= p.tiles.four_position_channels &&
                                    width < (double)p.tiles.short_positions && (double)g.n > width;
        if (!wide_batch && !narrow_windows) return false;
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
