// The rest of the correctness suite: the reference's own checks (dtype helpers, scatter vs
// gather), Plan (create once, run many, copies, threads, macs), strided / cropped /
// broadcast views, rounding and saturation on store, the documented padding choices
// numerically, and the build/machine facts.
#include "check.h"
#include "layout_support.h"

#include <cstdlib>
#include <functional>
#include <optional>
#include <regex>
#include <thread>

namespace {

using deconv::DType;
using deconv::DataFormat;
using deconv_test::Buffer;
using deconv_test::GenCase;
using ::testing::HasSubstr;

// ---------------------------------------------------------------- the reference's helpers

TEST(ReferenceDtypes, F16AllBitPatternsRoundTrip) {
    for (uint32_t b = 0; b < 65536; b++) {
        const uint16_t h = static_cast<uint16_t>(b);
        const float f = deconv_ref::f16_bits_to_f32(h);
        if (std::isnan(f)) {
            EXPECT_EQ(h & 0x7C00, 0x7C00);
            EXPECT_NE(h & 0x03FF, 0);
            EXPECT_TRUE(std::isnan(deconv_ref::f16_bits_to_f32(deconv_ref::f32_to_f16_bits(f))));
            continue;
        }
        ASSERT_EQ(deconv_ref::f32_to_f16_bits(f), h) << std::hex << b;
        ASSERT_EQ(deconv_ref::round_to_f16(f), static_cast<double>(f));
    }
    EXPECT_EQ(deconv_ref::f16_bits_to_f32(0x3C00), 1.0f);
    EXPECT_EQ(deconv_ref::f16_bits_to_f32(0x7BFF), 65504.0f);
    EXPECT_EQ(deconv_ref::f16_bits_to_f32(0x0001), std::ldexp(1.0f, -24));
    EXPECT_EQ(deconv_ref::f16_bits_to_f32(0xC000), -2.0f);
}

TEST(ReferenceDtypes, Bf16AllBitPatternsRoundTrip) {
    for (uint32_t b = 0; b < 65536; b++) {
        const uint16_t h = static_cast<uint16_t>(b);
        const float f = deconv_ref::bf16_bits_to_f32(h);
        if (std::isnan(f)) continue;
        ASSERT_EQ(deconv_ref::f32_to_bf16_bits(f), h) << std::hex << b;
    }
    EXPECT_EQ(deconv_ref::bf16_bits_to_f32(0x3F80), 1.0f);
}

TEST(ReferenceDtypes, RoundToNearestEvenTies) {
    // f16: spacing 2^-10 at 1.
    EXPECT_EQ(deconv_ref::round_to_f16(1.0 + std::ldexp(1.0, -11)), 1.0);
    EXPECT_EQ(deconv_ref::round_to_f16(1.0 + 3 * std::ldexp(1.0, -11)), 1.0 + std::ldexp(1.0, -9));
    EXPECT_EQ(deconv_ref::round_to_f16(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)),
              1.0 + std::ldexp(1.0, -10));
    EXPECT_EQ(deconv_ref::round_to_f16(65519.0), 65504.0);
    EXPECT_TRUE(std::isinf(deconv_ref::round_to_f16(65520.0)));
    EXPECT_EQ(deconv_ref::round_to_f16(std::ldexp(1.0, -25)), 0.0);                   // tie -> 0
    EXPECT_EQ(deconv_ref::round_to_f16(3 * std::ldexp(1.0, -25)), std::ldexp(1.0, -23));  // tie -> even
    // bf16: spacing 2^-7 at 1.
    EXPECT_EQ(deconv_ref::round_to_bf16(1.0 + std::ldexp(1.0, -8)), 1.0);
    EXPECT_EQ(deconv_ref::round_to_bf16(1.0 + 3 * std::ldexp(1.0, -8)), 1.0 + std::ldexp(1.0, -6));
    EXPECT_EQ(deconv_ref::f32_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
    EXPECT_EQ(deconv_ref::f32_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
    // integers saturate (and round half to even, though only integers are stored here)
    EXPECT_EQ(deconv_ref::round_to_dtype(deconv_ref::DT::i8, 200), 127);
    EXPECT_EQ(deconv_ref::round_to_dtype(deconv_ref::DT::i8, -200), -128);
    EXPECT_EQ(deconv_ref::round_to_dtype(deconv_ref::DT::u8, -3), 0);
    EXPECT_EQ(deconv_ref::round_to_dtype(deconv_ref::DT::u8, 256), 255);
    EXPECT_EQ(deconv_ref::round_to_dtype(deconv_ref::DT::i32, 1e12), 2147483647.0);
    EXPECT_EQ(deconv_ref::round_to_dtype(deconv_ref::DT::i32, -1e12), -2147483648.0);
    EXPECT_EQ(deconv_ref::half_ulp(deconv_ref::DT::f16, 1.5), std::ldexp(1.0, -11));
    EXPECT_EQ(deconv_ref::half_ulp(deconv_ref::DT::f16, 0.0), std::ldexp(1.0, -25));
    EXPECT_EQ(deconv_ref::half_ulp(deconv_ref::DT::bf16, 1.0), std::ldexp(1.0, -8));
}

// Cross-checks against other implementations of the same conversions: the compiler's
// _Float16 where it has one, and the well-known bit trick for bf16.
TEST(ReferenceDtypes, AgreesWithOtherConversions) {
    std::mt19937 rng(12345);
    std::uniform_int_distribution<uint32_t> bits;
    int checked = 0;
    for (int i = 0; i < 200000; i++) {
        uint32_t b = bits(rng);
        if (i % 2) b = (b & 0x80000000u) | (static_cast<uint32_t>(100 + i % 60) << 23) | (b & 0x7FFFFF);
        float f;
        std::memcpy(&f, &b, 4);
        if (std::isnan(f)) continue;
        // bf16 by the usual integer trick: add 0x7FFF plus the lowest kept bit, truncate.
        const uint16_t trick = static_cast<uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
        ASSERT_EQ(deconv_ref::f32_to_bf16_bits(f), trick) << std::hexfloat << f;
#if defined(__FLT16_MAX__) && !defined(__aarch64__)  // aarch64 g++ 12 has __fp16 only
        const _Float16 h = static_cast<_Float16>(f);
        uint16_t hb;
        std::memcpy(&hb, &h, 2);
        ASSERT_EQ(deconv_ref::f32_to_f16_bits(f), hb) << std::hexfloat << f;
        const double dd = static_cast<double>(f) * (1.0 + std::ldexp(1.0, -30));
        ASSERT_EQ(deconv_ref::round_to_f16(dd), static_cast<double>(static_cast<_Float16>(dd)))
            << std::hexfloat << dd;
#endif
        checked++;
    }
    EXPECT_GT(checked, 100000);
}

// ---------------------------------------------------------------- the reference itself

// The scatter loop and the gather formula are two independent readings of the spec; they must
// agree (in f64, to rounding) on every sampled point of many random problems.
TEST(ReferenceSelfCheck, ScatterMatchesGather) {
    int points = 0;
    for (int rank = 1; rank <= 3; rank++)
        for (int i = 0; i < 150; i++) {
            const GenCase c = deconv_test::make_case(DType::f64, rank, 5000 + i);
            const auto res = deconv_ref::compute(c.p, c.input, c.filter);
            std::mt19937 rng(static_cast<uint32_t>(i));
            const int64_t n = static_cast<int64_t>(res.output.size());
            for (int k = 0; k < 40; k++) {
                const int64_t flat = std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
                std::vector<int64_t> idx(res.shape.output_shape.size());
                int64_t f = flat;
                for (size_t a = idx.size(); a-- > 0;) {
                    idx[a] = f % res.shape.output_shape[a];
                    f /= res.shape.output_shape[a];
                }
                double asum = 0;
                const double g = deconv_ref::gather_point(
                    res.shape, idx, [&](int64_t j) { return c.input[j]; },
                    [&](int64_t j) { return c.filter[j]; }, &asum);
                ASSERT_NEAR(g, res.output[flat], 1e-12 * (asum + 1e-300))
                    << deconv_ref::describe(c.p) << " at " << deconv_test::vec_str(idx);
                ASSERT_NEAR(asum, res.abs_sum[flat], 1e-12 * (asum + 1e-300));
                points++;
            }
        }
    EXPECT_EQ(points, 3 * 150 * 40);
}

// ---------------------------------------------------------------- store rounding / saturation

// 1D CBD, X=2, K=2, s=1: out = [in0*w0, in0*w1 + in1*w0, in1*w1].
std::vector<double> run_1d(DType t, const std::vector<double> &in, const std::vector<double> &w) {
    deconv_ref::Problem p;
    p.grouped = false;
    p.input_shape = {1, 1, 2};
    p.filter_shape = {1, 1, 2};
    Buffer bi(t, p.input_shape), bw(t, p.filter_shape), bo(t, {1, 1, 3});
    deconv_test::fill(bi, in);
    deconv_test::fill(bw, w);
    bo.fill_bytes(0xCD);
    deconv_test::run_free(p, bi.cview(), bw.cview(), bo.view());
    return deconv_test::read_all(bo);
}

TEST(StoreRounding, F16RoundsOnceToNearestEven) {
    if (!deconv_test::dtype_built(DType::f16) || !deconv_test::rank_built(1)) GTEST_SKIP();
    const double u = std::ldexp(1.0, -11);
    // middle = 1 + u (tie -> 1), 1 + 3u (tie -> 1 + 4u), 1 + u + 2^-20 (above the tie)
    EXPECT_EQ(run_1d(DType::f16, {1, u}, {1, 1})[1], 1.0);
    EXPECT_EQ(run_1d(DType::f16, {1, 3 * u}, {1, 1})[1], 1.0 + 4 * u);
    EXPECT_EQ(run_1d(DType::f16, {1, u + std::ldexp(1.0, -20)}, {1, 1})[1], 1.0 + 2 * u);
}

TEST(StoreRounding, Bf16RoundsOnceToNearestEven) {
    if (!deconv_test::dtype_built(DType::bf16) || !deconv_test::rank_built(1)) GTEST_SKIP();
    const double u = std::ldexp(1.0, -8);
    EXPECT_EQ(run_1d(DType::bf16, {1, u}, {1, 1})[1], 1.0);
    EXPECT_EQ(run_1d(DType::bf16, {1, 3 * u}, {1, 1})[1], 1.0 + 4 * u);
    // u * (1 + 2^-7) is a bf16 value (8 significant bits); the sum lies just above the tie
    EXPECT_EQ(run_1d(DType::bf16, {1, u * (1 + std::ldexp(1.0, -7))}, {1, 1})[1], 1.0 + 2 * u);
}

// A NaN input stays NaN and an infinite one infinite, and inf - inf is a NaN, whether the 16-bit
// layer runs as f32 (half_conversion.h: a NaN whose payload lies in the low half must not round
// to an infinity) or on its own kernels (bf16). Not f16 on its own kernels (x86 without F16C,
// the sse41 variant; ARM64): Halide 14's f16 arithmetic there reads a NaN as an infinity and makes
// inf - inf an infinity (the stores are mended: generators/conv_stages.h, store_cast);
// docs/semantics.md says so.
TEST(StoreRounding, NonFiniteValuesStayNonFinite) {
    if (!deconv_test::rank_built(1)) GTEST_SKIP();
    int checked = 0;
    for (DType t : {DType::f16, DType::bf16}) {
        if (!deconv_test::dtype_built(t)) continue;
        deconv::Attributes a;
        a.strides = {1};
        const std::string how =
            deconv::Plan::create(deconv::Op::ConvolutionBackpropData, t, {1, 1, 2}, {1, 1, 2}, a).describe();
        if (t == DType::f16 && how.find("as f32") == std::string::npos) continue;
        const std::vector<double> nan = run_1d(t, {std::nan(""), 1}, {1, 1});
        EXPECT_TRUE(std::isnan(nan[1])) << deconv_test::dt_str(t) << ": " << nan[1] << "; " << how;
        const std::vector<double> inf = run_1d(t, {INFINITY, 1}, {1, 1});
        EXPECT_EQ(inf[1], INFINITY) << deconv_test::dt_str(t) << "; " << how;
        const std::vector<double> diff = run_1d(t, {INFINITY, -INFINITY}, {1, 1});
        EXPECT_TRUE(std::isnan(diff[1])) << deconv_test::dt_str(t) << ": " << diff[1] << "; " << how;
        checked++;
    }
    if (deconv_test::dtype_built(DType::bf16)) EXPECT_GT(checked, 0);
}

TEST(StoreSaturation, IntegersSaturateTheExactSum) {
    if (!deconv_test::rank_built(1)) GTEST_SKIP();
    if (deconv_test::dtype_built(DType::i8)) {
        EXPECT_EQ(run_1d(DType::i8, {100, 100}, {1, 1}), (std::vector<double>{100, 127, 100}));
        EXPECT_EQ(run_1d(DType::i8, {-100, -100}, {1, 1}), (std::vector<double>{-100, -128, -100}));
        EXPECT_EQ(run_1d(DType::i8, {127, -128}, {127, 127}),
                  (std::vector<double>{127, -127, -128}));  // 16129-16256 = -127
    }
    if (deconv_test::dtype_built(DType::u8)) {
        EXPECT_EQ(run_1d(DType::u8, {200, 100}, {2, 1}), (std::vector<double>{255, 255, 100}));
    }
    if (deconv_test::dtype_built(DType::i32)) {
        const double a = 65536, b = 32768;  // a*b = 2^31
        // 2^31 + 2^31 = 2^32: saturates (wrapping i32 accumulation would give 0).
        EXPECT_EQ(run_1d(DType::i32, {a, a}, {b, b}),
                  (std::vector<double>{2147483647.0, 2147483647.0, 2147483647.0}));
        // 2^31 - 2^31 = 0 exactly; 2^31 - 1 fits.
        EXPECT_EQ(run_1d(DType::i32, {a, -a}, {b, b}), (std::vector<double>{2147483647.0, 0, -2147483648.0}));
        EXPECT_EQ(run_1d(DType::i32, {-1048576, 1048576}, {1048576, 1}),
                  (std::vector<double>{-2147483648.0, 2147483647.0, 1048576}));  // 2^40 - 2^20
    }
}

// 8-bit layers run as f64 where the build has f64 kernels, or as f32 for filters whose sums stay
// f32 integers (runtime/dispatch/impl_as_wider.cpp). This filter's bound (4096 x 127 weights x
// 128) is past 2^24, so it must take the exact f64 plan: the partial sums climb to 2048 x 16129 =
// 33M, where f32 keeps only even integers and drops the odd products, before cancelling down to
// -127. Both the unpacked and the packed-filter runs.
TEST(StoreSaturation, EightBitSumsStayExactPastF32Integers) {
    if (!deconv_test::dtype_built(DType::i8) || !deconv_test::rank_built(1)) GTEST_SKIP();
    const int64_t c = 4096;
    Buffer bi(DType::i8, {1, c, 1}), bw(DType::i8, {c, 1, 1}), bo(DType::i8, {1, 1, 1});
    for (int64_t i = 0; i < c; i++) {
        bi.set(i, i < c / 2 ? 127 : -127);
        bw.set(i, 127);
    }
    bi.set(0, 126);  // exact sum: -127
    const deconv::Plan plan =
        deconv::Plan::create(deconv::Op::ConvolutionBackpropData, DType::i8, {1, c, 1}, {c, 1, 1}, deconv::Attributes{});
    bo.fill_bytes(0xCD);
    plan.run(bi.cview(), bw.cview(), bo.view());
    EXPECT_EQ(bo.get(0), -127) << plan.describe();
    bo.fill_bytes(0xCD);
    plan.run(bi.cview(), plan.pack_filter(bw.cview()), bo.view());
    EXPECT_EQ(bo.get(0), -127) << plan.describe();
}

// ---------------------------------------------------------------- documented choices, numerically

TEST(DocumentedChoices, NegativeTotalPaddingLeavesZeroTail) {
    if (!deconv_test::rank_built(1)) GTEST_SKIP();
    for (auto ap : {deconv_ref::AutoPad::Explicit, deconv_ref::AutoPad::SameUpper,
                    deconv_ref::AutoPad::SameLower, deconv_ref::AutoPad::Valid}) {
        deconv_ref::Problem p;
        p.grouped = true;
        p.input_shape = {1, 1, 3};
        p.filter_shape = {1, 1, 1, 2};
        p.strides = {2};
        p.auto_pad = ap;
        p.pads_begin = {1};  // ignored with output_shape
        p.pads_end = {1};
        p.output_shape = std::vector<int64_t>{9};  // natural 2*2+2 = 6; total -3
        Buffer bi(DType::f32, p.input_shape), bw(DType::f32, p.filter_shape),
            bo(DType::f32, {1, 1, 9});
        deconv_test::fill(bi, {1, 2, 3});
        deconv_test::fill(bw, {10, 100});
        bo.fill_bytes(0xCD);
        deconv_test::run_free(p, bi.cview(), bw.cview(), bo.view());
        EXPECT_EQ(deconv_test::read_all(bo),
                  (std::vector<double>{10, 100, 20, 200, 30, 300, 0, 0, 0}))
            << deconv_ref::auto_pad_str(ap);
    }
}

TEST(DocumentedChoices, SameUpperOddTotalCropsMoreAtTheBeginning) {
    if (!deconv_test::rank_built(1)) GTEST_SKIP();
    // X=3, K=2, s=1: natural [a0, a1, a2, a3] = 4 positions; output_shape 3 -> total 1.
    // same_upper: pb = 1, pe = 0 -> [a1, a2, a3]; the others: pb = 0, pe = 1 -> [a0, a1, a2].
    for (auto ap : {deconv_ref::AutoPad::SameUpper, deconv_ref::AutoPad::SameLower,
                    deconv_ref::AutoPad::Explicit}) {
        deconv_ref::Problem p;
        p.grouped = false;
        p.input_shape = {1, 1, 3};
        p.filter_shape = {1, 1, 2};
        p.auto_pad = ap;
        p.output_shape = std::vector<int64_t>{3};
        Buffer bi(DType::f32, p.input_shape), bw(DType::f32, p.filter_shape),
            bo(DType::f32, {1, 1, 3});
        deconv_test::fill(bi, {1, 2, 4});
        deconv_test::fill(bw, {1, 10});  // natural: [1, 12, 24, 40]
        deconv_test::run_free(p, bi.cview(), bw.cview(), bo.view());
        const std::vector<double> want = ap == deconv_ref::AutoPad::SameUpper
                                             ? std::vector<double>{12, 24, 40}
                                             : std::vector<double>{1, 12, 24};
        EXPECT_EQ(deconv_test::read_all(bo), want) << deconv_ref::auto_pad_str(ap);
    }
}

// ---------------------------------------------------------------- Plan

GenCase plan_case(DType t, int rank, int i) {
    GenCase c = deconv_test::make_case(t, rank, 9000 + i);
    c.api = 1;
    return c;
}

TEST(PlanApi, CreateOnceRunMany) {
    if (!deconv_test::rank_built(2)) GTEST_SKIP();
    deconv_ref::Problem p;
    p.grouped = true;
    p.input_shape = {2, 6, 5, 4};
    p.filter_shape = {3, 2, 2, 3, 2};
    p.strides = {2, 3};
    p.dilations = {1, 2};
    p.pads_begin = {1, 0};
    p.pads_end = {0, 2};
    p.output_padding = {1, 3};
    const auto attrs = deconv_test::to_lib_attrs(p);
    const auto info = deconv::infer_shape(deconv::Op::GroupConvolutionBackpropData, p.input_shape,
                                          p.filter_shape, attrs);
    const deconv::Plan plan = deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData,
                                                   DType::f32, p.input_shape, p.filter_shape, attrs);
    EXPECT_EQ(plan.shape().output_shape, info.output_shape);
    EXPECT_EQ(plan.shape().pads_begin, info.pads_begin);
    EXPECT_EQ(plan.shape().pads_end, info.pads_end);
    EXPECT_EQ(plan.shape().strides, info.strides);
    EXPECT_EQ(plan.shape().dilations, info.dilations);
    EXPECT_EQ(plan.shape().output_padding, info.output_padding);
    EXPECT_EQ(plan.shape().groups, 3);
    EXPECT_EQ(plan.dtype(), DType::f32);
    EXPECT_EQ(plan.op(), deconv::Op::GroupConvolutionBackpropData);
    std::mt19937 rng(7);
    Buffer in(DType::f32, p.input_shape), w(DType::f32, p.filter_shape),
        out(DType::f32, info.output_shape);
    const deconv::Plan copy = plan;  // NOLINT: copies share the immutable plan
    deconv::Plan moved = deconv::Plan(plan);
    for (int run = 0; run < 6; run++) {
        const auto vin = deconv_test::random_values(DType::f32, in.count, rng);
        const auto vw = deconv_test::random_values(DType::f32, w.count, rng);
        deconv_test::fill(in, vin);
        deconv_test::fill(w, vw);
        const auto ref = deconv_ref::compute(p, vin, vw);
        const deconv::Plan &which = run % 3 == 0 ? plan : run % 3 == 1 ? copy : moved;
        if (run % 2)
            which.run(in.data(), w.data(), out.data());
        else
            which.run(in.cview(), w.cview(), out.view());
        EXPECT_TRUE(out.guards_intact());
        EXPECT_TRUE(deconv_test::compare_to_reference(DType::f32, deconv_test::read_all(out), ref))
            << "run " << run;
    }
    // Another layer (f32, which every kernel matrix has), assigned over.
    deconv::Plan assigned = deconv::Plan::create(deconv::Op::ConvolutionBackpropData, DType::f32,
                                                 {1, 1, 2, 2}, {1, 1, 1, 1}, deconv::Attributes{});
    assigned = plan;
    EXPECT_EQ(assigned.shape().output_shape, info.output_shape);
    assigned = std::move(moved);
    EXPECT_EQ(assigned.dtype(), DType::f32);
}

// Plan::pack_filter: runs with the packed filter match runs with the caller's filter on every
// path the plan may take (positions and channels schedules, the interleaved kernel, channels-last
// data, the forward op, f16 through f32), and the packing refuses what is not its plan's.
TEST(PackedFilter, SameResultsAsPerRunPackingOnEveryPath) {
    if (!deconv_test::rank_built(2)) GTEST_SKIP();
    struct Layer {
        const char *what;
        deconv::Op op;
        std::vector<int64_t> in, w;
        std::optional<deconv::DataFormat> fmt;
    };
    const std::vector<Layer> layers = {
        {"positions, interleaved", deconv::Op::GroupConvolutionBackpropData, {1, 8, 9, 7}, {4, 2, 3, 3, 3}, {}},
        {"channels", deconv::Op::GroupConvolutionBackpropData, {2, 72, 6, 5}, {1, 72, 16, 3, 3}, {}},
        {"positions, 16 channels", deconv::Op::ConvolutionBackpropData, {1, 6, 9, 11}, {6, 16, 3, 2}, {}},
        {"channels-last", deconv::Op::GroupConvolutionBackpropData, {1, 5, 6, 8}, {2, 4, 3, 3, 2},
         deconv::DataFormat::NXC},
        {"forward", deconv::Op::GroupConvolution, {1, 8, 9, 7}, {2, 5, 4, 3, 3}, {}},
    };
    int ran = 0;
    for (DType t : {DType::f32, DType::f16, DType::i8}) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 rng(31);
        for (const Layer &l : layers) {
            deconv::Attributes a;
            a.strides = {2, 2};
            a.pads_begin = {1, 0};
            a.pads_end = {0, 1};
            if (l.op == deconv::Op::GroupConvolution) a.strides = {1, 2};
            a.data_format = l.fmt;
            const deconv::Plan plan = deconv::Plan::create(l.op, t, l.in, l.w, a);
            Buffer in(t, l.in), w(t, l.w), want(t, plan.shape().output_shape), got(t, plan.shape().output_shape);
            deconv_test::fill(in, deconv_test::random_values(t, in.count, rng));
            deconv_test::fill(w, deconv_test::random_values(t, w.count, rng));
            plan.run(in.data(), w.data(), want.data());
            const deconv::PackedFilter packed = plan.pack_filter(w.cview());
            EXPECT_FALSE(packed.empty());
            EXPECT_GE(packed.bytes(), static_cast<size_t>(w.count) * (t == DType::i8 ? 1 : 2)) << l.what;
            w.fill_bytes(0x5A);  // the packing holds its own copy
            for (int run = 0; run < 2; run++) {
                got.fill_bytes(0xCD);
                const deconv::Plan copy = plan;  // copies share the plan, so the packing serves them
                copy.run(in.cview(), packed, got.view());
                EXPECT_TRUE(got.guards_intact());
                EXPECT_EQ(deconv_test::read_all(got), deconv_test::read_all(want))
                    << l.what << " dtype " << deconv_test::dt_str(t) << " run " << run;
            }
            ran++;
        }
    }
    EXPECT_GT(ran, 0);
}

