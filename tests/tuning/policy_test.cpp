// The dispatch policy as text: every knob and value round-trips, and what is not a knob or a
// value is refused by name.
#include "plan/policy.h"

#include "kernels/halide_glue.h"

#include "dispatch/implementations.h"

#include "deconv/deconv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <vector>
#include <string>

namespace {

using deconv::detail::Policy;

std::string error_of(const std::string &text) {
    try {
        deconv::detail::parse_policy(text, "test");
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), deconv::ErrorKind::InvalidArgument);
        return e.what();
    }
    return "no error";
}

TEST(Policy, EveryKnobValueRoundTrips) {
    int pairs = 0;
    for (const std::string &knob : deconv::detail::policy_knobs()) {
        const auto values = deconv::detail::policy_knob_values(knob);
        ASSERT_GE(values.size(), 2u) << knob;
        EXPECT_EQ(values.front(), "auto") << knob;
        for (const std::string &v : values) {
            const Policy p = deconv::detail::parse_policy(knob + "=" + v, "test");
            EXPECT_EQ(deconv::detail::policy_knob_value(p, knob), v);
            EXPECT_EQ(deconv::detail::format_policy(p), v == "auto" ? "" : knob + "=" + v);
            EXPECT_EQ(deconv::detail::parse_policy(deconv::detail::format_policy(p), "again"), p);
            pairs++;
        }
    }
    EXPECT_GE(pairs, 40);
}

// The search's CPU variants start at the default one and stop at DECONV_CPU_VARIANT (CI runs this
// under avx2 and sse41 too): a capped tuning files the best of the capped machine, not a variant
// above the cap that the CPU happens to run.
TEST(Policy, CpuVariantSearchStaysWithinTheCap) {
    const auto values = deconv::detail::policy_knob_values("cpu_variant");
    ASSERT_GE(values.size(), 2u);
    EXPECT_EQ(values[1], deconv::cpu_variant());
    const int best = deconv::detail::cpu_variant_rank(deconv::cpu_variant());
    for (size_t i = 1; i < values.size(); i++) EXPECT_GE(deconv::detail::cpu_variant_rank(values[i]), best) << values[i];
}

TEST(Policy, OverlayKeepsPinsOfBoth) {
    const Policy base = deconv::detail::parse_policy("route=channels_last channel_block=64", "base");
    const Policy over = deconv::detail::parse_policy("channel_block=0,serial=on", "over");
    EXPECT_EQ(deconv::detail::format_policy(deconv::detail::overlay(base, over)),
              "route=channels_last serial=on channel_block=0");
    EXPECT_TRUE(Policy().all_auto());
    EXPECT_FALSE(base.all_auto());
}

TEST(Policy, RefusesWhatIsNoKnobOrValue) {
    EXPECT_EQ(error_of("route=diagonal"),
              "test: schedule knob route does not take the value 'diagonal' (values: auto, positions, channels, "
              "channels_last, channels_first, groups)");
    EXPECT_EQ(error_of("speed=max").rfind("test: unknown schedule knob 'speed' (known: algorithm, winograd_tile, winograd_slice_kib, implementation, route, interleave", 0), 0u)
        << error_of("speed=max");
    EXPECT_EQ(error_of("serial"), "test: 'serial' is not knob=value");
    EXPECT_NE(error_of("channel_block=-3").find("does not take the value '-3'"), std::string::npos);
    EXPECT_NE(error_of("row_slabs=99999999999").find("does not take the value"), std::string::npos);
    EXPECT_NE(error_of("group_slices=").find("does not take the value ''"), std::string::npos);
}

TEST(Policy, EnvironmentSwitchesArePins) {
    setenv("DECONV_BORDERED_INPUT", "0", 1);
    setenv("DECONV_NCX_SCHEDULE", "channels_last", 1);
    setenv("DECONV_ROW_SLABS", "4", 1);
    const Policy p = deconv::detail::policy_from_environment();
    unsetenv("DECONV_BORDERED_INPUT");
    unsetenv("DECONV_NCX_SCHEDULE");
    unsetenv("DECONV_ROW_SLABS");
    EXPECT_EQ(deconv::detail::format_policy(p), "route=channels_last bordered_input=off row_slabs=4");
    EXPECT_TRUE(deconv::detail::policy_from_environment().all_auto());
}

TEST(Policy, ExecOptionsScheduleIsChecked) {
    deconv::ExecOptions e;
    e.schedule = "route=sideways";
    try {
        deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, deconv::DType::f32, {1, 2, 5, 5},
                             {1, 2, 2, 3, 3}, {}, std::nullopt, e);
        FAIL() << "an unknown value was accepted";
    } catch (const deconv::Error &err) {
        EXPECT_EQ(std::string(err.what()),
                  "ExecOptions::schedule: schedule knob route does not take the value 'sideways' (values: auto, "
                  "positions, channels, channels_last, channels_first, groups)");
    }
}

