// Every policy the tuner can emit computes the reference's result: each value of each knob of the
// dispatch policy, alone and in the tuner's combinations, on small layers of every class whose
// pins change what runs (channels-first and channels-last, strides 2 and 8 for the interleaved
// kernels, depthwise, few and many output channels, wide batches, every rank), every dtype built.
// Then tune_layer end to end: its winner computes the same and a saved entry is what a plan runs.
#include "check.h"
#include "deconv/tuning.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <unistd.h>

namespace {

using deconv::DataFormat;
using deconv::DType;
using deconv_test::GenCase;

struct LayerClass {
    const char *what;
    int64_t n, groups, ci, co;
    int64_t x, k, s, pb, pe;  // innermost axis (outer axes: 3 inputs, kernel 2, stride 2)
    DataFormat format;
};

// Small layers on which each knob changes the plan: interleaved stride 2 (kernel 4, pad 1; kernel
// 3 for the short phase) and 8, blocked rows (16+ channels, 32+ groups), depthwise, wide batches
// of narrow rows (batch rows), channels-last with 64+ channels (exact row tiles, blocks).
const LayerClass kClasses[] = {
    {"few channels, stride 2", 2, 2, 3, 2, 9, 4, 2, 1, 1, DataFormat::NCX},
    {"short phase, stride 2", 1, 2, 2, 3, 9, 3, 2, 1, 0, DataFormat::NCX},
    {"stride 8", 1, 1, 2, 3, 5, 16, 8, 4, 4, DataFormat::NCX},
    {"depthwise", 2, 20, 1, 1, 21, 4, 2, 1, 1, DataFormat::NCX},
    {"many channels, long rows", 1, 1, 6, 20, 40, 4, 2, 1, 1, DataFormat::NCX},
    {"many channels, one tap", 1, 1, 6, 20, 7, 1, 1, 0, 0, DataFormat::NCX},
    {"channels-last, wide batch", 17, 1, 4, 16, 3, 4, 2, 1, 1, DataFormat::NXC},
    {"channels-last, 64 channels", 1, 1, 4, 64, 11, 3, 1, 1, 1, DataFormat::NXC},
    {"channels-last, depthwise", 2, 12, 1, 1, 9, 4, 2, 1, 1, DataFormat::NXC},
    {"channels-last, 3 channels", 2, 1, 5, 3, 9, 3, 2, 1, 0, DataFormat::NXC},
};

GenCase class_case(const LayerClass &l, DType t, int rank, uint32_t seed) {
    std::mt19937 rng(seed);
    GenCase c;
    c.dtype = t;
    c.seed = seed;
    c.api = 0;
    c.format = l.format;
    c.p.grouped = true;
    c.p.input_shape = {l.n, l.groups * l.ci};
    c.p.filter_shape = {l.groups, l.ci, l.co};
    for (int a = 0; a < rank; a++) {
        const bool inner = a == rank - 1;
        c.p.input_shape.push_back(inner ? l.x : 3);
        c.p.filter_shape.push_back(inner ? l.k : 2);
        c.p.strides.push_back(inner ? l.s : 2);
        c.p.pads_begin.push_back(inner ? l.pb : 1);
        c.p.pads_end.push_back(inner ? l.pe : 0);
    }
    c.input = deconv_test::random_values(t, deconv_ref::product(c.p.input_shape), rng);
    c.filter = deconv_test::random_values(t, deconv_ref::product(c.p.filter_shape), rng);
    return c;
}

// The case run through a plan made with `schedule` pinned.
::testing::AssertionResult check_with(const GenCase &g, const std::string &schedule, std::string *how = nullptr) {
    deconv_test::LibraryCase c = deconv_test::library_case(g);
    c.what += " schedule '" + schedule + "'";
    const deconv::Attributes attrs = c.attrs;
    const deconv::Op op = c.op;
    const auto shape_input = c.shape_input;
    const std::vector<int64_t> in_shape = c.in_shape, w_shape = c.w_shape;
    const DType t = c.dtype;
    c.call = [=](const deconv::ConstTensorView &in, const deconv::ConstTensorView &w, const deconv::TensorView &out) {
        deconv::ExecOptions e;
        e.schedule = schedule;
        e.use_schedule_database = false;
        const deconv::Plan plan = deconv::Plan::create(op, t, in_shape, w_shape, attrs, shape_input, e);
        if (how) *how = plan.describe();
        plan.run(in, w, out);
    };
    return deconv_test::run_and_check(c);
}

// The knobs' values on two threads (the slices and slabs need them), each class, rank and dtype.
TEST(TunedPolicies, EveryKnobValueMatchesTheReference) {
    deconv::set_cpu_threads(2);
    int checked = 0;
    uint32_t seed = 5;
    // f16 runs its f32 plan with the same pins (CombinedPinsMatchTheReference covers it).
    for (DType t : {DType::f32, DType::bf16, DType::i8}) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (const LayerClass &l : kClasses) {
                const GenCase g = class_case(l, t, rank, seed++);
                for (const std::string &knob : deconv::schedule_knobs()) {
                    for (const std::string &v : deconv::schedule_knob_values(knob)) {
                        EXPECT_TRUE(check_with(g, knob + "=" + v)) << l.what << ", rank " << rank;
                        checked++;
                    }
                }
            }
        }
    }
    deconv::set_cpu_threads(0);
    EXPECT_GE(checked, 1000);
}