TEST(PackedFilter, RefusesAnEmptyPackingAndAnotherPlans) {
    if (!deconv_test::rank_built(2)) GTEST_SKIP();
    deconv::Attributes a;
    a.strides = {2, 2};
    const std::vector<int64_t> in_shape = {1, 4, 5, 5}, w_shape = {4, 3, 3, 3};
    const deconv::Plan plan = deconv::Plan::create(deconv::Op::ConvolutionBackpropData, DType::f32, in_shape, w_shape, a);
    const deconv::Plan twin = deconv::Plan::create(deconv::Op::ConvolutionBackpropData, DType::f32, in_shape, w_shape, a);
    Buffer in(DType::f32, in_shape), w(DType::f32, w_shape), out(DType::f32, plan.shape().output_shape);
    out.fill_bytes(0xCD);
    const auto before = out.payload();
    auto message_of = [&](const std::function<void()> &f) -> std::string {
        try {
            f();
        } catch (const deconv::Error &e) {
            EXPECT_EQ(e.kind(), deconv::ErrorKind::InvalidArgument);
            return e.what();
        }
        return "(no error)";
    };
    EXPECT_THAT(message_of([&] { plan.run(in.cview(), deconv::PackedFilter(), out.view()); }),
                HasSubstr("packed filter is empty"));
    const deconv::PackedFilter theirs = twin.pack_filter(w.cview());
    EXPECT_THAT(message_of([&] { plan.run(in.cview(), theirs, out.view()); }),
                HasSubstr("made by another plan"));
    Buffer small(DType::f32, {4, 3, 3, 2});
    EXPECT_THAT(message_of([&] { (void)plan.pack_filter(small.cview()); }),
                HasSubstr("filter shape [4, 3, 3, 2] does not match"));
    EXPECT_EQ(out.payload(), before);  // nothing written
    EXPECT_EQ(deconv::PackedFilter().bytes(), 0u);
}

