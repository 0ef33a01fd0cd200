// Bad input: every class of invalid shapes, attributes, dtypes, pointers and views must be
// reported by a deconv::Error whose message names the offending thing, and the output buffer
// must be left untouched (it is filled with a sentinel and compared afterwards).
#include "test_support.h"

#include <functional>
#include <limits>

namespace {

using deconv::DType;
using deconv::Op;
using ::testing::HasSubstr;

constexpr unsigned char kSentinel = 0xCD;

// One call of the API, with everything that can be wrong in it.
struct Call {
    Op op = Op::GroupConvolutionBackpropData;
    DType in_t = DType::f32, w_t = DType::f32, out_t = DType::f32;
    std::vector<int64_t> in_shape{1, 4, 5, 5};
    std::vector<int64_t> w_shape{2, 2, 3, 3, 3};   // G=2, C_IN=2, C_OUT=3, 3x3
    std::vector<int64_t> out_shape{1, 6, 7, 7};    // s=1, no pads: 5+3-1 = 7
    std::vector<int64_t> in_strides, w_strides, out_strides;
    deconv::Attributes attrs;
    std::optional<std::vector<int64_t>> output_shape;
    bool null_in = false, null_w = false, null_out = false;
};

// Elements a buffer needs so that every element a view addresses lies inside it; capped so
// that absurd shapes (which must be rejected before any access) get a small dummy buffer.
int64_t needed_elements(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides) {
    long double span = 1;
    if (strides.empty()) {
        for (int64_t d : shape) span *= d > 0 ? static_cast<long double>(d) : 1.0L;
    } else {
        span = 1;
        for (size_t i = 0; i < shape.size() && i < strides.size(); i++)
            if (shape[i] > 0 && strides[i] > 0) span += static_cast<long double>(shape[i] - 1) * strides[i];
    }
    if (span > 1e7L) return 16;
    return std::max<int64_t>(static_cast<int64_t>(span), 1);
}

std::string lower_copy(const char *s) { return deconv_test::lower(s); }

// Asserts that `fn` throws deconv::Error naming one of the keywords (and of the given kind).
void expect_error(const std::function<void()> &fn, const std::vector<std::string> &keywords,
                  std::optional<deconv::ErrorKind> kind, const char *what) {
    SCOPED_TRACE(what);
    try {
        fn();
        ADD_FAILURE() << what << ": no exception";
    } catch (const deconv::Error &e) {
        std::printf("[ message  ] %s: %s\n", what, e.what());
        EXPECT_TRUE(deconv_test::message_names(e.what(), keywords));
        if (kind) {
            EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(*kind)) << e.what();
        }
    } catch (const std::exception &e) {
        ADD_FAILURE() << what << ": threw a non-deconv exception: " << e.what();
    }
}

// Runs the call through the free function (and, with `plan_too`, through Plan::create +
// Plan::run on views) and checks the error and that the output was not written.
void expect_run_error(const Call &c, const std::vector<std::string> &keywords,
                      std::optional<deconv::ErrorKind> kind = std::nullopt,
                      bool shape_level = false) {
    deconv_test::Buffer in(c.in_t, c.in_shape, needed_elements(c.in_shape, c.in_strides));
    deconv_test::Buffer w(c.w_t, c.w_shape, needed_elements(c.w_shape, c.w_strides));
    deconv_test::Buffer out(c.out_t, c.out_shape, needed_elements(c.out_shape, c.out_strides));
    in.fill_bytes(0);
    w.fill_bytes(0);
    out.fill_bytes(kSentinel);
    const auto before = out.payload();
    deconv::ConstTensorView iv(c.null_in ? nullptr : in.data(), c.in_t, c.in_shape, c.in_strides);
    deconv::ConstTensorView wv(c.null_w ? nullptr : w.data(), c.w_t, c.w_shape, c.w_strides);
    deconv::TensorView ov{c.null_out ? nullptr : out.data(), c.out_t, c.out_shape, c.out_strides};

    expect_error(
        [&] {
            if (c.op == Op::GroupConvolutionBackpropData)
                deconv::group_convolution_backprop_data(iv, wv, ov, c.attrs, c.output_shape);
            else
                deconv::convolution_backprop_data(iv, wv, ov, c.attrs, c.output_shape);
        },
        keywords, kind, "free function");
    EXPECT_EQ(out.payload(), before) << "the output was written although the call failed";
    EXPECT_TRUE(out.guards_intact());

    if (shape_level) {
        expect_error([&] { deconv::infer_shape(c.op, c.in_shape, c.w_shape, c.attrs, c.output_shape); },
                     keywords, kind, "infer_shape");
        expect_error(
            [&] {
                deconv::Plan::create(c.op, c.in_t, c.in_shape, c.w_shape, c.attrs, c.output_shape);
            },
            keywords, kind, "Plan::create");
    }
}

