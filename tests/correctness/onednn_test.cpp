// oneDNN Graph's ConvolutionBackwardData (Op::ConvolutionBackwardData):
//   diff_dst [N, OC, X...] (NCX) or [N, X..., OC] (NXC, the op's default),
//   weights OIX [OC, IC/groups, K...] or XIO [K..., IC/groups, OC] (XIO, the default),
//   groups attribute, optional dst_shape (attribute or the op's input; the input wins)
//   -> diff_src [N, IC, Y...] / [N, Y..., IC].
//
// Everything is checked against the independent backprop reference (tests/reference, which
// knows only GroupConvolutionBackpropData's NCX tensors and [G, C_IN, C_OUT, K...] filters).
// This file converts on its own:
//   diff_dst NXC -> NCX; weights -> the reference filter W[g, o, i, k] with
//     W[g, o, i, k] = OIX[g*(OC/G) + o, i, k] = XIO[k, i, g*(OC/G) + o]
//   (o: the diff_dst channel within the group, i: the diff_src channel within the group);
//   dst_shape: per axis the pad at the beginning is resolved here (explicit: pads_begin as
//   given; valid: 0; same_lower: floor(total/2); same_upper: total - floor(total/2); clamped at
//   0, total = s*(X-1) + (K-1)*d + 1 - Y + output_padding), the reference runs with that pad at
//   the beginning, no pad at the end and enough output_padding to reach Y, and the result is
//   cropped to Y (a dst_shape beyond the natural output has a zero tail).
//
//   OneDnnMapping.*        hand-computed values (the axis mapping without the reference)
//   OneDnnMatrix.*         every data_format x weights_format x rank x dtype x groups kind
//   OneDnnDstShape.*       dst_shape as attribute / input / both, larger / smaller, every auto_pad
//   OneDnnDefaults.*       unset data_format / weights_format mean NXC / XIO
//   OneDnnShapeInfo.*      infer_shape in data_format order, hand-computed
//   Shards/OneDnnSweep     seeded random problems per dtype and rank (every format pair, groups
//                          incl. depthwise and wide, every auto_pad with and without dst_shape,
//                          free function / Plan run twice / strided views)
//   OneDnnSweepCoverage.*  the sweep's generator covers what it claims
//   OneDnnErrors.*         what the op must refuse (InvalidArgument, output untouched)
#include "check.h"
#include "layout_support.h"

#include <chrono>
#include <functional>