// Channels-first backprop layers with 16 or more output channels per group run on the
// channels-last kernels over a transposed input copy, their result transposed back into the
// caller's view (runtime/dispatch/impl_layout_twins.cpp, choose_via_channels_last). Every rank and dtype, grouped and
// not, bordered phases and interior ones, through the free function on dense buffers, a Plan
// (and its packed filter) and strided views with permuted axes.
TEST(ChannelsFirstOnChannelsLastKernels, EveryApiRankAndDtype) {
    int ran = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int i = 0; i < 6; i++) {
                std::mt19937 rng(static_cast<uint32_t>(1000 * rank + 10 * i + static_cast<int>(t)));
                GenCase c;
                c.dtype = t;
                c.seed = rng();
                c.api = i % 3;
                deconv_ref::Problem &p = c.p;
                p.grouped = i % 2 == 1;
                const int64_t g = p.grouped ? 2 : 1, ci = 3 + i, co = 16 + 9 * (i % 3);
                p.input_shape = {1 + i % 2, g * ci};
                p.filter_shape = p.grouped ? std::vector<int64_t>{g, ci, co} : std::vector<int64_t>{ci, co};
                for (int a = 0; a < rank; a++) {
                    const int64_t k = 1 + (i + a) % 4, s = 1 + (i + 2 * a) % 3;
                    p.input_shape.push_back(rank == 3 ? 3 + a : 5 + 3 * a + i);
                    p.filter_shape.push_back(k);
                    p.strides.push_back(s);
                    p.pads_begin.push_back(std::min<int64_t>(k - 1, (i + a) % 2));
                    p.pads_end.push_back(0);
                    p.dilations.push_back(1 + (i == 4 && a == 0));
                }
                c.input = deconv_test::random_values(t, deconv_ref::product(p.input_shape), rng);
                c.filter = deconv_test::random_values(t, deconv_ref::product(p.filter_shape), rng);
                EXPECT_TRUE(deconv_test::run_and_check(c));
                ran++;
            }
        }
    }
    EXPECT_GT(ran, 0);
}

// Runs the rest of a test on two threads (slices need two), and on leaving restores the default
// thread count and unsets `env`, the environment variable the test sets (if any).
struct OnTwoThreads {
    explicit OnTwoThreads(const char *env = nullptr) : env_(env) { deconv::set_cpu_threads(2); }
    ~OnTwoThreads() {
        deconv::set_cpu_threads(0);
        if (env_) unsetenv(env_);
    }
    OnTwoThreads(const OnTwoThreads &) = delete;
    OnTwoThreads &operator=(const OnTwoThreads &) = delete;
    const char *env_;
};

// Layers with a batch of at least two images per thread run on two threads in slices of whole
// images (runtime/cpu/cpu_executor.cpp, Slicing::images): channels-first ones on the channels-last
// kernels, each slice transposing its images' input in, computing them and transposing their
// output back; channels-last ones, each slice copying its images into the bordered input and
// computing them. 5 and 9 images over 4 and more slices, slices of one and of several images (a
// 2D layer with rows of 38 outputs x 40 channels: 12 KiB per image, so one slice holds several),
// bordered and unbordered phases, every rank, dtype and API (strided views included).
void check_image_slices(DataFormat format) {
    const OnTwoThreads two_threads;
    int ran = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int i = 0; i < 4; i++) {
                std::mt19937 rng(static_cast<uint32_t>(2000 * rank + 10 * i + static_cast<int>(t)));
                GenCase c;
                c.format = format;
                c.dtype = t;
                c.seed = rng();
                c.api = (i + rank) % 3;
                deconv_ref::Problem &p = c.p;
                p.grouped = i % 2 == 1;
                const int64_t g = p.grouped ? 2 : 1, ci = 4 + 2 * i, co = i < 2 ? 16 : 40;
                p.input_shape = {i % 2 == 0 ? 5 : 9, g * ci};
                p.filter_shape = p.grouped ? std::vector<int64_t>{g, ci, co} : std::vector<int64_t>{ci, co};
                for (int a = 0; a < rank; a++) {
                    const int64_t k = 2 + (i + a) % 2, s = 1 + (i + a) % 2;
                    p.input_shape.push_back(rank == 3 ? 3 : a == rank - 1 ? 19 : 4);
                    p.filter_shape.push_back(k);
                    p.strides.push_back(s);
                    p.pads_begin.push_back(i % 2);
                    p.pads_end.push_back(0);
                }
                c.input = deconv_test::random_values(t, deconv_ref::product(p.input_shape), rng);
                c.filter = deconv_test::random_values(t, deconv_ref::product(p.filter_shape), rng);
                EXPECT_TRUE(deconv_test::run_and_check(c));
                ran++;
            }
        }
    }
    EXPECT_GT(ran, 0);
}

TEST(ChannelsFirstOnChannelsLastKernels, ImageSlicesOnTwoThreads) { check_image_slices(DataFormat::NCX); }
TEST(ChannelsLastLayers, ImageSlicesOnTwoThreads) { check_image_slices(DataFormat::NXC); }