// ---------------------------------------------------------------- ranks

TEST(ErrorRanks, DataRankBelowThree) {
    Call c;
    c.op = Op::ConvolutionBackpropData;
    c.in_shape = {1, 20};
    c.w_shape = {20, 10};
    c.out_shape = {1, 10};
    expect_run_error(c, {"rank"}, std::nullopt, true);
}

TEST(ErrorRanks, DataRankAboveFive) {
    Call c;
    c.op = Op::ConvolutionBackpropData;
    c.in_shape = {1, 2, 3, 3, 3, 3};
    c.w_shape = {2, 1, 1, 1, 1, 1};
    c.out_shape = {1, 1, 3, 3, 3, 3};
    expect_run_error(c, {"rank"}, std::nullopt, true);
}

TEST(ErrorRanks, GroupFilterRankMismatch) {
    Call c;
    c.w_shape = {2, 2, 3, 3};  // 4D filter for a 2D group op (needs 5D)
    expect_run_error(c, {"rank"}, deconv::ErrorKind::InvalidArgument, true);
    c.w_shape = {2, 2, 3, 3, 3, 3};
    expect_run_error(c, {"rank"}, deconv::ErrorKind::InvalidArgument, true);
}

TEST(ErrorRanks, ConvFilterRankMismatch) {
    Call c;
    c.op = Op::ConvolutionBackpropData;
    c.in_shape = {1, 20, 8, 8, 8};
    c.w_shape = {20, 10, 3, 3};  // OpenVINO: "Data batch and filters rank do not match"
    c.out_shape = {1, 10, 10, 10, 10};
    expect_run_error(c, {"rank"}, deconv::ErrorKind::InvalidArgument, true);
}

TEST(ErrorRanks, OutputViewRankMismatch) {
    Call c;
    c.out_shape = {1, 6, 49};
    expect_run_error(c, {"output", "shape", "rank"}, deconv::ErrorKind::InvalidArgument);
}

// ---------------------------------------------------------------- channels

TEST(ErrorChannels, GroupDataChannelsNotGTimesCin) {
    Call c;
    c.in_shape = {1, 5, 5, 5};  // G*C_IN = 4
    expect_run_error(c, {"channel", "c_in", "g*c", "group"}, deconv::ErrorKind::InvalidArgument,
                     true);
    c.in_shape = {1, 16, 5, 5};
    c.w_shape = {21, 16, 20, 3, 3};  // OpenVINO's G=21, C_IN=16 case
    c.out_shape = {1, 420, 7, 7};
    expect_run_error(c, {"channel", "c_in", "g*c", "group"}, deconv::ErrorKind::InvalidArgument,
                     true);
}

TEST(ErrorChannels, ConvDataChannelsNotCin) {
    Call c;
    c.op = Op::ConvolutionBackpropData;
    c.in_shape = {1, 32, 5, 5};
    c.w_shape = {16, 20, 3, 3};
    c.out_shape = {1, 20, 7, 7};
    expect_run_error(c, {"channel", "c_in"}, deconv::ErrorKind::InvalidArgument, true);
}

TEST(ErrorChannels, OutputChannelsWrong) {
    Call c;
    c.out_shape = {1, 3, 7, 7};  // G*C_OUT = 6
    expect_run_error(c, {"output", "shape"}, deconv::ErrorKind::InvalidArgument);
}

// ---------------------------------------------------------------- attributes

TEST(ErrorAttributes, ZeroOrNegativeStrides) {
    for (int64_t bad : {0, -1, -3}) {
        Call c;
        c.attrs.strides = {1, bad};
        SCOPED_TRACE(bad);
        expect_run_error(c, {"strides"}, deconv::ErrorKind::InvalidArgument, true);
    }
}