// Combinations as the tuner reaches them (one knob after another on top of the last winner).
TEST(TunedPolicies, CombinedPinsMatchTheReference) {
    const char *combos[] = {
        "route=channels_last channel_block=64 row_slabs=1 exact_row_tiles=off",
        "route=channels_last batch_rows=on channel_block=0 serial=on",
        "route=positions interleave=blocked interleaved_tail=off bordered_input=on",
        "route=positions interleave=plain exact_groups=off edge_windows=off group_slices=4",
        "route=channels bordered_input=off channel_block=192 serial=off",
        "interleave=blocked channels_in_rows=off short_phase=off group_slices=0",
    };
    deconv::set_cpu_threads(2);
    int checked = 0;
    uint32_t seed = 900;
    for (DType t : {DType::f32, DType::bf16, DType::f16}) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (const LayerClass &l : kClasses) {
                const GenCase g = class_case(l, t, rank, seed++);
                for (const char *combo : combos) {
                    EXPECT_TRUE(check_with(g, combo)) << l.what << ", rank " << rank;
                    checked++;
                }
            }
        }
    }
    deconv::set_cpu_threads(0);
    EXPECT_GE(checked, 100);
}

// Pins change what runs: describe() shows the pinned route and blocks.
TEST(TunedPolicies, PinsChangeThePlan) {
    if (!deconv_test::dtype_built(DType::f32) || !deconv_test::rank_built(2)) GTEST_SKIP() << "needs f32 2D kernels";
    const GenCase g = class_case(kClasses[4], DType::f32, 2, 77);
    std::string how;
    ASSERT_TRUE(check_with(g, "route=channels_last channel_block=32", &how));
    EXPECT_NE(how.find("channels-last twin"), std::string::npos) << how;
    EXPECT_NE(how.find("channel blocks of 32"), std::string::npos) << how;
    ASSERT_TRUE(check_with(g, "route=positions interleave=blocked", &how));
    EXPECT_NE(how.find("interleaved deconv_phase_conv_interleaved_blocked_s2_r2_f32"), std::string::npos) << how;
    ASSERT_TRUE(check_with(g, "route=positions interleave=off bordered_input=off", &how));
    EXPECT_EQ(how.find("interleaved"), std::string::npos) << how;
    EXPECT_NE(how.find("bounded deconv_phase_conv_r2_f32"), std::string::npos) << how;
    // Channels-last depthwise layers take the group-vectorized kernels; pinned channels_first, the
    // channels-first kernels (and, at stride 2, their interleaved ones); pinned channels, their own.
    const GenCase dw = class_case(kClasses[8], DType::f32, 2, 78);
    ASSERT_TRUE(check_with(dw, "", &how));
#if defined(__x86_64__)  // the group kernels are built for x86-64 only (generators/CMakeLists.txt)
    EXPECT_NE(how.find("kernel deconv_phase_conv_nxc_groups_interior_r2_f32"), std::string::npos) << how;
#endif
    ASSERT_TRUE(check_with(dw, "route=channels_first", &how));
    EXPECT_NE(how.find("channels-first twin"), std::string::npos) << how;
    EXPECT_NE(how.find("interleaved deconv_phase_conv_interleaved_s2_r2_f32"), std::string::npos) << how;
    ASSERT_TRUE(check_with(dw, "route=channels", &how));
    EXPECT_EQ(how.find("twin"), std::string::npos) << how;
    EXPECT_EQ(how.find("groups"), std::string::npos) << how;
}