TEST(PlanApi, PlansForEveryDtypeAndRank) {
    int ran = 0;
    for (DType t : deconv_test::all_dtypes())
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::dtype_built(t) || !deconv_test::rank_built(rank)) continue;
            for (int i = 0; i < 4; i++) {
                const auto r = deconv_test::run_and_check(plan_case(t, rank, i));
                EXPECT_TRUE(r);
                ran++;
            }
        }
    EXPECT_GT(ran, 0);
}

// Threads running one plan at once, each with its own data. Both layers read a zero-bordered
// input copy whose buffer the plan keeps between runs (runtime/cpu/bordered_input.h): few output
// channels (positions schedule, interleaved) and many (channels schedule).
class ConcurrentRuns : public ::testing::TestWithParam<bool> {};

TEST_P(ConcurrentRuns, OfOnePlan) {
    if (!deconv_test::rank_built(2)) GTEST_SKIP();
    deconv_ref::Problem p;
    p.grouped = true;
    if (GetParam()) {  // 16 output channels, 72 input channels x 4 taps per phase: channels schedule
        p.input_shape = {1, 72, 9, 7};
        p.filter_shape = {1, 72, 16, 3, 3};
    } else {
        p.input_shape = {1, 8, 9, 7};
        p.filter_shape = {4, 2, 3, 3, 3};
    }
    p.strides = {2, 2};
    p.pads_begin = {1, 1};
    p.pads_end = {1, 0};
    const auto attrs = deconv_test::to_lib_attrs(p);
    const deconv::Plan plan = deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData,
                                                   DType::f32, p.input_shape, p.filter_shape, attrs);
    constexpr int kThreads = 4, kRuns = 8;
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> threads;
    for (int th = 0; th < kThreads; th++)
        threads.emplace_back([&, th] {
            std::mt19937 rng(100 + th);
            Buffer in(DType::f32, p.input_shape), w(DType::f32, p.filter_shape),
                out(DType::f32, plan.shape().output_shape);
            for (int r = 0; r < kRuns; r++) {
                const auto vin = deconv_test::random_values(DType::f32, in.count, rng);
                const auto vw = deconv_test::random_values(DType::f32, w.count, rng);
                deconv_test::fill(in, vin);
                deconv_test::fill(w, vw);
                try {
                    plan.run(in.data(), w.data(), out.data());
                } catch (const std::exception &e) {
                    errors[th] = e.what();
                    return;
                }
                const auto res = deconv_test::compare_to_reference(
                    DType::f32, deconv_test::read_all(out), deconv_ref::compute(p, vin, vw));
                if (!res) {
                    errors[th] = res.message();
                    return;
                }
            }
        });
    for (auto &t : threads) t.join();
    for (int th = 0; th < kThreads; th++) EXPECT_EQ(errors[th], "") << "thread " << th;
}

INSTANTIATE_TEST_SUITE_P(PlanApi, ConcurrentRuns, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &i) {
                             return std::string(i.param ? "ManyChannels" : "FewChannels");
                         });

TEST(PlanApi, ConcurrentFreeFunctionCalls) {
    constexpr int kThreads = 4;
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> threads;
    for (int th = 0; th < kThreads; th++)
        threads.emplace_back([&, th] {
            for (int i = 0; i < 20; i++) {
                GenCase c = deconv_test::make_case(DType::f32, 1 + (i + th) % 3, 7000 + th * 100 + i);
                if (!deconv_test::rank_built(static_cast<int>(c.p.input_shape.size()) - 2)) continue;
                c.api = 0;
                const auto r = deconv_test::run_and_check(c);
                if (!r) {
                    errors[th] = r.message();
                    return;
                }
            }
        });
    for (auto &t : threads) t.join();
    for (int th = 0; th < kThreads; th++) EXPECT_EQ(errors[th], "") << "thread " << th;
}

// macs(): "multiply-accumulates the kernels perform (nominal count less border clipping)",
// i.e. the number of (input, tap) pairs whose output position lies inside the output, which the
// reference counts.
TEST(PlanApi, MacsCountInRangeTerms) {
    int checked = 0, bad = 0;
    for (int rank = 1; rank <= 3; rank++) {
        if (!deconv_test::rank_built(rank)) continue;
        for (int i = 0; i < 40; i++) {
            const GenCase c = deconv_test::make_case(DType::f32, rank, 8000 + i);
            const auto ref = deconv_ref::compute(c.p, c.input, c.filter);
            const auto plan = deconv::Plan::create(deconv_test::lib_op(c.p), DType::f32,
                                                   c.p.input_shape, c.p.filter_shape,
                                                   deconv_test::to_lib_attrs(c.p), c.p.output_shape);
            if (plan.macs() != ref.macs && ++bad <= 5)
                ADD_FAILURE() << deconv_ref::describe(c.p) << ": macs() " << plan.macs()
                              << ", in-range terms " << ref.macs;
            checked++;
        }
    }
    EXPECT_EQ(bad, 0) << "of " << checked;
}

// ---------------------------------------------------------------- views

// A crop of a larger tensor: the input is a window [1:2, 2:6, 3:8, 4:10] of a [2, 6, 10, 12]
// tensor, and the output a window of a larger sentinel-filled tensor whose rest must stay
// untouched.
TEST(Views, CroppedInputAndOutputWindows) {
    if (!deconv_test::rank_built(2)) GTEST_SKIP();
    for (DType t : {DType::f32, DType::f16, DType::i8, DType::f64}) {
        if (!deconv_test::dtype_built(t)) continue;
        SCOPED_TRACE(deconv_test::dt_str(t));
        deconv_ref::Problem p;
        p.grouped = true;
        p.input_shape = {1, 4, 5, 6};
        p.filter_shape = {2, 2, 3, 2, 3};
        p.strides = {2, 1};
        p.dilations = {1, 2};
        p.pads_begin = {0, 1};
        p.pads_end = {1, 0};
        const std::vector<int64_t> big{2, 6, 10, 12}, big_strides{720, 120, 12, 1};
        const int64_t in_off = 1 * 720 + 2 * 120 + 3 * 12 + 4;
        std::mt19937 rng(99);
        const auto big_vals = deconv_test::random_values(t, deconv_ref::product(big), rng);
        Buffer bigbuf(t, big);
        const auto stored = deconv_test::fill(bigbuf, big_vals);
        std::vector<double> window(static_cast<size_t>(deconv_ref::product(p.input_shape)));
        for (int64_t i = 0; i < static_cast<int64_t>(window.size()); i++)
            window[i] = stored[in_off + deconv_test::offset_of(i, p.input_shape, big_strides)];
        const auto vw = deconv_test::random_values(t, deconv_ref::product(p.filter_shape), rng);
        Buffer w(t, p.filter_shape);
        deconv_test::fill(w, vw);
        const auto ref = deconv_ref::compute(p, window, vw);
        const auto &os = ref.shape.output_shape;  // [1, 6, Y, Z]
        const std::vector<int64_t> obig{1, os[1] + 2, os[2] + 3, os[3] + 5};
        const std::vector<int64_t> ostr{obig[1] * obig[2] * obig[3], obig[2] * obig[3], obig[3], 1};
        const int64_t out_off = 1 * ostr[1] + 2 * ostr[2] + 3;
        Buffer out(t, obig);
        out.fill_bytes(0xCD);
        const auto before = out.payload();
        const char *in_ptr =
            static_cast<const char *>(bigbuf.data()) + in_off * static_cast<int64_t>(bigbuf.elem());
        char *out_ptr = static_cast<char *>(out.data()) + out_off * static_cast<int64_t>(out.elem());
        deconv::ConstTensorView iv(in_ptr, t, p.input_shape, big_strides);
        deconv::TensorView ov{out_ptr, t, os, ostr};
        ASSERT_NO_THROW(deconv_test::run_free(p, iv, w.cview(), ov));
        std::vector<double> got(ref.output.size());
        std::vector<char> used(static_cast<size_t>(out.count), 0);
        for (int64_t i = 0; i < static_cast<int64_t>(got.size()); i++) {
            const int64_t off = out_off + deconv_test::offset_of(i, os, ostr);
            got[i] = out.get(off);
            used[off] = 1;
        }
        EXPECT_TRUE(deconv_test::compare_to_reference(t, got, ref));
        const auto after = out.payload();
        int64_t touched = 0;
        for (int64_t e = 0; e < out.count; e++)
            if (!used[e] && std::memcmp(&after[e * out.elem()], &before[e * out.elem()], out.elem()))
                touched++;
        EXPECT_EQ(touched, 0) << "elements outside the output window were written";
        EXPECT_TRUE(out.guards_intact());
    }
}

// Inputs may overlap: a batch broadcast with stride 0, and a filter shared by all groups.
TEST(Views, BroadcastInputsWithZeroStrides) {
    if (!deconv_test::rank_built(1)) GTEST_SKIP();
    deconv_ref::Problem p;
    p.grouped = true;
    p.input_shape = {3, 4, 7};        // batch axis broadcast
    p.filter_shape = {2, 2, 3, 3};    // group axis broadcast
    p.strides = {3};
    p.pads_begin = {1};
    p.pads_end = {2};
    std::mt19937 rng(5);
    const auto one_batch = deconv_test::random_values(DType::f32, 4 * 7, rng);
    const auto one_group = deconv_test::random_values(DType::f32, 2 * 3 * 3, rng);
    std::vector<double> in_full, w_full;
    for (int n = 0; n < 3; n++) in_full.insert(in_full.end(), one_batch.begin(), one_batch.end());
    for (int g = 0; g < 2; g++) w_full.insert(w_full.end(), one_group.begin(), one_group.end());
    const auto ref = deconv_ref::compute(p, in_full, w_full);
    Buffer in(DType::f32, {4, 7}), w(DType::f32, {2, 3, 3}), out(DType::f32, ref.shape.output_shape);
    deconv_test::fill(in, one_batch);
    deconv_test::fill(w, one_group);
    deconv::ConstTensorView iv(in.data(), DType::f32, p.input_shape, {0, 7, 1});
    deconv::ConstTensorView wv(w.data(), DType::f32, p.filter_shape, {0, 9, 3, 1});
    ASSERT_NO_THROW(deconv_test::run_free(p, iv, wv, out.view()));
    EXPECT_TRUE(deconv_test::compare_to_reference(DType::f32, deconv_test::read_all(out), ref));
    EXPECT_TRUE(out.guards_intact());
}