TEST(ErrorAttributes, ZeroOrNegativeDilations) {
    for (int64_t bad : {0, -2}) {
        Call c;
        c.attrs.dilations = {bad, 1};
        SCOPED_TRACE(bad);
        expect_run_error(c, {"dilations"}, deconv::ErrorKind::InvalidArgument, true);
    }
}

TEST(ErrorAttributes, NegativePads) {
    {
        Call c;
        c.attrs.pads_begin = {-1, 0};
        c.attrs.pads_end = {0, 0};
        c.out_shape = {1, 6, 8, 7};
        expect_run_error(c, {"pads_begin"}, deconv::ErrorKind::InvalidArgument, true);
    }
    {
        Call c;
        c.attrs.pads_begin = {0, 0};
        c.attrs.pads_end = {0, -2};
        c.out_shape = {1, 6, 7, 9};
        expect_run_error(c, {"pads_end"}, deconv::ErrorKind::InvalidArgument, true);
    }
}

TEST(ErrorAttributes, NegativeOutputPadding) {
    Call c;
    c.attrs.output_padding = {0, -1};
    c.out_shape = {1, 6, 7, 6};
    expect_run_error(c, {"output_padding"}, deconv::ErrorKind::InvalidArgument, true);
}

TEST(ErrorAttributes, WrongLengthVectors) {
    const std::vector<int64_t> three{1, 1, 1}, one{0};
    {
        Call c;
        c.attrs.strides = three;
        expect_run_error(c, {"strides"}, deconv::ErrorKind::InvalidArgument, true);
    }
    {
        Call c;
        c.attrs.dilations = three;
        expect_run_error(c, {"dilations"}, deconv::ErrorKind::InvalidArgument, true);
    }
    {
        Call c;
        c.attrs.pads_begin = one;
        c.attrs.pads_end = {0, 0};
        expect_run_error(c, {"pads_begin"}, deconv::ErrorKind::InvalidArgument, true);
    }
    {
        Call c;
        c.attrs.pads_begin = {0, 0};
        c.attrs.pads_end = {0, 0, 0};
        expect_run_error(c, {"pads_end"}, deconv::ErrorKind::InvalidArgument, true);
    }
    {
        Call c;
        c.attrs.output_padding = one;
        expect_run_error(c, {"output_padding"}, deconv::ErrorKind::InvalidArgument, true);
    }
}

TEST(ErrorAttributes, OutputShapeWrongLength) {
    for (const auto &os : {std::vector<int64_t>{7}, std::vector<int64_t>{7, 7, 7},
                           std::vector<int64_t>{1, 6, 7, 7}}) {
        Call c;
        c.output_shape = os;
        SCOPED_TRACE(deconv_test::vec_str(os));
        expect_run_error(c, {"output_shape", "output shape"}, deconv::ErrorKind::InvalidArgument,
                         true);
    }
}

TEST(ErrorAttributes, OutputShapeNonPositive) {
    for (const auto &os : {std::vector<int64_t>{0, 7}, std::vector<int64_t>{7, -5}}) {
        Call c;
        c.output_shape = os;
        SCOPED_TRACE(deconv_test::vec_str(os));
        expect_run_error(c, {"output_shape", "output shape"}, deconv::ErrorKind::InvalidArgument,
                         true);
    }
}

TEST(ErrorAttributes, NonPositiveComputedOutputSize) {
    // X=5, K=3, s=1: span 7; pads 4+3 -> 0, pads 5+4 -> -2.
    for (const auto &p : {std::pair<int64_t, int64_t>{4, 3}, {5, 4}}) {
        Call c;
        c.attrs.pads_begin = {0, p.first};
        c.attrs.pads_end = {0, p.second};
        c.out_shape = {1, 6, 7, 1};
        SCOPED_TRACE(p.first + p.second);
        expect_run_error(c, {"output", "pads", "size"}, deconv::ErrorKind::InvalidArgument, true);
    }
}

TEST(ErrorShapes, NegativeDims) {
    {
        Call c;
        c.in_shape = {1, 4, -5, 5};
        expect_run_error(c, {"input", "data", "shape", "dim"}, deconv::ErrorKind::InvalidArgument,
                         true);
    }
    {
        Call c;
        c.w_shape = {2, 2, 3, -3, 3};
        expect_run_error(c, {"filter", "kernel", "shape", "dim"},
                         deconv::ErrorKind::InvalidArgument, true);
    }
}

