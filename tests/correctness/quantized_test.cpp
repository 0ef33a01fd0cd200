// Quantized plans and epilogues (deconv.h, "quantization and epilogues") against the
// independent reference of tests/reference/quantized_reference.h: the integer accumulation of
// (src - src_zero_point) * w over the taps that read a real input element, exact in int64, then
// scale * (acc + bias) in f32, the post-ops in order, the dst zero point, round half to even and
// saturation.
//
// Comparison rules (compare() below):
//   integer dst  exact. The accumulation is exact in both, and the reference performs the f32
//                steps the contract fixes (int -> f32, + bias, * scale, + dst zero point) one
//                rounding at a time on float variables, as the contract orders them, so the value
//                before the store is the same f32 number. Where a post-op's rounding is left open
//                (a fused multiply-add in linear or sum, the order of hardswish's operations, the
//                library's own exp/tanh/erf) the reference carries an uncertainty `tol` (a few
//                f32 ulps, quantized_reference.h); a value that close to a half-integer may then
//                round to either neighbour, and nothing else is accepted. Such ambiguous
//                elements must stay rare (<= 10% of a case, else the case fails as too weak).
//                Where the contract fixes the rounding, tol is 0: exact, ties included (the
//                Ties cases and the relu/sum order cases put many values exactly halfway).
//   f32 dst      |got - v| <= tol + 1e-6 |v|: only the f32 scale multiply (and the bias add) round,
//                the same way in both; 1e-6 is slack for nothing else.
//   bf16 dst     exact where tol = 0: both round the same f32 value v once to bf16 (nearest
//                even). The reference does not compute v in double, so no bf16 ulp is allowed;
//                after a transcendental post-op, the bf16 values within tol of v's rounding.
//   float layers (f16, bf16, f32, f64 with a bias): see FloatLayerBias.
//
// Case lists (QuantizedCase, one CTest test each): DTypes (src u8/i8 x dst u8/i8/i32/f32/bf16 x
// no/per-tensor/per-channel scales x no/f32/i32 bias, with zero points), Geometry (every stride
// phase: pads, dilations, output_padding, output_shape, ranks 1-3, NCX and NXC, the ungrouped op),
// Saturation, Ties, BigAccumulators (|acc| > 2^24), Large (> 2^15 outputs), Wide (>= 16 output
// channels per group, each epilogue kind), Eltwise (each op on f32, u8 and bf16 dsts), Sum (every
// dst, and a chain), RunArgs (run-time scales, packed filters).
// Every case checks its own size (elements compared > 0) and that the expected result is not
// trivial (several distinct values, or both saturation ends where a case is about saturation);
// QuantizedCases.ListsAreComplete checks the lists' sizes, so none passes by running nothing.
#include "layout_support.h"
#include "quantized_reference.h"
#include "test_support.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <sstream>

