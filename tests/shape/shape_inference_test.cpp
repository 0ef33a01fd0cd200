// Shape inference: the OpenVINO type_prop / CPU shape-inference cases from
// tests/data/openvino/shape_inference.json, the spec's examples, and the documented choices
// of the project's pad rules (see tests/reference/reference.h).
#include "test_support.h"
#include "vector_file.h"

#include <algorithm>

namespace {

using deconv_test::json;
using ::testing::HasSubstr;

struct ShapeCase {
    std::string name;  // sanitized
    json j;            // the case; null + load_error when the file could not be read
    std::string load_error;
};

const char *const kFile = "openvino/shape_inference.json";

const std::vector<ShapeCase> &shape_cases() {
    static const std::vector<ShapeCase> cases = [] {
        std::vector<ShapeCase> v;
        const deconv_test::VectorFile f = deconv_test::load_vectors(kFile);
        if (!f.error.empty()) {
            v.push_back({"load_error", json(), f.error});
            return v;
        }
        std::set<std::string> used;
        for (const auto &c : f.cases)
            v.push_back({deconv_test::sanitize_name(c.value("name", "case"), used), c, ""});
        return v;
    }();
    return cases;
}

std::vector<int64_t> clamp0(std::vector<int64_t> v) {
    for (auto &x : v) x = std::max<int64_t>(x, 0);
    return v;
}

class ShapeInferenceJson : public ::testing::TestWithParam<size_t> {};

TEST_P(ShapeInferenceJson, MatchesSpec) {
    const ShapeCase &sc = shape_cases()[GetParam()];
    ASSERT_TRUE(sc.load_error.empty()) << sc.load_error;
    const json &c = sc.j;
    const std::string op_s = c.at("op");
    const std::string name = c.at("name");
    ASSERT_TRUE(op_s == "ConvolutionBackpropData" || op_s == "GroupConvolutionBackpropData" ||
                op_s == "GroupConvolution")
        << op_s;
    // GroupConvolution: the forward op, filter [G, C_OUT, C_IN, K...], no output_padding and no
    // output_shape input (the JSON passes neither for it).
    const bool forward = op_s == "GroupConvolution";
    const bool grouped = op_s != "ConvolutionBackpropData";
    const deconv::Op op = forward   ? deconv::Op::GroupConvolution
                          : grouped ? deconv::Op::GroupConvolutionBackpropData
                                    : deconv::Op::ConvolutionBackpropData;

    const auto in_shape = deconv_test::ivec(c.at("input_shape"));
    const auto w_shape = deconv_test::ivec(c.at("filter_shape"));
    deconv::Attributes a;
    a.strides = deconv_test::ivec(c.at("strides"));
    a.pads_begin = deconv_test::ivec(c.at("pads_begin"));
    a.pads_end = deconv_test::ivec(c.at("pads_end"));
    a.dilations = deconv_test::ivec(c.at("dilations"));
    a.output_padding = deconv_test::ivec(c.at("output_padding"));
    a.auto_pad = deconv::parse_auto_pad(c.at("auto_pad").get<std::string>());
    std::optional<std::vector<int64_t>> out_shape;
    if (!c.at("output_shape_input").is_null())
        out_shape = deconv_test::ivec(c.at("output_shape_input"));
    const json &et = c.at("element_types");
    const int64_t D = static_cast<int64_t>(in_shape.size()) - 2;
    if (forward) {
        ASSERT_TRUE(a.output_padding.empty()) << "a forward case with output_padding";
        ASSERT_FALSE(out_shape.has_value()) << "a forward case with an output_shape input";
    }
    // The library's free function of the op on views.
    auto run_lib = [&](const deconv::ConstTensorView &in, const deconv::ConstTensorView &w,
                       const deconv::TensorView &out) {
        if (forward) {
            deconv::group_convolution(in, w, out, a);
        } else {
            deconv_ref::Problem p = deconv_test::ref_problem(grouped, in_shape, w_shape, a);
            p.auto_pad = *deconv_test::ref_auto_pad_from_str(c.at("auto_pad").get<std::string>());
            p.output_shape = out_shape;
            deconv_test::run_free(p, in, w, out);
        }
    };

    SCOPED_TRACE("case " + name + ": in=" + deconv_test::vec_str(in_shape) +
                 " w=" + deconv_test::vec_str(w_shape) +
                 " auto_pad=" + c.at("auto_pad").get<std::string>());

    if (!c.at("expect_error").is_null()) {
        const std::string spec_error = c.value("spec_error", "");
        // --- element-type errors: our API carries dtypes only on tensors, not in infer_shape.
        if (spec_error == "output_shape not integer type")
            GTEST_SKIP() << "not expressible: the API's output_shape is std::vector<int64_t>, "
                            "so a non-integer output_shape cannot be passed";
        if (spec_error == "non-numeric element type" ||
            spec_error == "data/filters element types differ") {
            const std::string data_t = et.at("data"), filt_t = et.at("filters");
            std::optional<deconv::DType> dt, ft;
            for (const auto &[text, slot] :
                 {std::pair<std::string, std::optional<deconv::DType> *>{data_t, &dt},
                  {filt_t, &ft}}) {
                if (deconv_test::dtype_from_str(text)) {
                    *slot = deconv::parse_dtype(text);
                    EXPECT_EQ(*slot, deconv_test::dtype_from_str(text));
                } else {
                    // A type the library has no kernels for: parse_dtype rejects it by name.
                    try {
                        deconv::parse_dtype(text);
                        ADD_FAILURE() << "parse_dtype accepted '" << text << "'";
                    } catch (const deconv::Error &e) {
                        EXPECT_TRUE(deconv_test::message_names(e.what(), {text}));
                    }
                }
            }
            if (!dt || !ft) return;  // the unparseable name is the error
            ASSERT_NE(*dt, *ft);
            // The shapes themselves are fine; the run must refuse the mismatched dtypes.
            const deconv::ShapeInfo info = deconv::infer_shape(op, in_shape, w_shape, a, out_shape);
            deconv_test::Buffer in(*dt, in_shape), w(*ft, w_shape), out(*dt, info.output_shape);
            in.fill_bytes(0);
            w.fill_bytes(0);
            out.fill_bytes(0x5A);
            const auto before = out.payload();
            try {
                run_lib(in.cview(), w.cview(), out.view());
                ADD_FAILURE() << "mismatched dtypes " << data_t << "/" << filt_t << " accepted";
            } catch (const deconv::Error &e) {
                EXPECT_TRUE(deconv_test::message_names(
                    e.what(), {"dtype", "type", data_t, filt_t}));
                if (forward) {
                    EXPECT_EQ(e.kind(), deconv::ErrorKind::InvalidArgument) << e.what();
                }
            }
            EXPECT_EQ(out.payload(), before) << "output written on error";
            return;
        }
        // --- an output_shape input of rank != 1: we can only pass a flat vector.
        if (spec_error == "output_shape input not rank 1") {
            const auto cs = deconv_test::ivec(c.at("output_shape_input_const_shape"));
            ASSERT_TRUE(out_shape.has_value());
            if (static_cast<int64_t>(out_shape->size()) == D)
                GTEST_SKIP() << "not expressible: a rank-" << cs.size()
                             << " output_shape tensor cannot be passed (the API takes a 1-D "
                                "vector), and its flattened values are a valid output_shape";
            // Flattened, its length is wrong: that must still be rejected.
        }
        std::vector<std::string> keywords = {"rank"};
        if (spec_error == "rank mismatch" || spec_error == "rank not 3..5")
            keywords = {"rank"};
        else if (spec_error == "channel mismatch")
            keywords = {"channel", "c_in", "g*c", "group"};
        else if (spec_error == "output_shape length" ||
                 spec_error == "output_shape input not rank 1")
            keywords = {"output_shape", "output shape"};
        else
            FAIL() << "unknown spec_error category '" << spec_error << "'";
        try {
            const auto info = deconv::infer_shape(op, in_shape, w_shape, a, out_shape);
            ADD_FAILURE() << "expected an error like \"" << c.at("expect_error").get<std::string>()
                          << "\", got shape " << deconv_test::vec_str(info.output_shape);
        } catch (const deconv::Error &e) {
            EXPECT_TRUE(deconv_test::message_names(e.what(), keywords))
                << "(OpenVINO says: " << c.at("expect_error").get<std::string>() << ")";
            // (The backprop ops report rank > 5 as Unsupported; every forward error case of the
            // JSON is a plain invalid argument.)
            if (forward) {
                EXPECT_EQ(e.kind(), deconv::ErrorKind::InvalidArgument) << e.what();
            }
        }
        if (forward && deconv_test::rank_built(static_cast<int>(D)) &&
            deconv_test::dtype_built(deconv::DType::f32)) {
            // The run refuses it too, before touching the output.
            // An output of the shape the call would have if its channels matched.
            std::vector<int64_t> os{in_shape[0], w_shape[0] * w_shape[1]};
            for (int64_t i = 0; i < D; i++)
                os.push_back(std::max<int64_t>(1, in_shape[2 + i] - w_shape[3 + i] + 1));
            deconv_test::Buffer in(deconv::DType::f32, in_shape), w(deconv::DType::f32, w_shape),
                out(deconv::DType::f32, os);
            in.fill_bytes(0);
            w.fill_bytes(0);
            out.fill_bytes(0x5A);
            const auto before = out.payload();
            try {
                run_lib(in.cview(), w.cview(), out.view());
                ADD_FAILURE() << "the run accepted it";
            } catch (const deconv::Error &e) {
                EXPECT_TRUE(deconv_test::message_names(e.what(), keywords)) << "run";
                EXPECT_EQ(e.kind(), deconv::ErrorKind::InvalidArgument) << e.what();
            }
            EXPECT_EQ(out.payload(), before) << "output written on error";
        }
        return;
    }

    // --- a shape case.
    std::vector<int64_t> expected;
    if (!c.at("expected_shape").is_null()) {
        expected = deconv_test::ivec(c.at("expected_shape"));
        // The JSON's own consistency: OpenVINO and the spec reading agree on every shape.
        EXPECT_EQ(expected, deconv_test::ivec(c.at("spec_expected_shape")));
    } else {
        expected = deconv_test::ivec(c.at("spec_expected_shape"));
    }
    ASSERT_FALSE(expected.empty());
    const auto spec_pb = deconv_test::ivec(c.at("spec_pads_begin"));
    const auto spec_pe = deconv_test::ivec(c.at("spec_pads_end"));
    ASSERT_EQ(static_cast<int64_t>(spec_pb.size()), D);
    ASSERT_EQ(static_cast<int64_t>(spec_pe.size()), D);

    // Our rules: the spec formula, negative pads clamped to zero. Where OpenVINO keeps explicit
    // pads next to an output_shape (spec_check != agree), the spec formula decides.
    const auto want_pb = clamp0(spec_pb), want_pe = clamp0(spec_pe);
    if (c.at("spec_check") == "agree") {
        if (!c.at("expected_pads_begin").is_null()) {
            EXPECT_EQ(deconv_test::ivec(c.at("expected_pads_begin")), want_pb);
        }
        if (!c.at("expected_pads_end").is_null()) {
            EXPECT_EQ(deconv_test::ivec(c.at("expected_pads_end")), want_pe);
        }
    }

    // The independent reference must read the case the same way.
    if (forward) {
        deconv_ref::ForwardProblem p;
        p.input_shape = in_shape;
        p.filter_shape = w_shape;
        p.strides = a.strides;
        p.pads_begin = a.pads_begin;
        p.pads_end = a.pads_end;
        p.dilations = a.dilations;
        p.auto_pad = *deconv_test::ref_auto_pad_from_str(c.at("auto_pad").get<std::string>());
        const deconv_ref::Resolved r = deconv_ref::resolve_forward(p);
        EXPECT_EQ(r.output_shape, expected) << "reference disagrees with the JSON";
        EXPECT_EQ(r.pads_begin, spec_pb) << "reference disagrees with the JSON";
        EXPECT_EQ(r.pads_end, spec_pe) << "reference disagrees with the JSON";
    } else {
        deconv_ref::Problem p = deconv_test::ref_problem(grouped, in_shape, w_shape, a);
        p.auto_pad = *deconv_test::ref_auto_pad_from_str(c.at("auto_pad").get<std::string>());
        p.output_shape = out_shape;
        const deconv_ref::Resolved r = deconv_ref::resolve(p);
        EXPECT_EQ(r.output_shape, expected) << "reference disagrees with the JSON";
        EXPECT_EQ(r.raw_pads_begin, spec_pb) << "reference disagrees with the JSON";
        EXPECT_EQ(r.raw_pads_end, spec_pe) << "reference disagrees with the JSON";
    }

    deconv::ShapeInfo info;
    try {
        info = deconv::infer_shape(op, in_shape, w_shape, a, out_shape);
    } catch (const deconv::Error &e) {
        FAIL() << "infer_shape threw: " << e.what();
    }
    EXPECT_EQ(info.output_shape, expected);
    EXPECT_EQ(info.pads_begin, want_pb) << "JSON/OpenVINO pads "
                                        << c.at("expected_pads_begin").dump();
    EXPECT_EQ(info.pads_end, want_pe) << "JSON/OpenVINO pads " << c.at("expected_pads_end").dump();
    EXPECT_EQ(info.groups, grouped ? w_shape[0] : 1);
    const std::vector<int64_t> ones(D, 1), zeros(D, 0);
    EXPECT_EQ(info.strides, a.strides.empty() ? ones : a.strides);
    EXPECT_EQ(info.dilations, a.dilations.empty() ? ones : a.dilations);
    if (!c.at("expected_output_padding").is_null()) {
        EXPECT_EQ(info.output_padding, deconv_test::ivec(c.at("expected_output_padding")));
    }
    if (forward) {
        // The forward op has no output_padding: reported as zeros (or not at all).
        EXPECT_TRUE(info.output_padding.empty() || info.output_padding == zeros)
            << deconv_test::vec_str(info.output_padding);
        EXPECT_EQ(info.data_format, deconv::DataFormat::NCX);
    } else {
        EXPECT_EQ(info.output_padding, a.output_padding.empty() ? zeros : a.output_padding);
    }

    // A Plan resolves the same shapes (creating one touches no tensor memory).
    if (deconv_test::rank_built(static_cast<int>(D)) &&
        deconv_test::dtype_built(deconv::DType::f32)) {
        const auto plan =
            deconv::Plan::create(op, deconv::DType::f32, in_shape, w_shape, a, out_shape);
        EXPECT_EQ(plan.shape().output_shape, expected);
        EXPECT_EQ(plan.shape().pads_begin, want_pb);
        EXPECT_EQ(plan.shape().pads_end, want_pe);
        EXPECT_EQ(plan.op(), op);
        EXPECT_EQ(plan.dtype(), deconv::DType::f32);
    }
}

INSTANTIATE_TEST_SUITE_P(OpenVino, ShapeInferenceJson,
                         ::testing::Range<size_t>(0, shape_cases().size()),
                         [](const ::testing::TestParamInfo<size_t> &pinfo) {
                             return shape_cases()[pinfo.param].name;
                         });

TEST(ShapeInferenceData, EveryVectorRuns) {
    std::set<std::string> covered;
    for (const ShapeCase &sc : shape_cases())
        if (sc.load_error.empty()) covered.insert(sc.j.value("name", "case"));
    deconv_test::expect_every_vector_runs("OpenVino/ShapeInferenceJson", {kFile}, covered,
                                          shape_cases().size());
}

// ---------------------------------------------------------------- the spec's examples

deconv::Attributes s2p1(int d) {
    deconv::Attributes a;
    a.strides.assign(d, 2);
    a.pads_begin.assign(d, 1);
    a.pads_end.assign(d, 1);
    a.dilations.assign(d, 1);
    return a;
}

TEST(ShapeSpecExamples, GroupConvBackprop2D) {
    const auto info = deconv::infer_shape(deconv::Op::GroupConvolutionBackpropData,
                                          {1, 20, 224, 224}, {4, 5, 2, 3, 3}, s2p1(2));
    EXPECT_EQ(info.output_shape, (std::vector<int64_t>{1, 8, 447, 447}));
    EXPECT_EQ(info.pads_begin, (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(info.pads_end, (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(info.groups, 4);
}

TEST(ShapeSpecExamples, ConvBackprop2D) {
    const auto info = deconv::infer_shape(deconv::Op::ConvolutionBackpropData, {1, 20, 224, 224},
                                          {20, 10, 3, 3}, s2p1(2));
    EXPECT_EQ(info.output_shape, (std::vector<int64_t>{1, 10, 447, 447}));
    EXPECT_EQ(info.groups, 1);
}

TEST(ShapeSpecExamples, GroupConvBackprop3D) {
    const auto info = deconv::infer_shape(deconv::Op::GroupConvolutionBackpropData,
                                          {1, 20, 224, 224, 224}, {4, 5, 2, 3, 3, 3}, s2p1(3));
    EXPECT_EQ(info.output_shape, (std::vector<int64_t>{1, 8, 447, 447, 447}));
}

TEST(ShapeSpecExamples, GroupConvBackprop1D) {
    const auto info = deconv::infer_shape(deconv::Op::GroupConvolutionBackpropData, {1, 20, 224},
                                          {4, 5, 2, 3}, s2p1(1));
    EXPECT_EQ(info.output_shape, (std::vector<int64_t>{1, 8, 447}));
}

TEST(ShapeSpecExamples, ConvBackprop1DAnd3D) {
    EXPECT_EQ(deconv::infer_shape(deconv::Op::ConvolutionBackpropData, {1, 20, 224},
                                  {20, 10, 3}, s2p1(1))
                  .output_shape,
              (std::vector<int64_t>{1, 10, 447}));
    EXPECT_EQ(deconv::infer_shape(deconv::Op::ConvolutionBackpropData, {1, 20, 224, 224, 224},
                                  {20, 10, 3, 3, 3}, s2p1(3))
                  .output_shape,
              (std::vector<int64_t>{1, 10, 447, 447, 447}));
}

// ---------------------------------------------------------------- documented choices

// 1D helper: X=4, K=2, s=1, d=1 -> natural span s*(X-1)+(K-1)*d+1 = 5.
deconv::ShapeInfo infer_1d(deconv::AutoPad ap, std::optional<int64_t> out, int64_t x = 4,
                           int64_t k = 2, int64_t s = 1, int64_t op = 0, int64_t pb = 0,
                           int64_t pe = 0) {
    deconv::Attributes a;
    a.strides = {s};
    a.dilations = {1};
    a.pads_begin = {pb};
    a.pads_end = {pe};
    a.output_padding = {op};
    a.auto_pad = ap;
    std::optional<std::vector<int64_t>> os;
    if (out) os = std::vector<int64_t>{*out};
    return deconv::infer_shape(deconv::Op::GroupConvolutionBackpropData, {1, 2, x}, {2, 1, 3, k},
                               a, os);
}

TEST(ShapeDocumentedChoices, SameUpperOddTotalPutsLargerHalfAtBeginning) {
    // total = 5 - 4 = 1: same_upper -> pe = floor(1/2) = 0, pb = 1 (the spec's formula).
    const auto info = infer_1d(deconv::AutoPad::SameUpper, 4);
    EXPECT_EQ(info.pads_begin, (std::vector<int64_t>{1}));
    EXPECT_EQ(info.pads_end, (std::vector<int64_t>{0}));
    EXPECT_EQ(info.output_shape, (std::vector<int64_t>{1, 6, 4}));
    // total = 3 (X=4, K=4, out=4): pe = 1, pb = 2.
    const auto info3 = infer_1d(deconv::AutoPad::SameUpper, 4, 4, 4);
    EXPECT_EQ(info3.pads_begin, (std::vector<int64_t>{2}));
    EXPECT_EQ(info3.pads_end, (std::vector<int64_t>{1}));
}

TEST(ShapeDocumentedChoices, OtherModesPutLargerHalfAtEnd) {
    for (auto ap : {deconv::AutoPad::SameLower, deconv::AutoPad::Explicit, deconv::AutoPad::Valid}) {
        SCOPED_TRACE(deconv::auto_pad_name(ap));
        const auto info = infer_1d(ap, 4, 4, 2, 1, 0, 7, 9);  // the given pads are ignored
        EXPECT_EQ(info.pads_begin, (std::vector<int64_t>{0}));
        EXPECT_EQ(info.pads_end, (std::vector<int64_t>{1}));
        EXPECT_EQ(info.output_shape, (std::vector<int64_t>{1, 6, 4}));
        const auto info3 = infer_1d(ap, 4, 4, 4);
        EXPECT_EQ(info3.pads_begin, (std::vector<int64_t>{1}));
        EXPECT_EQ(info3.pads_end, (std::vector<int64_t>{2}));
    }
}

TEST(ShapeDocumentedChoices, EvenTotalSplitsEqually) {
    for (auto ap : {deconv::AutoPad::SameUpper, deconv::AutoPad::SameLower,
                    deconv::AutoPad::Explicit, deconv::AutoPad::Valid}) {
        SCOPED_TRACE(deconv::auto_pad_name(ap));
        const auto info = infer_1d(ap, 3);  // total 2
        EXPECT_EQ(info.pads_begin, (std::vector<int64_t>{1}));
        EXPECT_EQ(info.pads_end, (std::vector<int64_t>{1}));
        EXPECT_EQ(info.output_shape, (std::vector<int64_t>{1, 6, 3}));
    }
}

TEST(ShapeDocumentedChoices, NegativeTotalClampsToZeroPads) {
    for (auto ap : {deconv::AutoPad::SameUpper, deconv::AutoPad::SameLower,
                    deconv::AutoPad::Explicit, deconv::AutoPad::Valid}) {
        SCOPED_TRACE(deconv::auto_pad_name(ap));
        // X=4, K=1, s=2: span 7; output_shape 9 -> total -2 (spec pads -1/-1) -> 0/0.
        const auto info = infer_1d(ap, 9, 4, 1, 2);
        EXPECT_EQ(info.pads_begin, (std::vector<int64_t>{0}));
        EXPECT_EQ(info.pads_end, (std::vector<int64_t>{0}));
        EXPECT_EQ(info.output_shape, (std::vector<int64_t>{1, 6, 9}));
        // total -1: same_upper spec pads 0/-1, others -1/0 -> 0/0.
        const auto info1 = infer_1d(ap, 8, 4, 1, 2);
        EXPECT_EQ(info1.pads_begin, (std::vector<int64_t>{0}));
        EXPECT_EQ(info1.pads_end, (std::vector<int64_t>{0}));
        EXPECT_EQ(info1.output_shape, (std::vector<int64_t>{1, 6, 8}));
    }
}

TEST(ShapeDocumentedChoices, OutputPaddingFoldedIntoTotalWithOutputShape) {
    // X=2, K=3, s=2: span 5; output_shape 3, output_padding 1 -> total 3.
    const auto lower = infer_1d(deconv::AutoPad::SameLower, 3, 2, 3, 2, 1);
    EXPECT_EQ(lower.pads_begin, (std::vector<int64_t>{1}));
    EXPECT_EQ(lower.pads_end, (std::vector<int64_t>{2}));
    EXPECT_EQ(lower.output_shape, (std::vector<int64_t>{1, 6, 3}));  // not 3 + output_padding
    EXPECT_EQ(lower.output_padding, (std::vector<int64_t>{1}));
    const auto upper = infer_1d(deconv::AutoPad::SameUpper, 3, 2, 3, 2, 1);
    EXPECT_EQ(upper.pads_begin, (std::vector<int64_t>{2}));
    EXPECT_EQ(upper.pads_end, (std::vector<int64_t>{1}));
    EXPECT_EQ(upper.output_shape, (std::vector<int64_t>{1, 6, 3}));
}

TEST(ShapeDocumentedChoices, OutputPaddingAddedAtEndWithoutOutputShape) {
    const auto e = infer_1d(deconv::AutoPad::Explicit, std::nullopt, 4, 2, 2, 1, 1, 0);
    // 2*3 + 1 + 1 - 1 - 0 + 1 = 8
    EXPECT_EQ(e.output_shape, (std::vector<int64_t>{1, 6, 8}));
    EXPECT_EQ(e.pads_begin, (std::vector<int64_t>{1}));
    EXPECT_EQ(e.pads_end, (std::vector<int64_t>{0}));
}

TEST(ShapeDocumentedChoices, ValidIgnoresGivenPads) {
    // span 5, output_padding 1 -> 6 whatever pads were given.
    const auto info = infer_1d(deconv::AutoPad::Valid, std::nullopt, 4, 2, 1, 1, 2, 1);
    EXPECT_EQ(info.pads_begin, (std::vector<int64_t>{0}));
    EXPECT_EQ(info.pads_end, (std::vector<int64_t>{0}));
    EXPECT_EQ(info.output_shape, (std::vector<int64_t>{1, 6, 6}));
}

TEST(ShapeDocumentedChoices, SameWithoutOutputShapeMeansNoPadding) {
    for (auto ap : {deconv::AutoPad::SameUpper, deconv::AutoPad::SameLower}) {
        SCOPED_TRACE(deconv::auto_pad_name(ap));
        const auto info = infer_1d(ap, std::nullopt, 4, 3, 2, 0, 1, 1);
        EXPECT_EQ(info.pads_begin, (std::vector<int64_t>{0}));
        EXPECT_EQ(info.pads_end, (std::vector<int64_t>{0}));
        EXPECT_EQ(info.output_shape, (std::vector<int64_t>{1, 6, 9}));
    }
}

TEST(ShapeDocumentedChoices, EmptyAttributesTakeDefaults) {
    const auto info = deconv::infer_shape(deconv::Op::ConvolutionBackpropData, {2, 3, 5, 6},
                                          {3, 4, 2, 3}, deconv::Attributes{});
    EXPECT_EQ(info.output_shape, (std::vector<int64_t>{2, 4, 6, 8}));
    EXPECT_EQ(info.strides, (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(info.dilations, (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(info.pads_begin, (std::vector<int64_t>{0, 0}));
    EXPECT_EQ(info.pads_end, (std::vector<int64_t>{0, 0}));
    EXPECT_EQ(info.output_padding, (std::vector<int64_t>{0, 0}));
    EXPECT_EQ(info.groups, 1);
}

TEST(ShapeDocumentedChoices, OutputPaddingMayReachStride) {
    // output_padding >= stride is accepted (the spec only asks for non-negative values).
    const auto info = infer_1d(deconv::AutoPad::Explicit, std::nullopt, 4, 2, 1, 3);
    EXPECT_EQ(info.output_shape, (std::vector<int64_t>{1, 6, 8}));
}

TEST(ShapeDocumentedChoices, AutoPadNames) {
    EXPECT_EQ(deconv::parse_auto_pad("explicit"), deconv::AutoPad::Explicit);
    EXPECT_EQ(deconv::parse_auto_pad("notset"), deconv::AutoPad::Explicit);
    EXPECT_EQ(deconv::parse_auto_pad("none"), deconv::AutoPad::Explicit);
    EXPECT_EQ(deconv::parse_auto_pad(""), deconv::AutoPad::Explicit);
    EXPECT_EQ(deconv::parse_auto_pad("same_upper"), deconv::AutoPad::SameUpper);
    EXPECT_EQ(deconv::parse_auto_pad("same_lower"), deconv::AutoPad::SameLower);
    EXPECT_EQ(deconv::parse_auto_pad("valid"), deconv::AutoPad::Valid);
    for (auto ap : {deconv::AutoPad::Explicit, deconv::AutoPad::SameUpper,
                    deconv::AutoPad::SameLower, deconv::AutoPad::Valid})
        EXPECT_EQ(deconv::parse_auto_pad(deconv::auto_pad_name(ap)), ap);
}

// Exhaustive agreement with the reference's pad rules over a small grid of 1D..3D problems.
TEST(ShapeDocumentedChoices, AgreesWithReferenceOnGrid) {
    int checked = 0;
    for (int64_t x = 1; x <= 4; x++)
        for (int64_t k = 1; k <= 3; k++)
            for (int64_t s = 1; s <= 3; s++)
                for (int64_t d = 1; d <= 2; d++)
                    for (int64_t op = 0; op <= 3; op++)
                        for (int ap = 0; ap < 4; ap++)
                            for (int64_t o = 0; o <= 12; o++) {  // 0 = no output_shape
                                deconv_ref::Problem p;
                                p.grouped = (x + k) % 2 == 0;
                                p.input_shape = {1, 2, x, 3};
                                p.filter_shape = p.grouped ? std::vector<int64_t>{2, 1, 1, k, 2}
                                                           : std::vector<int64_t>{2, 1, k, 2};
                                p.strides = {s, 1};
                                p.dilations = {d, 2};
                                p.pads_begin = {(x * 3 + k) % 3, 0};
                                p.pads_end = {(s + d) % 2, 1};
                                p.output_padding = {op, 0};
                                p.auto_pad = static_cast<deconv_ref::AutoPad>(ap);
                                if (o) p.output_shape = std::vector<int64_t>{o, 4};
                                deconv_ref::Resolved r;
                                try {
                                    r = deconv_ref::resolve(p);
                                } catch (const std::invalid_argument &) {
                                    continue;  // e.g. non-positive output size
                                }
                                SCOPED_TRACE(deconv_ref::describe(p));
                                deconv::ShapeInfo info;
                                ASSERT_NO_THROW(info = deconv::infer_shape(
                                                    deconv_test::lib_op(p), p.input_shape,
                                                    p.filter_shape, deconv_test::to_lib_attrs(p),
                                                    p.output_shape));
                                ASSERT_EQ(info.output_shape, r.output_shape);
                                ASSERT_EQ(info.pads_begin, r.pads_begin);
                                ASSERT_EQ(info.pads_end, r.pads_end);
                                checked++;
                            }
    EXPECT_GT(checked, 3000);
}

}  // namespace