TEST(ErrorAttributes, BadAutoPadName) {
    for (const char *s : {"same", "bogus", "upper", "same-upper"}) {
        SCOPED_TRACE(s);
        try {
            deconv::parse_auto_pad(s);
            ADD_FAILURE() << "accepted '" << s << "'";
        } catch (const deconv::Error &e) {
            EXPECT_THAT(lower_copy(e.what()), HasSubstr(s));
            EXPECT_EQ(e.kind(), deconv::ErrorKind::InvalidArgument);
        }
    }
}

// ---------------------------------------------------------------- dtypes

TEST(ErrorDtypes, UnsupportedDtypeName) {
    for (const char *s : {"i16", "i64", "u16", "u32", "u64", "boolean", "f8", "float"}) {
        SCOPED_TRACE(s);
        try {
            deconv::parse_dtype(s);
            ADD_FAILURE() << "accepted '" << s << "'";
        } catch (const deconv::Error &e) {
            EXPECT_THAT(lower_copy(e.what()), HasSubstr(s));
        }
    }
    EXPECT_THROW(deconv::parse_dtype(""), deconv::Error);
}

TEST(ErrorDtypes, DtypeNamesRoundTrip) {
    for (auto t : deconv_test::all_dtypes()) {
        EXPECT_STREQ(deconv::dtype_name(t), deconv_test::dt_str(t));
        EXPECT_EQ(deconv::parse_dtype(deconv_test::dt_str(t)), t);
        EXPECT_EQ(deconv::dtype_size(t), deconv_ref::dt_size(deconv_test::to_ref(t)));
    }
}

TEST(ErrorDtypes, InputFilterMismatch) {
    Call c;
    c.w_t = DType::f16;
    expect_run_error(c, {"dtype", "type"}, deconv::ErrorKind::InvalidArgument);
    c.w_t = DType::i32;
    expect_run_error(c, {"dtype", "type"}, deconv::ErrorKind::InvalidArgument);
}

TEST(ErrorDtypes, OutputMismatch) {
    Call c;
    c.out_t = DType::f64;
    expect_run_error(c, {"dtype", "type"}, deconv::ErrorKind::InvalidArgument);
    Call d;
    d.in_t = d.w_t = DType::i8;
    d.out_t = DType::i32;
    expect_run_error(d, {"dtype", "type"}, deconv::ErrorKind::InvalidArgument);
}

TEST(ErrorDtypes, PlanRunWithOtherDtype) {
    Call c;
    const auto plan = deconv::Plan::create(c.op, DType::f32, c.in_shape, c.w_shape, c.attrs);
    deconv_test::Buffer in(DType::f16, c.in_shape), w(DType::f16, c.w_shape),
        out(DType::f16, c.out_shape);
    in.fill_bytes(0);
    w.fill_bytes(0);
    out.fill_bytes(kSentinel);
    const auto before = out.payload();
    expect_error([&] { plan.run(in.cview(), w.cview(), out.view()); }, {"dtype", "type"},
                 deconv::ErrorKind::InvalidArgument, "Plan::run");
    EXPECT_EQ(out.payload(), before);
}

// ---------------------------------------------------------------- output shape / views

TEST(ErrorViews, OutputShapeMismatch) {
    Call c;
    c.out_shape = {1, 6, 7, 8};
    expect_run_error(c, {"output", "shape"}, deconv::ErrorKind::InvalidArgument);
    Call d;
    d.out_shape = {2, 6, 7, 7};
    expect_run_error(d, {"output", "shape"}, deconv::ErrorKind::InvalidArgument);
    // With output_shape given, the output must have exactly that spatial shape.
    Call e;
    e.output_shape = std::vector<int64_t>{9, 9};
    e.out_shape = {1, 6, 7, 7};
    expect_run_error(e, {"output", "shape"}, deconv::ErrorKind::InvalidArgument);
}

