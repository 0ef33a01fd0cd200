// The OpenVINO reference-test vectors (tests/data/openvino/convolution_backprop_data.json and
// group_convolution_backprop_data.json), each run for every dtype of its `dtypes_tested` that the
// library has, compared with the JSON's `expected` and with the naive reference.
#include "check.h"
#include "vector_file.h"

namespace {

using deconv::DType;
using deconv_test::json;

struct NumCase {
    std::string name;  // sanitized, with the dtype
    std::string file;
    json j;
    DType dtype = DType::f32;
    std::string load_error;
};

bool all_integer(const std::vector<double> &v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x == std::floor(x); });
}
bool any_negative(const std::vector<double> &v) {
    return std::any_of(v.begin(), v.end(), [](double x) { return x < 0; });
}

const std::vector<std::string> kFiles = {"convolution_backprop_data.json",
                                         "group_convolution_backprop_data.json"};
std::string vector_path(const std::string &file) { return "openvino/" + file; }

const std::vector<NumCase> &num_cases() {
    static const std::vector<NumCase> cases = [] {
        std::vector<NumCase> v;
        std::set<std::string> used;
        for (const std::string &file : kFiles) {
            const deconv_test::VectorFile f = deconv_test::load_vectors(vector_path(file));
            if (!f.error.empty()) {
                v.push_back({deconv_test::sanitize_name("load_error_" + file, used), file, json(),
                             DType::f32, f.error});
                continue;
            }
            for (const auto &c : f.cases) {
                const auto data = deconv_test::dvec(c.at("input")),
                           filt = deconv_test::dvec(c.at("filter"));
                const bool ints = all_integer(data) && all_integer(filt);
                const bool neg = any_negative(data) || any_negative(filt);
                for (const auto &tn : c.at("dtypes_tested")) {
                    // i16, i64, u16, u32, u64: not in this library; skipped silently.
                    const auto t = deconv_test::dtype_from_str(tn.get<std::string>());
                    if (!t) continue;
                    const bool is_int = !deconv_ref::dt_is_float(deconv_test::to_ref(*t));
                    if (is_int && !ints) continue;
                    if (*t == DType::u8 && neg) continue;
                    v.push_back({deconv_test::sanitize_name(
                                     c.at("name").get<std::string>() + "_" + tn.get<std::string>(),
                                     used),
                                 file, c, *t, ""});
                }
            }
        }
        return v;
    }();
    return cases;
}

class Conformance : public ::testing::TestWithParam<size_t> {};

