// GroupConvolution-1, OpenVINO's forward grouped convolution (Op::GroupConvolution):
//   data [N, G*C_IN, X...], filter [G, C_OUT, C_IN, K...] -> output [N, G*C_OUT, Y...]
//   (or [N, X..., C] data and output under data_format NXC; the filter keeps its layout).
//
//   ForwardReference.*          the naive forward reference (tests/reference) itself: hand-made
//                               values, and the adjoint of the separately validated backprop
//                               reference (no library involved).
//   OpenVino/ForwardConformance every case of tests/data/openvino/group_convolution.json, for
//                               every built dtype of its dtypes_tested, in NCX and NXC.
//   Shards/ForwardSweep         seeded random problems against the reference, sharded by dtype
//                               and rank (both data formats, every auto_pad, three APIs).
//   Adjoint/ForwardAdjoint      <GroupConvolution(x, W), y> == <GroupConvolutionBackpropData(y, W), x>
//                               with the same W: the library's two ops checked against each other.
//   ForwardErrors.*             what the forward op must refuse (InvalidArgument, output untouched).
//   ForwardPlan.*               Plan facts of the forward op (shape, op, macs).
#include "check.h"
#include "layout_support.h"
#include "vector_file.h"

#include <chrono>
#include <functional>

namespace {

using deconv_test::ncx_to_nxc;
using deconv_test::nxc_shape;
using deconv_test::result_in;
using deconv_test::shape_in;

using deconv::DataFormat;
using deconv::DType;
using deconv_ref::ForwardProblem;
using deconv_test::Buffer;
using deconv_test::vec_str;

constexpr deconv::Op kOp = deconv::Op::GroupConvolution;

// ---------------------------------------------------------------- helpers

using deconv_test::format_str;

// Sum of a[i] * b[i] over two equally long buffers, in long double (the tolerance notes of the
// adjoint test count this accumulation as exact; its error is far below theirs).
long double dot(const Buffer &a, const Buffer &b) {
    long double s = 0;
    for (int64_t i = 0; i < a.count; i++)
        s += static_cast<long double>(a.get(i)) * static_cast<long double>(b.get(i));
    return s;
}

// ---------------------------------------------------------------- the reference itself

// Hand-computed values for what the conformance vectors leave out (they are all 1D, stride 1,
// no pads): stride, dilation, asymmetric pads, auto_pad modes, 2D taps, group/channel order.
TEST(ForwardReference, HandComputedValues) {
    const std::vector<double> in{1, 2, 3, 4, 5, 6, 7};  // X = 7
    {
        // K=2 taps [1, 10], s=2, d=2, pads 1/2: positions x = 2y + 2k - 1 over [-1, 8]:
        //   Y = floor((7 + 3 - 3) / 2) + 1 = 4; y0: x=-1,1 -> 0*1+2*10 = 20; y1: x=1,3 -> 2+40 = 42;
        //   y2: x=3,5 -> 4+60 = 64; y3: x=5,7 -> 6+0 = 6 (x=7 is padding).
        ForwardProblem p;
        p.input_shape = {1, 1, 7};
        p.filter_shape = {1, 1, 1, 2};
        p.strides = {2};
        p.dilations = {2};
        p.pads_begin = {1};
        p.pads_end = {2};
        const auto r = deconv_ref::compute_forward(p, in, {1, 10});
        EXPECT_EQ(r.shape.output_shape, (std::vector<int64_t>{1, 1, 4}));
        EXPECT_EQ(r.output, (std::vector<double>{20, 42, 64, 6}));
        EXPECT_EQ(r.terms, (std::vector<int32_t>{1, 2, 2, 1}));
        EXPECT_EQ(r.macs, 6);
    }
    {
        // same_upper, K=2, s=1: Y = 7, total 1 -> pads 0/1 (the odd pad at the end):
        //   y = x0 + 10*x1 ..., last: 7 + 10*0.
        ForwardProblem p;
        p.input_shape = {1, 1, 7};
        p.filter_shape = {1, 1, 1, 2};
        p.auto_pad = deconv_ref::AutoPad::SameUpper;
        p.pads_begin = {5};  // ignored
        p.pads_end = {5};
        const auto r = deconv_ref::compute_forward(p, in, {1, 10});
        EXPECT_EQ(r.shape.pads_begin, (std::vector<int64_t>{0}));
        EXPECT_EQ(r.shape.pads_end, (std::vector<int64_t>{1}));
        EXPECT_EQ(r.output, (std::vector<double>{21, 32, 43, 54, 65, 76, 7}));
        // same_lower: pads 1/0, the odd pad at the beginning.
        p.auto_pad = deconv_ref::AutoPad::SameLower;
        const auto l = deconv_ref::compute_forward(p, in, {1, 10});
        EXPECT_EQ(l.shape.pads_begin, (std::vector<int64_t>{1}));
        EXPECT_EQ(l.shape.pads_end, (std::vector<int64_t>{0}));
        EXPECT_EQ(l.output, (std::vector<double>{10, 21, 32, 43, 54, 65, 76}));
        // same_upper with s=3: Y = ceil(7/3) = 3, total = 2*3 + 2 - 7 = 1 -> 0/1.
        p.auto_pad = deconv_ref::AutoPad::SameUpper;
        p.strides = {3};
        const auto u3 = deconv_ref::compute_forward(p, in, {1, 10});
        EXPECT_EQ(u3.output, (std::vector<double>{21, 54, 7}));
        // valid: the given pads are ignored, Y = 6.
        p.auto_pad = deconv_ref::AutoPad::Valid;
        p.strides = {1};
        const auto v = deconv_ref::compute_forward(p, in, {1, 10});
        EXPECT_EQ(v.output, (std::vector<double>{21, 32, 43, 54, 65, 76}));
    }
    {
        // 2D, G=2, C_OUT=1, C_IN=2: out[g] = sum over its two input channels; filter
        // [g, co, ci, ky, kx]; data 2x2 per channel, K 1x2 -> Y 2x1.
        ForwardProblem p;
        p.input_shape = {1, 4, 2, 2};
        p.filter_shape = {2, 1, 2, 1, 2};
        std::vector<double> x(16), w{1, 2, 3, 4, 5, 6, 7, 8};
        for (int i = 0; i < 16; i++) x[i] = i;  // channel c, row r, col q: 4c + 2r + q
        const auto r = deconv_ref::compute_forward(p, x, w);
        ASSERT_EQ(r.shape.output_shape, (std::vector<int64_t>{1, 2, 2, 1}));
        // g0, row 0: c0 (0,1)·(1,2) + c1 (4,5)·(3,4) = 2 + 32 = 34; row 1: (2,3)·(1,2) + (6,7)·(3,4) = 8 + 46 = 54
        // g1, row 0: c2 (8,9)·(5,6) + c3 (12,13)·(7,8) = 94 + 188 = 282; row 1: (10,11)·(5,6) + (14,15)·(7,8) = 116 + 218 = 334
        EXPECT_EQ(r.output, (std::vector<double>{34, 54, 282, 334}));
    }
    // Y < 1 is refused; truncating instead of flooring a negative numerator would give Y = 1
    // here: X=5, K=3, d=3 (extent 7), pads 1/0, s=2 -> floor(-1/2) + 1 = 0.
    ForwardProblem bad;
    bad.input_shape = {1, 1, 5};
    bad.filter_shape = {1, 1, 1, 3};
    bad.dilations = {3};
    bad.strides = {2};
    bad.pads_begin = {1};
    bad.pads_end = {0};
    EXPECT_THROW(deconv_ref::resolve_forward(bad), std::invalid_argument);
    bad.pads_end = {1};  // numerator 0 -> Y = 1
    EXPECT_EQ(deconv_ref::resolve_forward(bad).out_spatial, (std::vector<int64_t>{1}));
}

// The shared generator's forward cases (check.h's make_case, op GroupConvolution), in both data
// formats; the salt keeps them apart from the backprop sweeps'.
constexpr deconv_test::CaseSpec kForwardSpec{deconv_test::CaseOp::Forward, deconv_test::CaseFormat::Either,
                                             /*wide=*/false, 0xF0A4A4Dull};

deconv_test::GenCase make_fwd_case(DType t, int rank, int index) {
    return deconv_test::make_case(kForwardSpec, t, rank, index);
}

// The forward reference is the adjoint of the backprop reference (which its own conformance
// vectors validate): for random x, W, y, <F(x), y> == <B(y), x> with B the backprop reference
// on the same filter array read as [G, C_IN'=C_OUT, C_OUT'=C_IN, K], the forward's resolved pads
// and the output_padding that makes B's output as long as X. Strides, dilations, asymmetric
// pads and every auto_pad mode, without the library.
TEST(ForwardReference, AdjointOfBackpropReference) {
    int checked = 0;
    for (int rank = 1; rank <= 3; rank++)
        for (int i = 0; i < 120; i++) {
            const deconv_test::GenCase c = make_fwd_case(DType::f64, rank, 1000 + i);
            const ForwardProblem &p = c.fp;
            std::mt19937 rng(static_cast<uint32_t>(c.seed));
            const auto rf = deconv_ref::resolve_forward(p);
            const auto x = deconv_test::random_values(DType::f64, deconv_ref::product(p.input_shape), rng);
            const auto w = deconv_test::random_values(DType::f64, deconv_ref::product(p.filter_shape), rng);
            const auto y = deconv_test::random_values(DType::f64, deconv_ref::product(rf.output_shape), rng);
            const auto fx = deconv_ref::compute_forward(p, x, w);
            deconv_ref::Problem b;
            b.grouped = true;
            b.input_shape = rf.output_shape;
            b.filter_shape = p.filter_shape;
            b.strides = rf.strides;
            b.dilations = rf.dilations;
            b.pads_begin = rf.pads_begin;
            b.pads_end = rf.pads_end;
            for (int a = 0; a < rank; a++)
                b.output_padding.push_back(rf.in_spatial[a] -
                                           (rf.strides[a] * (rf.out_spatial[a] - 1) +
                                            (rf.kernel[a] - 1) * rf.dilations[a] + 1 -
                                            rf.pads_begin[a] - rf.pads_end[a]));
            const auto by = deconv_ref::compute(b, y, w);
            ASSERT_EQ(by.shape.output_shape, p.input_shape) << deconv_ref::describe(b);
            double lhs = 0, rhs = 0, mag = 0;
            for (size_t k = 0; k < y.size(); k++) {
                lhs += fx.output[k] * y[k];
                mag += fx.abs_sum[k] * std::fabs(y[k]);
            }
            for (size_t k = 0; k < x.size(); k++) rhs += by.output[k] * x[k];
            ASSERT_NEAR(lhs, rhs, 1e-12 * mag + 1e-300)
                << deconv_ref::describe(p) << " / " << deconv_ref::describe(b);
            // Every (x, w, y) triple is counted once on each side.
            EXPECT_EQ(fx.macs, by.macs) << deconv_ref::describe(p);
            checked++;
        }
    EXPECT_EQ(checked, 360);
}

// ---------------------------------------------------------------- OpenVINO's vectors

struct ConfCase {
    std::string name;  // sanitized: case, dtype, data format
    deconv_test::json j;
    DType dtype = DType::f32;
    DataFormat format = DataFormat::NCX;
    std::string load_error;
};

bool all_integer(const std::vector<double> &v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x == std::floor(x); });
}
bool any_negative(const std::vector<double> &v) {
    return std::any_of(v.begin(), v.end(), [](double x) { return x < 0; });
}

