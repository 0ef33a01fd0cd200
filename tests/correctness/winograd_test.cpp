// The Winograd path (ExecOptions::algorithm, runtime/cpu/winograd_executor.cpp): its transforms
// checked exactly, its results against the independent reference within the error bound that
// docs/semantics.md states per dtype, and which layers each algorithm setting runs it on.
#include "check.h"

#include "../../facts/winograd_transforms.h"
#include "kernels/half_conversion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

namespace deconv_test {
namespace {

using deconv::Algorithm;
using deconv::DataFormat;

// ---------------------------------------------------------------- the algorithms themselves

// F(m, r) is exact in exact arithmetic: AT [(G g) . (BT d)] equals the correlation
// y[i] = sum_j d[i + j] g[j] for every pair of unit vectors d, g (the identity is bilinear), in
// double, whose rounding of the tables' fractions (1/6, 1/15, ...) stays below 1e-14.
TEST(WinogradAlgorithms, ComputeTheCorrelationExactly) {
    for (const deconv::winograd::Algorithm *f : deconv::winograd::kAlgorithms) {
        const int a = f->alpha();
        for (int dk = 0; dk < a; dk++) {
            for (int gj = 0; gj < f->r; gj++) {
                for (int i = 0; i < f->m; i++) {
                    double y = 0;
                    for (int x = 0; x < a; x++) y += f->at[i][x] * f->g[x][gj] * f->bt[x][dk];
                    const double want = dk == i + gj ? 1.0 : 0.0;
                    EXPECT_NEAR(y, want, 1e-14) << "F(" << f->m << ", " << f->r << "): d unit " << dk << ", g unit "
                                                << gj << ", output " << i;
                }
            }
        }
    }
}

// ---------------------------------------------------------------- the error bound
//
// With u = 2^-24 and S the largest sum |x * w| of the terms of an output of the same tile
// (tile_abs_sums), the Winograd path's f32 result differs from the exact sum by at most
//
//     winograd_factor(m, r, D) * (C_in * r^D + alpha^D) * u * S
//
// where the factor bounds the growth of rounding through the transforms: the filter transform
// rounds G g G^T once in f32, the input transform sums alpha^D terms of BT d B whose entries are
// at most max|BT|, the products sum C_in of them, and the output transform sums alpha^D terms of
// AT M A. The direct kernels' bound is 2 (C_in r^D + 1) u S (check.h): the factors put F(2, r)
// within it (S taken over the tile) and F(4, r) within twice it. Measured worst
// |err| / ((C_in r^D + alpha^D) u S) over this suite's layers (printed by each case),
// 1D and 2D: F(2, 2) 0.07, 0.08; F(2, 3) 0.16, 0.01; F(4, 2) 0.12, 0.44; F(4, 3) 0.35, 0.05.
// f16 and bf16 run as f32 and round once more: half an ulp of the storage type.
struct Factor {
    int m, r, rank;
    double factor;
};
constexpr Factor kFactors[] = {
    {2, 2, 1, 1}, {2, 2, 2, 1}, {4, 2, 1, 2}, {4, 2, 2, 2},
    {2, 3, 1, 1}, {2, 3, 2, 1}, {4, 3, 1, 2}, {4, 3, 2, 2},
};

double winograd_factor(int m, int r, int rank) {
    for (const Factor &f : kFactors)
        if (f.m == m && f.r == r && f.rank == rank) return f.factor;
    ADD_FAILURE() << "no error factor for F(" << m << ", " << r << ") rank " << rank;
    return 0;
}

struct WinogradCase {
    const char *name;
    bool grouped;
    std::vector<int64_t> in_ncx, w;  // shapes: NCX data, the op's filter
    deconv::Attributes attrs;
    int m, r;                        // the F(m, r) it runs on
    DataFormat format = DataFormat::NCX;
    std::string schedule;            // extra pins (slices)
};

std::vector<WinogradCase> cases() {
    auto attrs = [](std::vector<int64_t> s, std::vector<int64_t> pb, std::vector<int64_t> pe,
                    std::vector<int64_t> d = {}, std::vector<int64_t> op = {}) {
        deconv::Attributes a;
        a.strides = s;
        a.pads_begin = pb;
        a.pads_end = pe;
        a.dilations = d;
        a.output_padding = op;
        return a;
    };
    std::vector<WinogradCase> v;
    for (int m : {2, 4}) {
        // Kernel 4 stride 2: four phases of 2x2 taps; odd extents leave partial tiles; groups.
        v.push_back({"k4s2_groups", true, {2, 2 * 7, 9, 11}, {2, 7, 20, 4, 4}, attrs({2, 2}, {1, 1}, {1, 1}), m, 2});
        v.push_back({"k4s2_nxc", false, {1, 19, 6, 13}, {19, 17, 4, 4}, attrs({2, 2}, {2, 1}, {0, 2}), m, 2,
                     DataFormat::NXC});
        // Stride 1, 3x3: one phase of 3x3 taps.
        v.push_back({"k3s1", false, {1, 24, 10, 9}, {24, 33, 3, 3}, attrs({1, 1}, {1, 1}, {1, 1}), m, 3,
                     DataFormat::NXC});
        // Kernel 6 stride 2 with output padding: four phases of 3x3 taps.
        v.push_back({"k6s2", true, {1, 16, 5, 7}, {1, 16, 18, 6, 6}, attrs({2, 2}, {2, 1}, {2, 3}, {}, {1, 1}), m, 3});
        // Stride 6, dilation 3: two phases of each axis have 2 taps, four none (zero-filled).
        v.push_back({"s6d3_empty_phases", false, {1, 12, 4, 5}, {12, 9, 4, 4}, attrs({6, 6}, {2, 0}, {1, 1}, {3, 3}), m,
                     2, DataFormat::NXC});
        // Dilation 2 at stride 1 (dilated_s1's class): one phase read every second input, run as
        // 2x2 sub-phases; dilation 3 at stride 2 (every third input, odd output extents).
        v.push_back({"k3s1d2_subphases", false, {1, 20, 11, 10}, {20, 34, 3, 3}, attrs({1, 1}, {2, 2}, {2, 2}, {2, 2}), m,
                     3, DataFormat::NXC});
        v.push_back({"k4s2d3_subphases", true, {2, 2 * 6, 7, 8}, {2, 6, 9, 4, 4}, attrs({2, 2}, {3, 1}, {2, 2}, {3, 3}),
                     m, 2});
        // 1D: kernel 16 stride 8 (eight phases of 2 taps), stride 1 kernel 3; few channels (the
        // transforms' scalar branches).
        v.push_back({"k16s8_1d", false, {2, 20, 23}, {20, 18, 16}, attrs({8}, {4}, {4}), m, 2});
        v.push_back({"k3s1_1d_few_channels", true, {1, 3 * 3, 30}, {3, 3, 5, 3}, attrs({1}, {1}, {0}), m, 3,
                     DataFormat::NXC});
        // Slices of one row of tiles (the smallest slice pinned) and of several images.
        v.push_back({"k4s2_row_slices", false, {1, 16, 14, 12}, {16, 24, 4, 4}, attrs({2, 2}, {1, 1}, {1, 1}), m, 2,
                     DataFormat::NXC, "winograd_slice_kib=1"});
        v.push_back({"k4s2_image_slices", false, {5, 16, 6, 5}, {16, 24, 4, 4}, attrs({2, 2}, {1, 1}, {1, 1}), m, 2,
                     DataFormat::NCX, "winograd_slice_kib=64"});
        // A phase's sub-phases run as one batch (one products call over all their tiles): in
        // slices of rows of tiles (each sub-phase's rows, the batch holding two along the outer
        // axis), and with several images per slice.
        v.push_back({"k3s1d2_row_slices", false, {1, 16, 13, 11}, {16, 20, 3, 3}, attrs({1, 1}, {2, 2}, {2, 2}, {2, 2}),
                     m, 3, DataFormat::NXC, "winograd_slice_kib=1"});
        v.push_back({"k4s2d3_image_slices", true, {3, 2 * 8, 7, 6}, {2, 8, 12, 4, 4}, attrs({2, 2}, {3, 1}, {2, 2}, {3, 3}),
                     m, 2, DataFormat::NCX, "winograd_slice_kib=64"});
    }
    return v;
}

// The S of the bound: an output's rounding error comes from its whole tile (the output
// transform combines every product of the tile), so S is the largest sum |x w| over the outputs
// of its tile: here, conservatively, over every output within (m - 1) steps of its phase, a step
// being stride x in_step output positions, along each axis. (An output none of whose terms lies
// in the input, exactly zero on the direct kernels, may so carry rounding from its neighbours.)
std::vector<double> tile_abs_sums(const deconv_ref::Result &ref, const WinogradCase &c, int rank) {
    const std::vector<int64_t> &shape = ref.shape.output_shape;  // in c.format's order
    const bool nxc = c.format == DataFormat::NXC;
    std::vector<int64_t> radius(rank);
    for (int i = 0; i < rank; i++) {
        const int64_t s = c.attrs.strides.empty() ? 1 : c.attrs.strides[i];
        const int64_t d = c.attrs.dilations.empty() ? 1 : c.attrs.dilations[i];
        radius[i] = (c.m - 1) * s * (d / std::gcd(s, d));
    }
    std::vector<int64_t> st(shape.size(), 1);
    for (int a = (int)shape.size() - 2; a >= 0; a--) st[a] = st[a + 1] * shape[a + 1];
    const int first_spatial = nxc ? 1 : 2;
    std::vector<double> out(ref.abs_sum.size(), 0);
    for (int64_t i = 0; i < (int64_t)out.size(); i++) {
        // Odometer over the window around i's spatial position.
        std::vector<int64_t> pos(rank), lo(rank), hi(rank), at(rank);
        int64_t base = i;
        for (int a = 0; a < rank; a++) {
            const int ax = first_spatial + a;
            pos[a] = (i / st[ax]) % shape[ax];
            base -= pos[a] * st[ax];
            lo[a] = std::max<int64_t>(0, pos[a] - radius[a]);
            hi[a] = std::min<int64_t>(shape[ax] - 1, pos[a] + radius[a]);
            at[a] = lo[a];
        }
        double best = 0;
        for (;;) {
            int64_t j = base;
            for (int a = 0; a < rank; a++) j += at[a] * st[first_spatial + a];
            best = std::max(best, ref.abs_sum[(size_t)j]);
            int a = rank - 1;
            for (; a >= 0; a--) {
                if (++at[a] <= hi[a]) break;
                at[a] = lo[a];
            }
            if (a < 0) break;
        }
        out[(size_t)i] = best;
    }
    return out;
}

class WinogradLayers : public ::testing::TestWithParam<WinogradCase> {};

std::string case_name(const ::testing::TestParamInfo<WinogradCase> &info) {
    return std::string(info.param.name) + "_F" + std::to_string(info.param.m) + "x" + std::to_string(info.param.r);
}

TEST_P(WinogradLayers, MatchTheReferenceWithinTheBound) {
    const WinogradCase &c = GetParam();
    const int rank = (int)c.in_ncx.size() - 2;
    if (!rank_built(rank) || !dtype_built(deconv::DType::f32)) GTEST_SKIP() << "rank or f32 not built";
    for (deconv::DType t : {deconv::DType::f32, deconv::DType::f16, deconv::DType::bf16}) {
        if (!dtype_built(t)) continue;
        SCOPED_TRACE(std::string(c.name) + " " + dt_str(t));
        deconv_ref::Problem p = ref_problem(c.grouped, c.in_ncx, c.w, c.attrs);
        std::mt19937 rng(1234 + c.m);
        Buffer in(t, shape_in(c.format, c.in_ncx)), w(t, c.w);
        const std::vector<double> x_ncx = random_values(t, in.count, rng);
        const std::vector<double> weights = fill(w, random_values(t, w.count, rng));
        const std::vector<double> stored_ncx =
            c.format == DataFormat::NXC ? nxc_to_ncx(fill(in, ncx_to_nxc(x_ncx, c.in_ncx)), c.in_ncx) : fill(in, x_ncx);
        const deconv_ref::Result ref = result_in(c.format, deconv_ref::compute(p, stored_ncx, weights));

        deconv::ExecOptions exec;
        exec.algorithm = Algorithm::Winograd;
        exec.schedule = "winograd_tile=" + std::to_string(c.m) + " " + c.schedule;
        deconv::Attributes a = c.attrs;
        a.data_format = c.format;
        const deconv::Op op = c.grouped ? deconv::Op::GroupConvolutionBackpropData : deconv::Op::ConvolutionBackpropData;
        const deconv::Plan plan = deconv::Plan::create(op, t, in.shape, c.w, a, std::nullopt, exec);
        ASSERT_NE(plan.describe().find("winograd F(" + std::to_string(c.m) + ", " + std::to_string(c.r) + ")"),
                  std::string::npos)
            << plan.describe();
        // Four runs: the filter per run; packed once (the packing holds its own copy); strided
        // views with padded strides (read and written in place); views in permuted axis orders
        // (through the dense copies of the channels-last path).
        const std::vector<int64_t> &out_shape = ref.shape.output_shape;
        std::mt19937 layout_rng(77);
        for (int run = 0; run < 4; run++) {
            const bool views = run >= 2;
            const StridedLayout li = views ? make_layout(in.shape, layout_rng, run == 3) : dense_layout(in.shape);
            const StridedLayout lo = views ? make_layout(out_shape, layout_rng, run == 3) : dense_layout(out_shape);
            Buffer vin(t, in.shape, li.span), out(t, out_shape, lo.span);
            fill_strided(vin, in.shape, li.strides, [&] {
                std::vector<double> v((size_t)in.count);
                for (int64_t i = 0; i < in.count; i++) v[(size_t)i] = in.get(i);
                return v;
            }());
            out.fill_bytes(0xCD);
            const auto before = out.payload();
            const deconv::TensorView ov{out.data(), t, out_shape, lo.strides};
            if (run == 0) {
                plan.run(in.data(), w.data(), out.data());
            } else if (run == 1) {
                Buffer caller = w;
                const deconv::PackedFilter packed = plan.pack_filter(caller.cview());
                caller.fill_bytes(0x5A);
                plan.run(in.cview(), packed, ov);
            } else {
                plan.run(cview_of(vin, in.shape, li.strides), w.cview(), ov);
            }
            ASSERT_TRUE(out.guards_intact());
            const ViewReadback back = read_strided(out, out_shape, lo, before);
            ASSERT_LT(back.gap, 0) << "run " << run << " wrote into a gap of the output view";
            const double u = std::ldexp(1.0, -24), factor = winograd_factor(c.m, c.r, rank);
            const int64_t c_in = c.w[c.grouped ? 1 : 0];
            const std::vector<double> tile_sum = tile_abs_sums(ref, c, rank);
            double worst = 0, worst_of_tol = 0;  // f32: over u x terms x S; every dtype: over the tolerance
            int64_t bad = 0;
            for (int64_t i = 0; i < (int64_t)back.values.size(); i++) {
                const double exact = ref.output[(size_t)i], s = tile_sum[(size_t)i], got = back.values[(size_t)i];
                const double terms = (double)c_in * std::pow(c.r, rank) + std::pow(c.m + c.r - 1, rank);
                double tol = factor * terms * u * s;
                if (t != deconv::DType::f32) tol += deconv_ref::half_ulp(to_ref(t), std::fabs(exact) + tol);
                if (s > 0 && t == deconv::DType::f32) worst = std::max(worst, std::fabs(got - exact) / (terms * u * s));
                if (tol > 0) worst_of_tol = std::max(worst_of_tol, std::fabs(got - exact) / tol);
                if (!(std::fabs(got - exact) <= tol)) {
                    if (bad++ < 5)
                        ADD_FAILURE() << "output " << i << ": got " << got << ", exact " << exact << ", tolerance " << tol;
                }
            }
            EXPECT_EQ(bad, 0) << "run " << run << ": " << bad << " of " << back.values.size() << " outputs out of bound";
            if (t == deconv::DType::f32 && run == 0) {
                RecordProperty("worst_error_over_u_terms_sum", std::to_string(worst));
                std::printf("[ winograd ] %s F(%d, %d): worst |err| / ((C_in r^D + alpha^D) u S_tile) = %.4f\n", c.name, c.m,
                            c.r, worst);
            }
            // The share of the stated bound (f16 and bf16: with half an ulp of the storage type) the
            // worst output used, per dtype.
            if (run == 0)
                std::printf("[ winograd ] %s F(%d, %d) %s: worst |err| / bound = %.4f\n", c.name, c.m, c.r,
                            deconv::dtype_name(t), worst_of_tol);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, WinogradLayers, ::testing::ValuesIn(cases()), case_name);

// ---------------------------------------------------------------- which layers run it

deconv::Plan plan_of(Algorithm algorithm, deconv::DType t, const std::vector<int64_t> &in, const std::vector<int64_t> &w,
                     const deconv::Attributes &a, const std::string &schedule = "") {
    deconv::ExecOptions exec;
    exec.algorithm = algorithm;
    exec.schedule = schedule;
    exec.use_schedule_database = false;
    return deconv::Plan::create(deconv::Op::ConvolutionBackpropData, t, in, w, a, std::nullopt, exec);
}

deconv::Attributes k4s2() {
    deconv::Attributes a;
    a.strides = {2, 2};
    a.pads_begin = {1, 1};
    a.pads_end = {1, 1};
    return a;
}

// (The policy part of describe() names pinned knobs, algorithm=winograd among them.)
bool on_winograd(const deconv::Plan &p) { return p.describe().find("winograd F(") != std::string::npos; }

// Direct, the default, never runs it, whatever the policy pins; Auto runs it on 2D layers of many
// channels (the rules), and as pinned; 16-bit layers run it through their f32 plan.
TEST(WinogradChoice, FollowsTheAlgorithmOption) {
    if (!rank_built(2) || !dtype_built(deconv::DType::f32)) GTEST_SKIP() << "rank 2 or f32 not built";
    const std::vector<int64_t> in = {1, 64, 48, 48}, w = {64, 64, 4, 4};  // 12 x 12 tiles per phase
    EXPECT_FALSE(on_winograd(plan_of(Algorithm::Direct, deconv::DType::f32, in, w, k4s2())));
    EXPECT_FALSE(on_winograd(plan_of(Algorithm::Direct, deconv::DType::f32, in, w, k4s2(), "algorithm=winograd")));
    EXPECT_TRUE(on_winograd(plan_of(Algorithm::Auto, deconv::DType::f32, in, w, k4s2())));
    EXPECT_FALSE(on_winograd(plan_of(Algorithm::Auto, deconv::DType::f32, in, w, k4s2(), "algorithm=direct")));
    EXPECT_TRUE(on_winograd(plan_of(Algorithm::Winograd, deconv::DType::f32, in, w, k4s2())));
    // Few tiles (16 per phase) of 32 channels: the rules keep the direct kernels.
    EXPECT_FALSE(on_winograd(plan_of(Algorithm::Auto, deconv::DType::f32, {1, 32, 16, 16}, {32, 32, 4, 4}, k4s2())));
    // Few channels: the rules keep the direct kernels; a pin or Winograd still runs it.
    const std::vector<int64_t> narrow_in = {1, 8, 48, 48}, narrow_w = {8, 8, 4, 4};
    EXPECT_FALSE(on_winograd(plan_of(Algorithm::Auto, deconv::DType::f32, narrow_in, narrow_w, k4s2())));
    EXPECT_TRUE(on_winograd(plan_of(Algorithm::Auto, deconv::DType::f32, narrow_in, narrow_w, k4s2(), "algorithm=winograd")));
    // 1D (F(4, 2) saves 1.6x only): not by the rules.
    deconv::Attributes a1;
    a1.strides = {2};
    a1.pads_begin = {1};
    a1.pads_end = {1};
    EXPECT_FALSE(on_winograd(plan_of(Algorithm::Auto, deconv::DType::f32, {1, 64, 100}, {64, 64, 4}, a1)));
    for (deconv::DType t : {deconv::DType::f16, deconv::DType::bf16}) {
        if (!dtype_built(t)) continue;
        const deconv::Plan p = plan_of(Algorithm::Winograd, t, in, w, k4s2());
        EXPECT_NE(p.describe().find("as f32"), std::string::npos) << p.describe();
        EXPECT_TRUE(on_winograd(p)) << p.describe();
    }
    // The tile pin picks F(2, 2).
    EXPECT_NE(plan_of(Algorithm::Winograd, deconv::DType::f32, in, w, k4s2(), "winograd_tile=2").describe().find("F(2, 2)"),
              std::string::npos);
}

// Auto on phases of 4 to 127 tiles (runtime/dispatch/layer_classes.cpp, winograd_pays_on_few_tiles):
// layers of 64 or more input and output channels take it on x86-64, F(4, 3) on any CPU variant,
// F(4, 2) where the CPU has 32 vector registers (AVX-512); fewer channels or fewer tiles keep
// the direct kernels.
TEST(WinogradChoice, ManyChannelsOnFewTiles) {
    if (!rank_built(2) || !dtype_built(deconv::DType::f32)) GTEST_SKIP() << "rank 2 or f32 not built";
    deconv::Attributes k3s1;
    k3s1.strides = {1, 1};
    k3s1.pads_begin = {1, 1};
    k3s1.pads_end = {1, 1};
    const deconv::Plan f43 = plan_of(Algorithm::Auto, deconv::DType::f32, {1, 128, 14, 14}, {128, 128, 3, 3}, k3s1);
    const deconv::Plan f42 = plan_of(Algorithm::Auto, deconv::DType::f32, {1, 256, 16, 16}, {256, 128, 4, 4}, k4s2());
#if defined(__x86_64__)
    const bool wide = f42.describe().find("(avx512") != std::string::npos;
    EXPECT_TRUE(on_winograd(f43)) << f43.describe();   // 4 x 4 tiles of 3x3 taps
    EXPECT_EQ(on_winograd(f42), wide) << f42.describe();  // 4 x 4 tiles per phase of 2x2 taps
#else
    EXPECT_FALSE(on_winograd(f43)) << f43.describe();
    EXPECT_FALSE(on_winograd(f42)) << f42.describe();
#endif
    // 64 channels (4 x 4 tiles); 2 x 2 tiles per phase.
    const deconv::Plan f43_64 = plan_of(Algorithm::Auto, deconv::DType::f32, {1, 64, 14, 14}, {64, 64, 3, 3}, k3s1);
    const deconv::Plan f42_4 = plan_of(Algorithm::Auto, deconv::DType::f32, {1, 256, 8, 8}, {256, 128, 4, 4}, k4s2());
#if defined(__x86_64__)
    EXPECT_TRUE(on_winograd(f43_64)) << f43_64.describe();
    EXPECT_EQ(on_winograd(f42_4), wide) << f42_4.describe();
#else
    EXPECT_FALSE(on_winograd(f43_64)) << f43_64.describe();
    EXPECT_FALSE(on_winograd(f42_4)) << f42_4.describe();
#endif
    // 64 -> 32 channels; one tile per phase.
    EXPECT_FALSE(on_winograd(plan_of(Algorithm::Auto, deconv::DType::f32, {1, 64, 14, 14}, {64, 32, 3, 3}, k3s1)));
    EXPECT_FALSE(on_winograd(plan_of(Algorithm::Auto, deconv::DType::f32, {1, 128, 4, 4}, {128, 128, 3, 3}, k3s1)));
}

// Algorithm::Winograd on a layer it cannot run: Unsupported, naming why.
TEST(WinogradChoice, RefusesWhatItCannotRun) {
    if (!rank_built(2) || !dtype_built(deconv::DType::f32)) GTEST_SKIP() << "rank 2 or f32 not built";
    const auto refuses = [](deconv::DType t, const std::vector<int64_t> &in, const std::vector<int64_t> &w,
                            const deconv::Attributes &a, const std::string &why) {
        try {
            plan_of(Algorithm::Winograd, t, in, w, a);
        } catch (const deconv::Error &e) {
            EXPECT_EQ(e.kind(), deconv::ErrorKind::Unsupported);
            EXPECT_TRUE(message_names(e.what(), {"algorithm winograd"}));
            EXPECT_TRUE(message_names(e.what(), {why}));
            return;
        }
        ADD_FAILURE() << "no error for " << why;
    };
    deconv::Attributes k2s2;
    k2s2.strides = {2, 2};
    refuses(deconv::DType::f32, {1, 8, 6, 6}, {8, 8, 2, 2}, k2s2, "phases of one tap");
    deconv::Attributes k3s2 = k4s2();
    refuses(deconv::DType::f32, {1, 8, 6, 6}, {8, 8, 3, 3}, k3s2, "different tap counts");
    if (dtype_built(deconv::DType::i8)) refuses(deconv::DType::i8, {1, 8, 6, 6}, {8, 8, 4, 4}, k4s2(), "dtype i8");
    if (rank_built(3)) {
        deconv::Attributes a3;
        a3.strides = {2, 2, 2};
        refuses(deconv::DType::f32, {1, 8, 4, 4, 4}, {8, 8, 4, 4, 4}, a3, "3D");
    }
    // Auto on the same layers: the direct kernels, no error.
    EXPECT_FALSE(on_winograd(plan_of(Algorithm::Auto, deconv::DType::f32, {1, 8, 6, 6}, {8, 8, 2, 2}, k2s2)));
}

// f16 layers on the Winograd path convert to f32 and back outside the kernels; where the CPU has
// no F16C (ARM64, old x86) in integer arithmetic. It must agree with IEEE conversion: every f16
// value widens exactly and narrows back to itself (NaNs to NaNs), and f32 values round to
// nearest even, checked against the reference's rounding (tests/reference) on values around
// every f16 boundary, the subnormals and the overflow threshold.
TEST(HalfConversion, IntegerConversionsAreIeee) {
    for (uint32_t h = 0; h < 0x10000; h++) {
        const float f = deconv::detail::f16_to_f32((uint16_t)h);
        const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
        ASSERT_EQ(std::isnan(f), nan) << std::hex << h;
        if (nan) {
            ASSERT_TRUE(std::isnan(deconv::detail::f16_to_f32(deconv::detail::f32_to_f16(f)))) << std::hex << h;
            continue;
        }
        ASSERT_EQ(deconv::detail::f32_to_f16(f), (uint16_t)h) << std::hex << h;
        ASSERT_EQ((double)f, (double)deconv_ref::f16_bits_to_f32((uint16_t)h)) << std::hex << h;
        // Between this value and the next: below, at and above the midpoint.
        if ((h & 0x7fff) < 0x7bff) {
            const double next = deconv_ref::f16_bits_to_f32((uint16_t)(h + 1));
            for (double t : {0.25, 0.5, 0.75}) {
                const float x = (float)((double)f + t * (next - (double)f));
                ASSERT_EQ((double)deconv::detail::f16_to_f32(deconv::detail::f32_to_f16(x)),
                          deconv_ref::round_to_f16((double)x))
                    << std::hex << h << " + " << t;
            }
        }
    }
    EXPECT_EQ(deconv::detail::f32_to_f16(65519.0f), 0x7bff);
    EXPECT_EQ(deconv::detail::f32_to_f16(65520.0f), 0x7c00);
    EXPECT_EQ(deconv::detail::f32_to_f16(-1e30f), 0xfc00);
}

}  // namespace
}  // namespace deconv_test
