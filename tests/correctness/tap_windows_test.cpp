// Tap windows (runtime/phase_decomposition.h): the runs of a stride phase's outputs that read the
// same window of taps inside the input, which the batch-rows path runs one kernel call each.
// Checked against brute force over a grid of strides, dilations, kernels, sizes and pads
// (negative pads included: output_shape may crop past the input).
#include "phase_decomposition.h"  // runtime/

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

}  // namespace