TEST_P(Conformance, MatchesExpectedAndReference) {
    const NumCase &nc = num_cases()[GetParam()];
    ASSERT_TRUE(nc.load_error.empty()) << nc.load_error;
    const json &c = nc.j;
    const DType t = nc.dtype;
    const auto rt = deconv_test::to_ref(t);

    deconv_ref::Problem p;
    p.grouped = nc.file.rfind("group_", 0) == 0;
    p.input_shape = deconv_test::ivec(c.at("input_shape"));
    p.filter_shape = deconv_test::ivec(c.at("filter_shape"));
    p.strides = deconv_test::ivec(c.at("strides"));
    p.pads_begin = deconv_test::ivec(c.at("pads_begin"));
    p.pads_end = deconv_test::ivec(c.at("pads_end"));
    p.dilations = deconv_test::ivec(c.at("dilations"));
    p.output_padding = deconv_test::ivec(c.at("output_padding"));
    const auto ap = deconv_test::ref_auto_pad_from_str(c.at("auto_pad").get<std::string>());
    ASSERT_TRUE(ap.has_value()) << c.at("auto_pad");
    p.auto_pad = *ap;
    if (!c.at("output_shape_input").is_null())
        p.output_shape = deconv_test::ivec(c.at("output_shape_input"));
    const int rank = static_cast<int>(p.input_shape.size()) - 2;
    SCOPED_TRACE(c.at("name").get<std::string>() + " as " + deconv_test::dt_str(t) + ": " +
                 deconv_ref::describe(p));
    if (!deconv_test::dtype_built(t)) GTEST_SKIP() << deconv_test::dt_str(t) << " not built";
    if (!deconv_test::rank_built(rank)) GTEST_SKIP() << "rank " << rank << " not built";

    const auto orig_in = deconv_test::dvec(c.at("input"));
    const auto orig_w = deconv_test::dvec(c.at("filter"));
    const auto expected = deconv_test::dvec(c.at("expected"));
    const auto expected_shape = deconv_test::ivec(c.at("expected_shape"));

    // The reference against the JSON first (validates the reference itself).
    const deconv_ref::Result ref_orig = deconv_ref::compute(p, orig_in, orig_w);
    ASSERT_EQ(ref_orig.shape.output_shape, expected_shape);
    ASSERT_EQ(ref_orig.output.size(), expected.size());
    for (size_t i = 0; i < expected.size(); i++)
        ASSERT_NEAR(ref_orig.output[i], expected[i],
                    1e-6 * (ref_orig.abs_sum[i] + std::fabs(expected[i])) + 1e-7)
            << "reference vs JSON at " << i;

    // The library on the inputs stored in dtype t.
    deconv_test::Buffer in(t, p.input_shape), w(t, p.filter_shape), out(t, expected_shape);
    const auto st_in = deconv_test::fill(in, orig_in);
    const auto st_w = deconv_test::fill(w, orig_w);
    out.fill_bytes(0xCD);
    const deconv::ShapeInfo info =
        deconv::infer_shape(deconv_test::lib_op(p), p.input_shape, p.filter_shape,
                            deconv_test::to_lib_attrs(p), p.output_shape);
    ASSERT_EQ(info.output_shape, expected_shape);
    try {
        deconv_test::run_free(p, in.cview(), w.cview(), out.view());
    } catch (const deconv::Error &e) {
        FAIL() << "deconv::Error: " << e.what();
    }
    EXPECT_TRUE(out.guards_intact());
    const auto got = deconv_test::read_all(out);

    // (1) against the reference computed from the stored values: the strict per-dtype bound.
    const deconv_ref::Result ref = deconv_ref::compute(p, st_in, st_w);
    EXPECT_TRUE(deconv_test::compare_to_reference(t, got, ref));

    // (2) against the JSON's expected values (computed by OpenVINO in f32 from the unrounded
    // inputs and printed with 8 digits). Integers: exact after saturation to the dtype. Floats:
    // the strict bound, plus the effect of rounding both factors of each product to the dtype
    // (<= (2u + u^2) * sum|terms|), plus the JSON's print precision.
    for (size_t i = 0; i < expected.size(); i++) {
        SCOPED_TRACE("element " + deconv_test::index_str(static_cast<int64_t>(i), expected_shape));
        if (!deconv_ref::dt_is_float(rt)) {
            EXPECT_EQ(got[i], deconv_ref::round_to_dtype(rt, expected[i]));
        } else {
            const double u = deconv_ref::dt_unit_roundoff(rt);
            const double tol = deconv_test::tolerance(t, ref.output[i], ref.abs_sum[i], ref.terms[i]) +
                               (2 * u + u * u) * ref_orig.abs_sum[i] +
                               1e-6 * (ref_orig.abs_sum[i] + std::fabs(expected[i])) + 1e-7;
            EXPECT_NEAR(got[i], expected[i], tol);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(OpenVino, Conformance, ::testing::Range<size_t>(0, num_cases().size()),
                         [](const ::testing::TestParamInfo<size_t> &pinfo) {
                             return num_cases()[pinfo.param].name;
                         });

TEST(ConformanceData, EveryVectorRuns) {
    std::set<std::string> covered;
    for (const NumCase &nc : num_cases())
        if (nc.load_error.empty()) covered.insert(nc.j.at("name").get<std::string>());
    std::vector<std::string> paths;
    for (const std::string &file : kFiles) paths.push_back(vector_path(file));
    deconv_test::expect_every_vector_runs("OpenVino/Conformance", paths, covered, num_cases().size());
}

// The JSON's rejected case is not used as a vector, but the spec reading it documents
// ([1,2,1,3] = [3,5,2,7,13,6] with pads 1/1 on H) is checked against the library.
TEST(ConformanceRejected, SpecReadingOfOutshape1) {
    deconv_ref::Problem p;
    p.grouped = true;
    p.input_shape = {1, 2, 2, 2};
    p.filter_shape = {2, 1, 1, 2, 2};
    p.strides = {1, 1};
    p.dilations = {1, 1};
    p.pads_begin = {0, 0};
    p.pads_end = {0, 0};
    p.auto_pad = deconv_ref::AutoPad::SameUpper;
    p.output_shape = std::vector<int64_t>{1, 3};
    const std::vector<double> in{1, 2, 3, 4, 5, 6, 7, 8}, w{1, 0, 0, 1, 1, 0, 0, 1};
    const auto ref = deconv_ref::compute(p, in, w);
    ASSERT_EQ(ref.shape.output_shape, (std::vector<int64_t>{1, 2, 1, 3}));
    ASSERT_EQ(ref.output, (std::vector<double>{3, 5, 2, 7, 13, 6}));
    deconv_test::Buffer bi(DType::f32, p.input_shape), bw(DType::f32, p.filter_shape),
        bo(DType::f32, {1, 2, 1, 3});
    deconv_test::fill(bi, in);
    deconv_test::fill(bw, w);
    deconv_test::run_free(p, bi.cview(), bw.cview(), bo.view());
    EXPECT_EQ(deconv_test::read_all(bo), ref.output);
    const auto info = deconv::infer_shape(deconv::Op::GroupConvolutionBackpropData, p.input_shape,
                                          p.filter_shape, deconv_test::to_lib_attrs(p),
                                          p.output_shape);
    EXPECT_EQ(info.pads_begin, (std::vector<int64_t>{1, 0}));
    EXPECT_EQ(info.pads_end, (std::vector<int64_t>{1, 0}));
}

}  // namespace