// Explicit dense strides must behave as empty strides; channels-last layouts as permuted.
TEST(Views, ExplicitDenseAndChannelsLast) {
    if (!deconv_test::rank_built(2)) GTEST_SKIP();
    deconv_ref::Problem p;
    p.grouped = false;
    p.input_shape = {2, 3, 4, 5};
    p.filter_shape = {3, 2, 2, 3};
    p.strides = {2, 2};
    std::mt19937 rng(11);
    const auto vin = deconv_test::random_values(DType::f32, deconv_ref::product(p.input_shape), rng);
    const auto vw = deconv_test::random_values(DType::f32, deconv_ref::product(p.filter_shape), rng);
    const auto ref = deconv_ref::compute(p, vin, vw);
    const auto &os = ref.shape.output_shape;  // [2, 2, 8, 11]
    // dense, spelled out
    {
        Buffer in(DType::f32, p.input_shape), w(DType::f32, p.filter_shape), out(DType::f32, os);
        deconv_test::fill(in, vin);
        deconv_test::fill(w, vw);
        deconv::ConstTensorView iv(in.data(), DType::f32, p.input_shape, {60, 20, 5, 1});
        deconv::ConstTensorView wv(w.data(), DType::f32, p.filter_shape, {12, 6, 3, 1});
        deconv::TensorView ov{out.data(), DType::f32, os,
                              {os[1] * os[2] * os[3], os[2] * os[3], os[3], 1}};
        ASSERT_NO_THROW(deconv_test::run_free(p, iv, wv, ov));
        EXPECT_TRUE(deconv_test::compare_to_reference(DType::f32, deconv_test::read_all(out), ref));
    }
    // NHWC input and output
    {
        const std::vector<int64_t> in_str{4 * 5 * 3, 1, 5 * 3, 3};
        const std::vector<int64_t> out_str{os[2] * os[3] * os[1], 1, os[3] * os[1], os[1]};
        Buffer in(DType::f32, p.input_shape), w(DType::f32, p.filter_shape), out(DType::f32, os);
        for (int64_t i = 0; i < in.count; i++)
            in.set(deconv_test::offset_of(i, p.input_shape, in_str), vin[i]);
        deconv_test::fill(w, vw);
        out.fill_bytes(0xCD);
        deconv::ConstTensorView iv(in.data(), DType::f32, p.input_shape, in_str);
        deconv::TensorView ov{out.data(), DType::f32, os, out_str};
        ASSERT_NO_THROW(deconv_test::run_free(p, iv, w.cview(), ov));
        std::vector<double> got(ref.output.size());
        for (int64_t i = 0; i < static_cast<int64_t>(got.size()); i++)
            got[i] = out.get(deconv_test::offset_of(i, os, out_str));
        EXPECT_TRUE(deconv_test::compare_to_reference(DType::f32, got, ref));
        EXPECT_TRUE(out.guards_intact());
    }
}

// ---------------------------------------------------------------- build and machine facts

TEST(BuildFacts, VersionDtypesRanksAndCpuVariant) {
    EXPECT_TRUE(std::regex_match(std::string(deconv::version()), std::regex(R"(\d+\.\d+\.\d+)")))
        << deconv::version();
    const auto dts = deconv::built_dtypes();
    EXPECT_FALSE(dts.empty());
    const auto ranks = deconv::built_ranks();
    EXPECT_FALSE(ranks.empty());
    for (int r : ranks) EXPECT_TRUE(r >= 1 && r <= 3) << r;
    const std::string v = deconv::cpu_variant();
#if defined(__aarch64__)
    const std::vector<std::string> order{"neon", "dotprod_fp16"};  // lowest first
#else
    const std::vector<std::string> order{"sse41", "avx2", "avx512"};
#endif
    EXPECT_NE(std::find(order.begin(), order.end(), v), order.end()) << v;
    // Under DECONV_CPU_VARIANT (set by the CTest variants of this suite) the choice is capped.
    const char *cap = std::getenv("DECONV_CPU_VARIANT");
    if (cap && *cap) {
        const auto pos = [&](const std::string &s) {
            return std::find(order.begin(), order.end(), s) - order.begin();
        };
        EXPECT_LE(pos(v), pos(cap)) << "variant " << v << " above the cap " << cap;
        std::printf("[ variant  ] DECONV_CPU_VARIANT=%s -> %s\n", cap, v.c_str());
    } else {
        std::printf("[ variant  ] %s\n", v.c_str());
    }
    // The variant that runs is one this library was built with (DECONV_CPU_VARIANTS).
    const auto built = deconv::built_cpu_variants();
    EXPECT_NE(std::find(built.begin(), built.end(), v), built.end()) << v;
}

// A library whose built variants the CPU (or the cap) does not allow: a native build run below its
// build machine's variant. cpu_variant() says "none" and a plan is refused as Unsupported, naming
// the variants built and the option that builds the others; elsewhere the plan is made. The
// native build's CTest run under DECONV_CPU_VARIANT=sse41 takes the first path.
TEST(CpuVariants, NoRunnableVariantIsUnsupported) {
    deconv::Attributes a;
    a.strides = {2};
    a.pads_begin = {0};
    a.pads_end = {0};
    const auto create = [&] {
        return deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, deconv::DType::f32, {1, 4, 8},
                                    {1, 4, 4, 2}, a);
    };
    if (deconv::cpu_variant() != "none") {
        EXPECT_NO_THROW(create());
        return;
    }
    try {
        create();
        ADD_FAILURE() << "a plan was made with no runnable CPU variant";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), deconv::ErrorKind::Unsupported);
        const std::string m = e.what();
        EXPECT_NE(m.find("built for " + deconv::built_cpu_variants().front()), std::string::npos) << m;
        EXPECT_NE(m.find("-DDECONV_CPU_VARIANTS=all"), std::string::npos) << m;
    }
}

}  // namespace

// Every dtype through row widths and channel counts on both sides of each schedule branch's
// threshold (4-lane, one-vector and two-vector rows; co tiles of 3, 4, 8 and 16; vectors of 4 to 16
// lanes depending on the accumulator type), in 1D where rows are the whole layer. Regression:
// Halide 14 miscompiled the one-vector branch for 64-bit accumulators on AVX-512 (f64 and i32
// layers of 8-15 positions and >= 8 channels stored zeros).
// Runs `p` (dense views, the free function) on random data of dtype `t` and compares the output
// with the reference.
// `schedule`: pins (ExecOptions::schedule) for the run.
static ::testing::AssertionResult random_run_matches_reference(DType t, const deconv_ref::Problem &p, std::mt19937 &rng,
                                                               const std::string &schedule = "") {
    Buffer in(t, p.input_shape), w(t, p.filter_shape);
    const auto vin = deconv_test::fill(in, deconv_test::random_values(t, in.count, rng));
    const auto vw = deconv_test::fill(w, deconv_test::random_values(t, w.count, rng));
    const auto ref = deconv_ref::compute(p, vin, vw);
    Buffer out(t, ref.shape.output_shape);
    if (schedule.empty()) {
        deconv_test::run_free(p, in.cview(), w.cview(), out.view());
    } else {
        deconv::ExecOptions exec;
        exec.schedule = schedule;
        const auto attrs = deconv_test::to_lib_attrs(p);
        if (p.grouped)
            deconv::group_convolution_backprop_data(in.cview(), w.cview(), out.view(), attrs, p.output_shape, exec);
        else
            deconv::convolution_backprop_data(in.cview(), w.cview(), out.view(), attrs, p.output_shape, exec);
    }
    return deconv_test::compare_to_reference(t, deconv_test::read_all(out), ref);
}

TEST(ScheduleBranches, EveryRowWidthAndChannelCount) {
    if (!deconv_test::rank_built(1)) GTEST_SKIP();
    int ran = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 rng(11);
        for (int64_t x : {3, 4, 7, 8, 12, 15, 16, 24, 33, 40})
            for (int64_t co : {1, 2, 3, 4, 5, 7, 8, 12, 16, 20, 33, 64})
                for (int64_t ci : {2, 9}) {
                    deconv_ref::Problem p;
                    p.grouped = true;
                    p.input_shape = {1, ci, x};
                    p.filter_shape = {1, ci, co, 2};
                    p.pads_end = {1};
                    EXPECT_TRUE(random_run_matches_reference(t, p, rng))
                        << deconv_test::dt_str(t) << " X=" << x << " C_OUT=" << co << " C_IN=" << ci;
                    ran++;
                }
    }
    EXPECT_GT(ran, 0);
}

static void add_outer_axis(deconv_ref::Problem &p, int64_t x, int64_t k, int64_t s, int64_t pad);

// Channel-vectorized kernels tile rows of four or five positions over two rows (4 x 2 positions
// x 3 vectors): both data layouts (channels-first layers with at least 16 output channels run
// on channels-last kernels, or on channels-first ones when their phases have one tap and 128 or
// more output channels: 2048 -> 144), heights of 2 and 3 (the second tile overlaps the first),
// channel counts around the 48-channel tile, ranks 2-3.
TEST(ScheduleBranches, TwoRowTilesOfNarrowRows) {
    int ran = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 rng(41);
        for (int rank : {2, 3}) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int64_t width : {4, 5})  // kernel = stride = 2: each phase is the input's size
                for (int64_t height : {2, 3})
                    for (auto [ci, co] : {std::pair<int64_t, int64_t>{3, 48}, {3, 50}, {2048, 144}, {2, 100}}) {
                        if (ci > 3 && (rank == 3 || t == DType::f64 || t == DType::f16)) continue;  // keep it quick
                        deconv_ref::Problem p;
                        p.grouped = true;
                        p.input_shape = {1, ci, width};
                        p.filter_shape = {1, ci, co, 2};
                        p.strides = {2};
                        p.pads_begin = {0};
                        p.pads_end = {0};
                        add_outer_axis(p, height, 2, 2, 0);
                        if (rank == 3) add_outer_axis(p, 2, 1, 1, 0);
                        EXPECT_TRUE(random_run_matches_reference(t, p, rng))
                            << deconv_test::dt_str(t) << " " << deconv_ref::describe(p);
                        ran++;
                    }
        }
    }
    EXPECT_GT(ran, 0);
}

// A grouped 1D layer: n images of `groups` groups of ci -> co channels, x inputs, kernel k,
// stride s, pads pb and pe.
static deconv_ref::Problem grouped_1d(int64_t n, int64_t groups, int64_t ci, int64_t co, int64_t x, int64_t k,
                                      int64_t s, int64_t pb, int64_t pe) {
    deconv_ref::Problem p;
    p.grouped = true;
    p.input_shape = {n, groups * ci, x};
    p.filter_shape = {groups, ci, co, k};
    p.strides = {s};
    p.pads_begin = {pb};
    p.pads_end = {pe};
    return p;
}

// Makes a grouped 1D problem 2D: an outer spatial axis of `x` inputs, kernel `k`, stride `s`
// and pad `pad` on both sides.
static void add_outer_axis(deconv_ref::Problem &p, int64_t x, int64_t k, int64_t s, int64_t pad) {
    p.input_shape.insert(p.input_shape.begin() + 2, x);
    p.filter_shape.insert(p.filter_shape.begin() + 3, k);
    p.strides.insert(p.strides.begin(), s);
    p.pads_begin.insert(p.pads_begin.begin(), pad);
    p.pads_end.insert(p.pads_end.begin(), pad);
}