namespace {

namespace dr = deconv_ref;
using deconv::DataFormat;
using deconv::DataTypes;
using deconv::DType;
using deconv::Eltwise;
using deconv::Epilogue;
using deconv::ErrorKind;
using deconv::Op;
using deconv::Plan;
using deconv::PostOp;
using deconv::RunArgs;
using deconv::ScaleMode;
using deconv_test::Buffer;
using deconv_test::vec_str;
using ::testing::AnyOf;
using ::testing::HasSubstr;

// ---------------------------------------------------------------- the cases

struct Geometry {
    std::string name;
    bool grouped = true;
    std::vector<int64_t> in_shape;  // NCX
    std::vector<int64_t> w_shape;   // [G, C_IN, C_OUT, K..] or [C_IN, C_OUT, K..]
    deconv::Attributes attrs;       // data_format left unset (the case's format goes in)
    std::optional<std::vector<int64_t>> output_shape;
};

deconv::Attributes attrs(std::vector<int64_t> s, std::vector<int64_t> pb, std::vector<int64_t> pe,
                         std::vector<int64_t> d = {}, std::vector<int64_t> op = {}) {
    deconv::Attributes a;
    a.strides = std::move(s);
    a.pads_begin = std::move(pb);
    a.pads_end = std::move(pe);
    a.dilations = std::move(d);
    a.output_padding = std::move(op);
    return a;
}

// Every stride phase: kernel 3 stride 2 with pads and output_padding, kernel 4 stride 3,
// dilation 2, ranks 1-3, an output_shape input and the ungrouped op.
const std::vector<Geometry> &geometries() {
    static const std::vector<Geometry> g = {
        {"r1_k3s2p1_op1", true, {2, 4, 7}, {2, 2, 3, 3}, attrs({2}, {1}, {1}, {}, {1}), std::nullopt},
        {"r1_k4s3_pb2pe1", true, {1, 3, 6}, {3, 1, 2, 4}, attrs({3}, {2}, {1}), std::nullopt},
        {"r1_k3d2s2_op1", true, {1, 4, 5}, {2, 2, 3, 3}, attrs({2}, {2}, {1}, {2}, {1}), std::nullopt},
        {"r2_k3s2p1_op1", true, {1, 6, 4, 5}, {2, 3, 2, 3, 3}, attrs({2, 2}, {1, 1}, {1, 1}, {}, {1, 0}), std::nullopt},
        {"r2_k4s3_k2d2", true, {1, 4, 3, 4}, {2, 2, 3, 4, 2}, attrs({3, 1}, {2, 0}, {1, 1}, {1, 2}), std::nullopt},
        {"r2_k3s2d2_op1", true, {1, 3, 5, 4}, {3, 1, 2, 3, 3}, attrs({2, 2}, {2, 1}, {1, 2}, {2, 2}, {1, 1}), std::nullopt},
        {"r2_output_shape", true, {1, 4, 4, 4}, {2, 2, 2, 3, 3}, attrs({2, 2}, {}, {}), std::vector<int64_t>{9, 7}},
        {"r3_k3s2p1_op1", true, {1, 4, 3, 3, 4}, {2, 2, 2, 3, 3, 2}, attrs({2, 2, 2}, {1, 1, 0}, {1, 0, 1}, {}, {1, 1, 0}), std::nullopt},
        {"r3_k4s3_d2", true, {1, 2, 2, 3, 3}, {1, 2, 3, 4, 2, 3}, attrs({3, 1, 2}, {2, 1, 1}, {1, 0, 2}, {1, 2, 2}), std::nullopt},
        {"r2_ungrouped_k3s2", false, {1, 3, 4, 3}, {3, 4, 3, 3}, attrs({2, 2}, {1, 0}, {0, 1}, {}, {0, 1}), std::nullopt},
    };
    return g;
}

const Geometry &geometry(const std::string &name) {
    for (const auto &g : geometries())
        if (g.name == name) return g;
    throw std::logic_error("no geometry " + name);
}

struct QCase {
    std::string name;
    Geometry geo;
    DataFormat format = DataFormat::NCX;
    DataTypes types{DType::u8, DType::i8, DType::u8};
    ScaleMode scale_mode = ScaleMode::per_channel;
    bool runtime_scales = false;
    std::optional<DType> bias;
    int32_t src_zp = 0, dst_zp = 0;
    std::vector<PostOp> post_ops;
    double target = 0;        // spread of scale * acc; 0: chosen by the dst type
    bool small_data = false;  // data near the zero point (for unscaled small integer dsts)
    bool saturate = false;    // a saturation case: both ends of the dst range expected
    bool packed = false;      // run through Plan::pack_filter
    bool ties = false;        // scales 0.5 / 1.5: many values exactly halfway (round half to even)
    double bias_shift = 0;    // added to every bias
    bool big_acc = false;     // accumulators beyond 2^24 (data at the top of its range)
    std::string schedule;     // ExecOptions::schedule (policy pins, docs/tuning.md)
    uint32_t seed = 1;
};

std::ostream &operator<<(std::ostream &os, const QCase &c) { return os << c.name; }

bool is_int(DType t) { return t == DType::u8 || t == DType::i8 || t == DType::i32; }

double default_target(DType dst) {
    switch (dst) {
    case DType::u8: return 45;
    case DType::i8: return 40;
    case DType::i32: return 3000;
    default: return 8;
    }
}

// ---------------------------------------------------------------- data

int32_t lo_of(DType t) { return t == DType::u8 ? 0 : -128; }
int32_t hi_of(DType t) { return t == DType::u8 ? 255 : 127; }

// Random integers over the full range of t, both extremes included.
std::vector<int32_t> random_ints(std::mt19937 &rng, int64_t n, int32_t lo, int32_t hi) {
    std::uniform_int_distribution<int32_t> u(lo, hi);
    std::vector<int32_t> v(static_cast<size_t>(n));
    for (auto &x : v) x = u(rng);
    if (n >= 2) {
        v[0] = lo;
        v[static_cast<size_t>(n) - 1] = hi;
    }
    if (n >= 4) {
        v[1] = hi;
        v[static_cast<size_t>(n) - 2] = lo;
    }
    return v;
}

// Everything a case runs with, and its reference.
struct Prepared {
    dr::Problem problem;
    dr::QAccumulation acc;
    std::vector<int32_t> src, w;            // NCX values
    std::vector<float> scales;              // what the layer uses (empty: none)
    std::vector<double> bias;               // as stored in the bias dtype
    std::vector<double> dst_old;            // NCX, when the case has a sum post-op
    dr::QEpilogue ref_epi;
    dr::QResult ref;
};

dr::QPostOp to_ref(const PostOp &p) {
    dr::QPostOp q;
    q.is_sum = p.kind == PostOp::Kind::sum;
    q.alg = static_cast<dr::QEltwise>(static_cast<int>(p.alg));  // same order (checked below)
    q.alpha = p.alpha;
    q.beta = p.beta;
    q.scale = p.scale;
    q.zero_point = p.zero_point;
    return q;
}

bool has_sum(const std::vector<PostOp> &ops) {
    return std::any_of(ops.begin(), ops.end(), [](const PostOp &p) { return p.kind == PostOp::Kind::sum; });
}

dr::Problem ref_problem(const Geometry &g) {
    dr::Problem p = deconv_test::ref_problem(g.grouped, g.in_shape, g.w_shape, g.attrs);
    p.output_shape = g.output_shape;
    return p;
}

std::vector<double> random_dst(std::mt19937 &rng, DType t, int64_t n) {
    std::vector<double> v(static_cast<size_t>(n));
    std::uniform_real_distribution<double> u(-6.0, 6.0);
    for (auto &x : v) {
        switch (t) {
        case DType::u8: x = std::uniform_int_distribution<int>(0, 255)(rng); break;
        case DType::i8: x = std::uniform_int_distribution<int>(-128, 127)(rng); break;
        case DType::i32: x = std::uniform_int_distribution<int>(-20000, 20000)(rng); break;
        default: x = dr::round_to_dtype(deconv_test::to_ref(t), u(rng)); break;
        }
    }
    return v;
}

Prepared prepare(const QCase &c) {
    Prepared pr;
    std::mt19937 rng(c.seed * 7919u + 17u);
    pr.problem = ref_problem(c.geo);
    const int64_t n_in = dr::product(c.geo.in_shape), n_w = dr::product(c.geo.w_shape);
    if (c.small_data) {
        const int32_t lo = std::max(lo_of(c.types.src), c.src_zp - 4);
        const int32_t hi = std::min(hi_of(c.types.src), c.src_zp + 4);
        pr.src = random_ints(rng, n_in, lo, hi);
        pr.w = random_ints(rng, n_w, -4, 4);
    } else {
        pr.src = random_ints(rng, n_in, lo_of(c.types.src), hi_of(c.types.src));
        pr.w = random_ints(rng, n_w, -128, 127);
    }
    if (c.big_acc) {
        // src mostly at its top, output channel 0 of every group with weights 127 (the others
        // random): |acc| beyond 2^24, which f32 cannot accumulate exactly.
        std::uniform_int_distribution<int> pct(0, 99);
        for (auto &x : pr.src)
            if (pct(rng) < 90) x = hi_of(c.types.src);
        const auto &ws = c.geo.w_shape;
        const int64_t cout = c.geo.grouped ? ws[2] : ws[1];
        const int64_t k = dr::product(std::vector<int64_t>(ws.begin() + (c.geo.grouped ? 3 : 2), ws.end()));
        for (size_t i = 0; i < pr.w.size(); i++)
            if ((static_cast<int64_t>(i) / k) % cout == 0) pr.w[i] = 127;
    }
    pr.acc = dr::accumulate_quantized(pr.problem, pr.src, pr.w, c.src_zp);
    const dr::Resolved &r = pr.acc.shape;
    const int64_t channels = r.groups * r.c_out, plane = dr::product(r.out_spatial);

    // The accumulators' spread per channel, to scale them into the dst's range.
    std::vector<double> rms(static_cast<size_t>(channels), 0.0);
    std::vector<int64_t> cnt(static_cast<size_t>(channels), 0);
    double rms_all = 0;
    for (size_t i = 0; i < pr.acc.acc.size(); i++) {
        const int64_t ch = (static_cast<int64_t>(i) / plane) % channels;
        const double a = static_cast<double>(pr.acc.acc[i]);
        rms[static_cast<size_t>(ch)] += a * a;
        cnt[static_cast<size_t>(ch)]++;
        rms_all += a * a;
    }
    for (int64_t ch = 0; ch < channels; ch++)
        rms[ch] = std::max(1.0, std::sqrt(rms[ch] / static_cast<double>(std::max<int64_t>(1, cnt[ch]))));
    rms_all = std::max(1.0, std::sqrt(rms_all / static_cast<double>(pr.acc.acc.size())));

    // Bias: about half the accumulators' spread; f32 biases are not integers.
    if (c.bias) {
        std::uniform_real_distribution<double> u(-0.5, 0.5);
        for (int64_t ch = 0; ch < channels; ch++) {
            const double b = u(rng) * rms[ch] + 0.25 + c.bias_shift;
            pr.bias.push_back(*c.bias == DType::i32 ? std::nearbyint(b)
                                                    : static_cast<double>(static_cast<float>(b)));
        }
    }
    // Scales: distinct per channel, in a permuted order (a wrong channel axis picks others).
    const double target = c.target > 0 ? c.target : default_target(c.types.dst);
    std::uniform_real_distribution<double> jitter(0.99, 1.01);
    if (c.ties) {
        const int64_t n = c.scale_mode == ScaleMode::per_tensor ? 1 : channels;
        for (int64_t ch = 0; ch < n; ch++) pr.scales.push_back(ch % 2 ? 1.5f : 0.5f);
    } else if (c.scale_mode == ScaleMode::per_tensor) {
        pr.scales.push_back(static_cast<float>(target / rms_all * jitter(rng)));
    } else if (c.scale_mode == ScaleMode::per_channel) {
        for (int64_t ch = 0; ch < channels; ch++) {
            const double f = 0.4 + 1.2 * static_cast<double>((ch * 5 + 3) % channels) / static_cast<double>(channels);
            pr.scales.push_back(static_cast<float>(target / rms[ch] * f * jitter(rng)));
        }
    }
    if (has_sum(c.post_ops)) pr.dst_old = random_dst(rng, c.types.dst, dr::product(r.output_shape));

    pr.ref_epi.scales = pr.scales;
    pr.ref_epi.bias = pr.bias;
    for (const auto &p : c.post_ops) pr.ref_epi.post_ops.push_back(to_ref(p));
    pr.ref_epi.dst_zero_point = c.dst_zp;
    std::vector<double> acc_d(pr.acc.acc.begin(), pr.acc.acc.end());
    pr.ref = dr::apply_epilogue(r, acc_d, pr.ref_epi, deconv_test::to_ref(c.types.dst), false,
                                pr.dst_old.empty() ? nullptr : &pr.dst_old);
    return pr;
}

Epilogue library_epilogue(const QCase &c, const Prepared &pr) {
    Epilogue e;
    e.src_zero_point = c.src_zp;
    e.scale_mode = c.scale_mode;
    if (!c.runtime_scales) e.scales = pr.scales;
    e.bias = c.bias;
    e.post_ops = c.post_ops;
    e.dst_zero_point = c.dst_zp;
    return e;
}

Op op_of(const Geometry &g) {
    return g.grouped ? Op::GroupConvolutionBackpropData : Op::ConvolutionBackpropData;
}

deconv::Attributes attrs_of(const QCase &c) {
    deconv::Attributes a = c.geo.attrs;
    a.data_format = c.format;
    return a;
}

// Dense buffers of the case, in its data format.
struct Tensors {
    Buffer src, w, dst, bias;
    std::vector<float> scales;
};

Tensors make_tensors(const QCase &c, const Prepared &pr) {
    const auto &r = pr.acc.shape;
    Tensors t;
    const auto src_vals = c.format == DataFormat::NXC ? deconv_test::ncx_to_nxc(pr.src, c.geo.in_shape) : pr.src;
    t.src = Buffer(c.types.src, deconv_test::shape_in(c.format, c.geo.in_shape));
    for (size_t i = 0; i < src_vals.size(); i++) t.src.set(static_cast<int64_t>(i), src_vals[i]);
    t.w = Buffer(c.types.weights, c.geo.w_shape);
    for (size_t i = 0; i < pr.w.size(); i++) t.w.set(static_cast<int64_t>(i), pr.w[i]);
    t.dst = Buffer(c.types.dst, deconv_test::shape_in(c.format, r.output_shape));
    if (!pr.dst_old.empty()) {
        const auto old = c.format == DataFormat::NXC ? deconv_test::ncx_to_nxc(pr.dst_old, r.output_shape) : pr.dst_old;
        for (size_t i = 0; i < old.size(); i++) t.dst.set(static_cast<int64_t>(i), old[i]);
    } else {
        t.dst.fill_bytes(0x5B);  // finite in every dtype; an element left unwritten shows
    }
    if (c.bias) {
        t.bias = Buffer(*c.bias, {static_cast<int64_t>(pr.bias.size())});
        for (size_t i = 0; i < pr.bias.size(); i++) t.bias.set(static_cast<int64_t>(i), pr.bias[i]);
    }
    t.scales = pr.scales;
    return t;
}

RunArgs run_args(const QCase &c, const Tensors &t) {
    RunArgs a;
    if (c.bias) a.bias = t.bias.data();
    if (c.runtime_scales) a.scales = t.scales.data();
    return a;
}

// The library's output as NCX values.
std::vector<double> output_ncx(const QCase &c, const Buffer &dst, const std::vector<int64_t> &ncx_shape) {
    std::vector<double> v(static_cast<size_t>(dst.count));
    for (int64_t i = 0; i < dst.count; i++) v[static_cast<size_t>(i)] = dst.get(i);
    return c.format == DataFormat::NXC ? deconv_test::nxc_to_ncx(v, ncx_shape) : v;
}

// ---------------------------------------------------------------- comparison

std::string index_str(int64_t flat, const std::vector<int64_t> &shape) {
    std::vector<int64_t> idx(shape.size());
    for (size_t i = shape.size(); i-- > 0;) {
        idx[i] = flat % shape[i];
        flat /= shape[i];
    }
    return vec_str(idx);
}

struct Compared {
    int64_t elements = 0, ambiguous = 0;
};

// Compares the library's NCX output with the reference (the rules at the top of the file).
::testing::AssertionResult compare(DType dst, const std::vector<double> &got, const dr::QResult &ref,
                                   const std::vector<int64_t> &shape, Compared *stats = nullptr) {
    if (got.size() != ref.value.size() || got.empty())
        return ::testing::AssertionFailure() << "size " << got.size() << " vs reference " << ref.value.size();
    const auto t = deconv_test::to_ref(dst);
    int64_t bad = 0, ambiguous = 0;
    std::ostringstream os;
    for (size_t i = 0; i < got.size(); i++) {
        const double v = ref.value[i], tol = ref.tol[i];
        bool ok;
        std::string want;
        if (dst == DType::f32) {
            ok = std::fabs(got[i] - v) <= tol + 1e-6 * std::fabs(v);
            want = std::to_string(v) + " +- " + std::to_string(tol + 1e-6 * std::fabs(v));
        } else {
            const double lo = dr::q_store(t, v - tol), hi = dr::q_store(t, v + tol);
            if (lo != hi) ambiguous++;
            ok = got[i] >= lo && got[i] <= hi;
            std::ostringstream w;
            w.precision(10);
            if (lo == hi)
                w << lo;
            else
                w << "[" << lo << ", " << hi << "]";
            w << " (v = " << v << ")";
            want = w.str();
        }
        if (!ok && bad++ < 8) {
            os.precision(10);
            os << "\n  at " << index_str(static_cast<int64_t>(i), shape) << ": got " << got[i]
               << ", want " << want;
        }
    }
    if (stats) {
        stats->elements += static_cast<int64_t>(got.size());
        stats->ambiguous += ambiguous;
    }
    if (bad)
        return ::testing::AssertionFailure() << bad << " of " << got.size() << " elements differ" << os.str();
    if (ambiguous * 10 > static_cast<int64_t>(got.size()))
        return ::testing::AssertionFailure() << ambiguous << " of " << got.size()
                                             << " elements within the reference's uncertainty of a rounding "
                                                "boundary: the case proves too little";
    return ::testing::AssertionSuccess();
}

size_t distinct(const std::vector<double> &v) { return std::set<double>(v.begin(), v.end()).size(); }

std::string describe(const QCase &c) {
    std::ostringstream os;
    os << c.name << ": " << dr::describe(ref_problem(c.geo)) << " format="
       << (c.format == DataFormat::NXC ? "nxc" : "ncx") << " types=" << deconv_test::dt_str(c.types.src) << "/"
       << deconv_test::dt_str(c.types.weights) << "/" << deconv_test::dt_str(c.types.dst)
       << " src_zp=" << c.src_zp << " dst_zp=" << c.dst_zp << " bias="
       << (c.bias ? deconv_test::dt_str(*c.bias) : "none") << " scales="
       << (c.scale_mode == ScaleMode::none ? "none" : c.scale_mode == ScaleMode::per_tensor ? "tensor" : "channel")
       << (c.runtime_scales ? "(run time)" : "") << " post_ops=" << c.post_ops.size() << (c.packed ? " packed" : "");
    return os.str();
}

// Runs a case through the library and returns its NCX output (with the prepared reference).
std::vector<double> run_library(const QCase &c, const Prepared &pr) {
    const Epilogue e = library_epilogue(c, pr);
    deconv::ExecOptions exec;
    exec.schedule = c.schedule;
    const Plan plan = Plan::create(op_of(c.geo), c.types, deconv_test::shape_in(c.format, c.geo.in_shape),
                                   c.geo.w_shape, attrs_of(c), c.geo.output_shape, exec, e);
    EXPECT_EQ(plan.shape().output_shape, deconv_test::shape_in(c.format, pr.acc.shape.output_shape));
    Tensors t = make_tensors(c, pr);
    const RunArgs args = run_args(c, t);
    if (c.packed) {
        const deconv::PackedFilter packed = plan.pack_filter(t.w.cview());
        t.w.fill_bytes(0x77);  // the packed filter holds its own copy
        plan.run(t.src.cview(), packed, t.dst.view(), args);
    } else {
        plan.run(t.src.cview(), t.w.cview(), t.dst.view(), args);
    }
    EXPECT_TRUE(t.dst.guards_intact()) << "write outside the output";
    return output_ncx(c, t.dst, pr.acc.shape.output_shape);
}

// Whether this build has every dtype and rank (DECONV_DTYPES / DECONV_RANKS trimmed: a case the
// library refuses as Unsupported is skipped, not failed).
bool full_matrix() {
    for (DType t : deconv_test::all_dtypes())
        if (!deconv_test::dtype_built(t)) return false;
    for (int r : {1, 2, 3})
        if (!deconv_test::rank_built(r)) return false;
    return true;
}

// The whole check of one case.
void check_case(const QCase &c) {
    SCOPED_TRACE(describe(c));
    const Prepared pr = prepare(c);
    const auto &shape = pr.acc.shape.output_shape;
    ASSERT_GT(pr.ref.stored.size(), 0u);
    if (c.saturate) {
        const double lo = dr::dt_lowest(deconv_test::to_ref(c.types.dst)), hi = dr::dt_max(deconv_test::to_ref(c.types.dst));
        const auto &s = pr.ref.stored;
        ASSERT_TRUE(std::count(s.begin(), s.end(), lo) > 0 && std::count(s.begin(), s.end(), hi) > 0)
            << "the case does not saturate at both ends";
        ASSERT_GT(distinct(s), 3u) << "the case saturates everywhere";
    } else {
        ASSERT_GE(distinct(pr.ref.stored), 3u) << "the expected result is trivial";
    }
    if (c.big_acc) {
        int64_t big = 0;
        for (int64_t a : pr.acc.acc) big += a > (int64_t{1} << 24) || a < -(int64_t{1} << 24);
        ASSERT_GT(big, 0) << "no accumulator beyond 2^24";
    }
    if (c.ties && !c.big_acc) {
        // exact halves: between two integers, or between two bf16 values
        size_t ties = 0;
        for (double v : pr.ref.value) {
            if (c.types.dst == DType::bf16)
                ties += std::fabs(v - dr::round_to_bf16(v)) == dr::half_ulp(dr::DT::bf16, v) && v != dr::round_to_bf16(v);
            else
                ties += v - std::floor(v) == 0.5;
        }
        ASSERT_GT(ties * 20, pr.ref.value.size()) << "too few ties (" << ties << ")";
    }
    std::vector<double> got;
    try {
        got = run_library(c, pr);
    } catch (const deconv::Error &e) {
        if (e.kind() == ErrorKind::Unsupported && !full_matrix())
            GTEST_SKIP() << "a trimmed kernel matrix: " << e.what();
        FAIL() << "deconv::Error: " << e.what();
    }
    Compared st;
    EXPECT_TRUE(compare(c.types.dst, got, pr.ref, shape, &st));
    EXPECT_GT(st.elements, 0);
}

class QuantizedCase : public ::testing::TestWithParam<QCase> {};
TEST_P(QuantizedCase, MatchesReference) { check_case(GetParam()); }

std::string case_name(const ::testing::TestParamInfo<QCase> &info) { return info.param.name; }

// ---------------------------------------------------------------- case lists

const char *scale_str(ScaleMode m) {
    return m == ScaleMode::none ? "noscale" : m == ScaleMode::per_tensor ? "tensor" : "channel";
}

int32_t default_src_zp(DType src) { return src == DType::u8 ? 128 : -3; }
int32_t default_dst_zp(DType dst) {
    switch (dst) {
    case DType::u8: return 100;
    case DType::i8: return -10;
    case DType::i32: return 12345;
    default: return 0;
    }
}

// Every dtype combination x scale mode x bias dtype, with zero points.
std::vector<QCase> dtype_cases() {
    std::vector<QCase> v;
    uint32_t seed = 100;
    for (DType src : {DType::u8, DType::i8})
        for (DType dst : {DType::u8, DType::i8, DType::i32, DType::f32, DType::bf16})
            for (ScaleMode sm : {ScaleMode::none, ScaleMode::per_tensor, ScaleMode::per_channel})
                for (int b = 0; b < 3; b++) {
                    QCase c;
                    c.geo = geometry("r2_k3s2p1_op1");
                    c.types = {src, DType::i8, dst};
                    c.scale_mode = sm;
                    c.bias = b == 0 ? std::nullopt : std::optional<DType>(b == 1 ? DType::f32 : DType::i32);
                    c.src_zp = default_src_zp(src);
                    c.dst_zp = default_dst_zp(dst);
                    c.format = seed % 2 ? DataFormat::NXC : DataFormat::NCX;
                    c.small_data = sm == ScaleMode::none && (dst == DType::u8 || dst == DType::i8);
                    c.seed = seed++;
                    c.name = std::string(deconv_test::dt_str(src)) + "s8" + deconv_test::dt_str(dst) + "_" +
                             scale_str(sm) + "_bias_" + (c.bias ? deconv_test::dt_str(*c.bias) : "none") + "_" +
                             (c.format == DataFormat::NXC ? "nxc" : "ncx");
                    v.push_back(c);
                }
    return v;
}
INSTANTIATE_TEST_SUITE_P(DTypes, QuantizedCase, ::testing::ValuesIn(dtype_cases()), case_name);

// Zero points with pads, dilations, output_padding and every stride phase, ranks 1-3, NCX and
// NXC.
std::vector<QCase> geometry_cases() {
    std::vector<QCase> v;
    uint32_t seed = 300;
    for (const auto &g : geometries())
        for (DataFormat f : {DataFormat::NCX, DataFormat::NXC})
            for (int kind = 0; kind < 2; kind++) {
                QCase c;
                c.geo = g;
                c.format = f;
                if (kind == 0) {
                    c.types = {DType::u8, DType::i8, DType::u8};
                    c.src_zp = 131;
                    c.dst_zp = 77;
                    c.scale_mode = ScaleMode::per_channel;
                    c.bias = DType::i32;
                } else {
                    c.types = {DType::i8, DType::i8, DType::f32};
                    c.src_zp = -5;
                    c.scale_mode = ScaleMode::per_tensor;
                    c.bias = DType::f32;
                }
                c.seed = seed++;
                c.name = g.name + (f == DataFormat::NXC ? "_nxc" : "_ncx") + (kind == 0 ? "_u8s8u8" : "_s8s8f32");
                v.push_back(c);
            }
    return v;
}
INSTANTIATE_TEST_SUITE_P(Geometry, QuantizedCase, ::testing::ValuesIn(geometry_cases()), case_name);

// Saturation at both ends of u8, i8 and i32.
std::vector<QCase> saturation_cases() {
    std::vector<QCase> v;
    struct S {
        const char *name;
        DType src, dst;
        int32_t dst_zp;
        double target;
        ScaleMode sm;
    };
    uint32_t seed = 500;
    for (const S &s : {S{"u8s8u8", DType::u8, DType::u8, 128, 400, ScaleMode::per_channel},
                       S{"u8s8s8", DType::u8, DType::i8, 0, 300, ScaleMode::per_tensor},
                       S{"s8s8u8_zp", DType::i8, DType::u8, 30, 300, ScaleMode::per_channel},
                       S{"s8s8s8_zp", DType::i8, DType::i8, 100, 400, ScaleMode::per_channel},
                       S{"s8s8s32", DType::i8, DType::i32, -7, 4e9, ScaleMode::per_tensor},
                       S{"u8s8s32", DType::u8, DType::i32, 5, 4e9, ScaleMode::per_channel}})
        for (DataFormat f : {DataFormat::NCX, DataFormat::NXC}) {
            QCase c;
            c.geo = geometry(f == DataFormat::NCX ? "r2_k3s2p1_op1" : "r1_k3s2p1_op1");
            c.format = f;
            c.types = {s.src, DType::i8, s.dst};
            c.src_zp = s.src == DType::u8 ? 20 : 0;
            c.dst_zp = s.dst_zp;
            c.scale_mode = s.sm;
            c.target = s.target;
            c.bias = DType::f32;
            c.saturate = true;
            c.seed = seed++;
            c.name = std::string("saturate_") + s.name + (f == DataFormat::NXC ? "_nxc" : "_ncx");
            v.push_back(c);
        }
    return v;
}
INSTANTIATE_TEST_SUITE_P(Saturation, QuantizedCase, ::testing::ValuesIn(saturation_cases()), case_name);

// Round half to even on exact ties: scales 0.5 and 1.5 (exact in f32) on integer sums give
// halves; bf16 dsts round integers above 256 (halfway cases among them) to 8 significant bits.
std::vector<QCase> tie_cases() {
    std::vector<QCase> v;
    uint32_t seed = 600;
    for (DType dst : {DType::u8, DType::i8, DType::i32, DType::bf16})
        for (ScaleMode sm : {ScaleMode::per_tensor, ScaleMode::per_channel}) {
            QCase c;
            c.geo = geometry(sm == ScaleMode::per_tensor ? "r2_k3s2p1_op1" : "r1_k3d2s2_op1");
            c.format = sm == ScaleMode::per_tensor ? DataFormat::NCX : DataFormat::NXC;
            c.types = {dst == DType::i8 ? DType::i8 : DType::u8, DType::i8, dst};
            c.src_zp = dst == DType::i8 ? 0 : 128;
            c.dst_zp = dst == DType::u8 ? 128 : dst == DType::i32 ? -3 : 0;
            c.scale_mode = sm;
            c.ties = true;
            c.small_data = dst != DType::i32;
            c.bias = DType::i32;
            // bf16: sums near 300 (9 significant bits) put half the values between two bf16s
            if (dst == DType::bf16) c.bias_shift = 300;
            c.seed = seed++;
            c.name = std::string("ties_") + deconv_test::dt_str(dst) + "_" + scale_str(sm);
            v.push_back(c);
        }
    return v;
}
INSTANTIATE_TEST_SUITE_P(Ties, QuantizedCase, ::testing::ValuesIn(tie_cases()), case_name);

// Accumulators beyond 2^24 (C_IN * K * 255 * 127 > 2^24): a plan that accumulated in f32 would
// round them; the i32 dst (no scale, or the exact scales 0.5 / 1.5) shows every unit.
std::vector<QCase> big_accumulator_cases() {
    std::vector<QCase> v;
    const Geometry g{"r2_cin130_k3", true, {1, 130, 4, 3}, {1, 130, 2, 3, 3}, attrs({1, 1}, {0, 0}, {0, 0}), std::nullopt};
    const Geometry g2{"r1_g2_cin300_k4s2", true, {1, 600, 3}, {2, 300, 2, 4}, attrs({2}, {1}, {0}), std::nullopt};
    uint32_t seed = 650;
    const Geometry g3{"r2_cin132_cout16_k3", true, {1, 132, 3, 4}, {1, 132, 16, 3, 3}, attrs({1, 1}, {1, 1}, {0, 1}), std::nullopt};
    for (int kind = 0; kind < 8; kind++) {
        QCase c;
        c.geo = kind < 2 ? g : kind < 4 ? g2 : g3;
        if (kind >= 6) c.schedule = "quant_dots=pairs";  // i16 pairs, where a library has them
        c.format = kind % 2 ? DataFormat::NXC : DataFormat::NCX;
        c.types = {kind % 4 < 2 ? DType::u8 : DType::i8, DType::i8, kind == 3 ? DType::f32 : DType::i32};
        c.src_zp = kind % 4 < 2 ? 0 : -128;
        c.dst_zp = kind == 3 ? 0 : 7;
        c.scale_mode = kind % 4 == 0 ? ScaleMode::none : kind % 4 == 1 ? ScaleMode::per_channel : ScaleMode::per_tensor;
        c.ties = kind % 4 == 1 || kind % 4 == 2;
        c.big_acc = true;
        c.bias = kind % 4 == 2 ? std::optional<DType>(DType::i32) : std::nullopt;
        c.seed = seed++;
        c.name = std::string("big_acc_") + std::to_string(kind) + "_" + deconv_test::dt_str(c.types.src) + "s8" +
                 deconv_test::dt_str(c.types.dst) + "_" + scale_str(c.scale_mode) + (kind >= 6 ? "_pairs" : "");
        v.push_back(c);
    }
    return v;
}
INSTANTIATE_TEST_SUITE_P(BigAccumulators, QuantizedCase, ::testing::ValuesIn(big_accumulator_cases()), case_name);

// Outputs of more than 2^15 elements (an epilogue pass may go parallel over chunks at that size),
// whose planes are no multiple of a power of two.
std::vector<QCase> large_cases() {
    std::vector<QCase> v;
    const Geometry g{"r2_g2_33x33_s2", true, {1, 8, 33, 33}, {2, 4, 5, 3, 3}, attrs({2, 2}, {1, 1}, {0, 1}), std::nullopt};
    uint32_t seed = 680;
    for (DataFormat f : {DataFormat::NCX, DataFormat::NXC})
        for (DType dst : {DType::u8, DType::f32}) {
            QCase c;
            c.geo = g;
            c.format = f;
            c.types = {DType::u8, DType::i8, dst};
            c.src_zp = 60;
            c.dst_zp = default_dst_zp(dst);
            c.bias = DType::f32;
            c.post_ops = {PostOp::eltwise(Eltwise::relu, 0.2f), PostOp::sum(0.5f, is_int(dst) ? 3 : 0)};
            c.seed = seed++;
            c.name = std::string("large_u8s8") + deconv_test::dt_str(dst) + (f == DataFormat::NXC ? "_nxc" : "_ncx");
            v.push_back(c);
        }
    return v;
}
INSTANTIATE_TEST_SUITE_P(Large, QuantizedCase, ::testing::ValuesIn(large_cases()), case_name);

// Wide layers (16 or more output channels per group; input channels not a multiple of 4), where a
// library may run dot-product kernels with the epilogue in their store: each epilogue kind on
// every stride phase, ranks 1-3, both formats, the ungrouped op.
std::vector<QCase> wide_cases() {
    const std::vector<Geometry> geos = {
        {"w_r2_g2_cin5_cout17", true, {1, 10, 5, 4}, {2, 5, 17, 3, 3}, attrs({2, 2}, {1, 1}, {1, 0}, {}, {1, 1}), std::nullopt},
        {"w_r1_cin8_cout16_k4s3", true, {2, 8, 9}, {1, 8, 16, 4}, attrs({3}, {2}, {1}), std::nullopt},
        {"w_r3_cin4_cout16_d2", true, {1, 4, 3, 3, 3}, {1, 4, 16, 3, 2, 3}, attrs({2, 1, 2}, {1, 0, 1}, {0, 1, 1}, {1, 2, 1}), std::nullopt},
        {"w_r2_ungrouped_cin6_cout20", false, {1, 6, 4, 4}, {6, 20, 3, 3}, attrs({2, 2}, {1, 1}, {0, 1}, {}, {0, 1}), std::nullopt},
    };
    std::vector<QCase> v;
    uint32_t seed = 2500;
    for (const auto &g : geos)
        for (DataFormat f : {DataFormat::NCX, DataFormat::NXC})
            for (int kind = 0; kind < 8; kind++) {
                QCase c;
                c.geo = g;
                c.format = f;
                c.seed = seed++;
                std::string what;
                switch (kind) {
                case 0:
                    c.types = {DType::u8, DType::i8, DType::u8};
                    c.src_zp = 131;
                    c.dst_zp = 77;
                    c.bias = DType::f32;
                    c.post_ops = {PostOp::eltwise(Eltwise::relu, 0.1f), PostOp::eltwise(Eltwise::linear, 1.5f, 3.0f)};
                    what = "u8s8u8_relu_linear";
                    break;
                case 1:
                    c.types = {DType::i8, DType::i8, DType::i8};
                    c.scale_mode = ScaleMode::per_tensor;
                    c.src_zp = -7;
                    c.dst_zp = 5;
                    c.bias = DType::i32;
                    c.post_ops = {PostOp::eltwise(Eltwise::clip, -40.0f, 60.0f),
                                  PostOp::eltwise(Eltwise::bounded_relu, 50.0f)};
                    what = "s8s8s8_clip_bounded_relu";
                    break;
                case 2:
                    c.types = {DType::u8, DType::i8, DType::i32};
                    c.scale_mode = ScaleMode::none;
                    c.src_zp = 3;
                    c.dst_zp = -100;
                    c.bias = DType::i32;
                    what = "u8s8s32_noscale";
                    break;
                case 3:
                    c.types = {DType::u8, DType::i8, DType::f32};
                    c.runtime_scales = true;
                    c.src_zp = 250;
                    c.bias = DType::f32;
                    what = "u8s8f32_runtime_scales";
                    break;
                case 4:
                    c.types = {DType::i8, DType::i8, DType::bf16};
                    c.src_zp = 1;
                    c.bias = DType::f32;
                    c.post_ops = {PostOp::eltwise(Eltwise::linear, 0.5f, -1.0f)};
                    c.packed = true;
                    what = "s8s8bf16_linear_packed";
                    break;
                case 5:
                    c.types = {DType::u8, DType::i8, DType::u8};
                    c.src_zp = 128;
                    c.dst_zp = 128;
                    c.post_ops = {PostOp::eltwise(Eltwise::relu, 0.5f), PostOp::sum(0.5f, 2),
                                  PostOp::eltwise(Eltwise::clip, -100.0f, 100.0f)};
                    what = "u8s8u8_relu_sum_clip";
                    break;
                case 6:
                    c.types = {DType::u8, DType::i8, DType::i8};
                    c.ties = true;
                    c.small_data = true;
                    c.src_zp = 100;
                    c.dst_zp = -1;
                    c.bias = DType::i32;
                    c.packed = true;
                    what = "u8s8s8_ties_packed";
                    break;
                default:
                    c.types = {DType::i8, DType::i8, DType::u8};
                    c.saturate = true;
                    c.target = 400;
                    c.src_zp = 0;
                    c.dst_zp = 128;
                    c.bias = DType::f32;
                    c.post_ops = {PostOp::eltwise(Eltwise::linear, 1.25f, -2.0f)};
                    what = "s8s8u8_saturate";
                    break;
                }
                c.name = g.name + (f == DataFormat::NXC ? "_nxc_" : "_ncx_") + what;
                v.push_back(c);
            }
    return v;
}
INSTANTIATE_TEST_SUITE_P(Wide, QuantizedCase, ::testing::ValuesIn(wide_cases()), case_name);

// The wide cases once more with the quantized accumulation pinned each way (docs/tuning.md,
// quant_dots): i16 pairs, u8 x i8 quads, and off (the plain plans). A pin a CPU cannot run falls
// back to the rules, so every pin is safe on every machine.
std::vector<QCase> wide_pinned_cases() {
    std::vector<QCase> v;
    for (const char *pin : {"pairs", "quads", "off"})
        for (QCase c : wide_cases()) {
            c.schedule = std::string("quant_dots=") + pin;
            c.name += std::string("_") + pin;
            v.push_back(c);
        }
    return v;
}
INSTANTIATE_TEST_SUITE_P(WidePinned, QuantizedCase, ::testing::ValuesIn(wide_pinned_cases()), case_name);

// The eltwise ops with nontrivial alpha / beta (alpha only where the op has one).
struct EltParams {
    Eltwise alg;
    float alpha, beta;
};
const std::vector<EltParams> &eltwise_params() {
    static const std::vector<EltParams> v = {
        {Eltwise::relu, 0.3f, 0},      {Eltwise::clip, -1.5f, 2.25f}, {Eltwise::linear, 1.7f, -0.4f},
        {Eltwise::bounded_relu, 2.5f, 0}, {Eltwise::tanh, 0, 0},     {Eltwise::logistic, 0, 0},
        {Eltwise::abs, 0, 0},          {Eltwise::square, 0, 0},       {Eltwise::elu, 0.8f, 0},
        {Eltwise::swish, 1.3f, 0},     {Eltwise::gelu_tanh, 0, 0},    {Eltwise::gelu_erf, 0, 0},
        {Eltwise::hardswish, 0, 0},
    };
    return v;
}

std::vector<QCase> eltwise_cases() {
    std::vector<QCase> v;
    uint32_t seed = 700;
    for (const auto &p : eltwise_params())
        for (int kind = 0; kind < 3; kind++) {
            QCase c;
            c.post_ops = {PostOp::eltwise(p.alg, p.alpha, p.beta)};
            c.bias = DType::f32;
            c.seed = seed++;
            if (kind == 0) {  // f32 dst: the value itself
                c.geo = geometry("r2_k3s2p1_op1");
                c.types = {DType::i8, DType::i8, DType::f32};
                c.src_zp = 2;
                c.target = 2.5;
            } else if (kind == 1) {  // u8 dst: then spread over the integers by a linear op
                c.geo = geometry("r1_k3s2p1_op1");
                c.format = DataFormat::NXC;
                c.types = {DType::u8, DType::i8, DType::u8};
                c.src_zp = 120;
                c.dst_zp = 120;
                c.target = 2.5;
                c.post_ops.push_back(PostOp::eltwise(Eltwise::linear, 30.0f, 0.0f));
            } else {  // bf16 dst, rank 3
                c.geo = geometry("r3_k3s2p1_op1");
                c.types = {DType::u8, DType::i8, DType::bf16};
                c.src_zp = 100;
                // narrower: far below 0, gelu's 1 + tanh cancels in f32 and its tiny values are
                // uncertain by more than a bf16 ulp (the case would check too few exactly)
                c.target = 1.5;
                c.scale_mode = ScaleMode::per_tensor;
            }
            const char *kinds[] = {"s8s8f32", "u8s8u8_linear", "u8s8bf16"};
            c.name = std::string(deconv::eltwise_name(p.alg)) + "_" + kinds[kind];
            v.push_back(c);
        }
    return v;
}
INSTANTIATE_TEST_SUITE_P(Eltwise, QuantizedCase, ::testing::ValuesIn(eltwise_cases()), case_name);

// The exp and tanh post-ops far from zero (runtime/cpu/vector_math.h), to f32 values: tanh, elu
// and gelu_tanh over about +-60 (tanh's clamp, elu's floor), and logistic and swish shifted to
// arguments where 1 + e^t is 1 in f32 (t > 80), where their values are subnormal (t > 87) and
// where they are zero (t past about 104, swish's branch past 150). Swish's slope is 1 here: the
// f32 product a x rounds the exponent's argument, which e^t amplifies t times, beyond the
// reference's 8 ulps for any other slope (in the C library's expf as in ours).
std::vector<QCase> exp_range_cases() {
    struct R {
        Eltwise alg;
        float alpha, shift;
        double target;
        const char *name;
    };
    std::vector<QCase> v;
    uint32_t seed = 1300;
    for (const R &r : {R{Eltwise::tanh, 0, 0, 60, "tanh_wide"}, R{Eltwise::elu, 0.8f, 0, 60, "elu_wide"},
                       R{Eltwise::gelu_tanh, 0, 0, 60, "gelu_tanh_wide"},
                       R{Eltwise::logistic, 0, -100, 25, "logistic_far"},
                       R{Eltwise::swish, 1.0f, -120, 40, "swish_far"}}) {
        QCase c;
        c.geo = geometry("r2_k3s2p1_op1");
        c.types = {DType::u8, DType::i8, DType::f32};
        c.src_zp = 100;
        c.bias = DType::f32;
        c.target = r.target;
        if (r.shift != 0) c.post_ops.push_back(PostOp::eltwise(Eltwise::linear, 1.0f, r.shift));
        c.post_ops.push_back(PostOp::eltwise(r.alg, r.alpha, 0));
        c.seed = seed++;
        c.name = std::string(r.name) + "_u8s8f32";
        v.push_back(c);
    }
    return v;
}
INSTANTIATE_TEST_SUITE_P(ExpRange, QuantizedCase, ::testing::ValuesIn(exp_range_cases()), case_name);

// The sum post-op (scale and zero point) on every dst, and chains of post-ops.
std::vector<QCase> sum_cases() {
    std::vector<QCase> v;
    uint32_t seed = 900;
    for (DType dst : {DType::u8, DType::i8, DType::i32, DType::f32, DType::bf16})
        for (DataFormat f : {DataFormat::NCX, DataFormat::NXC}) {
            QCase c;
            c.geo = geometry(f == DataFormat::NCX ? "r2_k3s2d2_op1" : "r3_k4s3_d2");
            c.format = f;
            c.types = {DType::u8, DType::i8, dst};
            c.src_zp = 77;
            c.dst_zp = default_dst_zp(dst);
            c.bias = DType::i32;
            c.post_ops = {PostOp::sum(0.75f, is_int(dst) ? 5 : 0)};
            c.seed = seed++;
            c.name = std::string("sum_") + deconv_test::dt_str(dst) + (f == DataFormat::NXC ? "_nxc" : "_ncx");
            v.push_back(c);
        }
    {
        QCase c;
        c.geo = geometry("r3_k3s2p1_op1");
        c.format = DataFormat::NXC;
        c.types = {DType::i8, DType::i8, DType::i8};
        c.src_zp = -1;
        c.dst_zp = 3;
        c.target = 4;
        c.bias = DType::f32;
        c.post_ops = {PostOp::eltwise(Eltwise::linear, 1.5f, 0.25f), PostOp::eltwise(Eltwise::clip, -3.0f, 5.0f),
                      PostOp::sum(0.5f, -2), PostOp::eltwise(Eltwise::swish, 0.7f),
                      PostOp::eltwise(Eltwise::linear, 20.0f, -1.0f)};
        c.seed = seed++;
        c.name = "chain_linear_clip_sum_swish_linear_s8s8s8_nxc";
        v.push_back(c);
    }
    return v;
}
INSTANTIATE_TEST_SUITE_P(Sum, QuantizedCase, ::testing::ValuesIn(sum_cases()), case_name);

// Run-time scales and packed filters.
std::vector<QCase> run_args_cases() {
    std::vector<QCase> v;
    uint32_t seed = 1100;
    for (ScaleMode sm : {ScaleMode::per_tensor, ScaleMode::per_channel})
        for (bool packed : {false, true}) {
            QCase c;
            c.geo = geometry(packed ? "r2_k4s3_k2d2" : "r1_k4s3_pb2pe1");
            c.format = packed ? DataFormat::NXC : DataFormat::NCX;
            c.types = {DType::u8, DType::i8, packed ? DType::i8 : DType::u8};
            c.src_zp = 5;
            c.dst_zp = packed ? 1 : 250;
            c.target = 30;
            c.scale_mode = sm;
            c.runtime_scales = true;
            c.bias = packed ? DType::f32 : DType::i32;
            c.packed = packed;
            c.seed = seed++;
            c.name = std::string("runtime_scales_") + scale_str(sm) + (packed ? "_packed" : "");
            v.push_back(c);
        }
    for (DType dst : {DType::u8, DType::f32, DType::bf16}) {
        QCase c;
        c.geo = geometry("r3_k4s3_d2");
        c.types = {DType::i8, DType::i8, dst};
        c.src_zp = 9;
        c.dst_zp = default_dst_zp(dst);
        c.bias = DType::i32;
        c.post_ops = {PostOp::eltwise(Eltwise::relu, 0.125f)};
        c.packed = true;
        c.seed = seed++;
        c.name = std::string("packed_s8s8") + deconv_test::dt_str(dst);
        v.push_back(c);
    }
    return v;
}
INSTANTIATE_TEST_SUITE_P(RunArgs, QuantizedCase, ::testing::ValuesIn(run_args_cases()), case_name);

// Layers of few channels per group, which accumulate on the f32 kernels, run in slices of the
// executor's own (row slabs, pinned; a batch's images): the epilogue as each slice's output
// stage (cpu/output_stage.h) where the executor takes it (channels-first images, channels-last
// slabs), through the fused quantizing rows (a relu or a bound: kinds 0, 1) and the stage loops
// (a sum, an f32 dst: 2, 3), partial last slabs; the others through the pass after the run.
std::vector<QCase> staged_cases() {
    const std::vector<Geometry> geos = {
        // 78 output rows: slabs of 8, the last of 6.
        {"slabs_r2_g4_k4s2p1", true, {1, 8, 40, 9}, {4, 2, 3, 4, 4}, attrs({2, 2}, {1, 2}, {1, 1}), std::nullopt},
        {"images_r2_n8_g2_k3s2", true, {8, 4, 6, 7}, {2, 2, 3, 3, 3}, attrs({2, 2}, {1, 0}, {0, 1}, {}, {1, 0}), std::nullopt},
        // Depthwise: channels last on kernels of its own (the others run channels first there).
        {"slabs_r2_dw8_k4s2p1", true, {1, 8, 36, 10}, {8, 1, 1, 4, 4}, attrs({2, 2}, {1, 1}, {1, 1}), std::nullopt},
        {"images_r2_n8_dw16_k3s2", true, {8, 16, 5, 6}, {16, 1, 1, 3, 3}, attrs({2, 2}, {1, 1}, {1, 1}, {}, {1, 1}), std::nullopt},
    };
    std::vector<QCase> v;
    uint32_t seed = 1200;
    for (const Geometry &g : geos)
        for (DataFormat f : {DataFormat::NCX, DataFormat::NXC})
            for (int kind = 0; kind < 4; kind++) {
                QCase c;
                c.geo = g;
                c.format = f;
                if (g.in_shape[0] == 1) c.schedule = "row_slabs=8";
                const DType dst = kind == 1 ? DType::i8 : kind == 3 ? DType::f32 : DType::u8;
                c.types = {kind == 1 ? DType::i8 : DType::u8, DType::i8, dst};
                c.src_zp = kind == 1 ? -3 : 20;
                c.dst_zp = default_dst_zp(dst);
                c.scale_mode = kind == 1 ? ScaleMode::per_tensor : ScaleMode::per_channel;
                c.bias = kind == 1 ? DType::i32 : DType::f32;
                if (kind == 0) c.post_ops = {PostOp::eltwise(Eltwise::relu, 0.25f)};
                if (kind == 1) c.post_ops = {PostOp::eltwise(Eltwise::bounded_relu, 6.0f)};
                if (kind == 2) c.post_ops = {PostOp::eltwise(Eltwise::relu, 0.5f), PostOp::sum(0.5f, 4)};
                if (kind == 3) c.post_ops = {PostOp::eltwise(Eltwise::tanh)};
                c.seed = seed++;
                c.name = "staged_" + g.name + "_" + std::to_string(kind) + "_" + deconv_test::dt_str(c.types.src) + "s8" +
                         deconv_test::dt_str(dst) + (f == DataFormat::NXC ? "_nxc" : "_ncx");
                v.push_back(c);
            }
    return v;
}
INSTANTIATE_TEST_SUITE_P(Staged, QuantizedCase, ::testing::ValuesIn(staged_cases()), case_name);

// The staged layers (few channels per group) with the dot-product kernels pinned: their output
// channels padded to a vector and their input channels to a quad or pair, into the scratch whose
// channels are copied out. The rules leave such layers on the plain plans; a pin runs the kernels
// it names (the tuner searches it), where the build has them.
std::vector<QCase> few_channel_pinned_cases() {
    std::vector<QCase> v;
    for (const char *pin : {"pairs", "quads"})
        for (QCase c : staged_cases()) {
            if (c.post_ops.size() != 1 || c.post_ops[0].alg == Eltwise::tanh) continue;  // kinds 0 and 1
            c.schedule += std::string(c.schedule.empty() ? "" : " ") + "quant_dots=" + pin;
            c.name += std::string("_") + pin;
            v.push_back(c);
        }
    return v;
}
INSTANTIATE_TEST_SUITE_P(FewChannelsPinned, QuantizedCase, ::testing::ValuesIn(few_channel_pinned_cases()),
                         case_name);

// Each geometry in both layouts, three ways: u8 x s8 -> u8 with zero points, per-channel scales
// and an i32 bias; s8 x s8 -> s32 with a per-tensor scale and an f32 bias; and the first with the
// pairs pinned. `more`: a relu in the first and third, a packed filter in the second.
std::vector<QCase> three_way_cases(const std::vector<Geometry> &g, uint32_t seed, bool more) {
    std::vector<QCase> v;
    for (const Geometry &geo : g)
        for (DataFormat f : {DataFormat::NCX, DataFormat::NXC})
            for (int kind = 0; kind < 3; kind++) {
                QCase c;
                c.geo = geo;
                c.format = f;
                if (kind == 1) {
                    c.types = {DType::i8, DType::i8, DType::i32};
                    c.src_zp = -5;
                    c.scale_mode = ScaleMode::per_tensor;
                    c.bias = DType::f32;
                    c.packed = more;
                } else {
                    c.types = {DType::u8, DType::i8, DType::u8};
                    c.src_zp = 131;
                    c.dst_zp = 77;
                    c.scale_mode = ScaleMode::per_channel;
                    c.bias = DType::i32;
                    if (more) c.post_ops = {PostOp::eltwise(Eltwise::relu, 0.25f)};
                }
                if (kind == 2) c.schedule = "quant_dots=pairs";
                c.seed = seed++;
                c.name = geo.name + (f == DataFormat::NXC ? "_nxc" : "_ncx") +
                         (kind == 1 ? (more ? "_s8s8s32_packed" : "_s8s8s32") : kind == 2 ? "_u8s8u8_pairs" : "_u8s8u8");
                v.push_back(c);
            }
    return v;
}

// Inputs smaller than the kernel, whose bordered copy would hold most of the products: the
// dot-product kernels run them in tap windows, each with the compensation of its own taps
// (runtime/cpu/quantized_dots_executor.cpp, dots_windows): 1x1 and 2x3 inputs at kernel 4, a 1D
// input of 2 at kernel 5 dilated 2, a 3D one of 1x2x1 at kernel 3, a 1x1 input at stride 2 (its
// phases' windows). 8 -> 20 output channels per group (a vector and a padded one), zero points,
// u8 and i8 data, both layouts, the quads, and the pairs pinned.
std::vector<QCase> window_cases() {
    static const std::vector<Geometry> g = {
        {"win_r2_1x1_k4s1_g2", true, {1, 16, 1, 1}, {2, 8, 20, 4, 4}, attrs({1, 1}, {0, 0}, {0, 0}), std::nullopt},
        {"win_r2_2x3_k4s1p1", true, {2, 8, 2, 3}, {1, 8, 20, 4, 4}, attrs({1, 1}, {1, 1}, {1, 2}), std::nullopt},
        {"win_r1_2_k5s1d2", true, {1, 8, 2}, {1, 8, 20, 5}, attrs({1}, {0}, {1}, {2}), std::nullopt},
        {"win_r3_1x2x1_k3s1", true, {1, 8, 1, 2, 1}, {1, 8, 20, 3, 3, 3}, attrs({1, 1, 1}, {0, 0, 0}, {0, 0, 0}),
         std::nullopt},
        {"win_r2_1x1_k4s2p1", false, {3, 8, 1, 1}, {8, 20, 4, 4}, attrs({2, 2}, {1, 1}, {1, 1}), std::nullopt},
    };
    return three_way_cases(g, 1400, false);
}
INSTANTIATE_TEST_SUITE_P(Windows, QuantizedCase, ::testing::ValuesIn(window_cases()), case_name);

// Layers of fewer than a vector of output channels per group whose groups merge into the
// dot-product kernels' groups (quant_dots_merge: 2-8 layer groups per kernel group, the weights
// between them zero): 8, 5 and 6 output channels per group, 3 input channels whose merged 9 pad
// to 12, ranks 1-3, dilation, output_padding, an input smaller than the kernel (tap windows),
// with zero points (whose compensation counts a layer group's own taps and channels only), per
// channel scales (whose axis runs over the layer's groups, not the kernel's), both layouts, the
// quads, the pairs pinned, and a packed filter. Each checks that the plan merges where it should
// (describe()).
std::vector<QCase> merged_cases() {
    static const std::vector<Geometry> g = {
        {"merged_r2_g4_cin4_cout8_k3s2", true, {1, 16, 5, 6}, {4, 4, 8, 3, 3}, attrs({2, 2}, {1, 0}, {0, 1}, {}, {1, 0}),
         std::nullopt},
        {"merged_r2_g8_cin2_cout5_k4s2p1", true, {2, 16, 4, 3}, {8, 2, 5, 4, 4}, attrs({2, 2}, {1, 1}, {1, 1}), std::nullopt},
        {"merged_r2_g6_cin3_cout6_d2", true, {1, 18, 5, 4}, {6, 3, 6, 3, 2}, attrs({1, 2}, {2, 0}, {1, 1}, {2, 1}),
         std::nullopt},
        {"merged_r1_g8_cin4_cout4_k5s3", true, {2, 32, 7}, {8, 4, 4, 5}, attrs({3}, {2}, {1}), std::nullopt},
        {"merged_r3_g4_cin2_cout8_s2", true, {1, 8, 3, 2, 3}, {4, 2, 8, 2, 3, 2}, attrs({2, 1, 2}, {0, 1, 0}, {1, 0, 0}),
         std::nullopt},
        {"merged_win_r2_1x1_k4s1_g4_cout8", true, {2, 32, 1, 1}, {4, 8, 8, 4, 4}, attrs({1, 1}, {0, 0}, {0, 0}),
         std::nullopt},
    };
    return three_way_cases(g, 1500, true);
}
class MergedGroups : public ::testing::TestWithParam<QCase> {};
TEST_P(MergedGroups, MatchesReferenceMerged) {
    const QCase &c = GetParam();
    if (deconv_test::rank_built((int)c.geo.in_shape.size() - 2)) {  // the dot-product kernels of its rank
        deconv::ExecOptions exec;
        exec.schedule = c.schedule;
        Prepared pr = prepare(c);
        const Plan plan = Plan::create(op_of(c.geo), c.types, deconv_test::shape_in(c.format, c.geo.in_shape),
                                       c.geo.w_shape, attrs_of(c), c.geo.output_shape, exec, library_epilogue(c, pr));
        // The quads merge; the pairs only where pinned (the rules leave such layers on the plain
        // plans there).
        const std::string d = plan.describe();
        const bool merges = d.find("quads") != std::string::npos || !c.schedule.empty();
        EXPECT_EQ(d.find("groups merged in each of the kernel's") != std::string::npos, merges) << d;
    }
    check_case(c);
}
INSTANTIATE_TEST_SUITE_P(Merged, MergedGroups, ::testing::ValuesIn(merged_cases()), case_name);

// Rows that the kernels' position tiles do not divide, with the full tile's output channels (64),
// so that a call's innermost axis runs as its whole six- or four-position tiles and a rest on the
// narrower tiles (exact_row_pieces): phase rows of 7, 13 and 14 outputs; and rows of 5 and a
// window (an input smaller than the kernel), which stay one call; ranks 1-3, zero points at the
// rows' ends.
std::vector<QCase> row_piece_cases() {
    static const std::vector<Geometry> g = {
        {"rows_r2_7x7_k2s2", true, {1, 8, 3, 7}, {1, 8, 64, 2, 2}, attrs({2, 2}, {0, 0}, {0, 0}), std::nullopt},
        {"rows_r2_13_k3s2p1op1", true, {1, 4, 2, 13}, {1, 4, 64, 3, 3}, attrs({2, 2}, {1, 1}, {1, 1}, {}, {1, 1}),
         std::nullopt},
        {"rows_r1_14_k4s2p1", false, {2, 8, 14}, {8, 64, 4}, attrs({2}, {1}, {1}), std::nullopt},
        {"rows_r3_5_k3s1p1", true, {1, 4, 2, 2, 5}, {1, 4, 64, 3, 3, 3}, attrs({1, 1, 1}, {1, 1, 1}, {1, 1, 1}),
         std::nullopt},
        {"rows_win_r2_1x3_k4s1", true, {1, 8, 1, 3}, {1, 8, 64, 4, 4}, attrs({1, 1}, {0, 0}, {0, 0}), std::nullopt},
    };
    return three_way_cases(g, 1600, true);
}
INSTANTIATE_TEST_SUITE_P(RowPieces, QuantizedCase, ::testing::ValuesIn(row_piece_cases()), case_name);

TEST(QuantizedCases, ListsAreComplete) {
    // A list that lost its cases would pass by running none.
    EXPECT_EQ(dtype_cases().size(), 2u * 5u * 3u * 3u);
    EXPECT_EQ(geometry_cases().size(), geometries().size() * 4u);
    EXPECT_EQ(saturation_cases().size(), 12u);
    EXPECT_EQ(tie_cases().size(), 8u);
    EXPECT_EQ(big_accumulator_cases().size(), 8u);
    EXPECT_EQ(large_cases().size(), 4u);
    EXPECT_EQ(wide_cases().size(), 64u);
    EXPECT_EQ(wide_pinned_cases().size(), 3u * 64u);
    EXPECT_EQ(eltwise_cases().size(), 13u * 3u);
    EXPECT_EQ(sum_cases().size(), 11u);
    EXPECT_EQ(run_args_cases().size(), 7u);
    EXPECT_EQ(staged_cases().size(), 32u);
    EXPECT_EQ(few_channel_pinned_cases().size(), 32u);
    EXPECT_EQ(window_cases().size(), 5u * 2u * 3u);
    EXPECT_EQ(merged_cases().size(), 6u * 2u * 3u);
    EXPECT_EQ(row_piece_cases().size(), 5u * 2u * 3u);
    EXPECT_EQ(exp_range_cases().size(), 5u);
    // The reference's eltwise enum mirrors the library's, in order.
    const auto all = dr::all_qeltwise();
    ASSERT_EQ(all.size(), eltwise_params().size());
    for (size_t i = 0; i < all.size(); i++) {
        EXPECT_EQ(static_cast<int>(eltwise_params()[i].alg), static_cast<int>(i));
        EXPECT_STREQ(deconv::eltwise_name(eltwise_params()[i].alg), dr::qeltwise_name(all[i]));
    }
}

// ---------------------------------------------------------------- the reference's own checks

// The integer accumulation against the float reference's scatter (reference.cpp) on src - zp.
TEST(QuantizedReference, AccumulatorMatchesFloatReference) {
    int checked = 0;
    for (const auto &g : geometries()) {
        SCOPED_TRACE(g.name);
        std::mt19937 rng(42);
        const auto p = ref_problem(g);
        const auto src = random_ints(rng, dr::product(g.in_shape), 0, 255);
        const auto w = random_ints(rng, dr::product(g.w_shape), -128, 127);
        const int32_t zp = 37;
        const auto q = dr::accumulate_quantized(p, src, w, zp);
        std::vector<double> xs(src.size()), ws(w.begin(), w.end());
        for (size_t i = 0; i < src.size(); i++) xs[i] = src[i] - zp;
        const auto f = dr::compute(p, xs, ws);
        ASSERT_EQ(q.acc.size(), f.output.size());
        for (size_t i = 0; i < q.acc.size(); i++) {
            ASSERT_EQ(static_cast<double>(q.acc[i]), f.output[i]) << i;
            ASSERT_EQ(q.terms[i], f.terms[i]) << i;
        }
        checked++;
    }
    EXPECT_EQ(checked, static_cast<int>(geometries().size()));
}

// A case small enough to do by hand: u8 src [10, 200], zero point 10 -> [0, 190]; w [1, -2, 3];
// stride 2, pads_begin 1 -> y = 2x - 1 + k: x=0 reaches y 0, 1 (the tap at y=-1 is a pad);
// x=1 reaches y 1, 2, 3 -> acc [0, 190, -380, 570]; Y = 2*1 + 3 - 1 - 0 + 0 = 4.
// (acc + 1) * 0.5 + 3 = [3.5, 98.5, -186.5, 288.5] -> u8 (half to even, saturated) [4, 98, 0, 255].
TEST(QuantizedReference, HandComputed) {
    dr::Problem p;
    p.input_shape = {1, 1, 2};
    p.filter_shape = {1, 1, 1, 3};
    p.strides = {2};
    p.pads_begin = {1};
    p.pads_end = {0};
    const auto q = dr::accumulate_quantized(p, {10, 200}, {1, -2, 3}, 10);
    EXPECT_EQ(q.acc, (std::vector<int64_t>{0, 190, -380, 570}));
    EXPECT_EQ(q.terms, (std::vector<int32_t>{1, 2, 1, 1}));  // the tap on the pad reads nothing
    dr::QEpilogue e;
    e.scales = {0.5f};
    e.bias = {1};
    e.dst_zero_point = 3;
    const auto r = dr::apply_epilogue(q.shape, {0, 190, -380, 570}, e, dr::DT::u8, false, nullptr);
    EXPECT_EQ(r.value, (std::vector<double>{3.5, 98.5, -186.5, 288.5}));
    EXPECT_EQ(r.stored, (std::vector<double>{4, 98, 0, 255}));
    // the same into i8 and through relu then a sum with scale 2 and zero point 1 (dst_old 7)
    e.post_ops = {dr::QPostOp{}, dr::QPostOp{true, dr::QEltwise::relu, 0, 0, 2.0f, 1}};
    const std::vector<double> old(4, 7.0);
    const auto s = dr::apply_epilogue(q.shape, {0, 190, -380, 570}, e, dr::DT::i8, false, &old);
    // relu: [0.5, 95.5, 0, 285.5]; + 2 * (7 - 1) = 12; + 3 -> [15.5, 110.5, 15, 300.5]
    EXPECT_EQ(s.value, (std::vector<double>{15.5, 110.5, 15, 300.5}));
    EXPECT_EQ(s.stored, (std::vector<double>{16, 110, 15, 127}));
}

// The f32 steps are float operations: scale * (acc + bias) differs from the double product
// where f32 rounds, and the reference takes the f32 one.
TEST(QuantizedReference, ScaleRoundsInF32) {
    dr::Problem p;
    p.input_shape = {1, 1, 1};
    p.filter_shape = {1, 1, 1, 1};
    const auto q = dr::accumulate_quantized(p, {16777215}, {1}, 0);  // 2^24 - 1: exact in f32
    dr::QEpilogue e;
    e.scales = {0.1f};
    const auto r = dr::apply_epilogue(q.shape, {16777215.0}, e, dr::DT::f32, false, nullptr);
    EXPECT_EQ(r.value[0], static_cast<double>(0.1f * 16777215.0f));
    EXPECT_NE(r.value[0], static_cast<double>(0.1f) * 16777215.0);
    EXPECT_EQ(r.tol[0], 0.0);
}

// ---------------------------------------------------------------- the channel axis

// Per-channel scales and biases index the output channel g*C_OUT + c_out. A library that picked
// them along another axis (per group, by g*C_IN + c_out, in [C_OUT, G] order, or ignoring the
// group) must fail this test: each wrong mapping's reference is computed and shown to differ
// from both the right reference and the library's output.
TEST(QuantizedChannelAxis, ScalesAndBiasFollowTheOutputChannel) {
    int cases = 0;
    const std::vector<Geometry> geos = {
        {"g2_cin3_cout2", true, {1, 6, 5}, {2, 3, 2, 3}, attrs({2}, {1}, {0}), std::nullopt},
        {"g3_cin2_cout2", true, {1, 6, 3, 4}, {3, 2, 2, 3, 2}, attrs({2, 1}, {1, 0}, {1, 1}, {}, {1, 0}), std::nullopt},
        {"g2_cin1_cout3", true, {2, 2, 3, 3}, {2, 1, 3, 2, 3}, attrs({2, 2}, {0, 1}, {0, 0}), std::nullopt},
    };
    uint32_t seed = 1300;
    for (const auto &geo : geos)
        for (DType dst : {DType::u8, DType::f32})
            for (DataFormat f : {DataFormat::NCX, DataFormat::NXC}) {
                QCase c;
                c.geo = geo;
                c.format = f;
                c.types = {DType::u8, DType::i8, dst};
                c.src_zp = 128;
                c.dst_zp = default_dst_zp(dst);
                c.bias = DType::f32;
                c.scale_mode = ScaleMode::per_channel;
                c.seed = seed++;
                c.name = geo.name + "_" + deconv_test::dt_str(dst) + (f == DataFormat::NXC ? "_nxc" : "_ncx");
                SCOPED_TRACE(describe(c));
                const Prepared pr = prepare(c);
                const auto &r = pr.acc.shape;
                const int64_t G = r.groups, CI = r.c_in, CO = r.c_out, C = G * CO;
                // The wrong mappings: channel c = g*CO + co reads entry wrong(c).
                const std::vector<std::pair<std::string, std::function<int64_t(int64_t, int64_t)>>> wrong = {
                    {"per group", [&](int64_t g, int64_t) { return g; }},
                    {"g*C_IN + c_out", [&](int64_t g, int64_t co) { return (g * CI + co) % C; }},
                    {"[C_OUT, G] order", [&](int64_t g, int64_t co) { return co * G + g; }},
                    {"ignoring the group", [&](int64_t, int64_t co) { return co; }},
                };
                std::vector<std::pair<std::string, dr::QResult>> wrong_refs;
                for (const auto &[what, map] : wrong) {
                    if (what == "g*C_IN + c_out" && CI == CO) continue;  // the same axis then
                    dr::QEpilogue e = pr.ref_epi;
                    for (int64_t g = 0; g < G; g++)
                        for (int64_t co = 0; co < CO; co++) {
                            e.scales[g * CO + co] = pr.scales[map(g, co)];
                            e.bias[g * CO + co] = pr.bias[map(g, co)];
                        }
                    std::vector<double> acc_d(pr.acc.acc.begin(), pr.acc.acc.end());
                    wrong_refs.emplace_back(what, dr::apply_epilogue(r, acc_d, e, deconv_test::to_ref(dst), false, nullptr));
                    EXPECT_NE(wrong_refs.back().second.stored, pr.ref.stored)
                        << what << ": the wrong axis gives the same result";
                }
                std::vector<double> got;
                try {
                    got = run_library(c, pr);
                } catch (const deconv::Error &e) {
                    ADD_FAILURE() << "deconv::Error: " << e.what();
                    continue;
                }
                EXPECT_TRUE(compare(dst, got, pr.ref, r.output_shape));
                for (const auto &[what, bad] : wrong_refs)
                    EXPECT_FALSE(compare(dst, got, bad, r.output_shape))
                        << "the library matches the reference with scales and bias indexed " << what;
                cases++;
            }
    EXPECT_EQ(cases, 12);
}

// ---------------------------------------------------------------- post-op order and effect

// Every eltwise case's post-op changes the result (else the case would not test it).
TEST(QuantizedPostOps, EveryEltwiseCaseIsNontrivial) {
    int n = 0;
    for (QCase c : eltwise_cases()) {
        SCOPED_TRACE(c.name);
        const Prepared with = prepare(c);
        c.post_ops.erase(c.post_ops.begin());
        const Prepared without = prepare(c);
        EXPECT_NE(with.ref.stored, without.ref.stored);
        n++;
    }
    EXPECT_EQ(n, 39);
}

// relu then sum and sum then relu give different results; the library computes each in its
// order.
TEST(QuantizedPostOps, OrderMatters) {
    int n = 0;
    uint32_t seed = 1500;
    for (DType dst : {DType::f32, DType::i8, DType::u8})
        for (DataFormat f : {DataFormat::NCX, DataFormat::NXC}) {
            QCase c;
            c.geo = geometry("r2_k3s2d2_op1");
            c.format = f;
            c.types = {DType::i8, DType::i8, dst};
            c.src_zp = 4;
            c.dst_zp = dst == DType::u8 ? 90 : 0;
            c.target = dst == DType::f32 ? 4 : 30;
            c.bias = DType::i32;
            c.seed = seed++;
            const int32_t zp = is_int(dst) ? 11 : 0;
            QCase a = c, b = c;
            a.post_ops = {PostOp::eltwise(Eltwise::relu), PostOp::sum(0.5f, zp)};
            b.post_ops = {PostOp::sum(0.5f, zp), PostOp::eltwise(Eltwise::relu)};
            a.name = std::string("relu_sum_") + deconv_test::dt_str(dst);
            b.name = std::string("sum_relu_") + deconv_test::dt_str(dst);
            const Prepared pa = prepare(a), pb = prepare(b);
            ASSERT_EQ(pa.dst_old, pb.dst_old);  // same seed, same data
            EXPECT_NE(pa.ref.stored, pb.ref.stored) << "the two orders agree on this data";
            check_case(a);
            check_case(b);
            // and the library's output of one order is not the other's
            const auto got_a = run_library(a, pa);
            EXPECT_FALSE(compare(dst, got_a, pb.ref, pa.acc.shape.output_shape));
            n++;
        }
    EXPECT_EQ(n, 6);
}

// ---------------------------------------------------------------- strided views

// Strided input and output views (rows padded, the output inside a larger buffer) with a sum
// post-op that reads the output's earlier contents through the same strides; the gaps between
// rows stay untouched.
TEST(QuantizedViews, StridedInputAndOutput) {
    int ran = 0;
    for (DType dst : {DType::i8, DType::bf16}) {
        QCase c;
        c.geo = geometry("r2_k3s2p1_op1");
        c.types = {DType::u8, DType::i8, dst};
        c.src_zp = 200;
        c.dst_zp = default_dst_zp(dst);
        c.bias = DType::i32;
        c.post_ops = {PostOp::sum(1.25f, is_int(dst) ? -4 : 0)};
        c.seed = 2300 + static_cast<uint32_t>(ran);
        SCOPED_TRACE(describe(c));
        const Prepared pr = prepare(c);
        const auto &is = c.geo.in_shape, &os = pr.acc.shape.output_shape;  // NCX, rank 2
        const int64_t in_pitch = is[3] + 2, out_pitch = os[3] + 3;
        const std::vector<int64_t> in_st{is[1] * is[2] * in_pitch, is[2] * in_pitch, in_pitch, 1};
        const std::vector<int64_t> out_st{os[1] * os[2] * out_pitch, os[2] * out_pitch, out_pitch, 1};
        Buffer src(c.types.src, {is[0] * is[1] * is[2] * in_pitch}), dstb(dst, {os[0] * os[1] * os[2] * out_pitch});
        src.fill_bytes(0x33);
        dstb.fill_bytes(0x44);
        const auto at = [](const std::vector<int64_t> &shape, const std::vector<int64_t> &st, int64_t flat) {
            int64_t off = 0;
            for (size_t a = shape.size(); a-- > 0;) {
                off += (flat % shape[a]) * st[a];
                flat /= shape[a];
            }
            return off;
        };
        for (int64_t i = 0; i < dr::product(is); i++) src.set(at(is, in_st, i), pr.src[static_cast<size_t>(i)]);
        for (int64_t i = 0; i < dr::product(os); i++) dstb.set(at(os, out_st, i), pr.dst_old[static_cast<size_t>(i)]);
        Tensors t = make_tensors(c, pr);
        const Plan plan = Plan::create(op_of(c.geo), c.types, is, c.geo.w_shape, attrs_of(c), std::nullopt,
                                       deconv::ExecOptions{}, library_epilogue(c, pr));
        const auto before = dstb.payload();
        plan.run(deconv::ConstTensorView(src.data(), c.types.src, is, in_st), t.w.cview(),
                 deconv::TensorView{dstb.data(), dst, os, out_st}, run_args(c, t));
        ASSERT_TRUE(dstb.guards_intact());
        std::vector<double> got(static_cast<size_t>(dr::product(os)));
        std::vector<bool> in_view(static_cast<size_t>(dstb.count), false);
        for (int64_t i = 0; i < dr::product(os); i++) {
            got[static_cast<size_t>(i)] = dstb.get(at(os, out_st, i));
            in_view[static_cast<size_t>(at(os, out_st, i))] = true;
        }
        EXPECT_TRUE(compare(dst, got, pr.ref, os));
        const auto after = dstb.payload();
        const size_t es = dstb.elem();
        int64_t gap_writes = 0;
        for (int64_t e = 0; e < dstb.count; e++)
            if (!in_view[static_cast<size_t>(e)])
                gap_writes += std::memcmp(&after[static_cast<size_t>(e) * es], &before[static_cast<size_t>(e) * es], es) != 0;
        EXPECT_EQ(gap_writes, 0) << "elements between the output's rows were written";
        ran++;
    }
    EXPECT_EQ(ran, 2);
}

// ---------------------------------------------------------------- run-time scales, twice

// A plan with run-time scales uses each run's: two runs with different scales on the same plan.
TEST(QuantizedRunArgs, RunTimeScalesChangePerRun) {
    QCase c;
    c.geo = geometry("r2_k3s2p1_op1");
    c.types = {DType::u8, DType::i8, DType::u8};
    c.src_zp = 3;
    c.dst_zp = 128;
    c.scale_mode = ScaleMode::per_channel;
    c.runtime_scales = true;
    c.bias = DType::f32;
    c.seed = 1700;
    const Prepared pr = prepare(c);
    const Plan plan = Plan::create(op_of(c.geo), c.types, c.geo.in_shape, c.geo.w_shape, attrs_of(c),
                                   std::nullopt, deconv::ExecOptions{}, library_epilogue(c, pr));
    EXPECT_TRUE(plan.epilogue().scales.empty());
    for (int run = 0; run < 2; run++) {
        SCOPED_TRACE(run);
        Tensors t = make_tensors(c, pr);
        dr::QEpilogue e = pr.ref_epi;
        if (run == 1) {
            for (size_t i = 0; i < t.scales.size(); i++) {
                t.scales[i] *= i % 2 ? 1.75f : 0.5f;
                e.scales[i] = t.scales[i];
            }
        }
        std::vector<double> acc_d(pr.acc.acc.begin(), pr.acc.acc.end());
        const auto ref = dr::apply_epilogue(pr.acc.shape, acc_d, e, dr::DT::u8, false, nullptr);
        if (run == 1) {
            EXPECT_NE(ref.stored, pr.ref.stored);
        }
        plan.run(t.src.cview(), t.w.cview(), t.dst.view(), run_args(c, t));
        EXPECT_TRUE(compare(DType::u8, output_ncx(c, t.dst, pr.acc.shape.output_shape), ref,
                            pr.acc.shape.output_shape));
    }
}

// A packed filter serves several runs with other inputs.
TEST(QuantizedRunArgs, PackedFilterServesManyRuns) {
    QCase c;
    c.geo = geometry("r2_k3s2d2_op1");
    c.format = DataFormat::NXC;
    c.types = {DType::i8, DType::i8, DType::bf16};
    c.src_zp = -20;
    c.bias = DType::f32;
    c.scale_mode = ScaleMode::per_channel;
    c.post_ops = {PostOp::eltwise(Eltwise::clip, -3.0f, 3.0f)};
    c.seed = 1800;
    const Prepared pr0 = prepare(c);
    const Plan plan = Plan::create(op_of(c.geo), c.types, deconv_test::shape_in(c.format, c.geo.in_shape),
                                   c.geo.w_shape, attrs_of(c), std::nullopt, deconv::ExecOptions{},
                                   library_epilogue(c, pr0));
    Tensors t0 = make_tensors(c, pr0);
    const deconv::PackedFilter packed = plan.pack_filter(t0.w.cview());
    EXPECT_FALSE(packed.empty());
    int runs = 0;
    for (uint32_t s = 0; s < 3; s++) {
        // Same weights (the seed's weights are redrawn identically), other src.
        QCase cs = c;
        Prepared pr = pr0;
        std::mt19937 rng(9000 + s);
        pr.src = random_ints(rng, dr::product(c.geo.in_shape), -128, 127);
        pr.acc = dr::accumulate_quantized(pr.problem, pr.src, pr.w, c.src_zp);
        std::vector<double> acc_d(pr.acc.acc.begin(), pr.acc.acc.end());
        pr.ref = dr::apply_epilogue(pr.acc.shape, acc_d, pr.ref_epi, dr::DT::bf16, false, nullptr);
        Tensors t = make_tensors(cs, pr);
        plan.run(t.src.cview(), packed, t.dst.view(), run_args(cs, t));
        EXPECT_TRUE(compare(DType::bf16, output_ncx(cs, t.dst, pr.acc.shape.output_shape), pr.ref,
                            pr.acc.shape.output_shape));
        runs++;
    }
    EXPECT_EQ(runs, 3);
}

// ---------------------------------------------------------------- float layers with a bias

// Float layers (the same float dtype three times) with a bias (and, below, post-ops), against the
// float reference of the plain layer (double, reference.cpp) plus the bias, then the post-ops in
// double (apply_epilogue in f64). Tolerance, with S = sum |terms| + |bias| (a bound of every
// partial sum's magnitude; with post-ops also + |sum.scale * dst_old| + |linear's beta|):
//   f16   2^-11 S: the final rounding to f16 (half an ulp, relative 2^-11), plus the f32
//         accumulation 2 (n+1) 2^-24 S, plus 2^-25 absolute for f16's subnormals;
//   bf16  2^-8 S: the rounding to bf16 (relative 2^-8), plus the f32 accumulation;
//   f32   1e-5 S: the f32 accumulation of n <= 40 terms (2 (n+1) 2^-24 ~ 5e-6) and the bias add;
//   f64   the f64 accumulation 3 (n+1) 2^-53 S (the double reference's own rounding included).
// The post-ops used here have slopes <= 1 (linear 0.5, relu 0.1), so they do not widen the error,
// but for one relu of slope 1.5 (ListsTheKernelsDoNotTakeRunInThePass), within the f32 margin.
struct FloatCase {
    DType t, bias;
    std::vector<PostOp> post_ops;
    Geometry geo;
    DataFormat format;
    uint32_t seed;
    // The plan must store the epilogue in its kernels (describe() says so), not in a pass.
    bool in_store = false;
};

void check_float_case(const FloatCase &f, int *ran) {
    const Geometry &g = f.geo;
    const auto rt = deconv_test::to_ref(f.t);
    SCOPED_TRACE(std::string(deconv_test::dt_str(f.t)) + " bias " + deconv_test::dt_str(f.bias) + " post_ops " +
                 std::to_string(f.post_ops.size()) + " " + g.name + (f.format == DataFormat::NXC ? " nxc" : " ncx"));
    std::mt19937 rng(f.seed);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    const auto p = ref_problem(g);
    const int64_t n_in = dr::product(g.in_shape), n_w = dr::product(g.w_shape);
    std::vector<double> x(static_cast<size_t>(n_in)), w(static_cast<size_t>(n_w));
    for (auto &v : x) v = dr::round_to_dtype(rt, u(rng));
    for (auto &v : w) v = dr::round_to_dtype(rt, u(rng));
    const auto ref = dr::compute(p, x, w);
    const auto &oshape = ref.shape.output_shape;
    const int64_t C = ref.shape.groups * ref.shape.c_out, plane = dr::product(ref.shape.out_spatial);
    std::vector<double> bias(static_cast<size_t>(C));
    for (auto &b : bias) b = dr::round_to_dtype(deconv_test::to_ref(f.bias), 3.0 * u(rng));
    std::vector<double> old;
    if (has_sum(f.post_ops)) old = random_dst(rng, f.t, dr::product(oshape));
    dr::QEpilogue qe;
    qe.bias = bias;
    for (const auto &op : f.post_ops) qe.post_ops.push_back(to_ref(op));
    const auto want = dr::apply_epilogue(ref.shape, ref.output, qe, dr::DT::f64, true, old.empty() ? nullptr : &old);

    deconv::Attributes a = g.attrs;
    a.data_format = f.format;
    Epilogue e;
    e.bias = f.bias;
    e.post_ops = f.post_ops;
    std::optional<Plan> plan;
    try {
        plan = Plan::create(op_of(g), DataTypes{f.t, f.t, f.t}, deconv_test::shape_in(f.format, g.in_shape),
                            g.w_shape, a, g.output_shape, deconv::ExecOptions{}, e);
    } catch (const deconv::Error &err) {
        FAIL() << "deconv::Error: " << err.what();
    }
    if (f.in_store) EXPECT_THAT(plan->describe(), HasSubstr("in the store of the"));
    Buffer bx(f.t, deconv_test::shape_in(f.format, g.in_shape)), bw(f.t, g.w_shape),
        by(f.t, deconv_test::shape_in(f.format, oshape)), bb(f.bias, {C});
    const auto xv = f.format == DataFormat::NXC ? deconv_test::ncx_to_nxc(x, g.in_shape) : x;
    for (size_t i = 0; i < xv.size(); i++) bx.set(static_cast<int64_t>(i), xv[i]);
    for (size_t i = 0; i < w.size(); i++) bw.set(static_cast<int64_t>(i), w[i]);
    for (size_t i = 0; i < bias.size(); i++) bb.set(static_cast<int64_t>(i), bias[i]);
    if (!old.empty()) {
        const auto ov = f.format == DataFormat::NXC ? deconv_test::ncx_to_nxc(old, oshape) : old;
        for (size_t i = 0; i < ov.size(); i++) by.set(static_cast<int64_t>(i), ov[i]);
    } else {
        by.fill_bytes(0x5B);
    }
    RunArgs args;
    args.bias = bb.data();
    plan->run(bx.cview(), bw.cview(), by.view(), args);
    ASSERT_TRUE(by.guards_intact());
    std::vector<double> got(static_cast<size_t>(by.count));
    for (int64_t i = 0; i < by.count; i++) got[static_cast<size_t>(i)] = by.get(i);
    if (f.format == DataFormat::NXC) got = deconv_test::nxc_to_ncx(got, oshape);
    ASSERT_EQ(got.size(), want.value.size());
    ASSERT_GT(got.size(), 0u);

    double extra = 0;  // what the post-ops add to the magnitudes
    for (const auto &op : f.post_ops)
        if (op.kind == PostOp::Kind::eltwise) extra += std::fabs(op.beta);
    int64_t bad = 0, moved = 0;
    for (size_t i = 0; i < got.size(); i++) {
        const int64_t ch = (static_cast<int64_t>(i) / plane) % C;
        double S = ref.abs_sum[i] + std::fabs(bias[static_cast<size_t>(ch)]) + extra;
        for (const auto &op : f.post_ops)
            if (op.kind == PostOp::Kind::sum) S += std::fabs(op.scale * old[i]);
        const double terms = ref.terms[i] + 1.0;
        const double acc32 = 2.0 * (terms + 1) * std::ldexp(1.0, -24) * S;
        double tol = want.tol[i];
        switch (f.t) {
        case DType::f16: tol += std::ldexp(1.0, -11) * S + acc32 + std::ldexp(1.0, -25); break;
        case DType::bf16: tol += std::ldexp(1.0, -8) * S + acc32; break;
        case DType::f32: tol += 1e-5 * S; break;
        default: tol += 3.0 * (terms + 1) * std::ldexp(1.0, -53) * S; break;
        }
        if (!(std::fabs(got[i] - want.value[i]) <= tol) && bad++ < 5)
            ADD_FAILURE() << "at " << index_str(static_cast<int64_t>(i), oshape) << ": got " << got[i] << ", want "
                          << want.value[i] << " +- " << tol;
        moved += std::fabs(got[i] - ref.output[i]) > 1e-2;
    }
    EXPECT_EQ(bad, 0);
    EXPECT_GT(moved, 0) << "the epilogue changed nothing";  // the bias is really added
    (*ran)++;
}

TEST(FloatLayerBias, MatchesPlainLayerPlusBias) {
    struct F {
        DType t, bias;
    };
    int ran = 0, skipped = 0;
    uint32_t seed = 1900;
    for (const F &f : {F{DType::f16, DType::f16}, F{DType::f16, DType::f32}, F{DType::bf16, DType::bf16},
                       F{DType::bf16, DType::f32}, F{DType::f32, DType::f32}, F{DType::f64, DType::f64}})
        for (const char *gname : {"r2_k3s2p1_op1", "r1_k4s3_pb2pe1", "r3_k3s2p1_op1"})
            for (DataFormat fmt : {DataFormat::NCX, DataFormat::NXC}) {
                // (A build without that dtype or rank: ARM64's CI builds ranks 1-2.)
                const int rank = static_cast<int>(geometry(gname).in_shape.size()) - 2;
                if (!deconv_test::dtype_built(f.t) || !deconv_test::rank_built(rank)) {
                    skipped++;
                    seed++;
                    continue;
                }
                check_float_case(FloatCase{f.t, f.bias, {}, geometry(gname), fmt, seed++}, &ran);
            }
    EXPECT_EQ(ran + skipped, 36);
    EXPECT_GT(ran, 0);
}

TEST(FloatLayerBias, WithPostOps) {
    int ran = 0, skipped = 0;
    uint32_t seed = 2000;
    const std::vector<PostOp> ops = {PostOp::eltwise(Eltwise::linear, 0.5f, 1.0f), PostOp::eltwise(Eltwise::relu, 0.1f),
                                     PostOp::sum(0.25f)};
    for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64})
        for (DataFormat fmt : {DataFormat::NCX, DataFormat::NXC}) {
            if (!deconv_test::dtype_built(t)) {
                skipped++;
                continue;
            }
            check_float_case(FloatCase{t, t, ops, geometry("r2_k3s2d2_op1"), fmt, seed++}, &ran);
        }
    EXPECT_EQ(ran + skipped, 8);
    EXPECT_GT(ran, 0);
}