const char *const kForwardVectors = "openvino/group_convolution.json";

const std::vector<ConfCase> &conf_cases() {
    static const std::vector<ConfCase> cases = [] {
        std::vector<ConfCase> v;
        std::set<std::string> used;
        const deconv_test::VectorFile f = deconv_test::load_vectors(kForwardVectors);
        if (!f.error.empty()) {
            v.push_back({"load_error", deconv_test::json(), DType::f32, DataFormat::NCX, f.error});
            return v;
        }
        for (const auto &c : f.cases) {
            const auto data = deconv_test::dvec(c.at("input")), filt = deconv_test::dvec(c.at("filter"));
            const bool ints = all_integer(data) && all_integer(filt);
            const bool neg = any_negative(data) || any_negative(filt);
            for (const auto &tn : c.at("dtypes_tested")) {
                // i16, i64, u16, u32, u64: not in this library; skipped silently.
                const auto t = deconv_test::dtype_from_str(tn.get<std::string>());
                if (!t) continue;
                if (!deconv_ref::dt_is_float(deconv_test::to_ref(*t)) && !ints) continue;
                if (*t == DType::u8 && neg) continue;
                for (DataFormat f : {DataFormat::NCX, DataFormat::NXC})
                    v.push_back({deconv_test::sanitize_name(c.at("name").get<std::string>() + "_" +
                                                                tn.get<std::string>() + "_" + format_str(f),
                                                            used),
                                 c, *t, f, ""});
            }
        }
        return v;
    }();
    return cases;
}