// Depthwise layers with two taps per phase along the innermost axis (kernel = 2 x stride, the
// common upsampling) take the interleaved kernel's specialization with the taps innermost and
// unrolled; one and three taps per phase take the general branches beside it. In 2D/3D, rows 16
// groups long take the branch for rows a whole number of vectors long; longer rows that are no
// multiple of 16 groups (17 to 42 here) run their first multiple of 16 on it and the rest (2 to
// 10 groups: scalar, or 4-lane tiles) in a second call (interleaved_exact_rows). Pads 0 at
// stride 8 and 1 and 3 at stride 2 take the tiles specialized for a pad residue (with the input's
// origin moved by the rest of the pad: 3 = 2 + 1), the other pads the general ones.
TEST(InterleavedPhases, DepthwiseTwoTapsPerPhase) {
    int ran = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 rng(29);
        for (int rank : {1, 2, 3}) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int64_t s : {2, 8})
                for (int64_t k : {s, 2 * s, 2 * s + 1})
                    for (int64_t x : {5, 16, 17, 40})
                        for (int64_t pb : {int64_t(0), int64_t(1), s - 1, s + 1}) {
                            if (rank == 3 && (k != 2 * s || x == 5)) continue;
                            deconv_ref::Problem p = grouped_1d(2, 3, 1, 1, x, k, s, pb, pb);
                            for (int a = 1; a < rank; a++) add_outer_axis(p, a == 1 ? 4 : 3, 4, 2, 1);
                            EXPECT_TRUE(random_run_matches_reference(t, p, rng))
                                << deconv_test::dt_str(t) << " " << deconv_ref::describe(p);
                            ran++;
                        }
        }
    }
    EXPECT_GT(ran, 0);
}

// Layers with 16 or more output channels whose weights fit half of L2 and whose rows hold 32 or
// more groups of 2 outputs run on the blocked interleaved kernel (hifigan_up3, unet_up4,
// unet3d_up): tiles of 2 vectors x 6 channels (a channel count that is no multiple of 6
// recomputes its last tile), over blocks of 32 position tiles in 1D (rows longer than one block
// end in a partial block) and of rows in 2D/3D (2D with 160 input channels x 40 positions: 20
// rows per block, so 24 rows make a partial second block). Rows of 39, 40 and 1100 groups are no
// multiple of 32: their last groups run on the plain interleaved kernel (interleaved_tail_kernel).
// Kernels of 2 taps per phase
// (unrolled) and of 1 and 3 taps, pads reaching into the margins, groups and batch, and a
// reduction long enough (160 channels) that the channel-vectorized schedule would be chosen
// otherwise. In 3D the kernel reads an input copy with the channels between the rows' innermost
// axis and the outer ones (bordered_buffer's channels_in_rows), margins or not (k 2).
TEST(InterleavedPhases, ManyChannelsInBlocks) {
    int ran = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 rng(31);
        for (int rank : {1, 2, 3}) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int64_t co : {16, 22})
                for (int64_t k : {4, 2, 3})
                    for (auto [ci, x] : {std::pair<int64_t, int64_t>{5, 40}, {5, 1100}, {160, 40}}) {
                        if ((rank > 1 && x > 40) || (rank == 3 && ci > 5)) continue;
                        const int64_t pb = k == 2 ? 0 : co == 16 ? 1 : 2, groups = ci == 5 ? 2 : 1;
                        deconv_ref::Problem p = grouped_1d(groups, groups, ci, co, x, k, 2, pb, pb);
                        for (int a = 1; a < rank; a++) add_outer_axis(p, a == 1 ? 12 : 3, k, 2, pb);
                        EXPECT_TRUE(random_run_matches_reference(t, p, rng))
                            << deconv_test::dt_str(t) << " " << deconv_ref::describe(p);
                        ran++;
                    }
        }
    }
    EXPECT_GT(ran, 0);
}

// Channels-first layers on the channel-vectorized kernels whose rows are narrower than the
// four-position tiles pack their filter in blocks of 192 output channels, one kernel call per
// block: one block (129), tails of 8 and 16 channels, batch and groups, rows of 2 and 3 outputs
// per phase. 70 input channels x 4 taps per phase keep the reduction long enough
// for the channel-vectorized schedule.
TEST(ChannelBlocks, NarrowRowsAcrossBlocks) {
    int ran = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t) || !deconv_test::rank_built(2)) continue;
        std::mt19937 rng(41);
        for (int64_t co : {129, 200, 400})
            for (int64_t x : {2, 3}) {
                const int64_t groups = co == 200 ? 2 : 1;
                deconv_ref::Problem p = grouped_1d(2, groups, 70, co, x, 4, 2, 1, 1);
                add_outer_axis(p, 3, 4, 2, 1);
                EXPECT_TRUE(random_run_matches_reference(t, p, rng)) << deconv_test::dt_str(t) << " " << deconv_ref::describe(p);
                ran++;
            }
    }
    EXPECT_GT(ran, 0);
}

// A random case of a grouped layer: n images, `groups` groups of ci -> co channels, the spatial
// axes and attributes appended by `add_axes`, then data drawn from `rng`.
template <typename AddAxes>
static GenCase grouped_random_case(DType t, std::mt19937 &rng, int api, int64_t n, int64_t groups, int64_t ci,
                                   int64_t co, const AddAxes &add_axes) {
    GenCase c;
    c.dtype = t;
    c.seed = rng();
    c.api = api;
    c.p.grouped = true;
    c.p.input_shape = {n, groups * ci};
    c.p.filter_shape = {groups, ci, co};
    add_axes(c.p);
    c.input = deconv_test::random_values(t, deconv_ref::product(c.p.input_shape), rng);
    c.filter = deconv_test::random_values(t, deconv_ref::product(c.p.filter_shape), rng);
    return c;
}

// Layers whose phase rows are narrower than the channels-last position tile and whose batch is
// 16 or more images run with the images as the innermost axis of the next rank's kernel, one
// call per tap window of each phase (runtime/dispatch/impl_batch_rows.cpp, choose_batch_rows; dcgan_l2): ranks 1 and
// 2, rows of 1-5 inputs, pads inside and past the input (windows of fewer taps, outputs of no
// tap), dilations 1-3 (several input steps per tap), kernel 1 at stride 2 (phases of no tap),
// groups, channel counts around the tiles (even for bf16's channel pairs), every API.
TEST(BatchRows, NarrowPhasesOfWideBatches) {
    int ran = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank : {1, 2}) {
            if (!deconv_test::rank_built(rank) || !deconv_test::rank_built(rank + 1)) continue;
            struct Axis {
                int64_t x, k, s, d, pb, pe;
            };
            for (const Axis &ax : {Axis{4, 4, 2, 1, 1, 1}, Axis{3, 3, 2, 2, 2, 0}, Axis{1, 5, 3, 1, 0, 3},
                                   Axis{5, 1, 2, 1, 0, 0}, Axis{2, 3, 1, 3, 1, 2}})
                for (auto [n, groups, ci, co] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{16, 1, 6, 16},
                                                  {19, 2, 4, 33}}) {
                    std::mt19937 rng(static_cast<uint32_t>(61 + i));
                    const GenCase c = grouped_random_case(t, rng, i++ % 3, n, groups, ci, co, [&](deconv_ref::Problem &p) {
                        for (int a = 0; a < rank; a++) {
                            // The outer axis of 2D layers: 3 inputs, kernel 2 at stride 2.
                            const bool inner = a == rank - 1;
                            p.input_shape.push_back(inner ? ax.x : 3);
                            p.filter_shape.push_back(inner ? ax.k : 2);
                            p.strides.push_back(inner ? ax.s : 2);
                            p.dilations.push_back(inner ? ax.d : 1);
                            p.pads_begin.push_back(inner ? ax.pb : 1);
                            p.pads_end.push_back(inner ? ax.pe : 0);
                        }
                    });
                    EXPECT_TRUE(deconv_test::run_and_check(c));
                    ran++;
                }
        }
    }
    EXPECT_GT(ran, 0);
}

// Batch rows on two threads as tasks (runtime/cpu/batch_rows_executor.cpp): many (phase, window)
// calls (kernel 4 stride 2 on 4 inputs: three windows per phase and axis), and, rank 2, four
// calls of one output row each (one input row, kernel 1 x 4, stride 1 x 2), whose images split
// into runs of whole row tiles (40 and 41 images: a last run of no whole tile). Every dtype
// built, ranks 1 and 2, against the reference.
TEST(BatchRows, CallsAsTasksOnTwoThreads) {
    const OnTwoThreads two_threads;
    int ran = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank : {1, 2}) {
            if (!deconv_test::rank_built(rank) || !deconv_test::rank_built(rank + 1)) continue;
            for (bool one_row : {false, true}) {
                if (one_row && rank == 1) continue;
                for (auto [n, co] : {std::pair<int64_t, int64_t>{40, 33}, {41, 16}}) {
                    std::mt19937 rng(static_cast<uint32_t>(171 + i));
                    const GenCase c = grouped_random_case(t, rng, i++ % 3, n, 1, 128, co, [&](deconv_ref::Problem &p) {
                        for (int a = 0; a < rank; a++) {
                            const bool row = one_row && a == 0;
                            p.input_shape.push_back(row ? 1 : one_row ? 2 : 4);
                            p.filter_shape.push_back(row ? 1 : 4);
                            p.strides.push_back(row ? 1 : 2);
                            p.dilations.push_back(1);
                            p.pads_begin.push_back(row ? 0 : 1);
                            p.pads_end.push_back(row ? 0 : 1);
                        }
                    });
                    EXPECT_TRUE(deconv_test::run_and_check(c)) << deconv_ref::describe(c.p);
                    ran++;
                }
            }
        }
    }
    EXPECT_GT(ran, 0);
}