// A bias and a tanh (the pass, not the store) on layers whose run computes in slices of its own
// (a batch's images; row slabs of channels-last layers): the pass runs on each slice as it is
// computed (cpu/output_stage.h), in both layouts, f32 and f64.
TEST(FloatLayerBias, PassOnEachSliceOfTheRun) {
    const Geometry images{"images_r2_n8_g2_k3s2", true, {8, 4, 6, 7}, {2, 2, 3, 3, 3}, attrs({2, 2}, {1, 0}, {0, 1}, {}, {1, 0}), std::nullopt};
    const Geometry rows{"rows_r2_dw16_k4s2p1", true, {1, 16, 205, 40}, {16, 1, 1, 4, 4}, attrs({2, 2}, {1, 1}, {1, 1}), std::nullopt};
    int ran = 0, skipped = 0;
    uint32_t seed = 2300;
    for (DType t : {DType::f32, DType::f64})
        for (const Geometry *g : {&images, &rows})
            for (DataFormat fmt : {DataFormat::NCX, DataFormat::NXC}) {
                if (!deconv_test::dtype_built(t)) {
                    skipped++;
                    continue;
                }
                check_float_case(FloatCase{t, t, {PostOp::eltwise(Eltwise::tanh)}, *g, fmt, seed++}, &ran);
            }
    EXPECT_EQ(ran + skipped, 8);
    EXPECT_GT(ran, 0);
}

