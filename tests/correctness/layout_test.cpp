// The channels-last data format (Attributes::data_format = NXC) of the OpenVINO backprop ops,
// GroupConvolutionBackpropData and ConvolutionBackpropData: data [N, X1..XD, C] and output
// [N, Y1..YD, C]; filters keep their layouts ([G, C_IN, C_OUT, K...] / [C_IN, C_OUT, K...]).
// The reference knows only NCX: this file transposes the input to NCX for it and the reference
// result to NXC for the comparison.
//
//   Shards/LayoutSweep      seeded random problems per dtype and rank (every built dtype; ranks
//                           1-3; groups incl. depthwise; strides 1-4, dilations 1-3, kernels
//                           1-5; asymmetric pads, output_padding, output_shape with every
//                           auto_pad; batch 1-3; wide channel counts and rows up to 40), through
//                           the free functions, a Plan and strided views.
//   LayoutSweepCoverage.*   the sweep's generator covers what it claims (every width below,
//                           rows of every length 1..40).
//   LayoutWide.*            every output-channel width per group 1, 3, 5, 8, 13, 16, 32, 48, 64,
//                           67, 96 x rows of 1, 5, 17, 40 positions, every built dtype (the
//                           channels-last kernels' scalar, 4-lane, vector and full-tile paths
//                           and their tails).
//                           DepthwiseEveryGroupTile and DepthwiseInterleavedEveryTile: the
//                           group-vectorized kernels of depthwise layers, per phase and interleaved;
//                           DepthwiseChannelsFirstOnTheTwin: channels-first ones routed to them;
//                           RoutesByTappedPhases: kernels below the stride and 3D layers of
//                           8-15 channels, channels-first or twinned by their phases;
//                           RowBlocksAndOneTapTiles: the blocked 1D kernel by threads, one-tap
//                           layers on channel tiles;
//                           FewOutputChannelsEveryDotTile: the kernels that vectorize input channels.
//   LayoutViews.*           non-dense NXC views with Plan::run's view overload: channel slices of
//                           concatenated tensors, padded rows, the output's gaps untouched.
//   LayoutFormat.*          NCX set explicitly equals the default; NXC really is channels last.
#include "check.h"
#include "layout_support.h"

#include <chrono>
#include <functional>
#include <tuple>