// Batches of 4 to 15 images whose phase kernels would run tap windows narrower than the
// four-position tile (2x2 and 3x3 inputs, kernel 4 stride 1: every window one output wide), 96 ->
// 64 channels (a full channel tile on AVX-512), run as batch rows
// (runtime/dispatch/impl_batch_rows.cpp, choose_batch_rows); batches of 2 do not. Ranks 1 and 2,
// every dtype built against the reference, the plan checked for f32 on x86-64, where nothing pins
// a knob.
TEST(BatchRows, NarrowWindowsOfSmallBatches) {
    int ran = 0, i = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank : {1, 2}) {
            if (!deconv_test::rank_built(rank) || !deconv_test::rank_built(rank + 1)) continue;
            for (auto [n, x] : {std::pair<int64_t, int64_t>{8, 2}, {5, 3}, {2, 2}}) {
                std::mt19937 rng(static_cast<uint32_t>(211 + i));
                const int64_t width = x;  // (a lambda cannot capture a structured binding in C++17)
                const GenCase c = grouped_random_case(t, rng, i++ % 3, n, 1, 96, 64, [&](deconv_ref::Problem &p) {
                    for (int a = 0; a < rank; a++) {
                        p.input_shape.push_back(width);
                        p.filter_shape.push_back(4);
                        p.strides.push_back(1);
                        p.dilations.push_back(1);
                        p.pads_begin.push_back(1);
                        p.pads_end.push_back(1);
                    }
                });
#if defined(__x86_64__)
                if (t == DType::f32) {
                    deconv::Attributes a = deconv_test::to_lib_attrs(c.p);
                    const std::string how = deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, DType::f32,
                                                                 c.p.input_shape, c.p.filter_shape, a)
                                                .describe();
                    if (how.find("policy all auto") != std::string::npos)
                        EXPECT_EQ(how.find("batch rows") != std::string::npos, n >= 4) << how;
                }
#endif
                EXPECT_TRUE(deconv_test::run_and_check(c)) << deconv_ref::describe(c.p);
                ran++;
            }
        }
    }
    EXPECT_GT(ran, 0);
}

// Layers of 16 images, 1040 -> 130 output channels, ranks 1 and 2, f32, every API, for the batch
// rows' channel blocks: `add_axis(p, rank, a)` adds spatial axis a of each, `check_plan` reads each
// plan's describe(), and each result is checked against the reference. Returns how many ran.
template <typename AddAxis, typename CheckPlan>
int run_wide_batch_cases(uint32_t seed, const AddAxis &add_axis, const CheckPlan &check_plan) {
    int ran = 0;
    for (int rank : {1, 2}) {
        if (!deconv_test::rank_built(rank) || !deconv_test::rank_built(rank + 1)) continue;
        std::mt19937 rng(static_cast<uint32_t>(seed + rank));
        const GenCase c = grouped_random_case(DType::f32, rng, rank % 3, 16, 1, 1040, 130, [&](deconv_ref::Problem &p) {
            for (int a = 0; a < rank; a++) add_axis(p, rank, a);
        });
        deconv::Attributes a = deconv_test::to_lib_attrs(c.p);
        check_plan(deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, DType::f32, c.p.input_shape,
                                        c.p.filter_shape, a)
                       .describe());
        EXPECT_TRUE(deconv_test::run_and_check(c)) << deconv_ref::describe(c.p);
        ran++;
    }
    return ran;
}

// Batch rows whose call would take more than 1 MiB of weights (every output channel x the phase
// reduction) run in blocks of one channel tile (runtime/dispatch/layer_classes.cpp,
// batch_rows_channel_block): 130 output channels (a last block of 2) from 1040 input channels,
// kernel 4 stride 2 on rows of 4 inputs. The blocks are checked in the plan on x86-64, where
// nothing pins a knob.
TEST(BatchRows, ChannelBlocksPastTheWeightLimit) {
    if (!deconv_test::dtype_built(DType::f32)) GTEST_SKIP() << "f32 is not in this build";
    const int ran = run_wide_batch_cases(
        97,
        [](deconv_ref::Problem &p, int rank, int a) {
            const bool inner = a == rank - 1;
            p.input_shape.push_back(inner ? 4 : 3);
            p.filter_shape.push_back(inner ? 4 : 2);
            p.strides.push_back(2);
            p.pads_begin.push_back(1);
            p.pads_end.push_back(inner ? 1 : 0);
        },
        [](const std::string &how) {
            EXPECT_NE(how.find("batch rows"), std::string::npos) << how;
#if defined(__x86_64__)
            if (how.find("policy all auto") != std::string::npos)
                EXPECT_NE(how.find("channel blocks of"), std::string::npos) << how;
#endif
        });
    EXPECT_GT(ran, 0);
}

// Projections from a 1x1 input (kernel 4, stride 1: each output reads one tap) count the weights
// of the taps that reach the input against that limit: 130 output channels from 1040 input
// channels are 8.6 MB over the whole kernel but 0.54 MB per output, so batch rows run them in one
// call (blocks ran 1.24-1.47x slower on such layers).
TEST(BatchRows, ProjectionsFromOneInputRunWhole) {
    if (!deconv_test::dtype_built(DType::f32)) GTEST_SKIP() << "f32 is not in this build";
    const int ran = run_wide_batch_cases(
        131,
        [](deconv_ref::Problem &p, int, int) {
            p.input_shape.push_back(1);
            p.filter_shape.push_back(4);
            p.strides.push_back(1);
            p.pads_begin.push_back(0);
            p.pads_end.push_back(0);
        },
        [](const std::string &how) {
#if defined(__x86_64__)
            if (how.find("batch rows") != std::string::npos && how.find("policy all auto") != std::string::npos)
                EXPECT_EQ(how.find("channel blocks of"), std::string::npos) << how;
#else
            (void)how;
#endif
        });
    EXPECT_GT(ran, 0);
}

// Channels-first layers of several (image, group) pairs whose output is at most 4x their input
// and whose packed filter fits half of L2 (centernet_dla_dw, grouped32_up, dcgan_l5) run on two
// threads in slices of (image, group) pairs, each copying its own groups into the bordered
// input before running their phases (runtime/cpu/cpu_executor.cpp, slicing): slices of several groups
// crossing from one image to the next (3 groups x 3 images over the default one task per thread)
// and, with DECONV_GROUP_SLICES=5 (tasks per thread), slices of one group; interleaved and phase
// kernels, every rank and dtype, every API (strided views included).
TEST(GroupSlices, SmallGroupsOnTwoThreads) {
    const OnTwoThreads two_threads("DECONV_GROUP_SLICES");
    int ran = 0, i = 0;
    for (const char *per_thread : {"", "5"}) {
        if (*per_thread) setenv("DECONV_GROUP_SLICES", per_thread, 1);
        for (DType t : deconv_test::all_dtypes()) {
            if (!deconv_test::dtype_built(t)) continue;
            for (int rank = 1; rank <= 3; rank++) {
                if (!deconv_test::rank_built(rank)) continue;
                for (auto [n, groups] : {std::pair<int64_t, int64_t>{3, 3}, {1, 16}, {5, 1}})
                    for (auto [ci, co] : {std::pair<int64_t, int64_t>{1, 1}, {2, 3}, {24, 3}})
                        for (int64_t k : {4, 3}) {
                            std::mt19937 rng(static_cast<uint32_t>(43 + i));
                            const GenCase c =
                                grouped_random_case(t, rng, i++ % 3, n, groups, ci, co, [&](deconv_ref::Problem &p) {
                                    for (int a = 0; a < rank; a++) {
                                        // Stride 2 (k 4: interleaved) or 1 innermost, 1 on the outer axes.
                                        const bool inner = a == rank - 1;
                                        p.input_shape.push_back(inner ? 9 : 3);
                                        p.filter_shape.push_back(inner ? k : 2);
                                        p.strides.push_back(inner && k == 4 ? 2 : 1);
                                        p.pads_begin.push_back(1);
                                        p.pads_end.push_back(inner ? 1 : 0);
                                    }
                                });
                            EXPECT_TRUE(deconv_test::run_and_check(c)) << "DECONV_GROUP_SLICES=" << per_thread;
                            ran++;
                        }
            }
        }
    }
    EXPECT_GT(ran, 0);
}

// The row-slab cases of one layout, on two threads: DECONV_ROW_SLABS of 1, 2 and 4 rows (last
// slabs partial, phases without a row in a slab), every dtype and API (strided views included),
// ranks 2 and 3, each (batch, groups, output channels) of `shapes` with `ci` input channels per
// group, strides 2 and 3 on the outermost axis with output_padding and pads. `check_first` sees
// the first case before it runs. Returns how many ran.
using SlabShape = std::tuple<int64_t, int64_t, int64_t>;
static int run_row_slab_cases(DataFormat format, int64_t ci, uint32_t seed, std::initializer_list<SlabShape> shapes,
                       const std::function<void(const GenCase &)> &check_first) {
    const OnTwoThreads two_threads("DECONV_ROW_SLABS");
    int ran = 0, i = 0;
    for (const char *rows : {"1", "2", "4"}) {
        setenv("DECONV_ROW_SLABS", rows, 1);
        for (DType t : deconv_test::all_dtypes()) {
            if (!deconv_test::dtype_built(t)) continue;
            for (int rank = 2; rank <= 3; rank++) {
                if (!deconv_test::rank_built(rank)) continue;
                for (auto [n, groups, co] : shapes)
                    for (int64_t s : {2, 3}) {
                        std::mt19937 rng(seed + i);
                        GenCase c = grouped_random_case(t, rng, i++ % 3, n, groups, ci, co, [&](deconv_ref::Problem &p) {
                            for (int a = 0; a < rank; a++) {
                                const bool outer = a == 0;
                                p.input_shape.push_back(outer ? 4 : a == 2 ? 10 : 3);
                                p.filter_shape.push_back(outer ? s + 1 : 2);
                                p.strides.push_back(outer ? s : a);
                                p.pads_begin.push_back(outer ? 1 : 0);
                                p.pads_end.push_back(0);
                                p.output_padding.push_back(outer ? s - 1 : 0);
                            }
                        });
                        c.format = format;
                        if (ran == 0) check_first(c);
                        EXPECT_TRUE(deconv_test::run_and_check(c)) << "DECONV_ROW_SLABS=" << rows;
                        ran++;
                    }
            }
        }
    }
    return ran;
}

// Channels-first layers of fewer than two images per thread on the channels-last kernels run in
// slabs of rows of the outermost output axis (runtime/cpu/cpu_executor.cpp, Slicing::slab_rows): each task
// computes its rows of every phase into a buffer of its own and transposes them into the output.
// The layers here are far below the slab bytes; a single image in 9 rows makes too few slabs of
// four and runs whole. 16, 20 and 64 output channels (64 in 3D: rows of 10 per phase as 6 + 4
// positions, exact_row_head), batch 1 to 3, groups.
TEST(RowSlabs, ChannelsFirstOnTwoThreads) {
    EXPECT_GT(run_row_slab_cases(DataFormat::NCX, 5, 61, {{1, 1, 16}, {3, 2, 20}, {2, 1, 64}}, [](const GenCase &) {}),
              0);
}