TEST(ErrorViews, InputOrFilterShapeMismatchWithPlan) {
    Call c;
    const auto plan = deconv::Plan::create(c.op, DType::f32, c.in_shape, c.w_shape, c.attrs);
    deconv_test::Buffer in(DType::f32, {1, 4, 5, 6}), w(DType::f32, c.w_shape),
        out(DType::f32, c.out_shape);
    in.fill_bytes(0);
    w.fill_bytes(0);
    out.fill_bytes(kSentinel);
    const auto before = out.payload();
    expect_error([&] { plan.run(in.cview(), w.cview(), out.view()); }, {"input", "shape"},
                 deconv::ErrorKind::InvalidArgument, "Plan::run wrong input shape");
    deconv_test::Buffer in2(DType::f32, c.in_shape), w2(DType::f32, {2, 2, 3, 3, 2});
    in2.fill_bytes(0);
    w2.fill_bytes(0);
    expect_error([&] { plan.run(in2.cview(), w2.cview(), out.view()); }, {"filter", "shape"},
                 deconv::ErrorKind::InvalidArgument, "Plan::run wrong filter shape");
    deconv_test::Buffer out2(DType::f32, {1, 6, 7, 6});
    out2.fill_bytes(kSentinel);
    const auto before2 = out2.payload();
    expect_error([&] { plan.run(in2.cview(), w.cview(), out2.view()); }, {"output", "shape"},
                 deconv::ErrorKind::InvalidArgument, "Plan::run wrong output shape");
    EXPECT_EQ(out.payload(), before);
    EXPECT_EQ(out2.payload(), before2);
}

TEST(ErrorViews, NullDataPointers) {
    {
        Call c;
        c.null_in = true;
        expect_run_error(c, {"null"}, deconv::ErrorKind::InvalidArgument);
    }
    {
        Call c;
        c.null_w = true;
        expect_run_error(c, {"null"}, deconv::ErrorKind::InvalidArgument);
    }
    {
        // The output pointer itself is null: nothing to compare, just the error.
        Call c;
        deconv_test::Buffer in(c.in_t, c.in_shape), w(c.w_t, c.w_shape);
        in.fill_bytes(0);
        w.fill_bytes(0);
        expect_error(
            [&] {
                deconv::group_convolution_backprop_data(
                    in.cview(), w.cview(), deconv::TensorView{nullptr, c.out_t, c.out_shape, {}},
                    c.attrs);
            },
            {"null"}, deconv::ErrorKind::InvalidArgument, "null output");
    }
    {
        Call c;
        const auto plan = deconv::Plan::create(c.op, DType::f32, c.in_shape, c.w_shape, c.attrs);
        deconv_test::Buffer in(c.in_t, c.in_shape), w(c.w_t, c.w_shape), out(c.out_t, c.out_shape);
        in.fill_bytes(0);
        w.fill_bytes(0);
        out.fill_bytes(kSentinel);
        const auto before = out.payload();
        expect_error([&] { plan.run(nullptr, w.data(), out.data()); }, {"null"},
                     deconv::ErrorKind::InvalidArgument, "Plan::run null input");
        expect_error([&] { plan.run(in.data(), nullptr, out.data()); }, {"null"},
                     deconv::ErrorKind::InvalidArgument, "Plan::run null filter");
        expect_error([&] { plan.run(in.data(), w.data(), nullptr); }, {"null"},
                     deconv::ErrorKind::InvalidArgument, "Plan::run null output");
        EXPECT_EQ(out.payload(), before);
    }
}

TEST(ErrorViews, NegativeStridesRejected) {
    Call c;
    c.in_strides = {100, 25, 5, -1};
    expect_run_error(c, {"stride"}, deconv::ErrorKind::InvalidArgument);
    Call d;
    d.out_strides = {294, 49, -7, 1};
    expect_run_error(d, {"stride"}, deconv::ErrorKind::InvalidArgument);
}

TEST(ErrorViews, WrongStrideCount) {
    Call c;
    c.in_strides = {25, 5, 1};
    expect_run_error(c, {"stride"}, deconv::ErrorKind::InvalidArgument);
}

TEST(ErrorViews, OverlappingOutputRejected) {
    // Overlapping strides are allowed for inputs only.
    Call c;
    c.out_strides = {49, 0, 7, 1};  // every channel aliases channel 0
    expect_run_error(c, {"overlap", "stride", "alias"}, deconv::ErrorKind::InvalidArgument);
    Call d;
    d.out_strides = {294, 49, 1, 1};  // rows overlap
    expect_run_error(d, {"overlap", "stride", "alias"}, deconv::ErrorKind::InvalidArgument);
}

// ---------------------------------------------------------------- overflow

constexpr int64_t kHuge = int64_t{1} << 40;