namespace {

using deconv::DataFormat;
using deconv::DType;
using deconv_test::Buffer;
using deconv_test::vec_str;
using deconv_test::ncx_to_nxc;
using deconv_test::nxc_shape;
using deconv_test::result_in;

// ---------------------------------------------------------------- layouts (test-side)

deconv::Attributes nxc_attrs(const deconv_ref::Problem &p) {
    deconv::Attributes a = deconv_test::to_lib_attrs(p);
    a.data_format = DataFormat::NXC;
    return a;
}

// ---------------------------------------------------------------- one problem

// A problem (NCX shapes, as the reference sees them) as an NXC case of the shared runner.
deconv_test::GenCase nxc_case(DType t, uint64_t seed, int api, const deconv_ref::Problem &p, std::mt19937 &rng) {
    deconv_test::GenCase c;
    c.format = DataFormat::NXC;
    c.dtype = t;
    c.seed = seed;
    c.api = api;
    c.p = p;
    c.input = deconv_test::random_values(t, deconv_ref::product(p.input_shape), rng);
    c.filter = deconv_test::random_values(t, deconv_ref::product(p.filter_shape), rng);
    return c;
}

// ---------------------------------------------------------------- the sweep

constexpr int kCasesPerShard = 96;
using deconv_test::kWideChannels;

// The shared generator's wide profile, channels last; the salt keeps its problems apart from
// the NCX sweep's.
constexpr deconv_test::CaseSpec kLayoutSpec{deconv_test::CaseOp::Backprop, deconv_test::CaseFormat::NXC,
                                            /*wide=*/true, 0x1A7007C4A11ull};

deconv_test::GenCase make_lcase(DType t, int rank, int index) {
    return deconv_test::make_case(kLayoutSpec, t, rank, index);
}

using deconv_test::Shard;

class LayoutSweep : public ::testing::TestWithParam<Shard> {};

// Runs problem `p` (NCX shapes) as NXC (or `format`) on random data drawn from `seed`, through
// API `api`: counted in `ran`, failures in `failed` (the first dozen reported).
void check_random_case(DType t, uint64_t seed, int api, const deconv_ref::Problem &p, int &ran, int &failed,
                       const std::string &schedule = "", DataFormat format = DataFormat::NXC) {
    std::mt19937 rng(static_cast<uint32_t>(seed));
    ran++;
    deconv_test::GenCase c = nxc_case(t, seed, api, p, rng);
    c.format = format;
    c.exec.schedule = schedule;
    const auto r = deconv_test::run_and_check(c);
    if (!r && ++failed <= 12) ADD_FAILURE() << r.message();
}

TEST_P(LayoutSweep, NxcMatchesReference) {
    const DType t = GetParam().dtype;
    const int rank = GetParam().rank;
    if (!deconv_test::dtype_built(t)) GTEST_SKIP() << deconv_test::dt_str(t) << " not built";
    if (!deconv_test::rank_built(rank)) GTEST_SKIP() << "rank " << rank << " not built";
    int failed = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCasesPerShard; i++) {
        const auto r = deconv_test::run_and_check(make_lcase(t, rank, i));
        if (!r && ++failed <= 10) ADD_FAILURE() << "layout case #" << i << ": " << r.message();
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(failed, 0) << failed << " of " << kCasesPerShard << " cases failed";
    std::printf("[ shard    ] NXC %s rank %d: %d cases, %.2f s\n", deconv_test::dt_str(t), rank,
                kCasesPerShard, secs);
}

INSTANTIATE_TEST_SUITE_P(Shards, LayoutSweep, ::testing::ValuesIn(deconv_test::shards_of()),
                         deconv_test::shard_name);

// The generator covers what it claims (no library involved).
TEST(LayoutSweepCoverage, GeneratorCoversTheSpace) {
    std::set<int64_t> couts, depthwise_groups, rows;
    int depthwise = 0, grouped = 0, conv = 0, modes_with_os[4] = {0, 0, 0, 0}, apis[3] = {0, 0, 0};
    int batch3 = 0, stride4 = 0, dil3 = 0, k5 = 0, asym = 0, op_ge_s = 0, neg_total = 0;
    for (DType t : deconv_test::all_dtypes())
        for (int rank = 1; rank <= 3; rank++)
            for (int i = 0; i < kCasesPerShard; i++) {
                const deconv_test::GenCase c = make_lcase(t, rank, i);
                const auto r = deconv_ref::resolve(c.p);
                couts.insert(r.c_out);
                rows.insert(r.out_spatial.back());
                if (c.p.grouped && r.c_in == 1 && r.c_out == 1 && r.groups >= 3) {
                    depthwise++;
                    depthwise_groups.insert(r.groups);
                }
                grouped += c.p.grouped;
                conv += !c.p.grouped;
                if (c.p.output_shape) modes_with_os[static_cast<int>(c.p.auto_pad)]++;
                apis[c.api]++;
                batch3 += r.n == 3;
                for (int a = 0; a < rank; a++) {
                    stride4 += r.strides[a] == 4;
                    dil3 += r.dilations[a] == 3;
                    k5 += r.kernel[a] == 5;
                    asym += r.pads_begin[a] != r.pads_end[a];
                    op_ge_s += r.output_padding[a] >= r.strides[a] && r.output_padding[a] > 0;
                    neg_total += r.raw_pads_begin[a] < 0 || r.raw_pads_end[a] < 0;
                }
            }
    for (int64_t w : kWideChannels) EXPECT_TRUE(couts.count(w)) << "no case with " << w << " output channels per group";
    for (int64_t y = 1; y <= 40; y++) EXPECT_TRUE(rows.count(y)) << "no case with rows of " << y;
    EXPECT_GE(depthwise_groups.count(32) + depthwise_groups.count(48) + depthwise_groups.count(64), 2u);
    EXPECT_GT(depthwise, 60);
    EXPECT_GT(grouped, 200);
    EXPECT_GT(conv, 150);
    for (int m = 0; m < 4; m++) EXPECT_GT(modes_with_os[m], 10) << "auto_pad " << m << " with output_shape";
    for (int m = 0; m < 3; m++) EXPECT_GT(apis[m], 150) << "api " << m;
    EXPECT_GT(batch3, 50);
    EXPECT_GT(stride4, 100);
    EXPECT_GT(dil3, 50);
    EXPECT_GT(k5, 50);
    EXPECT_GT(asym, 200);
    EXPECT_GT(op_ge_s, 50);
    EXPECT_GT(neg_total, 20);
}

// ---------------------------------------------------------------- wide channels

// Every width of output channels per group (kWideChannels) x rows of 1, 5, 17 and 40 output positions, both
// ops, ranks 1-3, every built dtype.
TEST(LayoutWide, EveryChannelWidthAndRowLength) {
    int ran = 0, failed = 0;
    const int64_t row_lengths[] = {1, 5, 17, 40};
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        int i = 0;
        for (int64_t cout : kWideChannels)
            for (int64_t row : row_lengths) {
                const int rank = 1 + (i % 3);
                const uint64_t seed = deconv_test::sweep_seed(t, rank, 1000 + i) ^ 0x5EEDull;
                i++;
                if (!deconv_test::rank_built(rank)) continue;
                std::mt19937 rng(static_cast<uint32_t>(seed));
                deconv_ref::Problem p;
                p.grouped = i % 2 == 0;
                const int64_t G = p.grouped ? 2 : 1, cin = rank == 3 ? 2 : 3;
                p.input_shape = {i % 4 == 0 ? 2 : 1, G * cin};
                p.filter_shape = p.grouped ? std::vector<int64_t>{G, cin, cout} : std::vector<int64_t>{cin, cout};
                const bool by_output_shape = i % 3 == 0;
                std::vector<int64_t> os;
                for (int a = 0; a < rank; a++) {
                    const bool inner = a == rank - 1;
                    if (by_output_shape) {
                        // output_shape sets the row; stride 2, K 3, same_* / explicit / valid.
                        const int64_t s = 2, k = 3;
                        const int64_t y = inner ? row : 3;
                        p.input_shape.push_back(std::max<int64_t>(1, (y + 1) / s));
                        p.filter_shape.push_back(k);
                        p.strides.push_back(s);
                        os.push_back(y);
                    } else {
                        // K 3, stride 1, pads 1/1: Y = X.
                        p.input_shape.push_back(inner ? row : rank == 3 ? 1 : 2);
                        p.filter_shape.push_back(3);
                        p.strides.push_back(1);
                        p.pads_begin.push_back(1);
                        p.pads_end.push_back(1);
                    }
                }
                if (by_output_shape) {
                    p.output_shape = os;
                    p.auto_pad = static_cast<deconv_ref::AutoPad>(i % 4);
                }
                const deconv_test::GenCase c = nxc_case(t, seed, i % 3, p, rng);
                // The row really has `row` positions.
                EXPECT_EQ(deconv_ref::resolve(p).out_spatial.back(), row) << deconv_test::describe(c);
                ran++;
                const auto r = deconv_test::run_and_check(c);
                if (!r && ++failed <= 12) ADD_FAILURE() << r.message();
            }
    }
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// One spatial axis of a test problem: input positions, kernel, stride, pads_begin, output_padding.
struct AxisSpec {
    int64_t x, k, s, pad_begin, output_padding = 0;
};

// A problem (NCX shapes, as the reference sees them) of `groups` groups of `cin` -> `cout`
// channels (GroupConvolutionBackpropData when `grouped`), its innermost axis `inner` and every
// other axis `outer`, no pads_end.
deconv_ref::Problem grouped_problem(int64_t n, int64_t groups, int64_t cin, int64_t cout, bool grouped, int rank,
                                    const AxisSpec &inner, const AxisSpec &outer) {
    deconv_ref::Problem p;
    p.grouped = grouped;
    p.input_shape = {n, groups * cin};
    p.filter_shape = grouped ? std::vector<int64_t>{groups, cin, cout} : std::vector<int64_t>{cin, cout};
    for (int a = 0; a < rank; a++) {
        const AxisSpec &axis = a == rank - 1 ? inner : outer;
        p.input_shape.push_back(axis.x);
        p.filter_shape.push_back(axis.k);
        p.strides.push_back(axis.s);
        p.pads_begin.push_back(axis.pad_begin);
        p.pads_end.push_back(0);
        p.output_padding.push_back(axis.output_padding);
    }
    return p;
}

// Whether the plan of NXC (or `format`) problem `p` (with the pins `schedule`) names `part` (a
// kernel, a step) in Plan::describe(), expected unless the environment pins a knob that can keep
// it off (the unbordered_* and schedule ctest runs): 1 where checked, 0 where pinned.
int expect_plan_runs(DType t, const deconv_ref::Problem &p, const std::string &part, const std::string &schedule = "",
                     DataFormat format = DataFormat::NXC) {
    deconv::ExecOptions exec;
    exec.schedule = schedule;
    deconv::Attributes attrs = deconv_test::to_lib_attrs(p);
    attrs.data_format = format;
    const deconv::Plan plan = deconv::Plan::create(
        p.grouped ? deconv::Op::GroupConvolutionBackpropData : deconv::Op::ConvolutionBackpropData, t,
        format == DataFormat::NXC ? nxc_shape(p.input_shape) : p.input_shape, p.filter_shape, attrs, std::nullopt,
        exec);
    const std::string how = plan.describe();
    for (const char *pin : {"bordered_input=", "interleave=", "route="})
        if (how.find(pin) != std::string::npos && schedule.find(pin) == std::string::npos) return 0;
    EXPECT_NE(how.find(part), std::string::npos) << how;
    return 1;
}

// Channels-last depthwise layers (one input and one output channel per group) run the
// group-vectorized kernels: group counts on every side of their tiles (4-lane, one vector, the
// full tile of several vectors, and scalar under four; lanes are 4 to 16), rows narrower and
// wider than the position tile, strides 1-3 with the phases' interior and bounded kernels, batch
// 1-2, every built dtype and rank. The first case of each dtype also checks the plan names the
// group kernel, so a routing change cannot leave them untested.
TEST(LayoutWide, DepthwiseEveryGroupTile) {
    int ran = 0, failed = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        bool routed = false;
        for (int64_t groups : {1, 3, 4, 5, 8, 13, 16, 21, 33, 64, 70})
            for (int64_t x : {1, 3, 4, 7, 17}) {
                const int rank = 1 + (i % 3);
                const uint64_t seed = deconv_test::sweep_seed(t, rank, 7000 + i);
                const int64_t s = 1 + i % 3, k = 1 + (i / 3) % 4;
                i++;
                if (!deconv_test::rank_built(rank)) continue;
                const deconv_ref::Problem p = grouped_problem(i % 5 == 0 ? 2 : 1, groups, 1, 1, true, rank,
                                                              {x, k, s, std::min<int64_t>(1, k - 1)}, {2, 2, 2, 0});
                if (!routed && groups >= 16) {
                    const deconv::Plan plan = deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, t,
                                                                   nxc_shape(p.input_shape), p.filter_shape,
                                                                   nxc_attrs(p));
                    // (Unless the environment pins a route: the unbordered_* runs. The group
                    // kernels are built for x86-64 only: generators/CMakeLists.txt.)
                    const std::string how = plan.describe();
#if defined(__x86_64__)
                    if (how.find("route=") == std::string::npos)
                        EXPECT_NE(how.find("_nxc_groups"), std::string::npos) << how;
#endif
                    routed = true;
                }
                check_random_case(t, seed, i % 3, p, ran, failed);
            }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// The plan (Plan::describe()) of channels-first f32 problem `p` with default options (read by
// the x86-64 route checks).
[[maybe_unused]] std::string ncx_f32_plan(const deconv_ref::Problem &p) {
    return deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, DType::f32, p.input_shape, p.filter_shape,
                                deconv_test::to_lib_attrs(p))
        .describe();
}