class ForwardConformance : public ::testing::TestWithParam<size_t> {};

TEST_P(ForwardConformance, MatchesExpectedAndReference) {
    const ConfCase &cc = conf_cases()[GetParam()];
    ASSERT_TRUE(cc.load_error.empty()) << cc.load_error;
    const auto &c = cc.j;
    const DType t = cc.dtype;
    const DataFormat f = cc.format;
    const auto rt = deconv_test::to_ref(t);

    ForwardProblem p;
    p.input_shape = deconv_test::ivec(c.at("input_shape"));
    p.filter_shape = deconv_test::ivec(c.at("filter_shape"));
    p.strides = deconv_test::ivec(c.at("strides"));
    p.pads_begin = deconv_test::ivec(c.at("pads_begin"));
    p.pads_end = deconv_test::ivec(c.at("pads_end"));
    p.dilations = deconv_test::ivec(c.at("dilations"));
    const auto ap = deconv_test::ref_auto_pad_from_str(c.at("auto_pad").get<std::string>());
    ASSERT_TRUE(ap.has_value()) << c.at("auto_pad");
    p.auto_pad = *ap;
    ASSERT_TRUE(c.at("output_shape_input").is_null()) << "GroupConvolution takes no output_shape";
    const int rank = static_cast<int>(p.input_shape.size()) - 2;
    SCOPED_TRACE(c.at("name").get<std::string>() + " as " + deconv_test::dt_str(t) + " " +
                 format_str(f) + ": " + deconv_ref::describe(p));

    const auto orig_in = deconv_test::dvec(c.at("input"));
    const auto orig_w = deconv_test::dvec(c.at("filter"));
    const auto expected = deconv_test::dvec(c.at("expected"));
    const auto expected_shape = deconv_test::ivec(c.at("expected_shape"));

    // The reference against the JSON first (validates the reference itself; needs no library).
    const deconv_ref::Result ref_orig = deconv_ref::compute_forward(p, orig_in, orig_w);
    ASSERT_EQ(ref_orig.shape.output_shape, expected_shape);
    ASSERT_EQ(ref_orig.output.size(), expected.size());
    for (size_t i = 0; i < expected.size(); i++)
        ASSERT_NEAR(ref_orig.output[i], expected[i],
                    1e-6 * (ref_orig.abs_sum[i] + std::fabs(expected[i])) + 1e-7)
            << "reference vs JSON at " << i;

    if (!deconv_test::dtype_built(t)) GTEST_SKIP() << deconv_test::dt_str(t) << " not built";
    if (!deconv_test::rank_built(rank)) GTEST_SKIP() << "rank " << rank << " not built";

    // The values as stored in dtype t (NCX), then the library's buffers in format f.
    Buffer in_ncx(t, p.input_shape), w(t, p.filter_shape);
    const auto st_in = deconv_test::fill(in_ncx, orig_in);
    const auto st_w = deconv_test::fill(w, orig_w);
    const auto in_shape = shape_in(f, p.input_shape);
    const auto out_shape = shape_in(f, expected_shape);
    Buffer in(t, in_shape), out(t, out_shape);
    deconv_test::fill(in, f == DataFormat::NXC ? ncx_to_nxc(st_in, p.input_shape) : st_in);
    out.fill_bytes(0xCD);
    const auto attrs = deconv_test::to_lib_attrs(p, f);
    try {
        const deconv::ShapeInfo info = deconv::infer_shape(kOp, in_shape, p.filter_shape, attrs);
        ASSERT_EQ(info.output_shape, out_shape);
        deconv::group_convolution(in.cview(), w.cview(), out.view(), attrs);
    } catch (const deconv::Error &e) {
        FAIL() << "deconv::Error: " << e.what();
    }
    EXPECT_TRUE(out.guards_intact());
    const auto got = deconv_test::read_all(out);

    // (1) against the reference computed from the stored values: the strict per-dtype bound.
    const auto ref = result_in(f, deconv_ref::compute_forward(p, st_in, st_w));
    EXPECT_TRUE(deconv_test::compare_to_reference(t, got, ref));

    // (2) against the JSON's expected values (OpenVINO in f32 from the unrounded inputs, printed
    // with 8 digits), as conformance_test.cpp does: integers exact after saturation; floats the
    // strict bound plus the rounding of both factors of each product to the dtype
    // (<= (2u + u^2) * sum|terms|) plus the JSON's print precision.
    const auto want = f == DataFormat::NXC ? ncx_to_nxc(expected, expected_shape) : expected;
    const auto orig_abs = f == DataFormat::NXC ? ncx_to_nxc(ref_orig.abs_sum, expected_shape)
                                               : ref_orig.abs_sum;
    for (size_t i = 0; i < want.size(); i++) {
        SCOPED_TRACE("element " + deconv_test::index_str(static_cast<int64_t>(i), out_shape));
        if (!deconv_ref::dt_is_float(rt)) {
            EXPECT_EQ(got[i], deconv_ref::round_to_dtype(rt, want[i]));
        } else {
            const double u = deconv_ref::dt_unit_roundoff(rt);
            const double tol = deconv_test::tolerance(t, ref.output[i], ref.abs_sum[i], ref.terms[i]) +
                               (2 * u + u * u) * orig_abs[i] +
                               1e-6 * (orig_abs[i] + std::fabs(want[i])) + 1e-7;
            EXPECT_NEAR(got[i], want[i], tol);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(OpenVino, ForwardConformance,
                         ::testing::Range<size_t>(0, conf_cases().size()),
                         [](const ::testing::TestParamInfo<size_t> &pinfo) {
                             return conf_cases()[pinfo.param].name;
                         });

TEST(ForwardConformanceData, EveryVectorRuns) {
    std::set<std::string> covered;
    for (const ConfCase &cc : conf_cases())
        if (cc.load_error.empty()) covered.insert(cc.j.at("name").get<std::string>());
    deconv_test::expect_every_vector_runs("OpenVino/ForwardConformance", {kForwardVectors}, covered,
                                          conf_cases().size());
}

// ---------------------------------------------------------------- the random sweep

constexpr int kFwdCasesPerShard = 150;  // 7 dtypes x 3 ranks x 150 = 3150 cases

using deconv_test::Shard;

class ForwardSweep : public ::testing::TestWithParam<Shard> {};

TEST_P(ForwardSweep, MatchesReference) {
    const DType t = GetParam().dtype;
    const int rank = GetParam().rank;
    if (!deconv_test::dtype_built(t)) GTEST_SKIP() << deconv_test::dt_str(t) << " not built";
    if (!deconv_test::rank_built(rank)) GTEST_SKIP() << "rank " << rank << " not built";
    int failed = 0, nxc = 0, plan = 0, views = 0;
    int modes[4] = {0, 0, 0, 0};
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kFwdCasesPerShard; i++) {
        const deconv_test::GenCase c = make_fwd_case(t, rank, i);
        nxc += c.format == DataFormat::NXC;
        plan += c.api == 1;
        views += c.api == 2;
        modes[static_cast<int>(c.fp.auto_pad)]++;
        const auto r = deconv_test::run_and_check(c);
        if (!r && ++failed <= 10) ADD_FAILURE() << "forward sweep case #" << i << ": " << r.message();
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(failed, 0) << failed << " of " << kFwdCasesPerShard << " cases failed";
    std::printf("[ shard    ] forward %s rank %d: %d cases (%d nxc, %d via Plan, %d strided; "
                "explicit/same_upper/same_lower/valid %d/%d/%d/%d), %.2f s\n",
                deconv_test::dt_str(t), rank, kFwdCasesPerShard, nxc, plan, views, modes[0],
                modes[1], modes[2], modes[3], secs);
}

INSTANTIATE_TEST_SUITE_P(Shards, ForwardSweep, ::testing::ValuesIn(deconv_test::shards_of()),
                         deconv_test::shard_name);

// The generator really covers what the sweep claims (independent of the library).
TEST(ForwardSweepCoverage, GeneratorCoversTheSpace) {
    int total = 0, depthwise = 0, nxc = 0, batched = 0, defaults = 0, medium_tiles = 0;
    int s3 = 0, d3 = 0, k1 = 0, k4 = 0, asym = 0, all_pad_window = 0, odd_same = 0, ignored = 0;
    int modes[4] = {0, 0, 0, 0}, apis[3] = {0, 0, 0}, ranks[4] = {0, 0, 0, 0};
    for (DType t : deconv_test::all_dtypes())
        for (int rank = 1; rank <= 3; rank++)
            for (int i = 0; i < kFwdCasesPerShard; i++) {
                const deconv_test::GenCase c = make_fwd_case(t, rank, i);
                const auto r = deconv_ref::resolve_forward(c.fp);
                total++;
                ranks[rank]++;
                modes[static_cast<int>(c.fp.auto_pad)]++;
                apis[c.api]++;
                if (c.format == DataFormat::NXC) nxc++;
                if (r.groups >= 3 && r.c_in == 1 && r.c_out == 1) depthwise++;
                if (r.n >= 2) batched++;
                if (c.fp.strides.empty()) defaults++;
                if (r.c_out >= 8 && r.in_spatial.back() >= 16) medium_tiles++;
                for (int a = 0; a < rank; a++) {
                    const int64_t eff = (r.kernel[a] - 1) * r.dilations[a] + 1;
                    s3 += r.strides[a] == 3;
                    d3 += r.dilations[a] == 3;
                    k1 += r.kernel[a] == 1;
                    k4 += r.kernel[a] == 4;
                    asym += r.pads_begin[a] != r.pads_end[a];
                    all_pad_window += r.pads_begin[a] >= eff || r.pads_end[a] >= eff;
                    odd_same += c.fp.auto_pad != deconv_ref::AutoPad::Explicit &&
                                c.fp.auto_pad != deconv_ref::AutoPad::Valid &&
                                (r.pads_begin[a] + r.pads_end[a]) % 2 == 1;
                    ignored += c.fp.auto_pad != deconv_ref::AutoPad::Explicit &&
                               !c.fp.pads_begin.empty() && c.fp.pads_begin[a] != r.pads_begin[a];
                }
            }
    std::printf("[ coverage ] %d cases: explicit/same_upper/same_lower/valid %d/%d/%d/%d, "
                "free/plan/views %d/%d/%d, nxc %d, depthwise %d, batch >= 2 %d, default attrs %d, "
                "medium %d; axes: s=3 %d, d=3 %d, K=1 %d, K=4 %d, asymmetric pads %d, "
                "all-padding windows %d, odd same_* totals %d, ignored pads %d\n",
                total, modes[0], modes[1], modes[2], modes[3], apis[0], apis[1], apis[2], nxc,
                depthwise, batched, defaults, medium_tiles, s3, d3, k1, k4, asym, all_pad_window,
                odd_same, ignored);
    EXPECT_EQ(total, 7 * 3 * kFwdCasesPerShard);
    for (int rank = 1; rank <= 3; rank++) EXPECT_EQ(ranks[rank], 7 * kFwdCasesPerShard);
    // Fractions of the cases (or of the axes, ~2 per case), well below what the generator gives.
    const double n = total, axes = 2.0 * total;
    for (int m = 0; m < 4; m++) EXPECT_GT(modes[m], 0.12 * n) << "auto_pad mode " << m;
    // The shared generator's API mix: 2 in 10 through a Plan, 4 in 30 through strided views.
    for (int a = 0; a < 3; a++) EXPECT_GT(apis[a], 0.1 * n) << "api " << a;
    EXPECT_GT(nxc, 0.4 * n);
    EXPECT_LT(nxc, 0.6 * n);
    EXPECT_GT(depthwise, 0.12 * n);
    EXPECT_GT(batched, 0.35 * n);
    EXPECT_GT(defaults, 0.01 * n);
    EXPECT_GT(medium_tiles, 0.03 * n);
    EXPECT_GT(s3, 0.25 * axes);
    EXPECT_GT(d3, 0.25 * axes);
    EXPECT_GT(k1, 0.18 * axes);
    EXPECT_GT(k4, 0.18 * axes);
    EXPECT_GT(asym, 0.3 * axes);
    EXPECT_GT(all_pad_window, 0.04 * axes);
    EXPECT_GT(odd_same, 0.04 * axes);
    EXPECT_GT(ignored, 0.1 * axes);
}

// ---------------------------------------------------------------- the adjoint identity
//
// For x of the data shape, y of the forward output shape and the same filter array W:
//   <GroupConvolution(x, W), y> == <GroupConvolutionBackpropData(y, W), x>
// where the backprop call reads W [G, C_OUT, C_IN, K] as its [G, C_IN', C_OUT', K], takes the
// forward's strides, dilations and resolved pads (auto_pad explicit) and the output_padding
// X - (s*(Y-1) + (K-1)*d + 1 - pb - pe) (in [0, s)) that makes its output exactly X long.
// Where the backprop op's output_shape split gives the same pads_begin, the identity is checked
// again with output_shape = X instead of output_padding. Both sides are sums of the same
// products x*w*y; only the library computes them.
//
// Tolerance: let S_abs be the sum of |x*w*y| over all those triples (computed with the backprop
// op on |y|, |W|, dotted with |x|) and T_f <= C_IN*prod(K), T_b <= C_OUT*prod(K) the most terms an
// output element of each op sums. Each op's element error is at most gamma_T * (its sum of
// |terms|) for any summation order (the classic bound used in check.h), so each side is within
// gamma_T * S_abs of the exact value once multiplied by |y| (|x|) and summed; the dot products are
// accumulated in long double (error ~ L * 2^-64 * S_abs, negligible here). So
//   |lhs - rhs| <= 2 * (T_f + T_b + 2) * u * S_abs   (a factor 2 of slack, as in check.h),
// u = 2^-53 for f64 and 2^-24 for f32. For f64 this is at most 1e-12 * S_abs for every problem
// of this test (asserted), and 1e-12 is the tolerance used: a single misplaced product among
// ~10^5 moves the sum by ~1e-5 relative, so f64 catches any structural error. f32's bound
// (up to ~5e-5 relative here) catches every error that is not a handful of terms.

struct AdjParam {
    DType dtype;
    int rank;
    DataFormat format;  // of the forward call (the backprop call always runs NCX)
};
std::ostream &operator<<(std::ostream &os, const AdjParam &p) {
    return os << deconv_test::dt_str(p.dtype) << " rank " << p.rank << " " << format_str(p.format);
}

std::vector<AdjParam> adjoint_params() {
    std::vector<AdjParam> v;
    for (DType t : {DType::f64, DType::f32})
        for (int rank = 1; rank <= 3; rank++)
            for (DataFormat f : {DataFormat::NCX, DataFormat::NXC}) v.push_back({t, rank, f});
    return v;
}

constexpr int kAdjointCases = 40;

class ForwardAdjoint : public ::testing::TestWithParam<AdjParam> {};

TEST_P(ForwardAdjoint, MatchesBackprop) {
    const DType t = GetParam().dtype;
    const int rank = GetParam().rank;
    const DataFormat f = GetParam().format;
    if (!deconv_test::dtype_built(t)) GTEST_SKIP() << deconv_test::dt_str(t) << " not built";
    if (!deconv_test::rank_built(rank)) GTEST_SKIP() << "rank " << rank << " not built";
    const double u = t == DType::f64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
    int failed = 0, with_output_shape = 0, shift_detected = 0, shift_tried = 0, nonzero = 0;
    int modes[4] = {0, 0, 0, 0};
    for (int i = 0; i < kAdjointCases; i++) {
        // The sweep's problems (every auto_pad, one in five medium); the format is the
        // parameter's, and the values are drawn here (y too).
        const deconv_test::GenCase c = make_fwd_case(t, rank, 90000 + i);
        const ForwardProblem &p = c.fp;
        std::mt19937 rng(static_cast<uint32_t>(c.seed) + (f == DataFormat::NXC ? 17u : 0u));
        modes[static_cast<int>(p.auto_pad)]++;
        SCOPED_TRACE("adjoint case #" + std::to_string(i) + ": " + deconv_ref::describe(p) +
                     " format=" + format_str(f) + " dtype=" + deconv_test::dt_str(t));
        const auto &xs = p.input_shape;
        const auto &ws = p.filter_shape;
        const int64_t G = ws[0], cout = ws[1], cin = ws[2];
        const auto fattrs = deconv_test::to_lib_attrs(p, f);
        try {
            const deconv::ShapeInfo info = deconv::infer_shape(kOp, shape_in(f, xs), ws, fattrs);
            // The forward output shape in NCX: [N, G*C_OUT, Y...].
            std::vector<int64_t> ys{xs[0], G * cout};
            for (int a = 0; a < rank; a++)
                ys.push_back(info.output_shape[f == DataFormat::NXC ? 1 + a : 2 + a]);
            ASSERT_EQ(info.output_shape, shape_in(f, ys));
            int64_t taps = 1;
            for (int a = 0; a < rank; a++) taps *= ws[3 + a];
            const double rel_bound = 2.0 * static_cast<double>((cin + cout) * taps + 2) * u;
            if (t == DType::f64) ASSERT_LE(rel_bound, 1e-12) << "problem too large for 1e-12";

            const auto xv = deconv_test::random_values(t, deconv_ref::product(xs), rng);
            const auto wv = deconv_test::random_values(t, deconv_ref::product(ws), rng);
            const auto yv = deconv_test::random_values(t, deconv_ref::product(ys), rng);
            auto absv = [](std::vector<double> v) {
                for (auto &e : v) e = std::fabs(e);
                return v;
            };
            const bool nxc = f == DataFormat::NXC;
            Buffer bx(t, shape_in(f, xs)), bw(t, ws), by(t, shape_in(f, ys)), fx(t, shape_in(f, ys));
            deconv_test::fill(bx, nxc ? ncx_to_nxc(xv, xs) : xv);
            deconv_test::fill(bw, wv);
            deconv_test::fill(by, nxc ? ncx_to_nxc(yv, ys) : yv);
            fx.fill_bytes(0xCD);
            deconv::group_convolution(bx.cview(), bw.cview(), fx.view(), fattrs);
            const long double lhs = dot(fx, by);

            // The backprop side, NCX.
            Buffer bx_ncx(t, xs), by_ncx(t, ys), bxo(t, xs);
            deconv_test::fill(bx_ncx, xv);
            deconv_test::fill(by_ncx, yv);
            deconv::Attributes battrs;
            battrs.strides = info.strides;
            battrs.dilations = info.dilations;
            battrs.pads_begin = info.pads_begin;
            battrs.pads_end = info.pads_end;
            std::vector<int64_t> total(rank);
            for (int a = 0; a < rank; a++) {
                const int64_t span = info.strides[a] * (ys[2 + a] - 1) +
                                     (ws[3 + a] - 1) * info.dilations[a] + 1;
                const int64_t op = xs[2 + a] - (span - info.pads_begin[a] - info.pads_end[a]);
                ASSERT_GE(op, 0) << "axis " << a << ": forward Y too large for X";
                ASSERT_LT(op, info.strides[a]) << "axis " << a << ": forward Y too small for X";
                battrs.output_padding.push_back(op);
                total[a] = span - xs[2 + a];
            }
            auto backprop = [&](const deconv::Attributes &ba,
                                const std::optional<std::vector<int64_t>> &os, const Buffer &yin,
                                const Buffer &w) {
                bxo.fill_bytes(0xCD);
                deconv::group_convolution_backprop_data(yin.cview(), w.cview(), bxo.view(), ba, os);
                return dot(bxo, bx_ncx);
            };
            const long double rhs = backprop(battrs, std::nullopt, by_ncx, bw);

            // S_abs from the backprop op on |y| and |W|, dotted with |x| (an underestimate by at
            // most gamma_Tb relative, hence the factor).
            Buffer bya(t, ys), bwa(t, ws), bxa(t, xs);
            deconv_test::fill(bya, absv(yv));
            deconv_test::fill(bwa, absv(wv));
            deconv_test::fill(bxa, absv(xv));
            bxo.fill_bytes(0xCD);
            deconv::group_convolution_backprop_data(bya.cview(), bwa.cview(), bxo.view(), battrs);
            const double s_abs =
                static_cast<double>(dot(bxo, bxa)) * (1.0 + 2.0 * (cout * taps + 2) * u);
            // S_abs = 0 happens (every window in the padding: X=1, K=2, d=3, same_lower gives
            // pads 2/1 and reads x = -2 and 1): then both sides must be exactly 0.
            nonzero += s_abs > 0;
            const double tol = (t == DType::f64 ? 1e-12 : rel_bound) * s_abs;
            const double diff = std::fabs(static_cast<double>(lhs - rhs));
            if (!(diff <= tol)) {
                if (++failed <= 5)
                    ADD_FAILURE() << "<GC(x,W),y> = " << static_cast<double>(lhs)
                                  << " but <GCBD(y,W),x> = " << static_cast<double>(rhs)
                                  << " (|diff| " << diff << ", tol " << tol << ", S_abs " << s_abs
                                  << "; forward output " << vec_str(info.output_shape) << " pads "
                                  << vec_str(info.pads_begin) << "/" << vec_str(info.pads_end)
                                  << ", backprop output_padding " << vec_str(battrs.output_padding)
                                  << ")";
                continue;
            }

            // The same with output_shape = X where the backprop's split of the total padding
            // (its pads_begin, clamped at 0) equals the forward's pads_begin on every axis.
            bool lower_ok = true, upper_ok = true;
            for (int a = 0; a < rank; a++) {
                const int64_t half = total[a] >= 0 ? total[a] / 2 : -((-total[a] + 1) / 2);
                lower_ok &= std::max<int64_t>(0, half) == info.pads_begin[a];
                upper_ok &= std::max<int64_t>(0, total[a] - half) == info.pads_begin[a];
            }
            if (lower_ok || upper_ok) {
                deconv::Attributes oa;
                oa.strides = info.strides;
                oa.dilations = info.dilations;
                oa.pads_begin = info.pads_begin;  // ignored next to output_shape
                oa.pads_end = info.pads_end;
                static const deconv::AutoPad lower_modes[] = {
                    deconv::AutoPad::Explicit, deconv::AutoPad::SameLower, deconv::AutoPad::Valid};
                oa.auto_pad = lower_ok ? lower_modes[i % 3] : deconv::AutoPad::SameUpper;
                std::vector<int64_t> os(xs.begin() + 2, xs.end());
                const long double rhs2 = backprop(oa, os, by_ncx, bw);
                const double diff2 = std::fabs(static_cast<double>(lhs - rhs2));
                EXPECT_LE(diff2, tol) << "backprop with output_shape " << vec_str(os)
                                      << " auto_pad " << deconv::auto_pad_name(oa.auto_pad)
                                      << ": <GCBD(y,W),x> = " << static_cast<double>(rhs2)
                                      << ", <GC(x,W),y> = " << static_cast<double>(lhs);
                with_output_shape++;
            }

            // The identity has power: one pad off by one on the backprop side (output kept X
            // long through output_padding) must break it, except where axis 0 has nothing that
            // the shift could move (K = 1, s = 1 on a length-1 axis and the like: rare).
            if (t == DType::f64) {
                deconv::Attributes sa = battrs;
                sa.pads_begin[0] += 1;
                sa.output_padding[0] += 1;
                const long double rhs3 = backprop(sa, std::nullopt, by_ncx, bw);
                shift_tried++;
                if (std::fabs(static_cast<double>(lhs - rhs3)) > 1e3 * tol) shift_detected++;
            }
        } catch (const deconv::Error &e) {
            if (++failed <= 5) ADD_FAILURE() << "deconv::Error: " << e.what();
        }
    }
    EXPECT_EQ(failed, 0) << failed << " of " << kAdjointCases << " adjoint cases failed";
    if (failed == 0) {
        EXPECT_GE(with_output_shape, kAdjointCases / 8) << "too few output_shape variants";
        // Two thirds: the shared generator's rank-3 draws (small inputs, pads up to the whole
        // dilated kernel) leave 29 of 40 f64 problems with products.
        EXPECT_GE(nonzero, kAdjointCases * 2 / 3) << "too many problems without any product";
        if (t == DType::f64) EXPECT_GE(shift_detected, shift_tried * 2 / 3)
            << "a shifted pad went unnoticed in " << shift_tried - shift_detected << " of "
            << shift_tried << " cases";
    }
    std::printf("[ adjoint  ] %s rank %d %s: %d cases (explicit/same_upper/same_lower/valid "
                "%d/%d/%d/%d; %d with products), %d also with output_shape, shifted pad "
                "detected %d/%d\n",
                deconv_test::dt_str(t), rank, format_str(f), kAdjointCases, modes[0], modes[1],
                modes[2], modes[3], nonzero, with_output_shape, shift_detected, shift_tried);
}

INSTANTIATE_TEST_SUITE_P(Adjoint, ForwardAdjoint, ::testing::ValuesIn(adjoint_params()),
                         [](const ::testing::TestParamInfo<AdjParam> &pinfo) {
                             return std::string(deconv_test::dt_str(pinfo.param.dtype)) + "_rank" +
                                    std::to_string(pinfo.param.rank) + "_" +
                                    format_str(pinfo.param.format);
                         });

// ---------------------------------------------------------------- errors

// A valid 2D forward call: data [1, 4, 5, 5], filter [G=2, C_OUT=3, C_IN=2, 3, 3] -> [1, 6, 3, 3].
struct FwdCall {
    std::vector<int64_t> in_shape{1, 4, 5, 5};
    std::vector<int64_t> w_shape{2, 3, 2, 3, 3};
    std::vector<int64_t> out_shape{1, 6, 3, 3};
    deconv::Attributes attrs;
    std::optional<std::vector<int64_t>> output_shape;  // only infer_shape / Plan::create take it
};

// `fn` must throw deconv::Error(InvalidArgument) whose message names one of the keywords.
void expect_invalid(const std::function<void()> &fn, const std::vector<std::string> &keywords,
                    const char *what) {
    SCOPED_TRACE(what);
    try {
        fn();
        ADD_FAILURE() << what << ": no exception";
    } catch (const deconv::Error &e) {
        std::printf("[ message  ] %s: %s\n", what, e.what());
        EXPECT_TRUE(deconv_test::message_names(e.what(), keywords));
        EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(deconv::ErrorKind::InvalidArgument))
            << e.what();
    } catch (const std::exception &e) {
        ADD_FAILURE() << what << ": threw a non-deconv exception: " << e.what();
    }
}

// The call must be refused by infer_shape, Plan::create and (when it has no output_shape, which
// the free function cannot take) the free function, which must leave its output untouched.
void expect_fwd_error(const FwdCall &c, const std::vector<std::string> &keywords) {
    if (!c.output_shape) {
        Buffer in(DType::f32, c.in_shape, std::max<int64_t>(1, deconv_ref::product(c.in_shape)));
        Buffer w(DType::f32, c.w_shape, std::max<int64_t>(1, deconv_ref::product(c.w_shape)));
        Buffer out(DType::f32, c.out_shape, std::max<int64_t>(1, deconv_ref::product(c.out_shape)));
        in.fill_bytes(0);
        w.fill_bytes(0);
        out.fill_bytes(0xCD);
        const auto before = out.payload();
        expect_invalid([&] { deconv::group_convolution(in.cview(), w.cview(), out.view(), c.attrs); },
                       keywords, "group_convolution");
        EXPECT_EQ(out.payload(), before) << "the output was written although the call failed";
        EXPECT_TRUE(out.guards_intact());
    }
    expect_invalid([&] { deconv::infer_shape(kOp, c.in_shape, c.w_shape, c.attrs, c.output_shape); },
                   keywords, "infer_shape");
    expect_invalid(
        [&] { deconv::Plan::create(kOp, DType::f32, c.in_shape, c.w_shape, c.attrs, c.output_shape); },
        keywords, "Plan::create");
}

// The valid call itself runs (so that the errors below come from the one thing changed).
TEST(ForwardErrors, BaselineCallIsValid) {
    const FwdCall c;
    const auto info = deconv::infer_shape(kOp, c.in_shape, c.w_shape, c.attrs);
    EXPECT_EQ(info.output_shape, c.out_shape);
    EXPECT_EQ(info.groups, 2);
    if (!deconv_test::rank_built(2) || !deconv_test::dtype_built(DType::f32)) GTEST_SKIP();
    Buffer in(DType::f32, c.in_shape), w(DType::f32, c.w_shape), out(DType::f32, c.out_shape);
    in.fill_bytes(0);
    w.fill_bytes(0);
    out.fill_bytes(0xCD);
    EXPECT_NO_THROW(deconv::group_convolution(in.cview(), w.cview(), out.view(), c.attrs));
    EXPECT_EQ(deconv_test::read_all(out), std::vector<double>(out.count, 0.0));
}

TEST(ForwardErrors, OutputPaddingGiven) {
    for (const auto &op : {std::vector<int64_t>{1, 0}, std::vector<int64_t>{0, 2}}) {
        SCOPED_TRACE(vec_str(op));
        FwdCall c;
        c.attrs.output_padding = op;
        expect_fwd_error(c, {"output_padding"});
    }
}

TEST(ForwardErrors, OutputShapeArgumentGiven) {
    // Even the shape the op would infer (spatial or full) is refused: the op has no such input.
    for (const auto &os : {std::vector<int64_t>{3, 3}, std::vector<int64_t>{1, 6, 3, 3},
                           std::vector<int64_t>{7, 7}}) {
        SCOPED_TRACE(vec_str(os));
        FwdCall c;
        c.output_shape = os;
        expect_fwd_error(c, {"output_shape", "output shape"});
    }
}

TEST(ForwardErrors, OneDnnAttributesGiven) {
    {
        FwdCall c;
        c.attrs.weights_format = deconv::WeightsFormat::OIX;
        expect_fwd_error(c, {"weights_format", "weights format"});
        c.attrs.weights_format = deconv::WeightsFormat::XIO;
        expect_fwd_error(c, {"weights_format", "weights format"});
    }
    {
        FwdCall c;
        c.attrs.groups = 2;  // even the filter's own G
        expect_fwd_error(c, {"groups"});
        c.attrs.groups = 1;
        expect_fwd_error(c, {"groups"});
    }
    {
        FwdCall c;
        c.attrs.dst_shape = std::vector<int64_t>{1, 6, 3, 3};
        expect_fwd_error(c, {"dst_shape"});
    }
}

TEST(ForwardErrors, FilterRankMismatch) {
    for (const auto &ws : {std::vector<int64_t>{6, 2, 3, 3},           // a plain conv filter
                           std::vector<int64_t>{2, 3, 2, 3, 3, 3},     // one axis too many
                           std::vector<int64_t>{2, 3, 2, 3}}) {        // one too few
        SCOPED_TRACE(vec_str(ws));
        FwdCall c;
        c.w_shape = ws;
        expect_fwd_error(c, {"rank"});
    }
}

TEST(ForwardErrors, ChannelsMismatch) {
    const std::vector<std::string> kw{"channel", "c_in", "g*c", "group"};
    {
        FwdCall c;
        c.in_shape = {1, 5, 5, 5};  // G*C_IN = 4
        expect_fwd_error(c, kw);
    }
    {
        // The filter read the backprop way ([G, C_IN, C_OUT, K]) would fit: C_IN is dim 2 here.
        FwdCall c;
        c.w_shape = {2, 2, 3, 3, 3};
        c.out_shape = {1, 4, 3, 3};
        expect_fwd_error(c, kw);
    }
    {
        // OpenVINO's type_prop case: data C=6, filter G=1, C_OUT=1, C_IN=3.
        FwdCall c;
        c.in_shape = {1, 6, 5, 5};
        c.w_shape = {1, 1, 3, 3, 3};
        c.out_shape = {1, 1, 3, 3};
        expect_fwd_error(c, kw);
    }
}

TEST(ForwardErrors, OutputBelowOne) {
    const std::vector<std::string> kw{"output", "size", "pads"};
    {
        // X=5, K=3, d=3: dilated extent 7 > 5 without pads (explicit and valid).
        for (auto ap : {deconv::AutoPad::Explicit, deconv::AutoPad::Valid}) {
            SCOPED_TRACE(deconv::auto_pad_name(ap));
            FwdCall c;
            c.attrs.dilations = {1, 3};
            c.attrs.auto_pad = ap;
            c.out_shape = {1, 6, 3, 1};
            expect_fwd_error(c, kw);
        }
    }
    {
        // Y = floor((5 + 1 + 0 - 7) / 2) + 1 = floor(-1/2) + 1 = 0 (truncation would give 1).
        FwdCall c;
        c.attrs.dilations = {1, 3};
        c.attrs.strides = {1, 2};
        c.attrs.pads_begin = {0, 1};
        c.attrs.pads_end = {0, 0};
        c.out_shape = {1, 6, 3, 1};
        expect_fwd_error(c, kw);
        // With pads_end 1 the numerator is 0: Y = 1, valid.
        c.attrs.pads_end = {0, 1};
        EXPECT_EQ(deconv::infer_shape(kOp, c.in_shape, c.w_shape, c.attrs).output_shape,
                  (std::vector<int64_t>{1, 6, 3, 1}));
    }
    {
        // 1D and 3D: kernel longer than the data.
        FwdCall c;
        c.in_shape = {1, 2, 2};
        c.w_shape = {1, 1, 2, 4};
        c.out_shape = {1, 1, 1};
        expect_fwd_error(c, kw);
        c.in_shape = {1, 2, 4, 4, 2};
        c.w_shape = {1, 1, 2, 1, 1, 3};
        c.out_shape = {1, 1, 4, 4, 1};
        expect_fwd_error(c, kw);
    }
}

TEST(ForwardErrors, OutputViewShapeWrong) {
    if (!deconv_test::rank_built(2) || !deconv_test::dtype_built(DType::f32)) GTEST_SKIP();
    // The backprop op's output shape for this call ([1, 6, 7, 7]) and a wrong channel count.
    for (const auto &os : {std::vector<int64_t>{1, 6, 7, 7}, std::vector<int64_t>{1, 4, 3, 3},
                           std::vector<int64_t>{1, 3, 3, 6}}) {
        SCOPED_TRACE(vec_str(os));
        FwdCall c;
        Buffer in(DType::f32, c.in_shape), w(DType::f32, c.w_shape), out(DType::f32, os);
        in.fill_bytes(0);
        w.fill_bytes(0);
        out.fill_bytes(0xCD);
        const auto before = out.payload();
        expect_invalid([&] { deconv::group_convolution(in.cview(), w.cview(), out.view(), c.attrs); },
                       {"output", "shape"}, "group_convolution");
        EXPECT_EQ(out.payload(), before);
    }
}

// ---------------------------------------------------------------- Plan facts

// macs(): "multiply-accumulates the kernels perform (nominal count less border clipping)": the
// (output, input channel, tap) triples whose input position lies inside the data, which the
// reference counts.
TEST(ForwardPlan, MacsCountInRangeTerms) {
    if (!deconv_test::dtype_built(DType::f32)) GTEST_SKIP();
    int checked = 0, bad = 0;
    for (int rank = 1; rank <= 3; rank++) {
        if (!deconv_test::rank_built(rank)) continue;
        for (int i = 0; i < 40; i++) {
            const deconv_test::GenCase c = make_fwd_case(DType::f32, rank, 7000 + i);
            const auto ref = deconv_ref::compute_forward(c.fp, c.input, c.filter);
            try {
                const auto plan = deconv::Plan::create(kOp, DType::f32,
                                                       shape_in(c.format, c.fp.input_shape),
                                                       c.fp.filter_shape, deconv_test::to_lib_attrs(c.fp, c.format));
                EXPECT_EQ(plan.op(), kOp);
                EXPECT_EQ(plan.dtype(), DType::f32);
                if (plan.macs() != ref.macs && ++bad <= 5)
                    ADD_FAILURE() << deconv_test::describe(c) << ": macs() " << plan.macs()
                                  << ", in-range terms " << ref.macs;
            } catch (const deconv::Error &e) {
                if (++bad <= 5) ADD_FAILURE() << deconv_test::describe(c) << ": " << e.what();
            }
            checked++;
        }
    }
    EXPECT_EQ(bad, 0) << "of " << checked;
}

}  // namespace