namespace {

using deconv::AutoPad;
using deconv::DataFormat;
using deconv::DType;
using deconv::WeightsFormat;
using deconv_test::Buffer;
using deconv_test::vec_str;
using deconv_test::ncx_to_nxc;
using deconv_test::nxc_shape;
using deconv_test::nxc_to_ncx;
using deconv_test::result_in;
using deconv_test::shape_in;

constexpr deconv::Op kOp = deconv::Op::ConvolutionBackwardData;

const std::vector<DType> &op_dtypes() {
    static const std::vector<DType> v = {DType::f32, DType::bf16, DType::f16};
    return v;
}

const char *df_str(DataFormat f) { return f == DataFormat::NXC ? "NXC" : "NCX"; }
const char *wf_str(WeightsFormat f) { return f == WeightsFormat::OIX ? "OIX" : "XIO"; }
const char *ap_str(AutoPad a) {
    switch (a) {
    case AutoPad::Explicit: return "explicit";
    case AutoPad::SameUpper: return "same_upper";
    case AutoPad::SameLower: return "same_lower";
    case AutoPad::Valid: return "valid";
    }
    return "?";
}

deconv_ref::AutoPad to_ref_ap(AutoPad a) {
    switch (a) {
    case AutoPad::Explicit: return deconv_ref::AutoPad::Explicit;
    case AutoPad::SameUpper: return deconv_ref::AutoPad::SameUpper;
    case AutoPad::SameLower: return deconv_ref::AutoPad::SameLower;
    case AutoPad::Valid: return deconv_ref::AutoPad::Valid;
    }
    return deconv_ref::AutoPad::Explicit;
}

int64_t floor_div(int64_t a, int64_t b) {
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// ---------------------------------------------------------------- layouts: layout_support.h

// The weights' shape in its format: OIX [OC, IC/G, K...], XIO [K..., IC/G, OC].
std::vector<int64_t> weights_shape(WeightsFormat wf, int64_t oc, int64_t ipg,
                                   const std::vector<int64_t> &k) {
    std::vector<int64_t> s;
    if (wf == WeightsFormat::OIX) {
        s = {oc, ipg};
        s.insert(s.end(), k.begin(), k.end());
    } else {
        s = k;
        s.push_back(ipg);
        s.push_back(oc);
    }
    return s;
}

// The reference's GroupConvolutionBackpropData filter [G, OC/G, IC/G, K...] from oneDNN weights.
std::vector<double> reference_filter(WeightsFormat wf, const std::vector<double> &w, int64_t groups,
                                     int64_t oc, int64_t ipg, const std::vector<int64_t> &k) {
    const int64_t opg = oc / groups, ks = deconv_ref::product(k);
    std::vector<double> r(static_cast<size_t>(groups * opg * ipg * ks));
    for (int64_t g = 0; g < groups; g++)
        for (int64_t o = 0; o < opg; o++)
            for (int64_t i = 0; i < ipg; i++)
                for (int64_t t = 0; t < ks; t++) {
                    const int64_t O = g * opg + o;
                    const int64_t src = wf == WeightsFormat::OIX ? (O * ipg + i) * ks + t
                                                                 : (t * ipg + i) * oc + O;
                    r[static_cast<size_t>(((g * opg + o) * ipg + i) * ks + t)] =
                        w[static_cast<size_t>(src)];
                }
    return r;
}

// The reference result cropped / zero-extended to the NCX shape `to` (same N and C).
deconv_ref::Result crop(const deconv_ref::Result &r, const std::vector<int64_t> &to) {
    deconv_ref::Result o;
    o.shape = r.shape;
    o.shape.output_shape = to;
    const auto &from = r.shape.output_shape;
    const int64_t count = deconv_ref::product(to);
    o.output.assign(static_cast<size_t>(count), 0.0);
    o.abs_sum.assign(static_cast<size_t>(count), 0.0);
    o.terms.assign(static_cast<size_t>(count), 0);
    o.macs = 0;
    std::vector<int64_t> idx(to.size());
    for (int64_t f = 0; f < count; f++) {
        int64_t rem = f;
        for (size_t a = to.size(); a-- > 0;) {
            idx[a] = rem % to[a];
            rem /= to[a];
        }
        bool inside = true;
        int64_t src = 0;
        for (size_t a = 0; a < to.size(); a++) {
            if (idx[a] >= from[a]) inside = false;
            src = src * from[a] + idx[a];
        }
        if (!inside) continue;
        o.output[static_cast<size_t>(f)] = r.output[static_cast<size_t>(src)];
        o.abs_sum[static_cast<size_t>(f)] = r.abs_sum[static_cast<size_t>(src)];
        o.terms[static_cast<size_t>(f)] = r.terms[static_cast<size_t>(src)];
        o.macs += r.terms[static_cast<size_t>(src)];
    }
    return o;
}

// ---------------------------------------------------------------- one problem

enum class Dst { None, Attr, Arg, Both };
const char *dst_str(Dst d) {
    switch (d) {
    case Dst::None: return "none";
    case Dst::Attr: return "attribute";
    case Dst::Arg: return "input";
    case Dst::Both: return "both";
    }
    return "?";
}

struct DnnCase {
    DType dtype = DType::f32;
    DataFormat df = DataFormat::NXC;
    WeightsFormat wf = WeightsFormat::XIO;
    bool leave_formats_unset = false;  // df/wf must then be NXC/XIO
    bool set_groups = true;            // groups attribute given (else must be 1)
    int64_t n = 1, groups = 1, oc = 1, ic = 1;
    std::vector<int64_t> x, k;
    // Per axis, or empty for the defaults.
    std::vector<int64_t> strides, dilations, pads_begin, pads_end, output_padding;
    AutoPad auto_pad = AutoPad::Explicit;
    Dst dst = Dst::None;
    std::vector<int64_t> y;        // dst_shape's spatial extents (dst != None)
    std::vector<int64_t> y_decoy;  // Dst::Both: the attribute's (loses to the input)
    int api = 0;                   // 0 free function dense, 1 Plan dense (twice), 2 strided views
    uint64_t seed = 0;
    std::vector<double> diff_dst, weights;  // values in the op's own layouts (df, wf)

    int rank() const { return static_cast<int>(x.size()); }
    std::vector<int64_t> ncx_in() const {
        std::vector<int64_t> s{n, oc};
        s.insert(s.end(), x.begin(), x.end());
        return s;
    }
    std::vector<int64_t> in_shape() const { return shape_in(df, ncx_in()); }
    std::vector<int64_t> w_shape() const { return weights_shape(wf, oc, ic / groups, k); }
    std::vector<int64_t> dst_full(const std::vector<int64_t> &sp) const {
        std::vector<int64_t> s{n, ic};
        s.insert(s.end(), sp.begin(), sp.end());
        return shape_in(df, s);
    }
};

std::string describe(const DnnCase &c) {
    static const char *apis[] = {"free-function", "plan", "strided-views"};
    std::ostringstream os;
    os << "ConvolutionBackwardData " << deconv_test::dt_str(c.dtype) << " " << df_str(c.df) << "/"
       << wf_str(c.wf) << (c.leave_formats_unset ? " (formats unset)" : "") << " diff_dst "
       << vec_str(c.in_shape()) << " weights " << vec_str(c.w_shape()) << " groups " << c.groups
       << (c.set_groups ? "" : " (unset)") << " IC " << c.ic << " s" << vec_str(c.strides) << " d"
       << vec_str(c.dilations) << " pb" << vec_str(c.pads_begin) << " pe" << vec_str(c.pads_end)
       << " op" << vec_str(c.output_padding) << " auto_pad " << ap_str(c.auto_pad) << " dst_shape "
       << dst_str(c.dst);
    if (c.dst != Dst::None) os << " " << vec_str(c.dst_full(c.y));
    if (c.dst == Dst::Both) os << " (attribute " << vec_str(c.dst_full(c.y_decoy)) << ")";
    os << " api " << apis[c.api] << " seed " << c.seed;
    return os.str();
}

deconv::Attributes attrs_of(const DnnCase &c) {
    deconv::Attributes a;
    a.strides = c.strides;
    a.dilations = c.dilations;
    a.pads_begin = c.pads_begin;
    a.pads_end = c.pads_end;
    a.output_padding = c.output_padding;
    a.auto_pad = c.auto_pad;
    if (!c.leave_formats_unset) {
        a.data_format = c.df;
        a.weights_format = c.wf;
    }
    if (c.set_groups) a.groups = c.groups;
    if (c.dst == Dst::Attr) a.dst_shape = c.dst_full(c.y);
    if (c.dst == Dst::Both) a.dst_shape = c.dst_full(c.y_decoy);
    return a;
}

std::optional<std::vector<int64_t>> dst_arg(const DnnCase &c) {
    if (c.dst == Dst::Arg || c.dst == Dst::Both) return c.dst_full(c.y);
    return std::nullopt;
}

int64_t at_or(const std::vector<int64_t> &v, int a, int64_t dflt) {
    return v.empty() ? dflt : v[static_cast<size_t>(a)];
}

// What the op must produce: the reference result in the case's data format (output_shape in
// data_format order), and the pads ShapeInfo must report.
using Expected = deconv_test::Expectation;

Expected expected_of(const DnnCase &c, const std::vector<double> &diff_dst) {
    const int D = c.rank();
    deconv_ref::Problem p;
    p.grouped = true;
    p.input_shape = c.ncx_in();
    p.filter_shape = {c.groups, c.oc / c.groups, c.ic / c.groups};
    p.filter_shape.insert(p.filter_shape.end(), c.k.begin(), c.k.end());
    const std::vector<double> in_ncx =
        c.df == DataFormat::NXC ? nxc_to_ncx(diff_dst, p.input_shape) : diff_dst;
    const std::vector<double> w = reference_filter(c.wf, c.weights, c.groups, c.oc, c.ic / c.groups, c.k);
    Expected e;
    if (c.dst == Dst::None) {
        // Without dst_shape the op is ConvolutionBackpropData's shape rule: explicit pads, or
        // zero pads for valid / same_* (the reference's rule without output_shape).
        p.strides = c.strides;
        p.dilations = c.dilations;
        p.pads_begin = c.pads_begin;
        p.pads_end = c.pads_end;
        p.output_padding = c.output_padding;
        p.auto_pad = to_ref_ap(c.auto_pad);
        const auto r = deconv_ref::compute(p, in_ncx, w);
        e.pads_begin = r.shape.pads_begin;
        e.pads_end = r.shape.pads_end;
        e.result = result_in(c.df, r);
        return e;
    }
    std::vector<int64_t> ncx_out{c.n, c.ic};
    for (int a = 0; a < D; a++) {
        const int64_t X = c.x[a], K = c.k[a], Y = c.y[a];
        const int64_t s = at_or(c.strides, a, 1), d = at_or(c.dilations, a, 1);
        const int64_t op = at_or(c.output_padding, a, 0);
        const int64_t natural = s * (X - 1) + (K - 1) * d + 1;
        const int64_t total = natural - Y + op;
        int64_t pb = 0;
        switch (c.auto_pad) {
        case AutoPad::Explicit: pb = at_or(c.pads_begin, a, 0); break;
        case AutoPad::Valid: pb = 0; break;
        case AutoPad::SameLower: pb = floor_div(total, 2); break;
        case AutoPad::SameUpper: pb = total - floor_div(total, 2); break;
        }
        pb = std::max<int64_t>(pb, 0);
        p.strides.push_back(s);
        p.dilations.push_back(d);
        p.pads_begin.push_back(pb);
        p.pads_end.push_back(0);
        p.output_padding.push_back(std::max<int64_t>(0, Y - (natural - pb)));
        ncx_out.push_back(Y);
        e.pads_begin.push_back(pb);
        e.pads_end.push_back(std::max<int64_t>(0, natural - pb + op - Y));
    }
    p.auto_pad = deconv_ref::AutoPad::Explicit;
    const auto r = deconv_ref::compute(p, in_ncx, w);
    e.result = result_in(c.df, crop(r, ncx_out));
    return e;
}

void fill_values(DnnCase &c) {
    std::mt19937 rng(static_cast<uint32_t>(c.seed ^ (c.seed >> 32)) + 11u);
    c.diff_dst = deconv_test::random_values(c.dtype, deconv_ref::product(c.in_shape()), rng);
    c.weights = deconv_test::random_values(c.dtype, deconv_ref::product(c.w_shape()), rng);
}

// The case through the shared runner (check.h), with the op's free function as the call.
::testing::AssertionResult run_and_check(const DnnCase &c) {
    deconv_test::LibraryCase lc;
    lc.what = describe(c);
    lc.op = kOp;
    lc.dtype = c.dtype;
    lc.api = c.api;
    lc.seed = c.seed;
    lc.in_shape = c.in_shape();
    lc.w_shape = c.w_shape();
    lc.input = c.diff_dst;
    lc.filter = c.weights;
    lc.attrs = attrs_of(c);
    lc.shape_input = dst_arg(c);
    lc.format = c.df;
    lc.groups = c.groups;
    lc.expect = [c](const std::vector<double> &diff_dst) { return expected_of(c, diff_dst); };
    lc.call = [attrs = lc.attrs, arg = lc.shape_input](const deconv::ConstTensorView &in,
                                                        const deconv::ConstTensorView &w,
                                                        const deconv::TensorView &out) {
        deconv::convolution_backward_data(in, w, out, attrs, arg);
    };
    lc.permute_one_in = 3;
    return deconv_test::run_and_check(lc);
}

// ---------------------------------------------------------------- hand-computed values

// Runs a dense f32 case through the free function and returns the output.
std::vector<double> run_dense_f32(const std::vector<int64_t> &in_shape, const std::vector<double> &in,
                                  const std::vector<int64_t> &w_shape, const std::vector<double> &w,
                                  const std::vector<int64_t> &out_shape, const deconv::Attributes &a,
                                  const std::optional<std::vector<int64_t>> &dst = std::nullopt) {
    Buffer bi(DType::f32, in_shape), bw(DType::f32, w_shape), bo(DType::f32, out_shape);
    deconv_test::fill(bi, in);
    deconv_test::fill(bw, w);
    bo.fill_bytes(0xCD);
    deconv::convolution_backward_data(bi.cview(), bw.cview(), bo.view(), a, dst);
    EXPECT_TRUE(bo.guards_intact());
    return deconv_test::read_all(bo);
}

// groups = OC = IC = 2 (depthwise), K = 2, s = 1, 1D, X = 2:
//   diff_dst ch0 = [1, 2], ch1 = [3, 4]; taps of channel 0: [10, 100], of channel 1: [1000, 10000]
//   diff_src ch0 = [1*10, 1*100 + 2*10, 2*100] = [10, 120, 200]
//   diff_src ch1 = [3000, 3*10000 + 4*1000, 40000] = [3000, 34000, 40000]
TEST(OneDnnMapping, DepthwiseHandComputed) {
    if (!deconv_test::dtype_built(DType::f32) || !deconv_test::rank_built(1)) GTEST_SKIP();
    deconv::Attributes a;
    a.groups = 2;
    // NCX + OIX [OC=2, I=1, K=2]
    a.data_format = DataFormat::NCX;
    a.weights_format = WeightsFormat::OIX;
    EXPECT_EQ(run_dense_f32({1, 2, 2}, {1, 2, 3, 4}, {2, 1, 2}, {10, 100, 1000, 10000}, {1, 2, 3}, a),
              (std::vector<double>{10, 120, 200, 3000, 34000, 40000}));
    // NXC + XIO [K=2, I=1, O=2]: XIO[k, 0, o] = OIX[o, 0, k]
    a.data_format = DataFormat::NXC;
    a.weights_format = WeightsFormat::XIO;
    EXPECT_EQ(run_dense_f32({1, 2, 2}, {1, 3, 2, 4}, {2, 1, 2}, {10, 1000, 100, 10000}, {1, 3, 2}, a),
              (std::vector<double>{10, 3000, 120, 34000, 200, 40000}));
}

// groups = 1, OC = 2, IC = 3, K = 1, X = 1: diff_src[i] = sum_o diff_dst[o] * W[o, i].
//   diff_dst = [1, 2]; W (OIX [2, 3, 1]) rows o: [1, 10, 100], [1000, 10000, 100000]
//   diff_src = [1 + 2000, 10 + 20000, 100 + 200000] = [2001, 20010, 200100]
// and with groups = 2 (IC = 2*I, I = 1): channel 0 from o=0 via W[0, 0], channel 1 from o=1.
TEST(OneDnnMapping, InputOutputChannelsHandComputed) {
    if (!deconv_test::dtype_built(DType::f32) || !deconv_test::rank_built(1)) GTEST_SKIP();
    deconv::Attributes a;
    a.data_format = DataFormat::NCX;
    a.weights_format = WeightsFormat::OIX;
    EXPECT_EQ(run_dense_f32({1, 2, 1}, {1, 2}, {2, 3, 1}, {1, 10, 100, 1000, 10000, 100000}, {1, 3, 1}, a),
              (std::vector<double>{2001, 20010, 200100}));
    // XIO [1, 3, 2]: XIO[0, i, o] = OIX[o, i, 0]
    a.weights_format = WeightsFormat::XIO;
    EXPECT_EQ(run_dense_f32({1, 2, 1}, {1, 2}, {1, 3, 2}, {1, 1000, 10, 10000, 100, 100000}, {1, 3, 1}, a),
              (std::vector<double>{2001, 20010, 200100}));
    // groups = 2, OC = 2, IC = 6 (I = 3): channels 0..2 from o = 0, channels 3..5 from o = 1.
    a.weights_format = WeightsFormat::OIX;
    a.groups = 2;
    EXPECT_EQ(run_dense_f32({1, 2, 1}, {1, 2}, {2, 3, 1}, {1, 10, 100, 1000, 10000, 100000}, {1, 6, 1}, a),
              (std::vector<double>{1, 10, 100, 2000, 20000, 200000}));
    a.weights_format = WeightsFormat::XIO;
    EXPECT_EQ(run_dense_f32({1, 2, 1}, {1, 2}, {1, 3, 2}, {1, 1000, 10, 10000, 100, 100000}, {1, 6, 1}, a),
              (std::vector<double>{1, 10, 100, 2000, 20000, 200000}));
}

// 2D taps in data order: XIO [KY=2, KX=3, I=1, O=1] with tap (ky, kx) = 10^(3*ky + kx), one
// diff_dst element: diff_src is the kernel itself, stride 1; with pads_begin (1, 0) the first
// row is cut; with dst_shape (explicit) 4x2 the rest is cropped / zero-extended.
TEST(OneDnnMapping, TapsInDataOrderAndDstShapeCrop) {
    if (!deconv_test::dtype_built(DType::f32) || !deconv_test::rank_built(2)) GTEST_SKIP();
    deconv::Attributes a;  // NXC / XIO by default
    const std::vector<double> w{1, 10, 100, 1000, 10000, 100000};
    EXPECT_EQ(run_dense_f32({1, 1, 1, 1}, {1}, {2, 3, 1, 1}, w, {1, 2, 3, 1}, a), w);
    a.pads_begin = {1, 0};
    a.pads_end = {0, 0};
    EXPECT_EQ(run_dense_f32({1, 1, 1, 1}, {1}, {2, 3, 1, 1}, w, {1, 1, 3, 1}, a),
              (std::vector<double>{1000, 10000, 100000}));
    // dst_shape 4x2 (NXC [1, 4, 2, 1]), explicit: pads_begin (1, 0) kept, rows 1.. are zeros,
    // column 2 is cropped.
    EXPECT_EQ(run_dense_f32({1, 1, 1, 1}, {1}, {2, 3, 1, 1}, w, {1, 4, 2, 1}, a,
                            std::vector<int64_t>{1, 4, 2, 1}),
              (std::vector<double>{1000, 10000, 0, 0, 0, 0, 0, 0}));
}

// ---------------------------------------------------------------- the full matrix

struct GroupsKind {
    const char *name;
    int64_t groups, oc, ic;
};
const GroupsKind kGroupsKinds[] = {{"groups1", 1, 3, 5}, {"groups2", 2, 4, 6}, {"depthwise", 4, 4, 4}};

DnnCase matrix_case(DType t, DataFormat df, WeightsFormat wf, int rank, const GroupsKind &gk, int idx) {
    DnnCase c;
    c.dtype = t;
    c.df = df;
    c.wf = wf;
    c.n = 2;
    c.groups = gk.groups;
    c.oc = gk.oc;
    c.ic = gk.ic;
    c.set_groups = gk.groups != 1 || idx % 2 == 0;
    // Per axis: X, K, s, d, pb, pe, op (asymmetric pads, output_padding, both above and below
    // the stride, dilation > 1 somewhere).
    static const int64_t axes[3][7] = {{7, 3, 2, 2, 2, 1, 1}, {5, 2, 3, 1, 0, 2, 2}, {4, 4, 1, 2, 3, 0, 0}};
    for (int a = 0; a < rank; a++) {
        const auto &v = axes[(a + rank - 1) % 3];
        c.x.push_back(v[0]);
        c.k.push_back(v[1]);
        c.strides.push_back(v[2]);
        c.dilations.push_back(v[3]);
        c.pads_begin.push_back(v[4]);
        c.pads_end.push_back(v[5]);
        c.output_padding.push_back(v[6]);
    }
    c.api = idx % 3;
    c.seed = 0x51ED0000ull + static_cast<uint64_t>(idx) * 7919u;
    fill_values(c);
    return c;
}

TEST(OneDnnMatrix, FormatsRanksDtypesGroups) {
    int ran = 0, failed = 0, idx = 0;
    for (DType t : op_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (DataFormat df : {DataFormat::NCX, DataFormat::NXC})
                for (WeightsFormat wf : {WeightsFormat::OIX, WeightsFormat::XIO})
                    for (const auto &gk : kGroupsKinds) {
                        const DnnCase c = matrix_case(t, df, wf, rank, gk, idx++);
                        ran++;
                        const auto r = run_and_check(c);
                        if (!r && ++failed <= 12) ADD_FAILURE() << gk.name << ": " << r.message();
                    }
        }
    }
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
    if (ran == 0) GTEST_SKIP() << "no f32/bf16/f16 kernels built";
}

// ---------------------------------------------------------------- dst_shape

// Every auto_pad x where dst_shape comes from x its size relative to the natural output, in
// both format pairs, 1D and 2D.
TEST(OneDnnDstShape, EveryAutoPadAndSource) {
    if (!deconv_test::dtype_built(DType::f32)) GTEST_SKIP();
    int ran = 0, failed = 0, idx = 0;
    for (int rank : {1, 2}) {
        if (!deconv_test::rank_built(rank)) continue;
        for (AutoPad ap : {AutoPad::Explicit, AutoPad::Valid, AutoPad::SameLower, AutoPad::SameUpper})
            for (Dst dst : {Dst::Attr, Dst::Arg, Dst::Both})
                for (int64_t delta : {-4, -1, 0, 1, 3})  // dst_shape - natural output (no pads)
                    for (int fmt = 0; fmt < 2; fmt++) {
                        DnnCase c;
                        c.df = fmt ? DataFormat::NXC : DataFormat::NCX;
                        c.wf = fmt ? WeightsFormat::XIO : WeightsFormat::OIX;
                        c.n = 2;
                        c.groups = 2;
                        c.oc = 4;
                        c.ic = 6;
                        for (int a = 0; a < rank; a++) {
                            c.x.push_back(a ? 4 : 6);
                            c.k.push_back(a ? 2 : 3);
                            c.strides.push_back(a ? 3 : 2);
                            c.dilations.push_back(a ? 1 : 2);
                            c.pads_begin.push_back(a ? 0 : 2);
                            c.pads_end.push_back(a ? 2 : 1);
                            c.output_padding.push_back(a ? 0 : 1);
                            const int64_t natural = c.strides[a] * (c.x[a] - 1) + (c.k[a] - 1) * c.dilations[a] + 1;
                            c.y.push_back(natural + delta + a);
                            c.y_decoy.push_back(natural + delta + a + 2);
                        }
                        c.auto_pad = ap;
                        c.dst = dst;
                        c.api = idx % 3;
                        c.seed = 0xD57ull + static_cast<uint64_t>(idx++) * 104729u;
                        fill_values(c);
                        ran++;
                        const auto r = run_and_check(c);
                        if (!r && ++failed <= 12) ADD_FAILURE() << r.message();
                    }
    }
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
}

// The dst_shape input wins over the attribute: the attribute's extents would give another
// output shape (and a view of the input's shape is accepted, of the attribute's refused).
TEST(OneDnnDstShape, InputWinsOverAttribute) {
    if (!deconv_test::dtype_built(DType::f32) || !deconv_test::rank_built(2)) GTEST_SKIP();
    deconv::Attributes a;
    a.strides = {2, 2};
    a.dst_shape = std::vector<int64_t>{1, 9, 9, 3};  // NXC
    const std::vector<int64_t> in{1, 4, 4, 2}, w{3, 3, 3, 2};  // XIO, IC = 3, OC = 2
    // natural: 2*3 + 3 = 9
    EXPECT_EQ(deconv::infer_shape(kOp, in, w, a).output_shape, (std::vector<int64_t>{1, 9, 9, 3}));
    const std::vector<int64_t> arg{1, 7, 11, 3};
    EXPECT_EQ(deconv::infer_shape(kOp, in, w, a, arg).output_shape, arg);
    EXPECT_EQ(deconv::Plan::create(kOp, DType::f32, in, w, a, arg).shape().output_shape, arg);
    Buffer bi(DType::f32, in), bw(DType::f32, w), bo(DType::f32, {1, 9, 9, 3});
    bi.fill_bytes(0);
    bw.fill_bytes(0);
    bo.fill_bytes(0xCD);
    const auto before = bo.payload();
    EXPECT_THROW(deconv::convolution_backward_data(bi.cview(), bw.cview(), bo.view(), a, arg), deconv::Error);
    EXPECT_EQ(bo.payload(), before);
}

// A dst_shape larger than the natural output: the tail is zero (written, not left as it was);
// smaller: the end is cropped; in both cases the kept part equals the natural output.
TEST(OneDnnDstShape, LargerHasZeroTailSmallerIsCropped) {
    if (!deconv_test::dtype_built(DType::f32) || !deconv_test::rank_built(1)) GTEST_SKIP();
    deconv::Attributes a;
    a.data_format = DataFormat::NCX;
    a.weights_format = WeightsFormat::OIX;
    a.strides = {2};
    a.pads_begin = {1};
    a.pads_end = {1};
    const std::vector<double> in{1, 2, 3}, w{1, 10, 100};  // X = 3, K = 3
    // natural (pads 1/1): 2*2 + 3 - 2 = 5 positions y = 2x + k - 1:
    //   y0: x0k1 = 10; y1: x0k2 + x1k0 = 100 + 2 = 102; y2: x1k1 = 20; y3: x1k2 + x2k0 = 203; y4: 30
    const std::vector<double> natural{10, 102, 20, 203, 30};
    EXPECT_EQ(run_dense_f32({1, 1, 3}, in, {1, 1, 3}, w, {1, 1, 5}, a), natural);
    // dst_shape 8 (explicit: pads_begin 1 kept): y5 = x2k2 = 300, then zeros.
    EXPECT_EQ(run_dense_f32({1, 1, 3}, in, {1, 1, 3}, w, {1, 1, 8}, a, std::vector<int64_t>{1, 1, 8}),
              (std::vector<double>{10, 102, 20, 203, 30, 300, 0, 0}));
    // dst_shape 3: cropped.
    a.dst_shape = std::vector<int64_t>{1, 1, 3};
    EXPECT_EQ(run_dense_f32({1, 1, 3}, in, {1, 1, 3}, w, {1, 1, 3}, a), (std::vector<double>{10, 102, 20}));
    // valid with dst_shape 8: pads 0: y = 2x + k: [1, 10, 102, 20, 203, 30, 300, 0]
    a.auto_pad = AutoPad::Valid;
    a.dst_shape = std::vector<int64_t>{1, 1, 8};
    EXPECT_EQ(run_dense_f32({1, 1, 3}, in, {1, 1, 3}, w, {1, 1, 8}, a),
              (std::vector<double>{1, 10, 102, 20, 203, 30, 300, 0}));
    // same_lower, dst_shape 5: total = 7 - 5 = 2, pb = 1: [10, 102, 20, 203, 30]
    a.auto_pad = AutoPad::SameLower;
    a.dst_shape = std::vector<int64_t>{1, 1, 5};
    EXPECT_EQ(run_dense_f32({1, 1, 3}, in, {1, 1, 3}, w, {1, 1, 5}, a), natural);
    // same_upper, dst_shape 4: total = 3, pe = 1, pb = 2: [102 -> starts at y = 2x + k - 2]
    //   y0: x0k2 + x1k0 = 102; y1: x1k1 = 20; y2: 203; y3: 30
    a.auto_pad = AutoPad::SameUpper;
    a.dst_shape = std::vector<int64_t>{1, 1, 4};
    EXPECT_EQ(run_dense_f32({1, 1, 3}, in, {1, 1, 3}, w, {1, 1, 4}, a), (std::vector<double>{102, 20, 203, 30}));
    // same_lower, dst_shape 4: total = 3, pb = 1: [10, 102, 20, 203]
    a.auto_pad = AutoPad::SameLower;
    EXPECT_EQ(run_dense_f32({1, 1, 3}, in, {1, 1, 3}, w, {1, 1, 4}, a), (std::vector<double>{10, 102, 20, 203}));
}

// ---------------------------------------------------------------- defaults

// Unset data_format / weights_format mean NXC / XIO for this op: the results equal the ones with
// the formats set explicitly, and shapes that only fit NCX / OIX are refused.
TEST(OneDnnDefaults, UnsetFormatsAreNxcAndXio) {
    int ran = 0, failed = 0;
    for (DType t : op_dtypes()) {
        if (!deconv_test::dtype_built(t)) continue;
        for (int rank = 1; rank <= 3; rank++) {
            if (!deconv_test::rank_built(rank)) continue;
            for (int api = 0; api < 3; api++) {
                DnnCase c = matrix_case(t, DataFormat::NXC, WeightsFormat::XIO, rank, kGroupsKinds[1],
                                        100 + rank * 3 + api);
                c.api = api;
                c.leave_formats_unset = true;
                ran++;
                const auto r = run_and_check(c);
                if (!r && ++failed <= 6) ADD_FAILURE() << r.message();
            }
        }
    }
    EXPECT_EQ(failed, 0) << failed << " of " << ran << " cases failed";
    if (!deconv_test::rank_built(1)) return;
    // diff_dst [1, 5, 3]: NXC (N=1, X=5, OC=3) fits weights XIO [2, 4, 3] (K=2, I=4, OC=3).
    deconv::Attributes a;
    const auto info = deconv::infer_shape(kOp, {1, 5, 3}, {2, 4, 3}, a);
    EXPECT_EQ(info.output_shape, (std::vector<int64_t>{1, 6, 4}));
    EXPECT_EQ(info.data_format, DataFormat::NXC);
    EXPECT_EQ(info.groups, 1);
    // As NCX the same diff_dst has OC = 5 and must be refused.
    a.data_format = DataFormat::NCX;
    EXPECT_THROW(deconv::infer_shape(kOp, {1, 5, 3}, {2, 4, 3}, a), deconv::Error);
    // OIX-shaped weights [3, 4, 2] under the default XIO have OC = 2 != 3: refused.
    deconv::Attributes b;
    EXPECT_THROW(deconv::infer_shape(kOp, {1, 5, 3}, {3, 4, 2}, b), deconv::Error);
    b.weights_format = WeightsFormat::OIX;
    EXPECT_EQ(deconv::infer_shape(kOp, {1, 5, 3}, {3, 4, 2}, b).output_shape, (std::vector<int64_t>{1, 6, 4}));
    // The OpenVINO ops keep NCX as their default.
    EXPECT_EQ(deconv::infer_shape(deconv::Op::ConvolutionBackpropData, {1, 3, 5}, {3, 4, 2}, deconv::Attributes{})
                  .data_format,
              DataFormat::NCX);
}

// ---------------------------------------------------------------- ShapeInfo

TEST(OneDnnShapeInfo, OutputShapeInDataFormatOrder) {
    if (!deconv_test::rank_built(2)) GTEST_SKIP();
    deconv::Attributes a;
    a.groups = 2;
    a.strides = {2, 1};
    a.pads_begin = {1, 0};
    a.pads_end = {0, 1};
    a.output_padding = {1, 0};
    // NXC diff_dst [N=2, 5, 7, OC=6], XIO [KY=3, KX=2, I=4, OC=6]: IC = 8,
    //   Y1 = 2*4 + 3 - 1 - 0 + 1 = 11, Y2 = 6 + 2 - 0 - 1 = 7.
    auto info = deconv::infer_shape(kOp, {2, 5, 7, 6}, {3, 2, 4, 6}, a);
    EXPECT_EQ(info.output_shape, (std::vector<int64_t>{2, 11, 7, 8}));
    EXPECT_EQ(info.pads_begin, (std::vector<int64_t>{1, 0}));
    EXPECT_EQ(info.pads_end, (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(info.strides, (std::vector<int64_t>{2, 1}));
    EXPECT_EQ(info.dilations, (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(info.output_padding, (std::vector<int64_t>{1, 0}));
    EXPECT_EQ(info.groups, 2);
    EXPECT_EQ(info.data_format, DataFormat::NXC);
    // NCX diff_dst [2, 6, 5, 7], OIX [6, 4, 3, 2]: the same layer.
    a.data_format = DataFormat::NCX;
    a.weights_format = WeightsFormat::OIX;
    info = deconv::infer_shape(kOp, {2, 6, 5, 7}, {6, 4, 3, 2}, a);
    EXPECT_EQ(info.output_shape, (std::vector<int64_t>{2, 8, 11, 7}));
    EXPECT_EQ(info.data_format, DataFormat::NCX);
    EXPECT_EQ(info.groups, 2);
    // NCX + XIO and NXC + OIX mix freely.
    a.weights_format = WeightsFormat::XIO;
    EXPECT_EQ(deconv::infer_shape(kOp, {2, 6, 5, 7}, {3, 2, 4, 6}, a).output_shape,
              (std::vector<int64_t>{2, 8, 11, 7}));
    a.data_format = DataFormat::NXC;
    a.weights_format = WeightsFormat::OIX;
    EXPECT_EQ(deconv::infer_shape(kOp, {2, 5, 7, 6}, {6, 4, 3, 2}, a).output_shape,
              (std::vector<int64_t>{2, 11, 7, 8}));
    // The Plan reports the same.
    EXPECT_EQ(deconv::Plan::create(kOp, DType::f32, {2, 5, 7, 6}, {6, 4, 3, 2}, a).shape().output_shape,
              (std::vector<int64_t>{2, 11, 7, 8}));
}

// dst_shape pads, 1D: X = 5, K = 3, s = 2: natural = 11.
TEST(OneDnnShapeInfo, DstShapePads) {
    if (!deconv_test::rank_built(1)) GTEST_SKIP();
    struct Row {
        AutoPad ap;
        int64_t pb_attr, y, op, pb, pe;
    };
    const Row rows[] = {
        // total = 11 - 10 = 1
        {AutoPad::SameUpper, 0, 10, 0, 1, 0},
        {AutoPad::SameLower, 0, 10, 0, 0, 1},
        {AutoPad::Valid, 3, 10, 0, 0, 1},
        {AutoPad::Explicit, 2, 10, 0, 2, 0},
        {AutoPad::Explicit, 0, 10, 0, 0, 1},
        // total = 11 - 8 + 1 = 4 (output_padding counts)
        {AutoPad::SameUpper, 0, 8, 1, 2, 2},
        {AutoPad::SameLower, 0, 8, 1, 2, 2},
        {AutoPad::Explicit, 1, 8, 1, 1, 3},
        // total = 11 - 6 = 5: same_upper pe = 2, pb = 3; same_lower pb = 2, pe = 3
        {AutoPad::SameUpper, 0, 6, 0, 3, 2},
        {AutoPad::SameLower, 0, 6, 0, 2, 3},
        // total = 11 - 14 = -3: clamped
        {AutoPad::SameUpper, 0, 14, 0, 0, 0},
        {AutoPad::SameLower, 0, 14, 0, 0, 0},
        {AutoPad::Valid, 0, 14, 0, 0, 0},
        {AutoPad::Explicit, 1, 14, 0, 1, 0},
    };
    for (const Row &r : rows) {
        SCOPED_TRACE(std::string(ap_str(r.ap)) + " pads_begin " + std::to_string(r.pb_attr) + " dst " +
                     std::to_string(r.y) + " output_padding " + std::to_string(r.op));
        deconv::Attributes a;
        a.data_format = DataFormat::NCX;
        a.strides = {2};
        a.pads_begin = {r.pb_attr};
        a.pads_end = {1};
        a.output_padding = {r.op};
        a.auto_pad = r.ap;
        a.dst_shape = std::vector<int64_t>{3, 4, r.y};
        // NCX diff_dst [3, 2, 5], XIO [3, 4, 2]
        const auto info = deconv::infer_shape(kOp, {3, 2, 5}, {3, 4, 2}, a);
        EXPECT_EQ(info.output_shape, (std::vector<int64_t>{3, 4, r.y}));
        EXPECT_EQ(info.pads_begin, (std::vector<int64_t>{r.pb}));
        EXPECT_EQ(info.pads_end, (std::vector<int64_t>{r.pe}));
    }
}

// ---------------------------------------------------------------- the sweep

constexpr int kCasesPerShard = 120;

DnnCase sweep_case(DType t, int rank, int index) {
    DnnCase c;
    c.dtype = t;
    c.seed = deconv_test::sweep_seed(t, rank, index) ^ 0x0DD0DD0DD0DD0DDull;
    std::mt19937 rng(static_cast<uint32_t>(c.seed ^ (c.seed >> 32)));
    auto ri = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const bool big3 = rank == 3;
    c.df = index % 2 ? DataFormat::NXC : DataFormat::NCX;
    c.wf = (index / 2) % 2 ? WeightsFormat::XIO : WeightsFormat::OIX;
    c.leave_formats_unset = c.df == DataFormat::NXC && c.wf == WeightsFormat::XIO && ri(0, 2) == 0;
    const int kind = static_cast<int>(ri(0, 9));
    const bool medium = index % 5 == 3;
    // One case in ten has many diff_src channels per group (the weights' I axis long, the
    // channel-vectorized kernels' full tiles); small spatial extents keep it quick.
    const bool wide = index % 10 == 6;
    if (wide) {
        static const int64_t ipgs[] = {16, 32, 48, 64, 67};
        c.groups = ri(1, 2);
        c.oc = c.groups * ri(1, 3);
        c.ic = c.groups * ipgs[(index / 10 + rank) % 5];
    } else if (kind < 3) {  // depthwise
        c.groups = ri(2, big3 ? 6 : 12);
        c.oc = c.ic = c.groups;
    } else {
        c.groups = kind < 6 ? 1 : ri(2, 4);
        const int64_t opg = medium ? ri(1, rank == 3 ? 4 : 8) : ri(1, big3 ? 2 : 3);
        const int64_t ipg = medium ? ri(4, rank == 3 ? 9 : 17) : ri(1, big3 ? 2 : 4);
        c.oc = c.groups * opg;
        c.ic = c.groups * ipg;
    }
    c.set_groups = c.groups != 1 || ri(0, 1);
    c.n = ri(1, big3 || medium ? 2 : 3);
    const int ap = static_cast<int>(ri(0, 9));
    c.auto_pad = ap < 4 ? AutoPad::Explicit : ap < 6 ? AutoPad::SameUpper : ap < 8 ? AutoPad::SameLower
                                                                                   : AutoPad::Valid;
    const int dm = static_cast<int>(ri(0, 9));
    c.dst = dm < 4 ? Dst::None : dm < 6 ? Dst::Attr : dm < 8 ? Dst::Arg : Dst::Both;
    for (int a = 0; a < rank; a++) {
        const bool inner = a == rank - 1;
        const int64_t X = wide            ? ri(1, inner ? 8 : 2)
                          : medium && inner ? ri(12, rank == 1 ? 60 : rank == 2 ? 32 : 20)
                          : medium        ? ri(1, rank == 2 ? 5 : 3)
                                          : ri(1, rank == 1 ? 12 : rank == 2 ? 6 : 4);
        const int64_t K = ri(1, big3 ? 3 : 5), d = ri(1, big3 ? 2 : 3), s = ri(1, 4);
        const int64_t op = ri(0, 1) ? 0 : ri(0, s + 1);
        const int64_t eff = (K - 1) * d + 1, span = s * (X - 1) + eff;
        int64_t pb = ri(0, eff), pe = ri(0, eff);
        if (c.auto_pad == AutoPad::Explicit && c.dst == Dst::None)
            while (span - pb - pe + op < 1) (pe > 0 ? pe : pb)--;
        c.x.push_back(X);
        c.k.push_back(K);
        c.strides.push_back(s);
        c.dilations.push_back(d);
        c.pads_begin.push_back(pb);
        c.pads_end.push_back(pe);
        c.output_padding.push_back(op);
        c.y.push_back(ri(std::max<int64_t>(1, span - 2 * eff - s), span + op + 3));
        c.y_decoy.push_back(c.y.back() + ri(1, 3));
    }
    auto all_eq = [](const std::vector<int64_t> &v, int64_t x) {
        return std::all_of(v.begin(), v.end(), [x](int64_t y) { return y == x; });
    };
    if (all_eq(c.strides, 1) && ri(0, 1)) c.strides.clear();
    if (all_eq(c.dilations, 1) && ri(0, 1)) c.dilations.clear();
    if (all_eq(c.output_padding, 0) && ri(0, 1)) c.output_padding.clear();
    if (all_eq(c.pads_begin, 0) && all_eq(c.pads_end, 0) && ri(0, 1)) {
        c.pads_begin.clear();
        c.pads_end.clear();
    }
    const int k = index % 10;
    c.api = (k == 7 || k == 8) ? 1 : (k == 9 || k == 3) ? 2 : 0;
    fill_values(c);
    return c;
}

using deconv_test::Shard;

class OneDnnSweep : public ::testing::TestWithParam<Shard> {};

TEST_P(OneDnnSweep, MatchesReference) {
    const DType t = GetParam().dtype;
    const int rank = GetParam().rank;
    if (!deconv_test::dtype_built(t)) GTEST_SKIP() << deconv_test::dt_str(t) << " not built";
    if (!deconv_test::rank_built(rank)) GTEST_SKIP() << "rank " << rank << " not built";
    int failed = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCasesPerShard; i++) {
        const DnnCase c = sweep_case(t, rank, i);
        const auto r = run_and_check(c);
        if (!r && ++failed <= 10) ADD_FAILURE() << "sweep case #" << i << ": " << r.message();
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(failed, 0) << failed << " of " << kCasesPerShard << " cases failed";
    std::printf("[ shard    ] ConvolutionBackwardData %s rank %d: %d cases, %.2f s\n",
                deconv_test::dt_str(t), rank, kCasesPerShard, secs);
}

INSTANTIATE_TEST_SUITE_P(Shards, OneDnnSweep, ::testing::ValuesIn(deconv_test::shards_of(op_dtypes())),
                         deconv_test::shard_name);

// The sweep's generator covers what it claims (no library involved).
TEST(OneDnnSweepCoverage, GeneratorCoversTheSpace) {
    int fmt[2][2] = {{0, 0}, {0, 0}}, dst_modes[4] = {0, 0, 0, 0}, ap_with_dst[4] = {0, 0, 0, 0};
    int depthwise = 0, grouped = 0, unset = 0, larger = 0, smaller = 0, neg_total = 0, apis[3] = {0, 0, 0};
    int stride4 = 0, dil3 = 0, asym = 0, op_ge_s = 0, wide = 0, wide64 = 0;
    for (DType t : op_dtypes())
        for (int rank = 1; rank <= 3; rank++)
            for (int i = 0; i < kCasesPerShard; i++) {
                const DnnCase c = sweep_case(t, rank, i);
                fmt[c.df == DataFormat::NXC][c.wf == WeightsFormat::XIO]++;
                dst_modes[static_cast<int>(c.dst)]++;
                if (c.dst != Dst::None) ap_with_dst[static_cast<int>(c.auto_pad)]++;
                if (c.groups > 1 && c.oc == c.groups && c.ic == c.groups) depthwise++;
                if (c.groups > 1 && c.ic > c.groups) grouped++;
                unset += c.leave_formats_unset;
                apis[c.api]++;
                if (c.ic / c.groups >= 8) wide++;
                if (c.ic / c.groups >= 64) wide64++;
                for (int a = 0; a < rank; a++) {
                    const int64_t s = at_or(c.strides, a, 1), d = at_or(c.dilations, a, 1);
                    const int64_t op = at_or(c.output_padding, a, 0);
                    const int64_t natural = s * (c.x[a] - 1) + (c.k[a] - 1) * d + 1;
                    if (c.dst != Dst::None) {
                        larger += c.y[a] > natural + op;
                        smaller += c.y[a] < natural - at_or(c.pads_begin, a, 0);
                        neg_total += natural - c.y[a] + op < 0;
                    }
                    stride4 += s == 4;
                    dil3 += d == 3;
                    asym += at_or(c.pads_begin, a, 0) != at_or(c.pads_end, a, 0);
                    op_ge_s += op >= s && op > 0;
                }
            }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) EXPECT_GT(fmt[i][j], 80) << "data_format " << i << " weights_format " << j;
    for (int m = 0; m < 4; m++) EXPECT_GT(dst_modes[m], 40) << "dst mode " << m;
    for (int m = 0; m < 4; m++) EXPECT_GT(ap_with_dst[m], 25) << "auto_pad " << m << " with dst_shape";
    for (int m = 0; m < 3; m++) EXPECT_GT(apis[m], 60) << "api " << m;
    EXPECT_GT(depthwise, 80);
    EXPECT_GT(grouped, 60);
    EXPECT_GT(unset, 15);
    EXPECT_GT(larger, 50);
    EXPECT_GT(smaller, 50);
    EXPECT_GT(neg_total, 30);
    EXPECT_GT(stride4, 60);
    EXPECT_GT(dil3, 40);
    EXPECT_GT(asym, 150);
    EXPECT_GT(op_ge_s, 40);
    EXPECT_GT(wide, 60);
    EXPECT_GT(wide64, 20);
}

// ---------------------------------------------------------------- errors

struct ErrCall {
    DType in_t = DType::f32, w_t = DType::f32, out_t = DType::f32;
    // Valid baseline: NXC diff_dst [2, 5, 4, OC=6], XIO weights [3, 2, I=3, OC=6], groups 2
    // -> IC = 6, Y = 5 + 2 = 7, 4 + 1 = 5.
    std::vector<int64_t> in_shape{2, 5, 4, 6}, w_shape{3, 2, 3, 6}, out_shape{2, 7, 5, 6};
    deconv::Attributes attrs;
    std::optional<std::vector<int64_t>> dst;
    ErrCall() { attrs.groups = 2; }
};

// The call must throw InvalidArgument from infer_shape, Plan::create and the free function,
// with a message holding every one of `must` (case-insensitively) and leaving the output as it
// was.
// Each entry of `must` is a list of alternatives, one of which the message must hold.
using Alts = std::vector<std::string>;
const Alts kDst = {"dst_shape", "dst shape"};

void expect_invalid(const ErrCall &c, const std::vector<Alts> &must, const char *what) {
    SCOPED_TRACE(what);
    auto check = [&](const std::function<void()> &fn, const char *how) {
        try {
            fn();
            ADD_FAILURE() << how << ": no exception";
        } catch (const deconv::Error &e) {
            std::printf("[ message  ] %s / %s: %s\n", what, how, e.what());
            EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(deconv::ErrorKind::InvalidArgument))
                << how << ": " << e.what();
            for (const auto &m : must)
                EXPECT_TRUE(deconv_test::message_names(e.what(), m)) << how;
        } catch (const std::exception &e) {
            ADD_FAILURE() << how << ": a non-deconv exception: " << e.what();
        }
    };
    const bool shapes_ok = std::all_of(c.in_shape.begin(), c.in_shape.end(), [](int64_t v) { return v > 0; }) &&
                           std::all_of(c.w_shape.begin(), c.w_shape.end(), [](int64_t v) { return v > 0; }) &&
                           std::all_of(c.out_shape.begin(), c.out_shape.end(), [](int64_t v) { return v > 0; });
    if (c.in_t == c.w_t && c.in_t == c.out_t) {
        check([&] { deconv::infer_shape(kOp, c.in_shape, c.w_shape, c.attrs, c.dst); }, "infer_shape");
        check([&] { deconv::Plan::create(kOp, c.in_t, c.in_shape, c.w_shape, c.attrs, c.dst); }, "Plan::create");
    }
    if (!shapes_ok) return;
    Buffer in(c.in_t, c.in_shape), w(c.w_t, c.w_shape), out(c.out_t, c.out_shape);
    in.fill_bytes(0);
    w.fill_bytes(0);
    out.fill_bytes(0xCD);
    const auto before = out.payload();
    check([&] { deconv::convolution_backward_data(in.cview(), w.cview(), out.view(), c.attrs, c.dst); },
          "free function");
    EXPECT_EQ(out.payload(), before) << "the output was written although the call failed";
    EXPECT_TRUE(out.guards_intact());
}

TEST(OneDnnErrors, BaselineIsValid) {
    if (!deconv_test::dtype_built(DType::f32) || !deconv_test::rank_built(2)) GTEST_SKIP();
    const ErrCall c;
    EXPECT_EQ(deconv::infer_shape(kOp, c.in_shape, c.w_shape, c.attrs).output_shape, c.out_shape);
    Buffer in(c.in_t, c.in_shape), w(c.w_t, c.w_shape), out(c.out_t, c.out_shape);
    in.fill_bytes(0);
    w.fill_bytes(0);
    EXPECT_NO_THROW(deconv::convolution_backward_data(in.cview(), w.cview(), out.view(), c.attrs));
}

TEST(OneDnnErrors, OcNotDivisibleByGroups) {
    ErrCall c;
    c.attrs.groups = 4;  // OC = 6
    c.out_shape = {2, 7, 5, 12};
    expect_invalid(c, {{"groups"}, {"4"}, {"6"}}, "OC 6, groups 4");
    c.attrs.groups = 7;
    c.w_shape = {3, 2, 1, 6};
    c.out_shape = {2, 7, 5, 7};
    expect_invalid(c, {{"groups"}, {"7"}, {"6"}}, "OC 6, groups 7");
}

TEST(OneDnnErrors, IcNotDivisibleByGroupsOrNotGroupsTimesI) {
    ErrCall c;  // IC = groups * I = 2 * 3 = 6
    c.dst = std::vector<int64_t>{2, 7, 5, 9};  // C = 9: not divisible by groups = 2
    c.out_shape = {2, 7, 5, 9};
    expect_invalid(c, {kDst, {"9"}}, "dst_shape C 9 with groups 2");
    c.dst = std::vector<int64_t>{2, 7, 5, 10};  // divisible, but not IC = 6
    c.out_shape = {2, 7, 5, 10};
    expect_invalid(c, {kDst, {"10"}}, "dst_shape C 10 != IC 6");
    ErrCall d;
    d.attrs.dst_shape = std::vector<int64_t>{2, 7, 5, 8};
    d.out_shape = {2, 7, 5, 8};
    expect_invalid(d, {kDst, {"8"}}, "dst_shape attribute C 8 != IC 6");
}

TEST(OneDnnErrors, GroupsNotPositive) {
    for (int64_t g : {0, -2}) {
        ErrCall c;
        c.attrs.groups = g;
        expect_invalid(c, {{"groups"}, {std::to_string(g)}}, "groups <= 0");
    }
}

TEST(OneDnnErrors, WeightsODimNotDiffDstChannels) {
    ErrCall c;
    c.w_shape = {3, 2, 3, 8};  // XIO: O = 8, diff_dst has 6 channels
    expect_invalid(c, {{"8"}, {"6"}}, "XIO O 8 vs OC 6");
    ErrCall d;
    d.attrs.weights_format = WeightsFormat::OIX;
    d.w_shape = {10, 3, 3, 2};  // OIX: O = 10
    expect_invalid(d, {{"10"}, {"6"}}, "OIX O 10 vs OC 6");
    // The XIO shape read as OIX: O = 3 != 6.
    ErrCall e;
    e.attrs.weights_format = WeightsFormat::OIX;
    expect_invalid(e, {{"3"}, {"6"}}, "XIO weights under OIX");
    // NCX reading of NXC data: OC = 5.
    ErrCall f;
    f.attrs.data_format = DataFormat::NCX;
    f.out_shape = {2, 6, 7, 5};
    expect_invalid(f, {{"5"}}, "NXC data under NCX");
}

TEST(OneDnnErrors, WeightsRankMismatch) {
    ErrCall c;
    c.w_shape = {3, 3, 6};
    expect_invalid(c, {{"weights"}, {"rank"}}, "weights rank 3 for 2D data");
    c.w_shape = {1, 3, 2, 3, 6};
    expect_invalid(c, {{"weights"}, {"rank"}}, "weights rank 5 for 2D data");
}

TEST(OneDnnErrors, DstShapeWrongN) {
    ErrCall c;
    c.dst = std::vector<int64_t>{9, 7, 5, 6};
    c.out_shape = {9, 7, 5, 6};
    expect_invalid(c, {kDst, {"9"}}, "dst_shape N 9 (diff_dst N 2)");
    ErrCall d;
    d.attrs.dst_shape = std::vector<int64_t>{1, 7, 5, 6};
    d.out_shape = {1, 7, 5, 6};
    expect_invalid(d, {kDst}, "dst_shape attribute N 1");
}

TEST(OneDnnErrors, DstShapeWrongC) {
    ErrCall c;
    c.attrs.data_format = DataFormat::NCX;
    c.in_shape = {2, 6, 5, 4};
    c.out_shape = {2, 6, 7, 5};
    c.dst = std::vector<int64_t>{2, 7, 5, 6};  // an NXC dst_shape under NCX: C = 7
    expect_invalid(c, {kDst, {"7"}}, "NXC dst_shape under NCX");
    c.dst = std::vector<int64_t>{2, 12, 7, 5};
    c.out_shape = {2, 12, 7, 5};
    expect_invalid(c, {kDst, {"12"}}, "dst_shape C 12");
}

TEST(OneDnnErrors, DstShapeWrongRank) {
    for (const auto &s : {std::vector<int64_t>{7, 5}, std::vector<int64_t>{2, 7, 6},
                          std::vector<int64_t>{2, 7, 5, 3, 6}}) {
        ErrCall c;
        c.dst = s;
        expect_invalid(c, {kDst}, ("dst_shape input " + vec_str(s)).c_str());
        ErrCall d;
        d.attrs.dst_shape = s;
        expect_invalid(d, {kDst}, ("dst_shape attribute " + vec_str(s)).c_str());
    }
}

TEST(OneDnnErrors, DstShapeNonPositive) {
    for (int64_t v : {0, -3}) {
        ErrCall c;
        c.dst = std::vector<int64_t>{2, v, 5, 6};
        expect_invalid(c, {kDst, {std::to_string(v)}}, "dst_shape spatial <= 0 (input)");
        ErrCall d;
        d.attrs.dst_shape = std::vector<int64_t>{2, 7, v, 6};
        expect_invalid(d, {kDst, {std::to_string(v)}}, "dst_shape spatial <= 0 (attribute)");
    }
}

TEST(OneDnnErrors, DtypesOutsideTheOpsTable) {
    for (DType t : {DType::f64, DType::i8, DType::u8, DType::i32}) {
        ErrCall c;
        c.in_t = c.w_t = c.out_t = t;
        const std::string name = deconv_test::dt_str(t);
        SCOPED_TRACE(name);
        // InvalidArgument whether or not the library was built with kernels for the dtype.
        try {
            deconv::Plan::create(kOp, t, c.in_shape, c.w_shape, c.attrs);
            ADD_FAILURE() << "Plan::create accepted " << name;
        } catch (const deconv::Error &e) {
            EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(deconv::ErrorKind::InvalidArgument)) << e.what();
            EXPECT_TRUE(deconv_test::message_names(e.what(), {name}));
            EXPECT_TRUE(deconv_test::message_names(e.what(), {"ConvolutionBackwardData", "convolution_backward_data"}));
        }
        Buffer in(t, c.in_shape), w(t, c.w_shape), out(t, c.out_shape);
        in.fill_bytes(0);
        w.fill_bytes(0);
        out.fill_bytes(0xCD);
        const auto before = out.payload();
        try {
            deconv::convolution_backward_data(in.cview(), w.cview(), out.view(), c.attrs);
            ADD_FAILURE() << "convolution_backward_data accepted " << name;
        } catch (const deconv::Error &e) {
            EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(deconv::ErrorKind::InvalidArgument)) << e.what();
            EXPECT_TRUE(deconv_test::message_names(e.what(), {name}));
        }
        EXPECT_EQ(out.payload(), before);
    }
}

TEST(OneDnnErrors, OutputViewInTheOtherFormat) {
    if (!deconv_test::dtype_built(DType::f32)) GTEST_SKIP();
    ErrCall c;
    Buffer in(c.in_t, c.in_shape), w(c.w_t, c.w_shape), out(c.out_t, {2, 6, 7, 5});  // NCX shape
    in.fill_bytes(0);
    w.fill_bytes(0);
    out.fill_bytes(0xCD);
    const auto before = out.payload();
    try {
        deconv::convolution_backward_data(in.cview(), w.cview(), out.view(), c.attrs);
        ADD_FAILURE() << "accepted an NCX-shaped diff_src for NXC";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(deconv::ErrorKind::InvalidArgument));
        EXPECT_TRUE(deconv_test::message_names(e.what(), {"shape"}));
    }
    EXPECT_EQ(out.payload(), before);
}

}  // namespace