TEST(ErrorOverflow, ElementCountOverflowsInRun) {
    // N * C * X = 2^40 * 2^40 * 4: the input's element count overflows int64.
    Call c;
    c.op = Op::ConvolutionBackpropData;
    c.in_shape = {kHuge, kHuge, 4};
    c.w_shape = {kHuge, 1, 3};
    c.out_shape = {kHuge, 1, 6};
    const std::vector<std::string> names{"input", "data", "filter", "output"};
    expect_run_error(c, names, deconv::ErrorKind::TooLarge);
    expect_error(
        [&] {
            deconv::Plan::create(c.op, DType::f32, c.in_shape, c.w_shape, c.attrs, c.output_shape);
        },
        names, deconv::ErrorKind::TooLarge, "Plan::create");
}

TEST(ErrorOverflow, OutputCountOverflows) {
    // Input (2^41 elements) and filter (2^31) are countable, but with strides 2^20 the output
    // is [1, 2^31, ~2^40, ~2^40]: its element count overflows int64.
    const int64_t m = int64_t{1} << 20;
    Call c;
    c.in_shape = {1, 2, m, m};
    c.w_shape = {2, 1, int64_t{1} << 30, 1, 1};
    c.attrs.strides = {m, m};
    c.out_shape = {1, int64_t{1} << 31, m * (m - 1) + 1, m * (m - 1) + 1};
    expect_run_error(c, {"output"}, deconv::ErrorKind::TooLarge);
    expect_error(
        [&] {
            deconv::Plan::create(c.op, DType::f32, c.in_shape, c.w_shape, c.attrs, c.output_shape);
        },
        {"output"}, deconv::ErrorKind::TooLarge, "Plan::create");
}

TEST(ErrorOverflow, ByteCountOverflows) {
    // 2^31 * 2^31 = 2^62 elements fit int64, but not as f32 bytes (2^64).
    const int64_t h = int64_t{1} << 31;
    expect_error(
        [&] {
            deconv::Plan::create(Op::ConvolutionBackpropData, DType::f32, {1, 1, h, h},
                                 {1, 1, 1, 1}, deconv::Attributes{});
        },
        {"input", "data", "output"}, deconv::ErrorKind::TooLarge, "Plan::create");
}

TEST(ErrorOverflow, SpatialArithmeticOverflows) {
    // s * (X - 1) overflows int64: infer_shape must notice.
    Call c;
    c.op = Op::ConvolutionBackpropData;
    c.in_shape = {1, 1, int64_t{1} << 61};
    c.w_shape = {1, 1, 3};
    c.out_shape = {1, 1, 8};
    c.attrs.strides = {8};
    expect_run_error(c, {"strides", "input", "data", "output", "spatial axis"}, deconv::ErrorKind::TooLarge, true);
    Call d = c;
    d.attrs.strides = {1};
    d.in_shape = {1, 1, 8};
    d.w_shape = {1, 1, kHuge};
    d.attrs.dilations = {kHuge};  // (K-1)*d ~ 2^80
    expect_run_error(d, {"dilations", "filter", "kernel", "output", "spatial axis"}, deconv::ErrorKind::TooLarge,
                     true);
    Call e = c;
    e.attrs.strides = {1};
    e.in_shape = {1, 1, 8};
    e.attrs.output_padding = {std::numeric_limits<int64_t>::max()};
    expect_run_error(e, {"output_padding"}, deconv::ErrorKind::TooLarge, true);
}

TEST(ErrorOverflow, ExtentBeyondKernelAddressing) {
    // docs/architecture.md ("Large tensors"): extents and strides must fit Halide's 32-bit buffer fields; larger layers are
    // rejected with TooLarge (no data is needed to see it: Plan::create decides). f32, which
    // every kernel matrix has: a dtype the build lacks is refused first, as Unsupported.
    const int64_t x = (int64_t{1} << 31) + 5;
    expect_error(
        [&] {
            deconv::Plan::create(Op::ConvolutionBackpropData, DType::f32, {1, 1, x}, {1, 1, 1},
                                 deconv::Attributes{});
        },
        {"data", "input", "output", "extent", "axis", "dimension"}, deconv::ErrorKind::TooLarge,
        "Plan::create");
}

// ---------------------------------------------------------------- layouts and oneDNN-only attributes

// The NXC form of the baseline Call: data [1, 5, 5, 4], output [1, 7, 7, 6].
Call nxc_call() {
    Call c;
    c.attrs.data_format = deconv::DataFormat::NXC;
    c.in_shape = {1, 5, 5, 4};
    c.out_shape = {1, 7, 7, 6};
    return c;
}

