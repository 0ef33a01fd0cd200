// The tap-row kernels (generators/schedules/cpu_tap_rows_schedule.h): channels-last interior calls
// that sum one tap row at a time over bands of output rows. Pinned on (policy tap_rows=on), every
// branch against the reference: channel counts under a vector (scalar), one vector and a shifted
// one, the full channel tile and past it; rows narrower than the position tile and not a multiple
// of it (the guarded last tile); heights under and past a band of rows; strides, dilations, pads
// (the tap windows of the outer axes call with a row's taps only), groups and batches; ranks 2-3,
// both layouts (channels-first layers on their channels-last twin), f32 and the 16-bit dtypes,
// which run as f32. Then the rule (runtime/dispatch/layer_classes.cpp, tap_rows_class) on a layer of its
// class and one below it.
#include "layout_cases.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace {

using namespace layout_cases;

// Whether this build has the tap-row kernels (x86-64, f32, ranks 2-3).
bool tap_rows_built(int rank) {
#if defined(__x86_64__)
    return deconv_test::dtype_built(DType::f32) && deconv_test::rank_built(rank) && rank >= 2;
#else
    (void)rank;
    return false;
#endif
}

// On the channels-last kernels (few output channels per group would take the channels-first
// twin or the channel dots).
const char *const kPin = "tap_rows=on route=channels_last";

