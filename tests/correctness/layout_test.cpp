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
//   LayoutViews.*           non-dense NXC views with Plan::run's view overload: channel slices of
//                           concatenated tensors, padded rows, the output's gaps untouched.
//   LayoutFormat.*          NCX set explicitly equals the default; NXC really is channels last.
//
// The routes and kernel tiles of channels-last and twinned layers: layout_routes_test.cpp and
// layout_tiles_test.cpp.
#include "layout_cases.h"

#include <chrono>

namespace {

using namespace layout_cases;

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