TEST(ErrorLayout, NxcBaselineIsValid) {
    if (!deconv_test::dtype_built(DType::f32) || !deconv_test::rank_built(2)) GTEST_SKIP() << "f32 2D not built";
    Call c = nxc_call();
    deconv_test::Buffer in(c.in_t, c.in_shape), w(c.w_t, c.w_shape), out(c.out_t, c.out_shape);
    in.fill_bytes(0);
    w.fill_bytes(0);
    ASSERT_NO_THROW(deconv::group_convolution_backprop_data(in.cview(), w.cview(), out.view(), c.attrs));
    EXPECT_EQ(deconv::infer_shape(c.op, c.in_shape, c.w_shape, c.attrs).output_shape, c.out_shape);
}

// weights_format, groups and dst_shape belong to ConvolutionBackwardData only.
TEST(ErrorLayout, OneDnnAttributesOnOpenVinoOps) {
    for (Op op : {Op::GroupConvolutionBackpropData, Op::ConvolutionBackpropData}) {
        SCOPED_TRACE(deconv::op_name(op));
        auto base = [&] {
            Call c;
            c.op = op;
            if (op == Op::ConvolutionBackpropData) {
                c.w_shape = {4, 6, 3, 3};  // C_IN = 4, C_OUT = 6
            }
            return c;
        };
        for (auto wf : {deconv::WeightsFormat::OIX, deconv::WeightsFormat::XIO}) {
            Call c = base();
            c.attrs.weights_format = wf;
            expect_run_error(c, {"weights_format", "weights format"}, deconv::ErrorKind::InvalidArgument, true);
        }
        for (int64_t g : {1, 2}) {
            Call c = base();
            c.attrs.groups = g;
            expect_run_error(c, {"groups"}, deconv::ErrorKind::InvalidArgument, true);
        }
        Call d = base();
        d.attrs.dst_shape = std::vector<int64_t>{1, 6, 7, 7};
        expect_run_error(d, {"dst_shape", "dst shape"}, deconv::ErrorKind::InvalidArgument, true);
        // Also under NXC.
        Call e = base();
        e.attrs.data_format = deconv::DataFormat::NXC;
        e.in_shape = {1, 5, 5, 4};
        e.out_shape = {1, 7, 7, 6};
        e.attrs.weights_format = deconv::WeightsFormat::XIO;
        expect_run_error(e, {"weights_format", "weights format"}, deconv::ErrorKind::InvalidArgument, true);
    }
}

// NXC data given in NCX shape: the last axis (5) is taken as the channels, which do not match
// G x C_IN = 4.
TEST(ErrorLayout, NcxShapedDataUnderNxc) {
    Call c = nxc_call();
    c.in_shape = {1, 4, 5, 5};
    expect_run_error(c, {"channel"}, deconv::ErrorKind::InvalidArgument, true);
    Call d = nxc_call();
    d.op = Op::ConvolutionBackpropData;
    d.in_shape = {1, 4, 5, 5};
    d.w_shape = {4, 6, 3, 3};
    expect_run_error(d, {"channel", "c_in"}, deconv::ErrorKind::InvalidArgument, true);
}

// Channels-last data, but the output view in NCX shape (and the reverse).
TEST(ErrorLayout, OutputViewInTheOtherFormat) {
    Call c = nxc_call();
    c.out_shape = {1, 6, 7, 7};
    expect_run_error(c, {"output", "shape"}, deconv::ErrorKind::InvalidArgument);
    Call d;  // NCX (default)
    d.out_shape = {1, 7, 7, 6};
    expect_run_error(d, {"output", "shape"}, deconv::ErrorKind::InvalidArgument);
}

// Under NXC the rank rules are the same (data rank 3..5).
TEST(ErrorLayout, NxcDataRank) {
    Call c = nxc_call();
    c.op = Op::ConvolutionBackpropData;
    c.in_shape = {1, 4};
    c.w_shape = {4, 6};
    c.out_shape = {1, 6};
    expect_run_error(c, {"rank"}, std::nullopt, true);
}