// The CPU variant is a plan's choice: a plan pinned to each built variant this CPU runs says so
// in describe() and computes what the default plan computes (small integers: exact in f32 on
// every variant); a variant this build or CPU lacks is refused when the plan is made, by name.
TEST(Policy, CpuVariantIsAPlanChoice) {
    using deconv::DType;
    const std::vector<int64_t> in{1, 16, 6, 6}, w{1, 16, 16, 3, 3};
    deconv::Attributes a;
    a.strides = {2, 2};
    const deconv::Plan base = deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, DType::f32, in, w, a);
    std::vector<float> x(16 * 36), f(16 * 16 * 9);
    for (size_t i = 0; i < x.size(); i++) x[i] = float((int)(i * 7 % 5) - 2);
    for (size_t i = 0; i < f.size(); i++) f[i] = float((int)(i * 3 % 7) - 3);
    size_t out_count = 1;
    for (int64_t v : base.shape().output_shape) out_count *= (size_t)v;
    std::vector<float> want(out_count);
    base.run(x.data(), f.data(), want.data());
    int ran = 0;
    for (const std::string &v : deconv::built_cpu_variants()) {
        deconv::ExecOptions e;
        e.schedule = "cpu_variant=" + v;
        try {
            const deconv::Plan p = deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, DType::f32, in, w, a,
                                                        std::nullopt, e);
            EXPECT_NE(p.describe().find("(" + v + ", "), std::string::npos) << p.describe();
            std::vector<float> got(out_count, -1.0f);
            p.run(x.data(), f.data(), got.data());
            EXPECT_EQ(got, want) << v;
            ran++;
        } catch (const deconv::Error &err) {
            // Only a variant this CPU cannot run is refused, saying so.
            EXPECT_EQ(err.kind(), deconv::ErrorKind::Unsupported);
            EXPECT_NE(std::string(err.what()).find("cpu_variant=" + v + " (heuristics + options): this CPU does not run it"),
                      std::string::npos)
                << err.what();
        }
    }
    EXPECT_GE(ran, 1);
    deconv::ExecOptions e;
    e.schedule = "cpu_variant=pentium";
    try {
        deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, DType::f32, in, w, a, std::nullopt, e);
        FAIL() << "an unknown variant was accepted";
    } catch (const deconv::Error &err) {
        EXPECT_EQ(err.kind(), deconv::ErrorKind::InvalidArgument);
        EXPECT_NE(std::string(err.what()).find("cpu_variant does not take the value 'pentium'"), std::string::npos)
            << err.what();
    }
    // A known variant this build lacks (the x86-64 and ARM64 names of the other architecture).
    for (const char *other : {"neon", "sse41"}) {
        const std::vector<std::string> built = deconv::built_cpu_variants();
        if (std::find(built.begin(), built.end(), other) != built.end()) continue;
        e.schedule = std::string("cpu_variant=") + other;
        try {
            deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, DType::f32, in, w, a, std::nullopt, e);
            FAIL() << other << " was accepted";
        } catch (const deconv::Error &err) {
            // (On the other architecture the name is unknown: refused as a value.)
            EXPECT_NE(std::string(err.what()).find(other), std::string::npos) << err.what();
        }
    }
}

// The implementation knob names the implementation list, in its order; a plan pinned to one runs
// it where it takes the layer (describe() names the implementations that run), and the rest of
// the list where it does not.
TEST(Policy, ImplementationKnobIsTheList) {
    std::vector<std::string> names{"auto"};
    for (const deconv::detail::Implementation &i : deconv::detail::cpu_implementations()) names.push_back(i.name);
    EXPECT_EQ(deconv::detail::policy_knob_values("implementation"), names);
    const std::vector<int64_t> in{16, 64, 4, 4}, w{1, 64, 32, 4, 4};
    deconv::Attributes a;
    a.strides = {2, 2};
    a.pads_begin = a.pads_end = {1, 1};
    const auto plan = [&](const std::string &pin) {
        deconv::ExecOptions e;
        e.schedule = pin;
        return deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, deconv::DType::f32, in, w, a,
                                    std::nullopt, e)
            .describe();
    };
    EXPECT_NE(plan("implementation=phase_kernels").find("implementation phase_kernels;"), std::string::npos);
    EXPECT_NE(plan("implementation=channels_last_twin").find("implementation channels_last_twin > "),
              std::string::npos);
    // Batch rows need channels-last data: this channels-first layer's list goes on after them.
    EXPECT_NE(plan("implementation=batch_rows").find("implementation phase_kernels;"), std::string::npos);
}

}  // namespace
