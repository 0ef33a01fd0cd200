// Tap windows (runtime/layer/phase_decomposition.h): the runs of a stride phase's outputs that read the
// same window of taps inside the input, which the batch-rows path and the outer axes of 2D and
// 3D layers (runtime/cpu/cpu_executor.cpp, policy tap_windows) run one kernel call each. Checked
// against brute force over a grid of strides, dilations, kernels, sizes and pads (negative pads
// included: output_shape may crop past the input), and the layers run in windows against the
// reference.
#include "layout_cases.h"
#include "layer/phase_decomposition.h"  // runtime/

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace {

using deconv::detail::AxisPhase;
using deconv::detail::TapWindow;

TEST(TapWindows, CoverEveryOutputWithExactlyItsTapsInside) {
    int phases = 0;
    for (int64_t s = 1; s <= 4; s++)
        for (int64_t d = 1; d <= 3; d++)
            for (int64_t k = 1; k <= 5; k++)
                for (int64_t x = 1; x <= 6; x++)
                    for (int64_t pad = -2; pad <= 4; pad++) {
                        const int64_t y = (x - 1) * s + (k - 1) * d + 1 - 2 * pad;
                        if (y < 1) continue;
                        for (const AxisPhase &a : deconv::detail::decompose_axis(s, d, k, x, y, pad)) {
                            const std::string at = "s " + std::to_string(s) + " d " + std::to_string(d) + " k " +
                                                   std::to_string(k) + " x " + std::to_string(x) + " pad " +
                                                   std::to_string(pad) + " phase " + std::to_string(a.out_first);
                            int64_t next_q = 0, pairs = 0;
                            for (const TapWindow &w : deconv::detail::tap_windows(a, x)) {
                                ASSERT_EQ(w.q_first, next_q) << at;
                                ASSERT_GT(w.q_count, 0) << at;
                                next_q += w.q_count;
                                pairs += w.q_count * w.j_count;
                                for (int64_t q = w.q_first; q < w.q_first + w.q_count; q++)
                                    for (int64_t j = 0; j < a.tap_count; j++) {
                                        const int64_t in = q + a.in_offset - j * a.in_step;
                                        const bool inside = in >= 0 && in < x;
                                        const bool in_window = j >= w.j_first && j < w.j_first + w.j_count;
                                        ASSERT_EQ(inside, in_window) << at << " q " << q << " j " << j;
                                        // The tap the window names is the one the output really takes.
                                        if (inside) ASSERT_EQ(in * s + (a.tap_first + j * a.tap_step) * d,
                                                              a.out_first + q * s + pad) << at;
                                    }
                            }
                            EXPECT_EQ(next_q, a.out_count) << at;
                            EXPECT_EQ(pairs, a.pairs) << at;
                            phases++;
                        }
                    }
    EXPECT_GT(phases, 1000);
}

// Layers whose outer axes run in tap windows, pinned on, off and by the rule, against the
// reference: ranks 2-3, both layouts, strides 1-3, kernels 2-5 (dilated 2 at stride 1), pads
// from none to most of the kernel, output_padding (at kernel = stride = 2: one-tap phases whose
// last output only receives zeros, a window of no taps), two images of one or three groups
// (slices may split them), with and without the zero-bordered copy, every built dtype. Outer
// axes of 1 to 8 inputs: shorter than the kernel (no window has every tap) and longer. A pin
// shows in the plan at stride 1 (flat rows, which merge the rows, pinned off); the rule windows a
// layer of 32 -> 32 channels, 8x8, kernel 4 stride 1.
TEST(TapWindows, OuterAxesAgainstReference) {
    using namespace layout_cases;
    struct Axes {
        int64_t k, s, d, pad, output_padding;
    };
    const Axes axes[] = {{4, 1, 1, 0, 0}, {3, 1, 2, 1, 0}, {5, 2, 1, 1, 1}, {4, 2, 1, 0, 0}, {5, 3, 1, 2, 2}, {2, 2, 1, 0, 1}};
    int ran = 0, failed = 0, plans = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 seeds(61);
        for (int rank : {2, 3}) {
            if (!deconv_test::rank_built(rank)) continue;
            for (DataFormat format : {DataFormat::NCX, DataFormat::NXC})
                for (const Axes &a : axes)
                    for (const char *pin :
                         {"tap_windows=on flat_rows=off", "tap_windows=on bordered_input=off", "tap_windows=off"}) {
                        const int64_t x = 1 + (int64_t)(seeds() % 8), groups = ran % 2 ? 3 : 1;
                        deconv_ref::Problem p =
                            grouped_problem(2, groups, 3, 8 + (int64_t)(seeds() % 9), true, rank,
                                            {6, a.k, a.s, a.pad, a.output_padding}, {x, a.k, a.s, a.pad, a.output_padding});
                        p.dilations.assign(rank, a.d);
                        check_random_case(t, seeds(), ran % 3, p, ran, failed, pin, format);
                        if (a.s == 1 && a.k > x && std::string(pin) == "tap_windows=on flat_rows=off")
                            plans += expect_plan_runs(t, p, "tap windows", pin, format);
                    }
        }
    }
    // The rule: f32, both layouts, ranks 2-3.
    for (int rank : {2, 3}) {
        if (!deconv_test::rank_built(rank)) continue;
        for (DataFormat format : {DataFormat::NCX, DataFormat::NXC}) {
            const deconv_ref::Problem p = grouped_problem(1, 1, 32, 32, false, rank, {8, 4, 1, 0}, {8, 4, 1, 0});
            check_random_case(DType::f32, deconv_test::sweep_seed(DType::f32, rank, 7100 + ran), ran % 3, p, ran, failed,
                              "", format);
            plans += expect_plan_runs(DType::f32, p, "tap windows", "", format);
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_GT(plans, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

}  // namespace