TEST(TapRows, PinnedOnAgainstReference) {
    struct Shape {
        int64_t groups, cin, cout, width, height, k, s, d, pad;
    };
    const Shape shapes[] = {
        {1, 3, 3, 7, 5, 3, 1, 1, 1},     // scalar: fewer channels than a vector (and than the dots take)
        {2, 3, 8, 13, 9, 3, 2, 1, 1},    // half an AVX-512 vector, one AVX2 vector
        {1, 7, 16, 3, 1, 2, 1, 1, 0},    // one vector, a row under the position tile, one row
        {1, 9, 24, 13, 6, 4, 2, 1, 1},   // a vector and a shifted one, stride 2
        {1, 33, 64, 6, 4, 3, 1, 2, 2},   // the full tile, dilated, a whole band
        {1, 17, 72, 11, 7, 5, 3, 1, 2},  // past the full tile (shifted), stride 3
        {2, 6, 100, 1, 10, 3, 1, 1, 0},  // rows of one position, two bands and a part
    };
    int ran = 0, failed = 0, plans = 0, i = 0;
    for (int rank : {2, 3}) {
        if (!deconv_test::rank_built(rank)) continue;
        for (const Shape &s : shapes) {
            i++;
            // Rank 3: the outer planes as tall as the rows' axis is, at most 4.
            const AxisSpec inner{s.width, s.k, s.s, s.pad}, outer{rank == 3 ? std::min<int64_t>(s.height, 4) : s.height,
                                                                   s.k, s.s, s.pad};
            deconv_ref::Problem p = grouped_problem(1 + i % 2, s.groups, s.cin, s.cout, s.groups > 1, rank, inner, outer);
            if (rank == 3) p.input_shape[3] = s.height;  // the rows' axis (axis 1 of three)
            p.dilations.assign(rank, s.d);
            for (DType t : {DType::f32, DType::f16, DType::bf16}) {
                if (!deconv_test::dtype_built(t)) continue;
                for (DataFormat format : {DataFormat::NXC, DataFormat::NCX}) {
                    if (t != DType::f32 && format == DataFormat::NCX) continue;
                    check_random_case(t, deconv_test::sweep_seed(t, rank, 8300 + i), ran % 3, p, ran, failed,
                                      kPin, format, "case " + std::to_string(i) + ": ");
                }
            }
            if (tap_rows_built(rank)) plans += expect_plan_runs(DType::f32, p, "nxc_tap_rows", kPin);
        }
    }
    EXPECT_GT(ran, 0);
    if (tap_rows_built(2) && deconv_test::speed_families_here()) EXPECT_GT(plans, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// The rule: 512 -> 64 channels, kernel 3, 20x20 (1152 KiB of weights per call over three tap
// rows, in AVX-512's blocks of 64 channels) runs the tap-row kernels, channels last and on the channels-first layer's twin; 64 -> 64
// (144 KiB) does not, nor 12x12 (phases of fewer than 16 rows), nor a layer of one tap row
// (kernel 1 along the rows' axis), nor a pin off.
TEST(TapRows, RuleTakesLayersOfManyWeights) {
    if (!tap_rows_built(2)) GTEST_SKIP() << "no tap-row kernels in this build (x86-64, f32, ranks 2-3)";
    int ran = 0, failed = 0;
    const deconv_ref::Problem many = grouped_problem(1, 1, 512, 64, false, 2, {20, 3, 1, 1}, {20, 3, 1, 1});
    const deconv_ref::Problem few = grouped_problem(1, 1, 64, 64, false, 2, {20, 3, 1, 1}, {20, 3, 1, 1});
    const deconv_ref::Problem short_rows = grouped_problem(1, 1, 512, 64, false, 2, {20, 3, 1, 1}, {12, 3, 1, 1});
    const deconv_ref::Problem one_row = grouped_problem(1, 1, 1024, 64, false, 2, {20, 3, 1, 1}, {20, 1, 1, 0});
    // On 16 vector registers (AVX2, SSE4.1) channel blocks are one tile of 16 or 8 channels, whose
    // weights (288 or 144 KiB here) stay in L2: no tap rows there.
    const bool many_registers = deconv::cpu_variant() == "avx512";
    for (DataFormat format : {DataFormat::NXC, DataFormat::NCX}) {
        const std::string how = plan_of(DType::f32, many, "", format);
        if (unpinned(how) &&
            (format == DataFormat::NXC || how.find("channels-last twin") != std::string::npos))
            EXPECT_EQ(how.find("nxc_tap_rows") != std::string::npos, many_registers) << how;
        check_random_case(DType::f32, deconv_test::sweep_seed(DType::f32, 2, 8400), ran % 3, many, ran, failed, "", format);
    }
    EXPECT_EQ(plan_of(DType::f32, few).find("nxc_tap_rows"), std::string::npos) << plan_of(DType::f32, few);
    EXPECT_EQ(plan_of(DType::f32, one_row).find("nxc_tap_rows"), std::string::npos) << plan_of(DType::f32, one_row);
    EXPECT_EQ(plan_of(DType::f32, short_rows).find("nxc_tap_rows"), std::string::npos) << plan_of(DType::f32, short_rows);
    EXPECT_EQ(plan_of(DType::f32, many, "tap_rows=off").find("nxc_tap_rows"), std::string::npos);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// The rule's second class: phase rows narrower than the four-position tile on average (one
// image, 96 -> 64 channels: a 2x2 input at kernel 4 stride 2, phase rows of 3 and 2; a 3x3 input
// at kernel 3 stride 1 pad 2, rows of 3) runs the tap-row kernels, channels last and on the twin;
// a 4x4 input at kernel 4 stride 2 (rows of 5 and 4) does not. Each against the reference.
TEST(TapRows, RuleTakesNarrowPhaseRows) {
    if (!tap_rows_built(2)) GTEST_SKIP() << "no tap-row kernels in this build (x86-64, f32, ranks 2-3)";
    int ran = 0, failed = 0, checked = 0;
    struct Case {
        AxisSpec axis;
        bool narrow;
    };
    for (const Case &c : {Case{{2, 4, 2, 1}, true}, Case{{3, 3, 1, 2}, true}, Case{{4, 4, 2, 1}, false}}) {
        const deconv_ref::Problem p = grouped_problem(1, 1, 96, 64, false, 2, c.axis, c.axis);
        for (DataFormat format : {DataFormat::NXC, DataFormat::NCX}) {
            const std::string how = plan_of(DType::f32, p, "", format);
            if (unpinned(how) && deconv_test::speed_families_here() &&
                (format == DataFormat::NXC || how.find("channels-last twin") != std::string::npos)) {
                EXPECT_EQ(how.find("nxc_tap_rows") != std::string::npos, c.narrow) << how;
                checked++;
            }
            check_random_case(DType::f32, deconv_test::sweep_seed(DType::f32, 2, 8500 + ran), ran % 3, p, ran, failed, "",
                              format);
        }
    }
    if (deconv_test::speed_families_here()) EXPECT_GT(checked, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

}  // namespace