// tune_layer: bounded time, a winner that computes the reference's result, and an entry that a
// plan then runs, named by describe().
TEST(TunedPolicies, TuneLayerSaveAndRun) {
    if (!deconv_test::dtype_built(DType::f32) || !deconv_test::rank_built(2)) GTEST_SKIP() << "needs f32 2D kernels";
    const GenCase g = class_case(kClasses[4], DType::f32, 2, 31);
    const deconv_test::LibraryCase c = deconv_test::library_case(g);
    deconv::TuneOptions o;
    o.max_seconds = 1.5;
    o.repeats = 3;
    int progress_calls = 0;
    o.progress = [&](double, const std::string &) { progress_calls++; };
    const deconv::TuneResult r = deconv::tune_layer(c.op, c.dtype, c.in_shape, c.w_shape, c.attrs, c.shape_input, o);
    EXPECT_GT(progress_calls, 0);
    EXPECT_GT(r.candidates, 1);
    EXPECT_EQ(r.rejected, 0);
    EXPECT_GT(r.default_ms, 0);
    EXPECT_GT(r.tuned_ms, 0);
    EXPECT_LT(r.seconds, 1.5 + 5.0);  // the budget, plus the last knob's and the final round's timing
    EXPECT_TRUE(check_with(g, r.schedule)) << r.schedule;

    const std::string db = testing::TempDir() + "tuned." + std::to_string(getpid()) + ".json";
    deconv::TuneResult pinned = r;
    pinned.schedule = "channel_block=64 route=channels_last";  // an entry whatever the search found
    deconv::save_schedule(db, c.op, c.dtype, c.in_shape, c.w_shape, c.attrs, c.shape_input, pinned, "class 4");
    deconv::load_schedules(db);
    const std::string how = deconv::Plan::create(c.op, c.dtype, c.in_shape, c.w_shape, c.attrs, c.shape_input).describe();
    deconv::clear_schedules();
    std::remove(db.c_str());
    EXPECT_NE(how.find("policy route=channels_last channel_block=64 from " + db + " entry 0"), std::string::npos) << how;
}

// TuneOptions::algorithm Auto: the untuned plan is the rules' (Winograd for this 2D layer of 32
// channels and 12 x 12 tiles per phase), the search tries the direct kernels' policies and the
// Winograd knobs, and every candidate passes the check against the direct result (the Winograd
// tolerance).
TEST(TunedPolicies, TuneWithWinogradAllowed) {
    if (!deconv_test::dtype_built(DType::f32) || !deconv_test::rank_built(2)) GTEST_SKIP() << "needs f32 2D kernels";
    deconv::Attributes a;
    a.strides = {2, 2};
    a.pads_begin = {1, 1};
    a.pads_end = {1, 1};
    deconv::TuneOptions o;
    // The search ends when its knobs do (1.5 s here); the budget only bounds slow runs (sanitizers,
    // emulation), which need the time to reach a second candidate.
    o.max_seconds = 10;
    o.repeats = 3;
    o.algorithm = deconv::Algorithm::Auto;
    const deconv::TuneResult r = deconv::tune_layer(deconv::Op::ConvolutionBackpropData, DType::f32, {1, 32, 48, 48},
                                                    {32, 32, 4, 4}, a, std::nullopt, o);
    EXPECT_NE(r.default_description.find("winograd F(4, 2)"), std::string::npos) << r.default_description;
    EXPECT_GT(r.candidates, 1);
    EXPECT_EQ(r.rejected, 0);
}

// tune_layer on a quantized layer (u8 x i8 -> u8, a bias given at each run, a scale and a relu):
// its candidates (the dot-product kernels' quads and pairs, the plain plans) all compute the
// untuned plan's output exactly, the winner does too on other data, and a saved entry is taken
// by plans of those types only.
// A float layer with a bias of its own 16-bit dtype and a relu (the epilogue in its kernels): the
// tuner's run arguments hold a bias of that dtype, and every candidate matches the untuned plan.
TEST(TunedPolicies, TuneFloatLayerWithHalfBias) {
    if (!deconv_test::dtype_built(DType::f16)) GTEST_SKIP() << "f16 is not in this build's matrix";
    using deconv::DataTypes;
    const DataTypes types{DType::f16, DType::f16, DType::f16};
    deconv::Attributes a;
    a.strides = {2, 2};
    a.pads_begin = {1, 1};
    a.pads_end = {1, 1};
    deconv::Epilogue e;
    e.bias = DType::f16;
    e.post_ops = {deconv::PostOp::eltwise(deconv::Eltwise::relu)};
    deconv::TuneOptions o;
    o.max_seconds = 10;
    o.repeats = 3;
    const deconv::TuneResult r = deconv::tune_layer(deconv::Op::GroupConvolutionBackpropData, types, {1, 16, 6, 6},
                                                    {1, 16, 16, 4, 4}, a, std::nullopt, e, o);
    EXPECT_GT(r.candidates, 1);
    EXPECT_EQ(r.rejected, 0);
    EXPECT_GT(r.tuned_ms, 0);
}