// An NXC plan refuses NCX-shaped views at run time (a Plan is bound to its layout).
TEST(ErrorLayout, NxcPlanRunWithNcxViews) {
    if (!deconv_test::dtype_built(DType::f32) || !deconv_test::rank_built(2)) GTEST_SKIP() << "f32 2D not built";
    Call c = nxc_call();
    const auto plan = deconv::Plan::create(c.op, c.in_t, c.in_shape, c.w_shape, c.attrs);
    EXPECT_EQ(plan.shape().data_format, deconv::DataFormat::NXC);
    deconv_test::Buffer in(c.in_t, {1, 4, 5, 5}), w(c.w_t, c.w_shape), out(c.out_t, {1, 6, 7, 7});
    in.fill_bytes(0);
    w.fill_bytes(0);
    out.fill_bytes(kSentinel);
    const auto before = out.payload();
    expect_error([&] { plan.run(in.cview(), w.cview(), out.view()); }, {"input", "data", "shape"},
                 deconv::ErrorKind::InvalidArgument, "Plan::run with NCX views");
    EXPECT_EQ(out.payload(), before);
}

TEST(ErrorLayout, BadFormatNames) {
    for (const char *s : {"nchw", "nhwc", "ncxx", "cxn", "bogus"}) {
        SCOPED_TRACE(s);
        try {
            deconv::parse_data_format(s);
            ADD_FAILURE() << "accepted data format '" << s << "'";
        } catch (const deconv::Error &e) {
            EXPECT_THAT(lower_copy(e.what()), HasSubstr(s));
            EXPECT_EQ(e.kind(), deconv::ErrorKind::InvalidArgument);
        }
    }
    for (const char *s : {"oihw", "hwio", "iox", "xoi", "bogus"}) {
        SCOPED_TRACE(s);
        try {
            deconv::parse_weights_format(s);
            ADD_FAILURE() << "accepted weights format '" << s << "'";
        } catch (const deconv::Error &e) {
            EXPECT_THAT(lower_copy(e.what()), HasSubstr(s));
            EXPECT_EQ(e.kind(), deconv::ErrorKind::InvalidArgument);
        }
    }
    EXPECT_THROW(deconv::parse_data_format(""), deconv::Error);
    EXPECT_THROW(deconv::parse_weights_format(""), deconv::Error);
}

TEST(ErrorLayout, FormatNamesRoundTrip) {
    for (auto f : {deconv::DataFormat::NCX, deconv::DataFormat::NXC}) {
        const std::string n = deconv::data_format_name(f);
        EXPECT_EQ(deconv::parse_data_format(n), f);
        EXPECT_EQ(deconv::parse_data_format(deconv_test::lower(n)), f);
        std::string u = n;
        for (auto &ch : u) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        EXPECT_EQ(deconv::parse_data_format(u), f);
    }
    EXPECT_EQ(deconv::parse_data_format("nxc"), deconv::DataFormat::NXC);
    EXPECT_EQ(deconv::parse_data_format("NCX"), deconv::DataFormat::NCX);
    for (auto f : {deconv::WeightsFormat::OIX, deconv::WeightsFormat::XIO}) {
        const std::string n = deconv::weights_format_name(f);
        EXPECT_EQ(deconv::parse_weights_format(n), f);
        EXPECT_EQ(deconv::parse_weights_format(deconv_test::lower(n)), f);
    }
    EXPECT_EQ(deconv::parse_weights_format("OIX"), deconv::WeightsFormat::OIX);
    EXPECT_EQ(deconv::parse_weights_format("xio"), deconv::WeightsFormat::XIO);
}

// ---------------------------------------------------------------- good calls stay good

// The baseline Call used above is valid: if this fails, the tests above prove nothing.
TEST(ErrorBaseline, BaselineCallIsValid) {
    Call c;
    deconv_test::Buffer in(c.in_t, c.in_shape), w(c.w_t, c.w_shape), out(c.out_t, c.out_shape);
    in.fill_bytes(0);
    w.fill_bytes(0);
    out.fill_bytes(kSentinel);
    ASSERT_NO_THROW(deconv::group_convolution_backprop_data(in.cview(), w.cview(), out.view(),
                                                            c.attrs));
    for (int64_t i = 0; i < out.count; i++) ASSERT_EQ(out.get(i), 0.0) << i;
    EXPECT_TRUE(out.guards_intact());
    const auto info = deconv::infer_shape(c.op, c.in_shape, c.w_shape, c.attrs);
    EXPECT_EQ(info.output_shape, c.out_shape);
}

}  // namespace