// Runs channels-first f32 problem `p` through every API against the reference; counts the runs
// and failures, the failure prefixed by `what`.
void check_ncx_f32_apis(const deconv_ref::Problem &p, int rank, uint64_t seed, const std::string &what, int &ran,
                        int &failed) {
    for (int api = 0; api < 3; api++) {
        deconv_test::GenCase g;
        g.format = DataFormat::NCX;
        g.dtype = DType::f32;
        g.seed = deconv_test::sweep_seed(DType::f32, rank, seed + api);
        g.api = api;
        g.p = p;
        std::mt19937 rng(static_cast<uint32_t>(g.seed));
        g.input = deconv_test::random_values(DType::f32, deconv_ref::product(p.input_shape), rng);
        g.filter = deconv_test::random_values(DType::f32, deconv_ref::product(p.filter_shape), rng);
        ran++;
        const auto r = deconv_test::run_and_check(g);
        if (!r && ++failed <= 12) ADD_FAILURE() << what << r.message();
    }
}

// A route case: a channels-first f32 problem and whether the rule under test routes it.
struct RouteCase {
    deconv_ref::Problem p;
    bool routed;
};

// Checks each case's plan with `expect(how, routed)` where `checked(how)` (x86-64 plans: unpinned,
// on the CPUs the rule applies to), then runs the problem through every API against the
// reference; expects some to run and none to fail.
void check_route_cases(const std::vector<RouteCase> &cases, int rank, uint64_t seed,
                       const std::function<bool(const std::string &)> &checked,
                       const std::function<void(const std::string &, bool)> &expect) {
    int ran = 0, failed = 0, i = 0;
    for (const RouteCase &c : cases) {
        i++;
        if (!deconv_test::rank_built(rank)) continue;
#if defined(__x86_64__)
        const std::string how = ncx_f32_plan(c.p);
        if (checked(how)) {
            SCOPED_TRACE("case " + std::to_string(i) + ": " + how);
            expect(how, c.routed);
        }
#else
        (void)checked;
        (void)expect;
#endif
        check_ncx_f32_apis(c.p, rank, seed + 3 * i, "case " + std::to_string(i) + ": ", ran, failed);
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

bool unpinned(const std::string &how) { return how.find("policy all auto") != std::string::npos; }

// Depthwise rows on the plain interleaved kernel that are no whole number of its group tiles run
// as their first whole multiple, then the rest, only where the row holds four tiles or more
// (runtime/strategy.cpp, kExactGroupsMinTiles): rows of 17 and 65 groups of 8 outputs (kernel 16
// at stride 8, pad 0). Each against the reference, through every API; the split checked on
// x86-64 AVX-512 plans where nothing pins a knob.
TEST(LayoutWide, DepthwiseRowsSplitAtTileMultiplesWhenLong) {
    int ran = 0, failed = 0, i = 0;
    for (const int64_t x : {16, 64}) {
        i++;
        const deconv_ref::Problem p = grouped_problem(1, 3, 1, 1, true, 2, {x, 16, 8, 0}, {2, 16, 8, 0});
#if defined(__x86_64__)
        const std::string how = ncx_f32_plan(p);
        if (how.find("policy all auto") != std::string::npos && how.find("(avx512") != std::string::npos) {
            EXPECT_NE(how.find("interleaved_s8"), std::string::npos) << how;
            EXPECT_EQ(how.find("exact groups") != std::string::npos, x == 64) << how;
        }
#endif
        check_ncx_f32_apis(p, 2, 7800 + 3 * i, "row of " + std::to_string(x + 1) + " groups: ", ran, failed);
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-first depthwise layers that the channels-first kernels tile badly run on the
// channels-last twin's group kernels (runtime/strategy.cpp, depthwise_prefers_twin): 3D layers,
// and 2D layers at stride 3, or at stride 2 with phases of three taps or more; kernels up to 2s
// at stride 2, strides 4 and 8 (the interleaved kernel), stride 1, and kernels below the stride whose
// phases with taps write a quarter of the outputs or less stay. Each
// against the reference, through every API, with its plan checked (x86-64, where the group
// kernels are built; unless the environment pins a route).
TEST(LayoutWide, DepthwiseChannelsFirstOnTheTwin) {
    struct Case {
        int rank;
        AxisSpec inner, outer;
        bool twin;
    };
    const Case cases[] = {
        {3, {6, 4, 3, 1}, {5, 4, 3, 1}, true},   // kernel 4 at stride 3, 3D
        {3, {5, 2, 2, 0}, {4, 2, 2, 0}, true},   // kernel 2s, 3D
        {2, {9, 5, 2, 2}, {7, 5, 2, 2}, true},   // kernel 5 at stride 2: phases of 3 and 2 taps
        {2, {8, 3, 3, 1}, {6, 3, 3, 1}, true},   // kernel 3 at stride 3: one tap each
        {2, {9, 4, 2, 1}, {7, 4, 2, 1}, false},  // kernel 2s: the interleaved kernel's fast tile
        {2, {9, 3, 2, 1}, {7, 3, 2, 1}, false},  // kernel 3 at stride 2: the short-phase kernel
        {2, {9, 3, 1, 1}, {7, 3, 1, 1}, false},  // stride 1
        {2, {8, 1, 4, 0}, {6, 1, 4, 0}, false},  // kernel 1 at stride 4: 1/16 of the outputs tapped
        {2, {8, 2, 3, 0}, {6, 2, 3, 0}, true},   // kernel 2 at stride 3: 4/9 tapped
        {2, {8, 4, 4, 0}, {6, 4, 4, 0}, false},  // kernel 4 at stride 4: the interleaved kernel
        {2, {8, 8, 4, 2}, {6, 8, 4, 2}, false},  // kernel 8 at stride 4, pad 2
        {2, {5, 16, 8, 4}, {3, 16, 8, 4}, false}, // kernel 16 at stride 8, pad 4 (fcn8s_upscore8)
        {2, {4, 8, 8, 0}, {3, 8, 8, 0}, false},   // kernel 8 at stride 8
    };
    int ran = 0, failed = 0, i = 0;
    for (const Case &c : cases) {
        for (int64_t groups : {5, 16, 37}) {
            i++;
            if (!deconv_test::rank_built(c.rank)) continue;
            const deconv_ref::Problem p = grouped_problem(1 + i % 2, groups, 1, 1, true, c.rank, c.inner, c.outer);
#if defined(__x86_64__)
            const std::string how = ncx_f32_plan(p);
            if (how.find("route=") == std::string::npos) {
                EXPECT_EQ(how.find("channels-last twin") != std::string::npos, c.twin) << how;
                if (c.twin) EXPECT_NE(how.find("_nxc_groups"), std::string::npos) << how;
            }
#endif
            check_ncx_f32_apis(p, c.rank, 7900 + 3 * i, "", ran, failed);
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-first layers routed by their phases (runtime/strategy.cpp, choose_via_channels_last):
// kernels below the stride whose phases have one tap at most and write a third of the outputs or
// less stay on the channels-first kernels, whatever their channel counts; at half written they
// take the twin (16 or more output channels). 3D layers of 8-15 output channels take the twin
// where a phase has several taps, not where every phase has one. 1D layers at stride 1 stay
// with 96 or fewer products per output (input channels x taps). Each against the reference,
// through every API, with its plan checked (x86-64, where the channels-last kernels are built;
// unless the environment pins a route).
TEST(LayoutWide, RoutesByTappedPhases) {
    struct Case {
        int rank;
        AxisSpec inner, outer;
        int64_t groups, cin, cout;
        bool twin;
    };
    const Case cases[] = {
        {2, {12, 1, 3, 0}, {9, 1, 3, 0}, 1, 12, 20, false},  // kernel 1 at stride 3: 13% written
        {1, {40, 1, 4, 0}, {}, 2, 4, 16, false},              // kernel 1 at stride 4, 1D: 25%
        {3, {9, 1, 2, 0}, {6, 1, 2, 0}, 1, 16, 16, false},    // kernel 1 at stride 2, 3D: 16%
        {1, {12, 1, 2, 0}, {}, 1, 16, 32, true},              // kernel 1 at stride 2, 1D: 52%
        {3, {7, 3, 2, 1}, {5, 3, 2, 1}, 1, 12, 8, true},      // 3D, 8 channels, phases of 2 taps
        {3, {7, 2, 2, 0}, {5, 2, 2, 0}, 1, 16, 8, false},     // 3D, 8 channels, one tap each
        {1, {40, 3, 1, 1}, {}, 1, 16, 32, false},             // 1D stride 1, 16 x 3 products
        {1, {40, 2, 1, 0}, {}, 1, 64, 32, true},              // 1D stride 1, 64 x 2 products
    };
    int ran = 0, failed = 0, i = 0;
    for (const Case &c : cases) {
        i++;
        if (!deconv_test::rank_built(c.rank)) continue;
        const deconv_ref::Problem p = grouped_problem(1 + i % 2, c.groups, c.cin, c.cout, true, c.rank, c.inner, c.outer);
#if defined(__x86_64__)
        const std::string how = ncx_f32_plan(p);
        if (how.find("route=") == std::string::npos) {
            EXPECT_EQ(how.find("channels-last twin") != std::string::npos, c.twin) << "case " << i << ": " << how;
        }
#endif
        check_ncx_f32_apis(p, c.rank, 8300 + 3 * i, "case " + std::to_string(i) + ": ", ran, failed);
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// 2D layers of stride 2 with short phase reductions (input channels x taps per phase of 64 or
// less; 128 or less with 16 or more groups), at most 32 output channels per group and rows of 16
// or more even outputs stay channels-first on the interleaved position kernel on CPUs of 32
// vector registers, not on the channels-last twin (runtime/strategy.cpp, short_strided_2d);
// longer reductions with few groups, wider outputs, narrow or odd rows and stride 3 keep the
// twin. Each against the reference, through every API; plans checked on x86-64 AVX-512 where
// nothing pins a knob.
TEST(LayoutWide, ShortStrided2DStayChannelsFirst) {
    // inner, outer axes; groups, input and output channels; on the interleaved kernel (32 registers)
    int n = 0;
    const auto c = [&n](AxisSpec inner, AxisSpec outer, int64_t groups, int64_t cin, int64_t cout, bool routed) {
        return RouteCase{grouped_problem(1 + ++n % 2, groups, cin, cout, true, 2, inner, outer), routed};
    };
    const std::vector<RouteCase> cases = {
        c({16, 3, 2, 1}, {6, 3, 2, 1}, 4, 16, 16, true),     // 16 x 4 taps, rows of 32
        c({16, 4, 2, 1, 1}, {5, 4, 2, 1}, 1, 12, 32, true),  // 12 x 4 taps, kernel 4, rows of 34
        c({17, 3, 2, 1}, {5, 3, 2, 1}, 16, 32, 16, true),    // 32 x 4 taps, 16 groups
        c({16, 3, 2, 1}, {5, 3, 2, 1}, 2, 32, 16, false),    // 32 x 4 taps, 2 groups
        c({16, 3, 2, 1}, {5, 3, 2, 1}, 1, 16, 48, false),    // 48 output channels
        c({16, 4, 2, 1}, {5, 4, 2, 1}, 1, 16, 16, false),    // rows of 33: an odd last output
        c({7, 3, 2, 1, 1}, {5, 3, 2, 1}, 4, 16, 16, false),  // rows of 14
        c({16, 4, 3, 1}, {5, 4, 3, 1}, 1, 16, 16, false),    // stride 3
    };
    check_route_cases(
        cases, 2, 8450, [](const std::string &how) { return unpinned(how) && how.find("(avx512") != std::string::npos; },
        [](const std::string &how, bool routed) {
            EXPECT_EQ(how.find("channels-last twin") == std::string::npos, routed);
            if (routed) EXPECT_NE(how.find("deconv_phase_conv_interleaved_"), std::string::npos);
        });
}

// 2D channels-first layers of 4-15 output channels and 32 or more input channels at stride 2 run
// per phase on x86-64, not on the interleaved kernel (runtime/strategy.cpp,
// per_phase_few_channels); 3 output channels or 16 input channels stay interleaved. Each against
// the reference, through every API; plans checked where nothing pins a knob.
TEST(LayoutWide, FewChannelsAtStride2RunPerPhase) {
    std::vector<RouteCase> cases;
    int n = 0;
    for (const auto &[cin, cout, per_phase] : {std::tuple{32, 4, true}, {40, 15, true}, {32, 3, false}, {16, 8, false}})
        cases.push_back({grouped_problem(1 + ++n % 2, 1, cin, cout, true, 2, {9, 3, 2, 1}, {6, 4, 2, 1}), per_phase});
    check_route_cases(
        cases, 2, 8470, [](const std::string &how) { return unpinned(how) && how.find("twin") == std::string::npos; },
        [](const std::string &how, bool per_phase) {
            EXPECT_EQ(how.find("interleaved") == std::string::npos, per_phase);
        });
}

// 2D channels-first layers of one or three output channels and 32 or more input channels at
// stride 2 take the channels-last twin on x86-64 (runtime/layer_classes.cpp, few_outputs_twin):
// with a batch of 16 and phase rows of 16 positions or fewer on every CPU; on 16 vector registers
// also one output channel at any size. Two output channels, 16 input channels, and three output
// channels of one wide image stay channels-first. Each against the reference, through every API;
// plans checked where nothing pins a knob.
TEST(LayoutWide, FewOutputChannelsTakeTheTwin) {
    // batch, inner axis, input channels, output channels; twin on AVX-512, twin on AVX2/SSE4.1
    struct Case {
        int64_t batch;
        AxisSpec inner;
        int64_t cin, cout;
        bool wide_regs, narrow_regs;
    };
    const std::vector<Case> table = {
        {16, {8, 4, 2, 1}, 32, 1, true, true},       // rows of 8, batch 16
        {16, {8, 3, 2, 1, 1}, 40, 3, true, true},    // kernel 3, output padding
        {1, {24, 4, 2, 1}, 32, 1, false, true},      // rows of 24, one image
        {1, {24, 3, 2, 1, 1}, 32, 3, false, false},  // three channels of one image
        {16, {8, 4, 2, 1}, 32, 2, false, false},     // two output channels
        {16, {8, 4, 2, 1}, 16, 1, false, false},     // 16 input channels
    };
    for (const bool wide : {true, false}) {
        std::vector<RouteCase> cases;
        for (const Case &c : table)
            cases.push_back({grouped_problem(c.batch, 1, c.cin, c.cout, true, 2, c.inner, {6, 4, 2, 1}),
                             wide ? c.wide_regs : c.narrow_regs});
        check_route_cases(
            cases, 2, wide ? 8480 : 8485,
            [wide](const std::string &how) { return unpinned(how) && (how.find("(avx512") != std::string::npos) == wide; },
            [](const std::string &how, bool twin) { EXPECT_EQ(how.find("channels-last twin") != std::string::npos, twin); });
    }
}

// 1D channels-first layers at stride 2 of 16-64 output and at most 128 input channels, every
// phase with taps, run on the interleaved position kernels on x86-64, the plain one where the
// blocked one does not serve them (runtime/strategy.cpp, short_1d_positions): not on the channel
// tiles (one tap per phase) nor the twin. More input channels, and kernels below the stride, keep their
// routes. Each against the reference, through every API; plans checked where nothing pins a knob.
TEST(LayoutWide, ShortOneDimLayersOnInterleavedPositions) {
    int n = 0;
    const auto c = [&n](AxisSpec axis, int64_t cin, int64_t cout, bool routed) {
        return RouteCase{grouped_problem(1 + ++n % 2, 1, cin, cout, true, 1, axis, {}), routed};
    };
    const std::vector<RouteCase> cases = {
        c({50, 2, 2, 0}, 32, 32, true),    // one tap per phase: not the channel tiles
        c({40, 3, 2, 1}, 128, 64, true),   // phases of 2 and 1 taps: not the twin
        c({40, 4, 2, 1}, 64, 16, true),    // 16 output channels
        c({40, 3, 2, 1}, 136, 64, false),  // 136 input channels
        c({40, 1, 2, 0}, 64, 32, false),   // kernel 1: a phase without taps
    };
    check_route_cases(cases, 1, 8490, unpinned, [](const std::string &how, bool routed) {
        // The plain kernel, or the blocked one where it serves the layer (rows of enough blocks
        // for the CPU's tile).
        EXPECT_EQ(how.find("deconv_phase_conv_interleaved_") != std::string::npos &&
                      how.find("twin") == std::string::npos,
                  routed);
    });
}

// 1D layers run on the blocked interleaved kernel only with a block of their row (its parallel
// task) per thread at least (runtime/strategy.cpp, prefers_blocked_interleave): a row of one
// block takes it on one thread, not on two. 1D and 2D layers of one-tap phases with 32 or more
// input and output channels run on the channel-vectorized channels-first kernels on CPUs of 32
// vector registers (one_tap_channel_tiles), on the channels-last twin elsewhere, with fewer
// input channels, and with output planes of 32 KiB or more and over 32 output channels
// (large_one_tap_2d). Each against the reference, through every API; plans checked on x86-64 where
// nothing pins a knob.
TEST(LayoutWide, RowBlocksAndOneTapTiles) {
    int ran = 0, failed = 0;
    const int threads = deconv::cpu_threads();
    const deconv_ref::Problem row = grouped_problem(1, 1, 40, 24, true, 1, {64, 4, 2, 1}, {});  // 64 groups
    for (int t : {1, 2}) {
        deconv::set_cpu_threads(t);
#if defined(__x86_64__)
        const std::string how = ncx_f32_plan(row);
        if (unpinned(how)) EXPECT_EQ(how.find("interleaved_blocked") != std::string::npos, t == 1) << how;
#endif
        check_ncx_f32_apis(row, 1, 8400 + 3 * t, "1D row, " + std::to_string(t) + " threads: ", ran, failed);
    }
    deconv::set_cpu_threads(threads);
    struct Case {
        AxisSpec inner, outer;
        int64_t cin, cout;
        bool channel_tiles;  // on CPUs of 32 registers
    };
    const Case cases[] = {
        {{9, 1, 1, 0}, {7, 1, 1, 0}, 48, 40, true},   // kernel 1: one tap
        {{8, 2, 2, 0}, {5, 2, 2, 0}, 40, 33, true},   // kernel 2 stride 2: one tap per phase
        {{8, 2, 2, 0}, {5, 2, 2, 0}, 16, 40, false},  // 16 input channels
        {{46, 2, 2, 0}, {46, 2, 2, 0}, 40, 40, false},  // output planes of 92x92 (33 KiB), 40 channels
    };
    int i = 0;
    for (const Case &c : cases) {
        i++;
        const deconv_ref::Problem p = grouped_problem(1 + i % 2, 1, c.cin, c.cout, true, 2, c.inner, c.outer);
#if defined(__x86_64__)
        const std::string how = ncx_f32_plan(p);
        if (unpinned(how)) {
            const bool tiles = c.channel_tiles && how.find("(avx512") != std::string::npos;
            EXPECT_EQ(how.find("channels-last twin") == std::string::npos, tiles) << "case " << i << ": " << how;
            if (tiles) EXPECT_NE(how.find("deconv_phase_conv_channels_"), std::string::npos) << how;
        }
#endif
        check_ncx_f32_apis(p, 2, 8500 + 3 * i, "case " + std::to_string(i) + ": ", ran, failed);
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last depthwise layers with stride 2 or 8 on the innermost axis run its phases together
// on the interleaved group kernel (cpu_interleaved_groups_schedule.h): group counts on every
// side of its tiles (scalar under four, 4-lane, one vector, the full tile, with shifted last
// tiles), rows of 1 to 9 groups of s outputs (narrower and wider than its position tile), 1, 2
// and 3 taps per phase and a phase one tap short (kernels s, 2s, 3s, 2s - 1), pads_begin at the
// kernel's common residue and off it, the Y mod s outputs past the last whole group
// (output_padding), ranks 1-3, batch 1-2; f32, and f16 (run as f32 where the CPU has F16C). Every
// case checks that the plan names the interleaved group kernel where it is built (x86-64 f32
// plans; expect_plan_runs).
TEST(LayoutWide, DepthwiseInterleavedEveryTile) {
    int ran = 0, failed = 0, i = 0, routed = 0;
    for (DType t : {DType::f32, DType::f16}) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int64_t s : {2, 8})
            for (int64_t groups : {1, 3, 4, 5, 8, 13, 16, 21, 33, 64, 70})
                for (int64_t x : {1, 2, 3, 5, 9}) {
                    const int rank = 1 + (i % 3);
                    const uint64_t seed = deconv_test::sweep_seed(t, rank, 7500 + i);
                    const int64_t kernels[4] = {2 * s, s, 3 * s, 2 * s - 1};
                    const int64_t k = kernels[i % 4];
                    const int64_t pads[4] = {s == 2 ? 1 : 0, 0, s - 1, s + 1};
                    const int64_t pad = std::min(pads[(i / 4) % 4], k - 1);
                    i++;
                    if (!deconv_test::rank_built(rank)) continue;
                    // Outer axes of kernel 4 at stride 2 (two taps per phase) or 3 (two and one).
                    const AxisSpec outer = i % 2 == 0 ? AxisSpec{3, 4, 2, 1} : AxisSpec{3, 3, 2, 1};
                    const deconv_ref::Problem p = grouped_problem(i % 5 == 0 ? 2 : 1, groups, 1, 1, true, rank,
                                                                  {x, k, s, pad, i % s}, outer);
                    // The rules run the kernel on its fast branch only (two taps per phase on the
                    // two innermost axes, pad 1 at stride 2, 0 at stride 8); the pin reaches the
                    // others.
                    const bool fast = k == 2 * s && pad % s == (s == 2 ? 1 : 0) && (rank == 1 || outer.k == 4);
                    const std::string pin = fast ? "" : "interleave=plain";
#if defined(__x86_64__)
                    if (t == DType::f32 && deconv_ref::resolve(p).out_spatial.back() >= s)
                        routed += expect_plan_runs(t, p, "interleaved deconv_phase_conv_interleaved_nxc_groups_s", pin);
#endif
                    check_random_case(t, seed, i % 3, p, ran, failed, pin);
                }
    }
    std::printf("[ routed   ] %d of %d cases on the interleaved group kernel\n", routed, ran);
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last layers of 1-3 output channels per group and a vector or more of input channels
// run the kernels that vectorize input channels (cpu_channel_dots_schedule.h): every output
// channel count they specialize, input channels a whole number of vectors or not (16, 8 and 4
// lanes), rows narrower and wider than their position tile, strides 1-2 with kernels 1-4 (the
// interior and bounded kernels), groups, ranks 1-3, and batches of 1 and 5 (5 images run in image
// slices where the layer is large enough to be parallel); f32, and f16 (run as f32 where the CPU
// has F16C). Every f32 case with at least 16 input channels checks that the plan names the kernel
// (built wherever f32 is; expect_plan_runs).
TEST(LayoutWide, FewOutputChannelsEveryDotTile) {
    int ran = 0, failed = 0, i = 0, routed = 0;
    for (DType t : {DType::f32, DType::f16}) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int64_t cout : {1, 2, 3})
            for (int64_t cin : {4, 8, 12, 16, 24, 40, 64})
                for (int64_t x : {1, 3, 4, 5, 9, 19}) {
                    const int rank = 1 + (i % 3);
                    const uint64_t seed = deconv_test::sweep_seed(t, rank, 8100 + i);
                    const int64_t s = 1 + i % 2, k = 1 + (i / 2) % 4;
                    const int64_t groups = i % 5 == 0 ? 2 : 1;
                    const int64_t n = x == 19 ? 5 : 1 + (i / 7) % 2;
                    i++;
                    if (!deconv_test::rank_built(rank)) continue;
                    const deconv_ref::Problem p =
                        grouped_problem(n, groups, cin, cout, groups > 1, rank, {x, k, s, std::min<int64_t>(1, k - 1)},
                                        {x == 19 && rank < 3 ? 12 : 3, 2, 2, 0});
                    if (t == DType::f32 && cin >= 16) routed += expect_plan_runs(t, p, "kernel deconv_phase_conv_nxc_dots_");
                    check_random_case(t, seed, i % 3, p, ran, failed);
                }
    }
    std::printf("[ routed   ] %d of %d cases on the channel-dot kernels\n", routed, ran);
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// ---------------------------------------------------------------- strided NXC views

// A channels-last tensor whose channels are a slice [c0, c0 + C) of a wider one (as after a
// concat), and rows padded to a larger pitch: the input and the output are such views, run
// through Plan::run's view overload. The output's other channels and pads must stay as they
// were.
TEST(LayoutViews, ChannelSlicesOfWiderTensors) {
    int ran = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int variant = 0; variant < 4; variant++) {
                const uint64_t seed = deconv_test::sweep_seed(t, rank, 5000 + variant);
                std::mt19937 rng(static_cast<uint32_t>(seed));
                deconv_ref::Problem p;
                p.grouped = variant % 2 == 0;
                const int64_t G = p.grouped ? (variant == 2 ? 16 : 2) : 1;
                const int64_t cin = variant == 2 ? 1 : 3;
                const int64_t cout = variant == 2 ? 1 : variant == 3 ? 40 : 8;
                p.input_shape = {2, G * cin};
                p.filter_shape = p.grouped ? std::vector<int64_t>{G, cin, cout} : std::vector<int64_t>{cin, cout};
                for (int a = 0; a < rank; a++) {
                    const bool inner = a == rank - 1;
                    p.input_shape.push_back(inner ? (rank == 1 ? 19 : 9) : 3);
                    p.filter_shape.push_back(a == 0 ? 3 : 2);
                    p.strides.push_back(a == 0 ? 2 : 1);
                    p.dilations.push_back(inner ? 2 : 1);
                    p.pads_begin.push_back(1);
                    p.pads_end.push_back(0);
                    p.output_padding.push_back(a == 0 ? 1 : 0);
                }
                const auto in_ncx = deconv_test::random_values(t, deconv_ref::product(p.input_shape), rng);
                const auto w = deconv_test::random_values(t, deconv_ref::product(p.filter_shape), rng);
                const deconv_ref::Result ref = result_in(DataFormat::NXC, deconv_ref::compute(p, in_ncx, w));
                const auto in_shape = nxc_shape(p.input_shape);
                const auto &out_shape = ref.shape.output_shape;
                // Strides of an NXC slice: channel stride 1, position stride = wider C (+ row
                // padding on the innermost spatial axis), slice offset c0.
                auto slice = [&](const std::vector<int64_t> &shape, int64_t extra_c, int64_t c0, int64_t row_pad,
                                 int64_t *span, int64_t *offset) {
                    const size_t r = shape.size();
                    std::vector<int64_t> st(r);
                    const int64_t cw = shape[r - 1] + extra_c;
                    st[r - 1] = 1;
                    int64_t s = cw;
                    for (size_t ax = r - 1; ax-- > 0;) {
                        st[ax] = s;
                        s *= shape[ax] + (ax == r - 2 ? row_pad : 0);
                    }
                    *span = s;
                    *offset = c0;
                    return st;
                };
                int64_t in_span, in_off, out_span, out_off;
                const auto in_st = slice(in_shape, 5, 2, 1, &in_span, &in_off);
                const auto out_st = slice(out_shape, 7 + variant, 3 + variant, variant % 2 ? 2 : 0, &out_span, &out_off);
                Buffer in(t, in_shape, in_span), wb(t, p.filter_shape), out(t, out_shape, out_span);
                {
                    // The slice starts at element c0 of the backing buffer.
                    std::vector<double> backing(static_cast<size_t>(in_span), 0.0);
                    const double poison = deconv_ref::dt_is_float(deconv_test::to_ref(t))
                                              ? std::numeric_limits<double>::quiet_NaN() : 77.0;
                    for (auto &v : backing) v = poison;
                    const auto in_nxc = ncx_to_nxc(in_ncx, p.input_shape);
                    for (size_t i = 0; i < in_nxc.size(); i++)
                        backing[static_cast<size_t>(in_off + deconv_test::offset_of(static_cast<int64_t>(i), in_shape, in_st))] = in_nxc[i];
                    for (int64_t i = 0; i < in_span; i++) in.set(i, backing[static_cast<size_t>(i)]);
                }
                deconv_test::fill(wb, w);
                out.fill_bytes(0xCD);
                const auto before = out.payload();
                const size_t es = out.elem();
                const auto *in_base = static_cast<const unsigned char *>(in.data()) + in_off * static_cast<int64_t>(es);
                auto *out_base = static_cast<unsigned char *>(out.data()) + out_off * static_cast<int64_t>(es);
                const deconv::ConstTensorView iv(in_base, t, in_shape, in_st);
                const deconv::TensorView ov{out_base, t, out_shape, out_st};
                const auto attrs = nxc_attrs(p);
                const deconv::Op op = deconv_test::lib_op(p);
                SCOPED_TRACE(deconv_ref::describe(p) + " NXC dtype " + deconv_test::dt_str(t) + " in strides " +
                             vec_str(in_st) + " out strides " + vec_str(out_st));
                // The same output span must hold the view: the backing buffer is big enough.
                ASSERT_LE(out_off + deconv_test::offset_of(deconv_ref::product(out_shape) - 1, out_shape, out_st),
                          out_span - 1);
                try {
                    deconv::Plan::create(op, t, in_shape, p.filter_shape, attrs).run(iv, wb.cview(), ov);
                } catch (const deconv::Error &e) {
                    ADD_FAILURE() << "deconv::Error: " << e.what();
                    continue;
                }
                ran++;
                EXPECT_TRUE(out.guards_intact());
                const int64_t n = deconv_ref::product(out_shape);
                std::vector<double> got(static_cast<size_t>(n));
                std::vector<char> used(static_cast<size_t>(out_span), 0);
                for (int64_t i = 0; i < n; i++) {
                    const int64_t off = out_off + deconv_test::offset_of(i, out_shape, out_st);
                    got[static_cast<size_t>(i)] = out.get(off);
                    used[static_cast<size_t>(off)] = 1;
                }
                const auto after = out.payload();
                int64_t touched = 0;
                for (int64_t e = 0; e < out_span; e++)
                    if (!used[static_cast<size_t>(e)] && std::memcmp(&after[e * es], &before[e * es], es) != 0)
                        touched++;
                EXPECT_EQ(touched, 0) << "elements outside the output view were written";
                EXPECT_TRUE(deconv_test::compare_to_reference(t, got, ref));
            }
        }
    }
    if (ran == 0) GTEST_SKIP() << "nothing built";
}

// ---------------------------------------------------------------- the format attribute

// data_format NCX set explicitly gives the same as unset (the OpenVINO ops' default), and NXC
// is really channels last: the same values in NXC order give the same numbers transposed.
TEST(LayoutFormat, NcxExplicitEqualsDefaultAndNxcIsTheTranspose) {
    if (!deconv_test::dtype_built(DType::f32) || !deconv_test::rank_built(2)) GTEST_SKIP();
    deconv_ref::Problem p;
    p.grouped = true;
    p.input_shape = {2, 6, 4, 5};      // G = 2, C_IN = 3
    p.filter_shape = {2, 3, 5, 3, 2};  // C_OUT = 5
    p.strides = {2, 3};
    p.pads_begin = {1, 0};
    p.pads_end = {0, 1};
    p.output_padding = {1, 0};
    std::mt19937 rng(12345);
    const auto x = deconv_test::random_values(DType::f32, deconv_ref::product(p.input_shape), rng);
    const auto w = deconv_test::random_values(DType::f32, deconv_ref::product(p.filter_shape), rng);
    const auto ref = deconv_ref::compute(p, x, w);
    // Y1 = 2*3 + 3 - 1 - 0 + 1 = 9, Y2 = 3*4 + 2 - 0 - 1 = 13
    const auto &os = ref.shape.output_shape;
    ASSERT_EQ(os, (std::vector<int64_t>{2, 10, 9, 13}));

    deconv::Attributes a = deconv_test::to_lib_attrs(p);
    Buffer in(DType::f32, p.input_shape), wb(DType::f32, p.filter_shape), o1(DType::f32, os), o2(DType::f32, os);
    deconv_test::fill(in, x);
    deconv_test::fill(wb, w);
    deconv::group_convolution_backprop_data(in.cview(), wb.cview(), o1.view(), a);
    a.data_format = DataFormat::NCX;
    deconv::group_convolution_backprop_data(in.cview(), wb.cview(), o2.view(), a);
    EXPECT_EQ(o1.payload(), o2.payload());
    EXPECT_TRUE(deconv_test::compare_to_reference(DType::f32, deconv_test::read_all(o1), ref));

    a.data_format = DataFormat::NXC;
    const auto nxc_in = nxc_shape(p.input_shape), nxc_out = nxc_shape(os);
    EXPECT_EQ(deconv::infer_shape(deconv::Op::GroupConvolutionBackpropData, nxc_in, p.filter_shape, a).output_shape,
              nxc_out);
    Buffer in2(DType::f32, nxc_in), o3(DType::f32, nxc_out);
    deconv_test::fill(in2, ncx_to_nxc(x, p.input_shape));
    deconv::group_convolution_backprop_data(in2.cview(), wb.cview(), o3.view(), a);
    EXPECT_TRUE(deconv_test::compare_to_reference(DType::f32, deconv_test::read_all(o3), result_in(DataFormat::NXC, ref)));
    // The NCX result transposed equals the NXC result up to summation order (f32 rounding).
    const auto t1 = ncx_to_nxc(deconv_test::read_all(o1), os);
    const auto t3 = deconv_test::read_all(o3);
    ASSERT_EQ(t1.size(), t3.size());
    int64_t far = 0;
    for (size_t i = 0; i < t1.size(); i++)
        if (std::fabs(t1[i] - t3[i]) > 1e-5 * (1 + std::fabs(t1[i]))) far++;
    EXPECT_EQ(far, 0);
    // ConvolutionBackpropData NXC: the data's last axis is C_IN; the NCX shape is refused there.
    deconv::Attributes c;
    c.data_format = DataFormat::NXC;
    EXPECT_EQ(deconv::infer_shape(deconv::Op::ConvolutionBackpropData, {1, 7, 3}, {3, 4, 2}, c).output_shape,
              (std::vector<int64_t>{1, 8, 4}));
    EXPECT_THROW(deconv::infer_shape(deconv::Op::ConvolutionBackpropData, {1, 3, 7}, {3, 4, 2}, c), deconv::Error);
    // With output_shape (spatial only), the output is [N, Y, C].
    EXPECT_EQ(deconv::infer_shape(deconv::Op::ConvolutionBackpropData, {1, 7, 3}, {3, 4, 2}, c,
                                  std::vector<int64_t>{11})
                  .output_shape,
              (std::vector<int64_t>{1, 11, 4}));
}

}  // namespace

// ---------------------------------------------------------------- bf16 dot products

// bf16 layers with an even number of input channels per group run, on CPUs with AVX512-BF16, on
// the kernels that reduce input channel pairs with vdpbf16ps (filter packed in pairs). Every
// branch of their schedule: channel widths below 4 (scalar), 4-15 (4 lanes), 16-63 (one or two
// vectors) and 64 and more (the 4-vector tile) with tails, rows of 1 to 13 positions (the 5-position tile,
// 4 positions, single positions; with 64 channels or more, rows of 9 and 13 run whole tiles of 5
// and then 4 or 8 positions in a second call: runtime/cpu_executor.cpp, exact_row_head), one to 17
// pairs, ranks 1-3, grouped and not, every API.
// (Elsewhere they run the f32-FMA kernels, which this then covers again.)
TEST(LayoutBf16Dot, EvenInputChannelsEveryTileAndTail) {
    if (!deconv_test::dtype_built(DType::bf16)) GTEST_SKIP();
    int ran = 0, failed = 0, i = 0;
    for (int64_t cout : {1, 3, 4, 9, 16, 40, 64, 70, 130})
        for (int64_t cin : {2, 4, 34})
            for (int64_t row : {1, 4, 5, 7, 9, 12, 13}) {
                const int rank = 1 + (i % 3);
                const uint64_t seed = deconv_test::sweep_seed(DType::bf16, rank, 3000 + i) ^ 0xBF16ull;
                i++;
                if (!deconv_test::rank_built(rank)) continue;
                deconv_ref::Problem p;
                p.grouped = i % 2 == 0;
                const int64_t G = p.grouped ? 2 : 1;
                p.input_shape = {i % 4 == 0 ? 2 : 1, G * cin};
                p.filter_shape = p.grouped ? std::vector<int64_t>{G, cin, cout} : std::vector<int64_t>{cin, cout};
                for (int a = 0; a < rank; a++) {
                    // Inner axis: kernel 3, stride 2, pads 1/0 (Y = 2X); outer axes: 2 inputs.
                    const bool inner = a == rank - 1;
                    const int64_t x = inner ? row : 2;
                    p.input_shape.push_back(x);
                    p.filter_shape.push_back(3);
                    p.strides.push_back(inner ? 2 : 1);
                    p.pads_begin.push_back(1);
                    p.pads_end.push_back(inner ? 0 : 1);
                }
                check_random_case(DType::bf16, seed, i % 3, p, ran, failed);
            }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last kernels with more output channels per group than a block run one call per block
// (the filter packed block by block): blocks of 128 with tails of 1 and 72 channels, every dtype;
// rows narrower than the position tile (3 inputs: phases 3 wide) take blocks of 192 instead (bf16
// pair kernels keep 128): one block of 129, tails of 8 and 64.
TEST(LayoutChannelBlocks, OutputChannelsAcrossBlocks) {
    int ran = 0, failed = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t) || !deconv_test::rank_built(2)) continue;
        for (int64_t cout : {129, 200, 256})
        for (int64_t x : {7, 3}) {
            const uint64_t seed = deconv_test::sweep_seed(t, 2, 4000 + i++);
            deconv_ref::Problem p;
            p.grouped = true;
            p.input_shape = {1, 2 * 6, 3, x};
            p.filter_shape = {2, 6, cout, 2, 3};
            p.strides = {2, 2};
            p.pads_begin = {0, 1};
            p.pads_end = {0, 1};
            check_random_case(t, seed, i % 3, p, ran, failed);
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last layers of narrow phase rows and 16 or more images run with the images as the
// next rank's innermost axis, one kernel call per tap window (runtime/batch_rows_executor.cpp,
// choose_batch_rows): ranks 1 and 2, pads past the input, a phase of no tap, groups, channel
// counts off the tiles (even: bf16's channel pairs, whose packing is blocked), every API. Rows of
// 20 images with 64 channels (17 with 130 in bf16) run whole position tiles, then a multiple of
// four positions in a second call (runtime/cpu_executor.cpp, exact_row_head).
TEST(LayoutBatchRows, NarrowPhasesOfWideBatches) {
    int ran = 0, failed = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank : {1, 2}) {
            if (!deconv_test::rank_built(rank) || !deconv_test::rank_built(rank + 1)) continue;
            for (auto [x, k, pb] : {std::tuple<int64_t, int64_t, int64_t>{4, 4, 1}, {3, 1, 0}, {2, 5, 3}})
                for (auto [n, groups, cout] :
                     {std::tuple<int64_t, int64_t, int64_t>{16, 1, 20}, {17, 3, 130}, {20, 1, 64}}) {
                    const uint64_t seed = deconv_test::sweep_seed(t, rank, 5000 + i++);
                    deconv_ref::Problem p;
                    p.grouped = true;
                    p.input_shape = {n, groups * 4};
                    p.filter_shape = {groups, 4, cout};
                    for (int a = 0; a < rank; a++) {
                        const bool inner = a == rank - 1;
                        p.input_shape.push_back(inner ? x : 2);
                        p.filter_shape.push_back(inner ? k : 3);
                        p.strides.push_back(2);
                        p.pads_begin.push_back(inner ? pb : 1);
                        p.pads_end.push_back(inner ? 1 : 0);
                    }
                    check_random_case(t, seed, i % 3, p, ran, failed);
                }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last rows of one channel vector of output channels per group (lanes to 2 x lanes - 1;
// on AVX-512 also 8-15 channels, in half vectors) tile q_tile positions of two rows: widths about
// the position tiles, heights 2 and 3 (the second row tile overlaps the first), ranks 2-3, every
// built dtype, on the layer's own kernels (route=channels_last: the rules may take the channels-
// first twin).
TEST(LayoutTiles, OneChannelVectorOverTwoRows) {
    int ran = 0, failed = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 seeds(53);
        for (int rank : {2, 3}) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int64_t cout : {8, 12, 16, 31})
                for (int64_t width : {5, 7, 13})
                    for (int64_t height : {1, 2}) {
                        // Kernel 3, pad 1 before: outputs one wider than the input (6, 8, 14; 2, 3).
                        const deconv_ref::Problem p =
                            grouped_problem(1, 2, 3, cout, true, rank, {width, 3, 1, 1}, {height, 3, 1, 1});
                        check_random_case(t, seeds(), ran % 3, p, ran, failed, "route=channels_last");
                    }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last layers of 8 or more output channels per group run on their own kernels (under 8,
// on the channels-first twin), whose tiles of up to two cache lines run every group at each
// position tile (cpu_channels_last_schedule.h): many groups, so that both threads share the rows
// of every group; 4 channels (the twin), 8 and 12 (under a line on AVX-512), 16 and 24 (one line
// and a tail), 32 (two lines; AVX2: four vectors), ranks 1-3, batch 1-2, position tiles with a
// shifted last one, every built dtype. The plan names the channels-first twin exactly under 8
// channels.
TEST(LayoutTiles, GroupsAtEachPositionTile) {
    int ran = 0, failed = 0, routed = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 seeds(61);
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int64_t cout : {4, 8, 12, 16, 24, 32}) {
                const deconv_ref::Problem p =
                    grouped_problem(rank == 1 ? 2 : 1, 9, 5, cout, true, rank, {13, 3, 2, 1}, {5, 3, 2, 1});
                check_random_case(t, seeds(), ran % 3, p, ran, failed);
                // The layer's own kernels, whichever route the rules take.
                if (cout >= 8) check_random_case(t, seeds(), ran % 3, p, ran, failed, "route=channels_last");
                deconv::Attributes attrs = deconv_test::to_lib_attrs(p);
                attrs.data_format = DataFormat::NXC;
                const std::string how = deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, t,
                                                             nxc_shape(p.input_shape), p.filter_shape, attrs)
                                            .describe();
                if (how.find("route=") != std::string::npos || how.find("groups") != std::string::npos) continue;
                EXPECT_EQ(how.find("channels-first twin") != std::string::npos, cout < 8) << how;
                routed++;
            }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
    EXPECT_GT(routed, 0);
}

// Layers whose kernel is below the stride have phases without taps, zeroed phase by phase or
// (zero_first) in one pass over each call's output before the other phases run: both ways and
// the rule's own choice, both layouts, ranks 1-3, two images of three groups (slices and slabs
// may split them), every built dtype. A pinned pass must show in the plan's description.
TEST(LayoutTiles, TapLessPhasesZeroedEitherWay) {
    int ran = 0, failed = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 seeds(59);
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (DataFormat format : {DataFormat::NCX, DataFormat::NXC})
                for (const char *pin : {"", "zero_first=on", "zero_first=off"})
                    for (int64_t cout : {1, 5, 16}) {
                        // Kernel 1 at stride 3 innermost (two phases of three without taps), kernel
                        // 2 at stride 3 with output_padding 1 on the other axes.
                        const deconv_ref::Problem p =
                            grouped_problem(2, 3, 2, cout, true, rank, {7, 1, 3, 0, 2}, {3, 2, 3, 0, 1});
                        check_random_case(t, seeds(), ran % 3, p, ran, failed, pin, format);
                        if (std::string(pin) == "zero_first=on") expect_plan_runs(t, p, "zero first", pin, format);
                    }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// Channels-last register tiles (generators/schedules/cpu_channels_last_schedule.h): rows a
// multiple of four positions whose six-position tiles would recompute more than a tenth of the row
// take tiles of four (16, 20, 32; 28 and 13 keep six), with 4 channel vectors and with their
// tails (70), and with 2 channel vectors (32, 40) beside them; heights 2, 3 and 5. Stride 1,
// kernel 3, pad 1 (each output row as wide as the input), ranks 1-3.
TEST(LayoutTiles, ShortRowsOfFourPositionTiles) {
    int ran = 0, failed = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int64_t cout : {64, 70, 32, 40})
                for (int64_t x : {16, 20, 32, 28, 13})
                    for (int64_t height : {2, 3, 5}) {
                        if ((rank == 1 && height != 2) || (rank == 3 && (height != 3 || x > 20))) continue;
                        const uint64_t seed = deconv_test::sweep_seed(t, rank, 6000 + i++);
                        deconv_ref::Problem p;
                        p.grouped = true;
                        p.input_shape = {1, 3};
                        p.filter_shape = {1, 3, cout};
                        for (int a = 0; a < rank; a++) {
                            const bool inner = a == rank - 1;
                            p.input_shape.push_back(inner ? x : a == rank - 2 ? height : 2);
                            p.filter_shape.push_back(3);
                            p.strides.push_back(1);
                            p.pads_begin.push_back(1);
                            p.pads_end.push_back(1);
                        }
                        check_random_case(t, seed, i % 3, p, ran, failed);
                    }
        }
    }
    EXPECT_GT(ran, 0);
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}