TEST(TunedPolicies, TuneQuantizedLayerSaveAndRun) {
    using deconv::DataTypes;
    const DataTypes types{DType::u8, DType::i8, DType::u8};
    const std::vector<int64_t> in = {1, 32, 6, 6}, w = {1, 32, 32, 3, 3};
    deconv::Attributes a;
    a.strides = {2, 2};
    a.pads_begin = {1, 1};
    a.pads_end = {1, 1};
    deconv::Epilogue e;
    e.scale_mode = deconv::ScaleMode::per_tensor;
    e.scales = {0.125f};
    e.bias = DType::f32;
    e.post_ops = {deconv::PostOp::eltwise(deconv::Eltwise::relu)};
    deconv::TuneOptions o;
    o.max_seconds = 10;  // the knobs end first; the budget bounds slow runs (sanitizers, emulation)
    o.repeats = 3;
    const deconv::TuneResult r = deconv::tune_layer(deconv::Op::GroupConvolutionBackpropData, types, in, w, a,
                                                    std::nullopt, e, o);
    EXPECT_GT(r.candidates, 1);
    EXPECT_EQ(r.rejected, 0);
    EXPECT_GT(r.tuned_ms, 0);

    // The winner against the untuned plan on other data.
    deconv::ExecOptions tuned, untuned;
    tuned.use_schedule_database = untuned.use_schedule_database = false;
    tuned.schedule = r.schedule;
    const auto make = [&](const deconv::ExecOptions &x) {
        return deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, types, in, w, a, std::nullopt, x, e);
    };
    const deconv::Plan p_tuned = make(tuned), p_untuned = make(untuned);
    std::vector<uint8_t> x(1 * 32 * 6 * 6), y1(p_tuned.shape().output_shape[1] * 11 * 11), y2(y1.size());
    std::vector<int8_t> wt(32 * 32 * 9);
    std::vector<float> bias(32);
    for (size_t i = 0; i < x.size(); i++) x[i] = (uint8_t)(i * 37 % 251);
    for (size_t i = 0; i < wt.size(); i++) wt[i] = (int8_t)((int)(i * 29 % 255) - 127);
    for (size_t i = 0; i < bias.size(); i++) bias[i] = (float)i - 16.0f;
    ASSERT_EQ(p_tuned.shape().output_shape, (std::vector<int64_t>{1, 32, 11, 11}));
    deconv::RunArgs args;
    args.bias = bias.data();
    const deconv::ConstTensorView xv(x.data(), DType::u8, in), wv(wt.data(), DType::i8, w);
    p_tuned.run(xv, wv, deconv::TensorView{y1.data(), DType::u8, {1, 32, 11, 11}, {}}, args);
    p_untuned.run(xv, wv, deconv::TensorView{y2.data(), DType::u8, {1, 32, 11, 11}, {}}, args);
    EXPECT_EQ(y1, y2) << r.schedule;
    EXPECT_GT(std::set<uint8_t>(y2.begin(), y2.end()).size(), 8u);  // not a trivial output

    const std::string db = testing::TempDir() + "tuned_u8." + std::to_string(getpid()) + ".json";
    deconv::TuneResult pinned = r;
    pinned.schedule = "quant_dots=off";  // an entry whatever the search found
    deconv::save_schedule(db, deconv::Op::GroupConvolutionBackpropData, types, in, w, a, std::nullopt, pinned, "u8");
    deconv::load_schedules(db);
    const std::string how = make(deconv::ExecOptions{}).describe();
    const std::string f32 =
        deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, DType::f32, in, w, a).describe();
    deconv::clear_schedules();
    std::remove(db.c_str());
    EXPECT_NE(how.find("from " + db + " entry 0"), std::string::npos) << how;
    EXPECT_NE(how.find("accumulates on the"), std::string::npos) << how;  // quant_dots=off: a plain plan
    EXPECT_NE(f32.find("from heuristics"), std::string::npos) << f32;
}

TEST(TunedPolicies, TuneOptionsAreChecked) {
    deconv::TuneOptions o;
    o.max_seconds = 0;
    EXPECT_THROW(deconv::tune_layer(deconv::Op::GroupConvolutionBackpropData, DType::f32, {1, 2, 4, 4}, {1, 2, 2, 3, 3},
                                    {}, std::nullopt, o),
                 deconv::Error);
    o.max_seconds = 1;
    o.repeats = -1;
    EXPECT_THROW(deconv::tune_layer(deconv::Op::GroupConvolutionBackpropData, DType::f32, {1, 2, 4, 4}, {1, 2, 2, 3, 3},
                                    {}, std::nullopt, o),
                 deconv::Error);
}

}  // namespace