// A bias with a relu, clip or bounded_relu list runs in the kernels' store (conv_stages.h,
// StoreEpilogue): every kernel family a layer class reaches, the fill of phases no tap reaches,
// and output channel blocks (the bias view moves with each block), in both layouts. The same
// tolerances as above (the slot's slopes are <= 1).
TEST(FloatLayerBias, InTheKernelsStore) {
    const std::vector<Geometry> classes = {
        // depthwise: the group-vectorized kernels (channels last), interleaved groups
        {"dw_g16_k4s2p1", true, {1, 16, 5, 19}, {16, 1, 1, 4, 4}, attrs({2, 2}, {1, 1}, {1, 1}), std::nullopt},
        // few channels per group: the group-block kernels (channels last), a twin (channels first)
        {"g8_c4_k3s2", true, {1, 32, 7, 7}, {8, 4, 4, 3, 3}, attrs({2, 2}, {0, 0}, {0, 0}), std::nullopt},
        {"g16_c2_k3s2p1", true, {1, 32, 6, 7}, {16, 2, 2, 3, 3}, attrs({2, 2}, {1, 1}, {1, 1}, {}, {1, 1}), std::nullopt},
        // 1-3 output channels channels-last: the channel-dot kernels
        {"c24_to_3_k4s2", false, {1, 24, 5, 6}, {24, 3, 4, 4}, attrs({2, 2}, {1, 1}, {1, 1}), std::nullopt},
        // wide rows at stride 2: the interleaved kernels (channels first)
        {"c8_rows40_k4s2", false, {1, 8, 3, 40}, {8, 8, 4, 4}, attrs({2, 2}, {1, 1}, {1, 1}), std::nullopt},
        // kernel below the stride: phases without taps (their fill, zero_first)
        {"c6_k1s3", false, {1, 6, 4, 5}, {6, 5, 1, 1}, attrs({3, 3}, {0, 0}, {0, 0}), std::nullopt},
        {"c6_k2s3_1d", false, {2, 6, 9}, {6, 7, 2}, attrs({3}, {0}, {0}), std::nullopt},
        // many weights: blocks of output channels
        {"c256_to_200_k4s2", false, {1, 256, 3, 3}, {256, 200, 4, 4}, attrs({2, 2}, {1, 1}, {1, 1}), std::nullopt},
        // narrow rows of a wide batch: batch rows (the next rank's kernel over the images)
        {"n16_c32_to_24_4x4_k4s2", false, {16, 32, 4, 4}, {32, 24, 4, 4}, attrs({2, 2}, {1, 1}, {1, 1}), std::nullopt},
        // 3D
        {"r3_c8_k3s2", false, {1, 8, 3, 4, 5}, {8, 12, 3, 3, 3}, attrs({2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {}, {1, 1, 1}),
         std::nullopt},
    };
    const std::vector<std::vector<PostOp>> lists = {
        {PostOp::eltwise(Eltwise::relu, 0.1f)},
        {PostOp::eltwise(Eltwise::relu), PostOp::eltwise(Eltwise::clip, 0.0f, 2.5f)},
        {PostOp::eltwise(Eltwise::bounded_relu, 3.0f)},
    };
    int ran = 0, skipped = 0, at = 0;
    uint32_t seed = 2100;
    for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
        for (const Geometry &g : classes)
            for (DataFormat fmt : {DataFormat::NCX, DataFormat::NXC}) {
                const int rank = static_cast<int>(g.in_shape.size()) - 2;
                if (!deconv_test::dtype_built(t) || !deconv_test::rank_built(rank)) {
                    skipped++;
                    continue;
                }
                const std::vector<PostOp> &ops = lists[static_cast<size_t>(at++) % lists.size()];
                check_float_case(FloatCase{t, t == DType::f64 ? DType::f64 : DType::f32, ops, g, fmt, seed++, true}, &ran);
            }
    EXPECT_EQ(ran + skipped, 4 * 10 * 2);
    EXPECT_GT(ran, 0);
}

// The epilogue in the kernels keeps a NaN (its selects are the pass's; a plain vminps would
// return the bound) and stores the epilogue of the bias alone where no tap reaches.
TEST(FloatLayerBias, KernelsKeepNaNAndFillTaplessPhases) {
    // [1, 1, 3] -> kernel 1, stride 2: outputs 0, 2, 4 have a tap, 1 and 3 none.
    const float x[3] = {std::nanf(""), 1.0f, 100.0f}, w[2] = {1.0f, -2.0f}, bias[2] = {-4.0f, 3.0f};
    const auto run = [&](const std::vector<PostOp> &ops) {
        Epilogue e;
        e.bias = DType::f32;
        e.post_ops = ops;
        const Plan plan = Plan::create(Op::ConvolutionBackpropData, DataTypes{DType::f32, DType::f32, DType::f32},
                                       {1, 1, 3}, {1, 2, 1}, attrs({2}, {0}, {0}), std::nullopt, deconv::ExecOptions{}, e);
        EXPECT_THAT(plan.describe(), HasSubstr("in the store of the"));
        std::vector<float> y(10);
        RunArgs args;
        args.bias = bias;
        plan.run(deconv::ConstTensorView(x, DType::f32, {1, 1, 3}), deconv::ConstTensorView(w, DType::f32, {1, 2, 1}),
                 deconv::TensorView{y.data(), DType::f32, {1, 2, 5}, {}}, args);
        return y;
    };
    // channel 0: x - 4, channel 1: -2x + 3, then the post-ops
    const std::vector<float> leaky = run({PostOp::eltwise(Eltwise::relu, 0.5f)});
    EXPECT_TRUE(std::isnan(leaky[0]));
    EXPECT_TRUE(std::isnan(leaky[5]));
    const std::vector<float> want = {0, -2.0f, -1.5f, -2.0f, 96.0f, 0, 3.0f, 1.0f, 3.0f, -98.5f};
    for (int i : {1, 2, 3, 4, 6, 7, 8, 9}) EXPECT_EQ(leaky[i], want[i]) << "at " << i;
    const std::vector<float> bounded = run({PostOp::eltwise(Eltwise::bounded_relu, 10.0f)});
    EXPECT_TRUE(std::isnan(bounded[0]));
    EXPECT_TRUE(std::isnan(bounded[5]));
    const std::vector<float> want_b = {0, 0, 0, 0, 10.0f, 0, 3.0f, 1.0f, 3.0f, 0};
    for (int i : {1, 2, 3, 4, 6, 7, 8, 9}) EXPECT_EQ(bounded[i], want_b[i]) << "at " << i;
}

// Which lists the kernels take (a relu of slope <= 1, then bounds from 0) and which run in the
// pass; either way the result is the reference's.
TEST(FloatLayerBias, ListsTheKernelsDoNotTakeRunInThePass) {
    struct L {
        std::vector<PostOp> ops;
        bool in_kernels;
    };
    const std::vector<L> lists = {
        {{}, true},
        {{PostOp::eltwise(Eltwise::relu, 0.25f), PostOp::eltwise(Eltwise::linear, 1.0f, 0.0f)}, true},
        {{PostOp::eltwise(Eltwise::clip, 0.0f, 6.0f), PostOp::eltwise(Eltwise::bounded_relu, 4.0f)}, true},
        {{PostOp::eltwise(Eltwise::relu, 1.5f)}, false},                                           // slope above 1
        {{PostOp::eltwise(Eltwise::relu, 0.5f), PostOp::eltwise(Eltwise::clip, -1.0f, 2.0f)}, false},  // a lower bound
        {{PostOp::eltwise(Eltwise::relu, 0.5f), PostOp::eltwise(Eltwise::bounded_relu, 2.0f)}, false},  // bound after a slope
        {{PostOp::eltwise(Eltwise::clip, 0.0f, 2.0f), PostOp::eltwise(Eltwise::relu, 0.0f)}, false},   // relu after a bound
        {{PostOp::eltwise(Eltwise::linear, 0.5f, 1.0f)}, false},
        {{PostOp::eltwise(Eltwise::tanh)}, false},
    };
    int ran = 0;
    uint32_t seed = 2300;
    for (const L &l : lists) {
        FloatCase f{DType::f32, DType::f32, l.ops, geometry("r2_k3s2p1_op1"), DataFormat::NCX, seed++, l.in_kernels};
        check_float_case(f, &ran);
        Epilogue e;
        e.bias = DType::f32;
        e.post_ops = l.ops;
        deconv::Attributes a = f.geo.attrs;
        const Plan plan = Plan::create(op_of(f.geo), DataTypes{DType::f32, DType::f32, DType::f32}, f.geo.in_shape,
                                       f.geo.w_shape, a, f.geo.output_shape, deconv::ExecOptions{}, e);
        EXPECT_EQ(plan.describe().find("in the store of the") != std::string::npos, l.in_kernels) << plan.describe();
    }
    EXPECT_EQ(ran, static_cast<int>(lists.size()));
}

// ---------------------------------------------------------------- names and accessors

TEST(QuantizedApi, DataTypesNames) {
    const auto dt = [](DType s, DType w, DType d) { return DataTypes{s, w, d}; };
    const auto eq = [](const DataTypes &a, const DataTypes &b) {
        return a.src == b.src && a.weights == b.weights && a.dst == b.dst;
    };
    EXPECT_TRUE(eq(deconv::parse_data_types("u8s8u8"), dt(DType::u8, DType::i8, DType::u8)));
    EXPECT_TRUE(eq(deconv::parse_data_types("s8s8s32"), dt(DType::i8, DType::i8, DType::i32)));
    EXPECT_TRUE(eq(deconv::parse_data_types("u8s8f32"), dt(DType::u8, DType::i8, DType::f32)));
    EXPECT_TRUE(eq(deconv::parse_data_types("s8s8bf16"), dt(DType::i8, DType::i8, DType::bf16)));
    EXPECT_TRUE(eq(deconv::parse_data_types("f32"), dt(DType::f32, DType::f32, DType::f32)));
    EXPECT_TRUE(eq(deconv::parse_data_types("bf16"), dt(DType::bf16, DType::bf16, DType::bf16)));
    int n = 0;
    for (DType s : {DType::u8, DType::i8})
        for (DType d : {DType::u8, DType::i8, DType::i32, DType::f32, DType::bf16}) {
            const DataTypes t = dt(s, DType::i8, d);
            EXPECT_TRUE(eq(deconv::parse_data_types(deconv::data_types_name(t)), t)) << deconv::data_types_name(t);
            n++;
        }
    EXPECT_EQ(n, 10);
    try {
        deconv::parse_data_types("u8x8q3");
        ADD_FAILURE() << "no error";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        EXPECT_THAT(std::string(e.what()), HasSubstr("u8x8q3"));
    }
}

TEST(QuantizedApi, EltwiseNames) {
    const std::vector<std::string> names = {"relu", "clip",     "linear", "bounded_relu", "tanh",
                                            "logistic", "abs",  "square", "elu",          "swish",
                                            "gelu_tanh", "gelu_erf", "hardswish"};
    for (size_t i = 0; i < names.size(); i++) {
        const auto e = static_cast<Eltwise>(i);
        EXPECT_EQ(deconv::eltwise_name(e), names[i]);
        EXPECT_EQ(deconv::parse_eltwise(names[i]), e);
    }
    try {
        deconv::parse_eltwise("mish_bogus");
        ADD_FAILURE() << "no error";
    } catch (const deconv::Error &e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        EXPECT_THAT(std::string(e.what()), HasSubstr("mish_bogus"));
    }
}

TEST(QuantizedApi, PlanReportsTypesAndEpilogue) {
    QCase c;
    c.geo = geometry("r1_k3s2p1_op1");
    c.types = {DType::i8, DType::i8, DType::i32};
    c.src_zp = -7;
    c.dst_zp = 99;
    c.bias = DType::i32;
    c.scale_mode = ScaleMode::per_tensor;
    c.post_ops = {PostOp::eltwise(Eltwise::elu, 0.5f), PostOp::sum(2.0f, 3)};
    const Prepared pr = prepare(c);
    const Plan plan = Plan::create(op_of(c.geo), c.types, c.geo.in_shape, c.geo.w_shape, attrs_of(c),
                                   std::nullopt, deconv::ExecOptions{}, library_epilogue(c, pr));
    EXPECT_EQ(plan.types().src, DType::i8);
    EXPECT_EQ(plan.types().weights, DType::i8);
    EXPECT_EQ(plan.types().dst, DType::i32);
    EXPECT_EQ(plan.dtype(), DType::i8);
    const Epilogue &e = plan.epilogue();
    EXPECT_EQ(e.src_zero_point, -7);
    EXPECT_EQ(e.dst_zero_point, 99);
    EXPECT_EQ(e.scale_mode, ScaleMode::per_tensor);
    EXPECT_EQ(e.scales, pr.scales);
    ASSERT_TRUE(e.bias.has_value());
    EXPECT_EQ(*e.bias, DType::i32);
    ASSERT_EQ(e.post_ops.size(), 2u);
    EXPECT_EQ(e.post_ops[0].alg, Eltwise::elu);
    EXPECT_EQ(e.post_ops[1].kind, PostOp::Kind::sum);
    EXPECT_EQ(e.post_ops[1].zero_point, 3);
    EXPECT_EQ(plan.shape().output_shape, pr.acc.shape.output_shape);
}

TEST(QuantizedApi, CudaRequestWithoutFallbackIsRefused) {
    const Geometry &g = geometry("r1_k3s2p1_op1");
    Epilogue e;
    e.src_zero_point = 1;
    deconv::ExecOptions exec;
    exec.device = deconv::Device::CUDA;
    try {
        Plan::create(op_of(g), DataTypes{DType::u8, DType::i8, DType::u8}, g.in_shape, g.w_shape, g.attrs,
                     std::nullopt, exec, e);
        ADD_FAILURE() << "no error";
    } catch (const deconv::Error &err) {
        EXPECT_EQ(err.kind(), ErrorKind::Unsupported) << err.what();
    }
    exec.allow_cpu_fallback = true;
    const Plan plan = Plan::create(op_of(g), DataTypes{DType::u8, DType::i8, DType::u8}, g.in_shape, g.w_shape,
                                   g.attrs, std::nullopt, exec, e);
    EXPECT_EQ(plan.device(), deconv::Device::CPU);
}

// ---------------------------------------------------------------- refused inputs

// The error create() throws for the epilogue (kind InvalidArgument or Unsupported).
std::optional<deconv::Error> create_error(const DataTypes &types, const Epilogue &e,
                                          const std::string &geo = "r2_k3s2p1_op1") {
    const Geometry &g = geometry(geo);
    try {
        Plan::create(op_of(g), types, g.in_shape, g.w_shape, g.attrs, g.output_shape, deconv::ExecOptions{}, e);
    } catch (const deconv::Error &err) {
        return err;
    }
    return std::nullopt;
}

#define EXPECT_REFUSED(types, epi, ...)                                                                  \
    do {                                                                                                  \
        const auto err_ = create_error(types, epi);                                                       \
        if (!err_) {                                                                                      \
            ADD_FAILURE() << "accepted";                                                                  \
            break;                                                                                        \
        }                                                                                                 \
        EXPECT_TRUE(err_->kind() == ErrorKind::InvalidArgument || err_->kind() == ErrorKind::Unsupported) \
            << err_->what();                                                                              \
        EXPECT_THAT(std::string(err_->what()), __VA_ARGS__);                                              \
    } while (0)

const DataTypes kU8S8U8{DType::u8, DType::i8, DType::u8};
const DataTypes kS8S8S8{DType::i8, DType::i8, DType::i8};
const DataTypes kU8S8F32{DType::u8, DType::i8, DType::f32};
const DataTypes kF32{DType::f32, DType::f32, DType::f32};

// r2_k3s2p1_op1 has G*C_OUT = 4 output channels.
TEST(QuantizedErrors, WrongScaleCount) {
    Epilogue e;
    e.scale_mode = ScaleMode::per_channel;
    e.scales = {0.5f, 0.25f, 0.125f};
    EXPECT_REFUSED(kU8S8U8, e, HasSubstr("3"));
    e.scales = std::vector<float>(7, 0.5f);
    EXPECT_REFUSED(kU8S8U8, e, HasSubstr("7"));
    e.scale_mode = ScaleMode::per_tensor;
    e.scales = std::vector<float>(5, 0.5f);
    EXPECT_REFUSED(kU8S8U8, e, HasSubstr("5"));
}

TEST(QuantizedErrors, NonFiniteScale) {
    Epilogue e;
    e.scale_mode = ScaleMode::per_channel;
    e.scales = {0.5f, std::numeric_limits<float>::quiet_NaN(), 0.5f, 0.5f};
    EXPECT_REFUSED(kU8S8U8, e, AnyOf(HasSubstr("nan"), HasSubstr("NaN"), HasSubstr("NAN"), HasSubstr("finite")));
    e.scales = {0.5f, 0.5f, 0.5f, std::numeric_limits<float>::infinity()};
    EXPECT_REFUSED(kU8S8U8, e, AnyOf(HasSubstr("inf"), HasSubstr("Inf"), HasSubstr("INF"), HasSubstr("finite")));
    e.scale_mode = ScaleMode::per_tensor;
    e.scales = {-std::numeric_limits<float>::infinity()};
    EXPECT_REFUSED(kS8S8S8, e, AnyOf(HasSubstr("inf"), HasSubstr("Inf"), HasSubstr("INF"), HasSubstr("finite")));
}

TEST(QuantizedErrors, ZeroPointOutOfRange) {
    Epilogue e;
    e.src_zero_point = 256;
    EXPECT_REFUSED(kU8S8U8, e, HasSubstr("256"));
    e.src_zero_point = -1;
    EXPECT_REFUSED(kU8S8U8, e, HasSubstr("-1"));
    e.src_zero_point = -129;
    EXPECT_REFUSED(kS8S8S8, e, HasSubstr("-129"));
    e.src_zero_point = 128;
    EXPECT_REFUSED(kS8S8S8, e, HasSubstr("128"));
    e.src_zero_point = 0;
    e.dst_zero_point = 300;
    EXPECT_REFUSED(kU8S8U8, e, HasSubstr("300"));
    e.dst_zero_point = -200;
    EXPECT_REFUSED(kS8S8S8, e, HasSubstr("-200"));
    // the extremes are accepted
    for (int32_t zp : {0, 255}) {
        e = Epilogue{};
        e.src_zero_point = zp;
        e.dst_zero_point = 255 - zp;
        EXPECT_FALSE(create_error(kU8S8U8, e).has_value()) << zp;
    }
    for (int32_t zp : {-128, 127}) {
        e = Epilogue{};
        e.src_zero_point = zp;
        e.dst_zero_point = -1 - zp;
        EXPECT_FALSE(create_error(kS8S8S8, e).has_value()) << zp;
    }
}

TEST(QuantizedErrors, ZeroPointWhereTheTypesHaveNone) {
    Epilogue e;
    e.dst_zero_point = 17;  // float dst
    EXPECT_REFUSED(kU8S8F32, e, AnyOf(HasSubstr("17"), HasSubstr("f32")));
    EXPECT_REFUSED((DataTypes{DType::i8, DType::i8, DType::bf16}), e, AnyOf(HasSubstr("17"), HasSubstr("bf16")));
    e = Epilogue{};
    e.src_zero_point = 42;  // float layer
    EXPECT_REFUSED(kF32, e, AnyOf(HasSubstr("42"), HasSubstr("f32")));
    EXPECT_REFUSED((DataTypes{DType::f16, DType::f16, DType::f16}), e, AnyOf(HasSubstr("42"), HasSubstr("f16")));
    e = Epilogue{};
    e.dst_zero_point = 42;  // float layer
    EXPECT_REFUSED(kF32, e, AnyOf(HasSubstr("42"), HasSubstr("f32")));
}

TEST(QuantizedErrors, UnsupportedCombinations) {
    Epilogue e;
    e.src_zero_point = 0;
    e.scale_mode = ScaleMode::per_tensor;
    e.scales = {0.5f};
    EXPECT_REFUSED((DataTypes{DType::u8, DType::u8, DType::u8}), e, HasSubstr("u8"));
    EXPECT_REFUSED((DataTypes{DType::f32, DType::f32, DType::u8}), e, AnyOf(HasSubstr("f32"), HasSubstr("u8")));
    EXPECT_REFUSED((DataTypes{DType::f32, DType::i8, DType::u8}), e, AnyOf(HasSubstr("f32"), HasSubstr("u8")));
    EXPECT_REFUSED((DataTypes{DType::i8, DType::f32, DType::f32}), e, HasSubstr("f32"));
    EXPECT_REFUSED((DataTypes{DType::u8, DType::i8, DType::f16}), e, HasSubstr("f16"));
    EXPECT_REFUSED((DataTypes{DType::i8, DType::i8, DType::f64}), e, HasSubstr("f64"));
    EXPECT_REFUSED((DataTypes{DType::i32, DType::i8, DType::i32}), e, HasSubstr("i32"));
    EXPECT_REFUSED((DataTypes{DType::f32, DType::f16, DType::f32}), Epilogue{}, HasSubstr("f16"));
}

TEST(QuantizedErrors, BiasDtypeNotAllowed) {
    Epilogue e;
    e.bias = DType::f16;
    EXPECT_REFUSED(kU8S8U8, e, HasSubstr("f16"));
    e.bias = DType::bf16;
    EXPECT_REFUSED(kS8S8S8, e, HasSubstr("bf16"));
    e.bias = DType::u8;
    EXPECT_REFUSED(kU8S8F32, e, HasSubstr("u8"));
    e.bias = DType::i32;  // float layers: f32 or the layer's dtype
    EXPECT_REFUSED(kF32, e, HasSubstr("i32"));
    e.bias = DType::f16;
    EXPECT_REFUSED(kF32, e, HasSubstr("f16"));
    e.bias = DType::bf16;
    EXPECT_REFUSED((DataTypes{DType::f16, DType::f16, DType::f16}), e, HasSubstr("bf16"));
}

// Runs that lack what the plan needs: nothing is written.
TEST(QuantizedErrors, RunWithoutBiasOrScales) {
    QCase c;
    c.geo = geometry("r2_k3s2p1_op1");
    c.types = kU8S8U8;
    c.src_zp = 1;
    c.dst_zp = 2;
    c.bias = DType::f32;
    c.scale_mode = ScaleMode::per_channel;
    c.runtime_scales = true;
    c.seed = 2100;
    const Prepared pr = prepare(c);
    const Plan plan = Plan::create(op_of(c.geo), c.types, c.geo.in_shape, c.geo.w_shape, attrs_of(c), std::nullopt,
                                   deconv::ExecOptions{}, library_epilogue(c, pr));
    Tensors t = make_tensors(c, pr);
    const auto before = t.dst.payload();
    const auto refused = [&](const std::function<void()> &f, const std::vector<std::string> &any_of) {
        try {
            f();
            ADD_FAILURE() << "accepted";
        } catch (const deconv::Error &err) {
            EXPECT_TRUE(err.kind() == ErrorKind::InvalidArgument || err.kind() == ErrorKind::Unsupported) << err.what();
            EXPECT_TRUE(deconv_test::message_names(err.what(), any_of));
        }
        EXPECT_EQ(t.dst.payload(), before) << "the output was written";
    };
    RunArgs no_bias;
    no_bias.scales = t.scales.data();
    refused([&] { plan.run(t.src.cview(), t.w.cview(), t.dst.view(), no_bias); }, {"bias"});
    RunArgs no_scales;
    no_scales.bias = t.bias.data();
    refused([&] { plan.run(t.src.cview(), t.w.cview(), t.dst.view(), no_scales); }, {"scale"});
    // The runs without RunArgs.
    refused([&] { plan.run(t.src.data(), t.w.data(), t.dst.data()); }, {"bias", "scale", "RunArgs", "epilogue"});
    refused([&] { plan.run(t.src.cview(), t.w.cview(), t.dst.view()); }, {"bias", "scale", "RunArgs", "epilogue"});
    const deconv::PackedFilter packed = plan.pack_filter(t.w.cview());
    refused([&] { plan.run(t.src.cview(), packed, t.dst.view()); }, {"bias", "scale", "RunArgs", "epilogue"});
    refused([&] { plan.run(t.src.cview(), packed, t.dst.view(), no_bias); }, {"bias"});
    // and with everything, it runs
    plan.run(t.src.cview(), packed, t.dst.view(), run_args(c, t));
    EXPECT_TRUE(compare(DType::u8, output_ncx(c, t.dst, pr.acc.shape.output_shape), pr.ref,
                        pr.acc.shape.output_shape));
}

// The views' dtypes must be the plan's types().
TEST(QuantizedErrors, ViewDtypesMustMatchTheTypes) {
    QCase c;
    c.geo = geometry("r1_k3s2p1_op1");
    c.types = kU8S8F32;
    c.src_zp = 1;
    c.scale_mode = ScaleMode::per_tensor;
    c.seed = 2200;
    const Prepared pr = prepare(c);
    const Plan plan = Plan::create(op_of(c.geo), c.types, c.geo.in_shape, c.geo.w_shape, attrs_of(c), std::nullopt,
                                   deconv::ExecOptions{}, library_epilogue(c, pr));
    Tensors t = make_tensors(c, pr);
    const RunArgs args = run_args(c, t);
    int checked = 0;
    const auto refused = [&](const deconv::ConstTensorView &x, const deconv::ConstTensorView &w,
                             const deconv::TensorView &y, const char *name) {
        const auto before = t.dst.payload();
        try {
            plan.run(x, w, y, args);
            ADD_FAILURE() << "accepted";
        } catch (const deconv::Error &err) {
            EXPECT_EQ(err.kind(), ErrorKind::InvalidArgument) << err.what();
            EXPECT_THAT(std::string(err.what()), HasSubstr(name));
        }
        EXPECT_EQ(t.dst.payload(), before);
        checked++;
    };
    Buffer src_i8(DType::i8, t.src.shape), w_u8(DType::u8, t.w.shape);
    refused(src_i8.cview(), t.w.cview(), t.dst.view(), "i8");
    refused(t.src.cview(), w_u8.cview(), t.dst.view(), "u8");
    auto wrong_dst = t.dst.view();
    wrong_dst.dtype = DType::bf16;  // same buffer, other dtype: nothing may be written
    refused(t.src.cview(), t.w.cview(), wrong_dst, "bf16");
    EXPECT_EQ(checked, 3);
    // and the right views run
    plan.run(t.src.cview(), t.w.cview(), t.dst.view(), args);
    EXPECT_TRUE(compare(DType::f32, output_ncx(c, t.dst, pr.acc.shape.output_shape), pr.ref,
                        pr.acc.shape.output_shape));
}

// A float layer's plan with only a bias also needs RunArgs.
TEST(QuantizedErrors, FloatPlanWithBiasNeedsRunArgs) {
    const Geometry &g = geometry("r1_k3s2p1_op1");
    Epilogue e;
    e.bias = DType::f32;
    const Plan plan = Plan::create(op_of(g), kF32, g.in_shape, g.w_shape, g.attrs, std::nullopt,
                                   deconv::ExecOptions{}, e);
    Buffer x(DType::f32, g.in_shape), w(DType::f32, g.w_shape), y(DType::f32, plan.shape().output_shape);
    x.fill_bytes(0);
    w.fill_bytes(0);
    y.fill_bytes(0x11);
    const auto before = y.payload();
    try {
        plan.run(x.data(), w.data(), y.data());
        ADD_FAILURE() << "accepted";
    } catch (const deconv::Error &err) {
        EXPECT_TRUE(err.kind() == ErrorKind::InvalidArgument || err.kind() == ErrorKind::Unsupported);
        EXPECT_TRUE(deconv_test::message_names(err.what(), {"bias", "RunArgs", "epilogue"}));
    }
    EXPECT_EQ(y.payload(), before);
}

// A pinned quant_dots runs a few-channel layer (3 output channels per group) on the dot-product
// kernels the rules leave it off.
TEST(QuantizedKernels, APinTakesFewChannelLayersToTheDotProducts) {
    Epilogue e;
    e.scale_mode = deconv::ScaleMode::per_tensor;
    e.scales = {0.5f};
    deconv::ExecOptions pinned;
    pinned.schedule = "quant_dots=pairs";
    for (const deconv::ExecOptions &o : {deconv::ExecOptions{}, pinned}) {
        const Plan plan = Plan::create(Op::GroupConvolutionBackpropData, kU8S8U8, {1, 8, 6, 6}, {1, 8, 3, 3, 3},
                                       attrs({2, 2}, {1, 1}, {1, 1}), std::nullopt, o, e);
        const std::string d = plan.describe();
        EXPECT_EQ(d.find("pairs") != std::string::npos, !o.schedule.empty()) << d;
    }
}

// The quads run where the CPU has their instruction: sdot on ARM64's dotprod_fp16 variant (a
// missing kernel would fall back to the pairs and still compute right), and vpdpbusd only where
// the CPU has AVX512-VNNI.
TEST(QuantizedKernels, QuadsRunWhereTheCpuHasThem) {
    Epilogue e;
    e.scale_mode = deconv::ScaleMode::per_tensor;
    e.scales = {0.5f};
    const Plan plan = Plan::create(Op::GroupConvolutionBackpropData, kU8S8U8, {1, 32, 6, 6}, {1, 32, 32, 3, 3},
                                   attrs({2, 2}, {1, 1}, {1, 1}), std::nullopt, deconv::ExecOptions{}, e);
    const std::string d = plan.describe();
#if defined(__aarch64__)
    if (deconv::cpu_variant() == "dotprod_fp16") EXPECT_NE(d.find("sdot"), std::string::npos) << d;
    else EXPECT_EQ(d.find("sdot"), std::string::npos) << d;
#elif defined(__x86_64__)
    if (d.find("vpdpbusd") != std::string::npos) EXPECT_TRUE(__builtin_cpu_supports("avx512vnni")) << d;
    EXPECT_EQ(d.find("sdot"), std::string::npos) << d;
#endif
    EXPECT_TRUE(d.find("quads") != std::string::npos || d.find("pairs") != std::string::npos) << d;
}

}  // namespace