// Channels-first layers on the channels-last kernels with two images or more per thread run in
// slabs of rows too where an image's output is 1 MiB or more (runtime/cpu/cpu_executor.cpp,
// kSlabMinImageBytes; smaller images in slices of whole images): batch 4 and 5 on two threads,
// 2D (64 -> 64 x 64 f32 outputs: 1 MiB) and 3D (32 x 32 x 16 x 32: 2 MiB), f32, f16 and u8, each
// against the reference through one API each. The first case checks that the twin runs.
TEST(RowSlabs, BatchesOfLargeImages) {
    const OnTwoThreads two_threads;
    int ran = 0, i = 0;
    for (DType t : {DType::f32, DType::f16, DType::u8}) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank = 2; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank) || (rank == 3 && t != DType::f32)) continue;
            std::mt19937 rng(97 + i);
            const int64_t n = 4 + i % 2, co = rank == 2 ? 64 : 32;
            GenCase c = grouped_random_case(t, rng, i++ % 3, n, 1, 16, co, [&](deconv_ref::Problem &p) {
                for (int a = 0; a < rank; a++) {
                    const bool inner = a == rank - 1;
                    p.input_shape.push_back(rank == 2 ? 32 : inner ? 8 : 16);
                    p.filter_shape.push_back(rank == 2 ? 4 : 2);
                    p.strides.push_back(2);
                    p.pads_begin.push_back(rank == 2 ? 1 : 0);
                    p.pads_end.push_back(rank == 2 ? 1 : 0);
                    p.output_padding.push_back(0);
                }
            });
            if (ran == 0) {
                const std::string how = deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, t, c.p.input_shape,
                                                             c.p.filter_shape, deconv_test::to_lib_attrs(c.p))
                                            .describe();
                if (how.find("policy all auto") != std::string::npos)
                    EXPECT_NE(how.find("channels-last twin"), std::string::npos) << how;
            }
            EXPECT_TRUE(deconv_test::run_and_check(c)) << deconv_ref::describe(c.p);
            ran++;
        }
    }
    EXPECT_GT(ran, 0);
}

// Channels-last layers of fewer output channels per group than a vector (not depthwise) run on
// the channels-first kernels over transposed copies, the other way round: slabs of rows of every
// channel for one or a few images, slices of whole images for batches of two or more per thread
// (runtime/cpu/cpu_executor.cpp, Slicing). Batches of 1 and 2 take slabs, 5 images take image slices;
// 2 and 3 output channels, 1 and 4 groups. The first case checks that the twin runs.
TEST(RowSlabs, ChannelsLastOnChannelsFirstTwin) {
    const auto runs_the_twin = [](const GenCase &c) {
        deconv::Attributes a = deconv_test::to_lib_attrs(c.p);
        a.data_format = DataFormat::NXC;
        const std::string how = deconv::Plan::create(deconv::Op::GroupConvolutionBackpropData, c.dtype,
                                                     deconv_test::nxc_shape(c.p.input_shape), c.p.filter_shape, a)
                                    .describe();
        EXPECT_NE(how.find("channels-first twin"), std::string::npos) << how;
    };
    EXPECT_GT(run_row_slab_cases(DataFormat::NXC, 3, 83, {{1, 1, 3}, {2, 4, 2}, {5, 1, 3}}, runs_the_twin), 0);
}

// Channels-first bf16 layers with 16 or more output channels and an even number of input
// channels run on the channels-last bf16 dot-product kernels (CPUs with AVX512-BF16; elsewhere
// the f32-FMA ones) over transposed copies: ranks 1-3, channel tails of the 4-vector tile, one to
// 33 channel pairs, strides 1 and 3 (no interleaved kernel), pads reaching past the input.
TEST(Bf16DotProducts, ChannelsFirstLayersThroughChannelsLast) {
    if (!deconv_test::dtype_built(DType::bf16)) GTEST_SKIP();
    std::mt19937 rng(37);
    int ran = 0;
    for (int rank : {1, 2, 3}) {
        if (!deconv_test::rank_built(rank)) continue;
        for (int64_t co : {16, 70})
            for (int64_t ci : {2, 66})
                for (int64_t s : {1, 3}) {
                    deconv_ref::Problem p;
                    p.grouped = true;
                    p.input_shape = {1, 2 * ci, 9};
                    p.filter_shape = {2, ci, co, 3};
                    p.strides = {s};
                    p.pads_begin = {2};
                    p.pads_end = {1};
                    for (int a = 1; a < rank; a++) add_outer_axis(p, 3, 2, s, 1);
                    EXPECT_TRUE(random_run_matches_reference(DType::bf16, p, rng)) << deconv_ref::describe(p);
                    ran++;
                }
    }
    EXPECT_GT(ran, 0);
}

// Odd kernels at stride 2 with an odd pads_begin give phase 0 one tap fewer than phase 1: the
// interleaved kernel's short-phase variant leaves that tap out of the reduction
// (phase_conv_interleaved_s2_short0, runtime/dispatch/kernel_choice.cpp, interleaved_kernel_for). Every branch of its
// schedule: rows of 40, 20, 6 and 3 groups (two-vector, one-vector, 4-lane and scalar tiles),
// 1 (depthwise, taps innermost; in 2D/3D with two taps on axis 1 too), 2, 3 and 9 output channels,
// kernels 3 (two taps, unrolled) and 5 (three: the general branch), pads 1 and 3, ranks 1-3.
TEST(InterleavedPhases, ShortPhaseSkipsItsMissingTap) {
    int ran = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 rng(29);
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int64_t x : {40, 20, 6, 3})
                for (auto [ci, co] : {std::pair<int64_t, int64_t>{1, 1}, {5, 3}, {2, 9}, {5, 2}})
                    for (auto [k, pb] : {std::pair<int64_t, int64_t>{3, 1}, {5, 1}, {5, 3}}) {
                        if (rank == 3 && x != 20) continue;
                        deconv_ref::Problem p = grouped_1d(2, 2, ci, co, x, k, 2, pb, pb - 1);
                        for (int a = 1; a < rank; a++) add_outer_axis(p, a == 1 ? 5 : 2, a == 1 ? 4 : 3, 2, 1);
                        p.output_padding.assign(rank, 0);
                        p.output_padding.back() = 1;
                        EXPECT_TRUE(random_run_matches_reference(t, p, rng))
                            << deconv_test::dt_str(t) << " " << deconv_ref::describe(p);
                        ran++;
                    }
        }
    }
    EXPECT_GT(ran, 0);
}

// 1D layers on the interleaved kernel whose rows hold 48 or more groups read the caller's input in
// place, their first and last groups (16 or more each) zero-bordered copies of their input
// windows (runtime/dispatch/impl_phase_kernels.cpp, choose_edge_windows): the plain kernel (1 and 4 output channels,
// depthwise) and the blocked one (16 channels: a middle of whole 32-group tiles, so wider right
// edges), strides 2 and 8, kernels of 1-3 taps per phase, pads 0 to past the kernel (windows
// wholly outside the input), pads_end that leave outputs past the last whole group (the bounded
// phase kernel's), batch and groups.
TEST(InterleavedPhases, EdgeWindowsOfLongRows) {
    int ran = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t) || !deconv_test::rank_built(1)) continue;
        std::mt19937 rng(37);
        for (int64_t s : {2, 8})
            for (auto [ci, co] : {std::pair<int64_t, int64_t>{1, 1}, {3, 4}, {5, 16}})
                for (int64_t k : {s, 2 * s, 2 * s + 1, 3 * s})
                    for (int64_t pb : {int64_t(0), int64_t(1), s + 1, 3 * s + 2}) {
                        const int64_t x = s == 2 ? 131 : 61;
                        deconv_ref::Problem p = grouped_1d(2, 2, ci, co, x, k, s, pb, (pb + k) % 3);
                        EXPECT_TRUE(random_run_matches_reference(t, p, rng))
                            << deconv_test::dt_str(t) << " " << deconv_ref::describe(p);
                        ran++;
                    }
    }
    EXPECT_GT(ran, 0);
}

// Layers with few output channels whose innermost axis has stride 2, 3, 4 or 8 run every phase of
// that axis in one interleaved kernel call over a zero-bordered input copy (3 and 4: f32 kernels,
// which the 16-bit dtypes run as f32 where the CPU has F16C); the outputs past the last whole
// group of s (Y mod s of them) run on the phase kernel. Every pad (phase order and reach into the
// margins), kernel length (phases without taps), tail length and ranks 1-3 (an outer axis whose
// phases have no taps zero-fills the interleaved rows; 3D on fewer cases). Strides 3-4 in 2D-3D
// also run with interleave=plain, which CPUs of 16 registers need to take them.
TEST(InterleavedPhases, EveryStrideEveryPadKernelAndTail) {
    int ran = 0;
    for (DType t : deconv_test::all_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        std::mt19937 rng(23);
        for (int rank : {1, 2, 3}) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int64_t s : {2, 3, 4, 8})
                for (int64_t k : {1, 2, 3, 5, 16, 17})
                    for (int64_t pb : {int64_t(0), int64_t(1), s - 1, s + 3})
                        for (int64_t tail : {int64_t(0), int64_t(1), s - 1}) {
                            // 3D: the kernels' third rank, on fewer cases.
                            if (rank == 3 && (k > 5 || tail != 0 || pb > 1)) continue;
                            // Half the rows wide enough for full-vector tiles of every dtype.
                            const int64_t x = 2 + pb + (k + tail) % 7 + 16 * ((k + pb) % 2);
                            const int64_t co = 1 + (k + tail) % 12, ci = 1 + pb % 3;
                            deconv_ref::Problem p;
                            p.grouped = true;
                            p.input_shape = {1, 2 * ci, x};
                            p.filter_shape = {2, ci, co, k};
                            p.strides = {s};
                            p.pads_begin = {pb};
                            // Y = (X-1)s + K - pb - pe: choose pe so that Y mod s == tail.
                            const int64_t y0 = (x - 1) * s + k - pb;
                            int64_t pe = 0;
                            while (y0 - pe > s && ((y0 - pe) % s + s) % s != tail) pe++;
                            p.pads_end = {pe};
                            // Outer axis: stride 3, kernel 2 (one phase without taps).
                            if (rank >= 2) add_outer_axis(p, 3, 2, 3, 0);
                            if (rank == 3) add_outer_axis(p, 2, 3, 1, 1);
                            EXPECT_TRUE(random_run_matches_reference(t, p, rng))
                                << deconv_test::dt_str(t) << " " << deconv_ref::describe(p);
                            ran++;
                            // Strides 3-4 in 2D-3D take the kernel on CPUs of 32 registers
                            // only: pinned, every variant runs it.
                            if ((s == 3 || s == 4) && rank >= 2 && tail == 0) {
                                EXPECT_TRUE(random_run_matches_reference(t, p, rng, "interleave=plain"))
                                    << deconv_test::dt_str(t) << " " << deconv_ref::describe(p) << ", pinned";
                                ran++;
                            }
                        }
        }
    }
    EXPECT_GT(ran, 0);
}
