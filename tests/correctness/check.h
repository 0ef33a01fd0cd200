// What the correctness suites share: the comparison of library output against the reference
// with per-dtype tolerances, the deterministic random problem generator of the sweeps
// (make_case), and the runner that takes one case through the library's free function, a Plan or
// strided views (run_and_check).
#pragma once

#include "layout_support.h"
#include "test_support.h"

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <random>

namespace deconv_test {

using deconv::DType;

// ---------------------------------------------------------------- tolerances
//
// `exact` is the reference's double-precision sum of the products of the *stored* inputs (the
// inputs after rounding to the dtype), `abs_sum` the sum of |products| and `n` the number of
// terms for that output element.
//
// f32:  every product and partial sum is rounded to f32 once, in whatever order the kernel
//       picks (vectorised, split reductions, FMA or not); the classic bound is
//       |err| <= gamma_{n+1} * sum|terms| ~ (n+1) * u32 * sum|terms| with u32 = 2^-24. We allow
//       twice that, plus the reference's own double rounding (n * 2^-53 * sum|terms|).
// f16, bf16: the products of two f16/bf16 values are exact in f32 (11+11 <= 24 and 8+8 <= 24
//       significant bits), the sum is accumulated in f32 (same bound as f32 above) and rounded
//       once to the storage type: that adds at most half an ulp of the storage type at the
//       magnitude of the f32 sum, |exact| + acc_err.
// f64:  as f32 with u64 = 2^-53; the reference itself (also double) contributes the same order,
//       so the bound is 2 * (n+1) * u64 * sum|terms| + n * u64 * sum|terms|.
// i8, u8, i32: exact. The stored inputs are integers, the library accumulates in i32/i64 (no
//       overflow for the value ranges used here), and the result is the exact sum saturated to
//       the storage range, which the reference computes exactly in double (all partial sums are
//       integers below 2^53).
inline double tolerance(DType t, double exact, double abs_sum, int64_t n) {
    const double u32 = std::ldexp(1.0, -24), u64 = std::ldexp(1.0, -53);
    const double ref_err = static_cast<double>(n) * u64 * abs_sum;
    switch (t) {
    case DType::f32: return 2.0 * static_cast<double>(n + 1) * u32 * abs_sum + ref_err;
    case DType::f64: return 2.0 * static_cast<double>(n + 1) * u64 * abs_sum + ref_err;
    case DType::f16:
    case DType::bf16: {
        const double acc = 2.0 * static_cast<double>(n + 1) * u32 * abs_sum + ref_err;
        return acc + deconv_ref::half_ulp(to_ref(t), std::fabs(exact) + acc);
    }
    default: return 0.0;
    }
}

// The value the library must produce, up to the tolerance (integers: saturation).
inline double expected_value(DType t, double exact) {
    return deconv_ref::dt_is_float(to_ref(t)) ? exact : deconv_ref::round_to_dtype(to_ref(t), exact);
}

inline std::string index_str(int64_t flat, const std::vector<int64_t> &shape) {
    std::vector<int64_t> idx(shape.size());
    for (size_t i = shape.size(); i-- > 0;) {
        idx[i] = flat % shape[i];
        flat /= shape[i];
    }
    return vec_str(idx);
}

// Compares got (dense, C order, already loaded as doubles) with the reference result.
inline ::testing::AssertionResult compare_to_reference(DType t, const std::vector<double> &got,
                                                       const deconv_ref::Result &ref) {
    if (got.size() != ref.output.size())
        return ::testing::AssertionFailure()
               << "size " << got.size() << " vs reference " << ref.output.size();
    int64_t bad = 0;
    std::ostringstream os;
    for (size_t i = 0; i < got.size(); i++) {
        const double want = expected_value(t, ref.output[i]);
        const double tol = tolerance(t, ref.output[i], ref.abs_sum[i], ref.terms[i]);
        const double g = got[i];
        const bool ok = std::isfinite(g) && std::fabs(g - want) <= tol;
        if (!ok) {
            if (bad < 8)
                os << "\n    at " << index_str(static_cast<int64_t>(i), ref.shape.output_shape)
                   << ": got " << g << " want " << want << " (|diff| "
                   << std::fabs(g - want) << ", tol " << tol << ", terms " << ref.terms[i]
                   << ", sum|terms| " << ref.abs_sum[i] << ")";
            bad++;
        }
    }
    if (bad == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << bad << " of " << got.size()
                                         << " elements differ from the reference (dtype "
                                         << dt_str(t) << "):" << os.str();
}

inline std::vector<double> read_all(const Buffer &b) {
    std::vector<double> v(static_cast<size_t>(b.count));
    for (int64_t i = 0; i < b.count; i++) v[static_cast<size_t>(i)] = b.get(i);
    return v;
}

// ---------------------------------------------------------------- strided views

// A view of `shape` into a larger buffer: each axis gets 0..2 extra (unused) positions and the
// axes may be laid out in memory in a permuted order (e.g. channels last).
struct StridedLayout {
    std::vector<int64_t> strides;
    int64_t span = 0;  // elements of the backing buffer
};

// The dense C-order layout of `shape`.
inline StridedLayout dense_layout(const std::vector<int64_t> &shape) {
    StridedLayout l;
    l.strides.assign(shape.size(), 0);
    int64_t s = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        l.strides[i] = s;
        s *= shape[i];
    }
    l.span = s;
    return l;
}

inline StridedLayout make_layout(const std::vector<int64_t> &shape, std::mt19937 &rng,
                                 bool permute) {
    const size_t r = shape.size();
    std::vector<size_t> order(r);  // memory order, outermost first
    for (size_t i = 0; i < r; i++) order[i] = i;
    if (permute) std::shuffle(order.begin(), order.end(), rng);
    std::uniform_int_distribution<int64_t> extra(0, 2);
    StridedLayout l;
    l.strides.assign(r, 0);
    int64_t s = 1;
    for (size_t j = r; j-- > 0;) {
        const size_t ax = order[j];
        l.strides[ax] = s;
        s *= shape[ax] + extra(rng);
    }
    l.span = s;
    return l;
}

inline int64_t offset_of(int64_t flat, const std::vector<int64_t> &shape,
                         const std::vector<int64_t> &strides) {
    int64_t off = 0;
    for (size_t i = shape.size(); i-- > 0;) {
        off += (flat % shape[i]) * strides[i];
        flat /= shape[i];
    }
    return off;
}

// ---------------------------------------------------------------- random problems
//
// One generator serves the sweeps of the backprop ops (sweep_test.cpp, NCX; layout_test.cpp,
// NXC) and of the forward op (forward_test.cpp, both formats). They draw from one space of
// problems: groups (depthwise included), strides, dilations, asymmetric pads, every auto_pad,
// output_padding up to stride + 1, output_shape down to a negative total padding, attributes left
// at their defaults. A CaseSpec picks the op, the format, the channel profile and the seeds.

// The op of a drawn case: the OpenVINO backprop ops (GroupConvolutionBackpropData, or
// ConvolutionBackpropData for the ungrouped draws) or the forward GroupConvolution.
enum class CaseOp { Backprop, Forward };
// The data format of a drawn case; Either draws it per case.
enum class CaseFormat { NCX, NXC, Either };

struct CaseSpec {
    CaseOp op = CaseOp::Backprop;
    CaseFormat format = CaseFormat::NCX;
    // false: one case in five "medium", rows long enough (>= 2 native vectors per stride phase)
    // and enough output channels per group for the kernels' full register tiles, besides the
    // narrow-row and few-channel paths of the small cases. true: half of the cases "wide", every
    // width of kWideChannels output channels per group and inner rows up to 40, the reference's
    // work kept under kMacBudget.
    bool wide = false;
    uint64_t salt = 0;  // xor-ed into the seeds: each suite draws its own problems
};

// Output channels per group of the wide cases: the channels-last kernels' scalar (< 4), 4-lane,
// one-vector and full-tile paths, with tails (5, 13, 67: tiles shifted inwards).
inline constexpr int64_t kWideChannels[] = {1, 3, 5, 8, 13, 16, 32, 48, 64, 67, 96};
inline constexpr int kWideCount = 11;
inline constexpr int64_t kMacBudget = 400000;  // per wide case, to keep the naive reference quick

struct GenCase {
    CaseOp op = CaseOp::Backprop;
    deconv::DataFormat format = deconv::DataFormat::NCX;
    deconv_ref::Problem p;          // backprop cases, in NCX shapes as the reference sees them
    deconv_ref::ForwardProblem fp;  // forward cases, likewise
    DType dtype = DType::f32;
    int api = 0;  // 0: free function, dense; 1: Plan; 2: strided views
    uint64_t seed = 0;
    std::vector<double> input, filter;  // NCX values and the op's filter, representable in dtype
    deconv::ExecOptions exec;           // e.g. a schedule pin that reaches a kernel the rules keep off
};

inline const char *format_str(deconv::DataFormat f) { return f == deconv::DataFormat::NXC ? "nxc" : "ncx"; }

inline std::string describe(const GenCase &c) {
    static const char *apis[] = {"free-function", "plan", "strided-views"};
    return (c.op == CaseOp::Forward ? deconv_ref::describe(c.fp) : deconv_ref::describe(c.p)) +
           " format=" + format_str(c.format) + " dtype=" + dt_str(c.dtype) + " api=" + apis[c.api] +
           " seed=" + std::to_string(c.seed) + (c.exec.schedule.empty() ? "" : " schedule='" + c.exec.schedule + "'");
}

// Random values representable in t (see the tolerance notes for why these ranges).
inline std::vector<double> random_values(DType t, int64_t count, std::mt19937 &rng) {
    std::vector<double> v(static_cast<size_t>(count));
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    // Integers: half of the tensors use a small range (exact, unsaturated results), half the
    // full range (saturation).
    const bool small = std::uniform_int_distribution<int>(0, 1)(rng) == 0;
    int64_t lo = 0, hi = 0;
    switch (t) {
    case DType::i8: lo = small ? -3 : -128; hi = small ? 3 : 127; break;
    case DType::u8: lo = 0; hi = small ? 4 : 255; break;
    case DType::i32:  // |products| <= 2^40, sums far below 2^53: exact in the double reference
        lo = small ? -1000 : -(int64_t{1} << 20); hi = -lo; break;
    default: break;
    }
    std::uniform_int_distribution<int64_t> ints(lo, hi);
    for (auto &x : v) {
        switch (t) {
        case DType::f32: x = deconv_ref::round_to_f32(unit(rng)); break;
        case DType::f64: x = unit(rng); break;
        case DType::f16: x = deconv_ref::round_to_f16(2.0 * unit(rng)); break;
        case DType::bf16: x = deconv_ref::round_to_bf16(2.0 * unit(rng)); break;
        default: x = static_cast<double>(ints(rng)); break;
        }
    }
    return v;
}

inline uint64_t sweep_seed(DType t, int rank, int index) {
    // A fixed mix of the shard and the index (independent of the standard library's hash).
    uint64_t z = 0x9E3779B97F4A7C15ull * (static_cast<uint64_t>(t) + 1) +
                 0xBF58476D1CE4E5B9ull * static_cast<uint64_t>(rank) +
                 0x94D049BB133111EBull * static_cast<uint64_t>(index + 1);
    z ^= z >> 31;
    z *= 0xD6E8FEB86659FD93ull;
    z ^= z >> 32;
    return z;
}

// One deterministic problem of a sweep: case `index` of the (dtype, rank) shard.
inline GenCase make_case(const CaseSpec &spec, DType t, int rank, int index) {
    GenCase c;
    c.op = spec.op;
    c.dtype = t;
    c.seed = sweep_seed(t, rank, index) ^ spec.salt;
    std::mt19937 rng(static_cast<uint32_t>(c.seed ^ (c.seed >> 32)));
    auto ri = [&](int64_t lo, int64_t hi) {
        return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    const bool fwd = spec.op == CaseOp::Forward;
    const bool big3 = rank == 3;
    const bool wide = spec.wide && index % 4 >= 2;
    const bool medium = !spec.wide && index % 5 == 3;
    // The forward op is always grouped; the draw stays so that the rest of the sequence is the
    // same function of the seed for every op.
    const bool grouped = ri(0, 9) < 6 || fwd;
    int64_t G = 1, cin = 1, cout = 1;
    if (grouped && ri(0, 3) == 0) {  // depthwise: C_IN = C_OUT = 1, many groups
        G = wide ? kWideChannels[2 + (index / 4 + rank) % (kWideCount - 2)] : ri(3, big3 ? 6 : 12);
    } else if (wide) {
        G = grouped ? ri(1, 2) : 1;
        cin = ri(1, big3 ? 2 : 4);
        cout = kWideChannels[(index / 4 + rank) % kWideCount];
    } else if (medium) {
        G = grouped ? ri(1, rank == 1 ? 3 : 2) : 1;
        cin = ri(1, rank == 1 ? 16 : rank == 2 ? 8 : 4);
        cout = ri(4, rank == 1 ? 12 : rank == 2 ? 10 : 9);
    } else {
        G = grouped ? ri(1, 4) : 1;
        cin = ri(1, big3 ? 2 : 3);
        cout = ri(1, big3 ? 2 : 3);
    }
    int64_t N = ri(1, big3 || medium || wide ? 2 : 3);
    const int ap = static_cast<int>(ri(0, 9));
    const deconv_ref::AutoPad auto_pad = ap < 4 ? deconv_ref::AutoPad::Explicit
                                         : ap < 6 ? deconv_ref::AutoPad::SameUpper
                                         : ap < 8 ? deconv_ref::AutoPad::SameLower
                                                  : deconv_ref::AutoPad::Valid;
    const bool with_output_shape = ri(0, 9) < 3 && !fwd;  // the forward op has no such input
    std::vector<int64_t> X(rank), K(rank), S(rank), D(rank), OP(rank), PB(rank), PE(rank), OS(rank);
    for (int a = 0; a < rank; a++) {
        const bool inner = a == rank - 1;
        if (wide)
            X[a] = inner ? ri(1, rank == 1 ? 40 : rank == 2 ? 20 : 12) : ri(1, big3 ? 2 : 3);
        else if (medium && inner)
            X[a] = ri(16, rank == 1 ? 80 : rank == 2 ? 48 : 40);
        else if (medium)
            X[a] = ri(1, rank == 2 ? 6 : 3);
        else
            X[a] = ri(1, rank == 1 ? 12 : rank == 2 ? 6 : 4);
        // The forward op's windows must fit its data (padded): kernels, dilations and strides
        // from narrower ranges, so that few draws leave no output.
        K[a] = fwd ? ri(1, 4) : ri(1, big3 ? 3 : 5);
        D[a] = fwd ? ri(1, 3) : ri(1, big3 ? 2 : 3);
        S[a] = fwd ? ri(1, 3) : ri(1, 4);
        OP[a] = ri(0, 1) ? 0 : ri(0, S[a] + 1);  // includes values >= stride
        if (fwd) OP[a] = 0;
        const int64_t eff = (K[a] - 1) * D[a] + 1;
        const int64_t span = S[a] * (X[a] - 1) + eff;
        PB[a] = ri(0, eff);  // up to the whole dilated kernel: windows entirely in the padding
        PE[a] = ri(0, eff);
        // output_shape: anywhere from large pads down to a negative total padding.
        OS[a] = ri(std::max<int64_t>(1, span - 2 * eff - S[a]), span + OP[a] + 3);
    }
    if (spec.wide) {
        // Keep the reference's work bounded: shrink the batch, the outer rows, C_IN, the taps.
        auto macs = [&] { return N * G * cin * cout * deconv_ref::product(X) * deconv_ref::product(K); };
        while (macs() > kMacBudget) {
            if (N > 1) { N--; continue; }
            int outer = -1;
            for (int a = 0; a + 1 < rank; a++)
                if (X[a] > 1 && (outer < 0 || X[a] > X[outer])) outer = a;
            if (outer >= 0) { X[outer]--; continue; }
            if (cin > 1) { cin--; continue; }
            int ka = 0;
            for (int a = 1; a < rank; a++)
                if (K[a] > K[ka]) ka = a;
            if (K[ka] > 1) { K[ka]--; continue; }
            X[rank - 1]--;
        }
    }
    for (int a = 0; a < rank; a++) {  // keep the output non-empty
        const int64_t eff = (K[a] - 1) * D[a] + 1;
        if (fwd && auto_pad == deconv_ref::AutoPad::Explicit) {
            while (X[a] + PB[a] + PE[a] < eff) (ri(0, 1) ? PB[a] : PE[a])++;
        } else if (fwd && auto_pad == deconv_ref::AutoPad::Valid) {
            X[a] = std::max(X[a], eff);
        } else if (!fwd && auto_pad == deconv_ref::AutoPad::Explicit && !with_output_shape) {
            const int64_t span = S[a] * (X[a] - 1) + eff;
            while (span - PB[a] - PE[a] + OP[a] < 1) (PE[a] > 0 ? PE[a] : PB[a])--;
        }
    }
    // Sometimes leave attributes at their defaults (empty vectors).
    auto all_eq = [](const std::vector<int64_t> &v, int64_t x) {
        return std::all_of(v.begin(), v.end(), [x](int64_t y) { return y == x; });
    };
    if (all_eq(S, 1) && ri(0, 1)) S.clear();
    if (all_eq(D, 1) && ri(0, 1)) D.clear();
    if (all_eq(OP, 0) && ri(0, 1)) OP.clear();
    if (all_eq(PB, 0) && all_eq(PE, 0) && ri(0, 1)) {
        PB.clear();
        PE.clear();
    }
    std::vector<int64_t> in_shape{N, G * cin}, w_shape;
    if (fwd)
        w_shape = {G, cout, cin};
    else
        w_shape = grouped ? std::vector<int64_t>{G, cin, cout} : std::vector<int64_t>{cin, cout};
    in_shape.insert(in_shape.end(), X.begin(), X.end());
    w_shape.insert(w_shape.end(), K.begin(), K.end());
    // The attributes both ops' problems have.
    auto set_common = [&](auto &p) {
        p.input_shape = in_shape;
        p.filter_shape = w_shape;
        p.strides = S;
        p.dilations = D;
        p.pads_begin = PB;
        p.pads_end = PE;
        p.auto_pad = auto_pad;
    };
    if (fwd) {
        set_common(c.fp);
    } else {
        set_common(c.p);
        c.p.grouped = grouped;
        c.p.output_padding = OP;
        if (with_output_shape) c.p.output_shape = OS;
    }
    if (spec.format == CaseFormat::Either)
        c.format = ri(0, 1) ? deconv::DataFormat::NXC : deconv::DataFormat::NCX;
    else
        c.format = spec.format == CaseFormat::NXC ? deconv::DataFormat::NXC : deconv::DataFormat::NCX;
    // API: 7 and 8 of every 10 through a Plan, 9 (and every third medium-index case) through
    // strided views, the rest through the free functions on dense buffers.
    const int k = static_cast<int>(index % 10);
    c.api = (k == 7 || k == 8) ? 1 : (k == 9 || (k == 3 && (index / 10) % 3 == 0)) ? 2 : 0;
    c.input = random_values(t, deconv_ref::product(in_shape), rng);
    c.filter = random_values(t, deconv_ref::product(w_shape), rng);
    return c;
}

// The backprop sweep's cases (sweep_test.cpp, and the cases other suites borrow).
inline GenCase make_case(DType t, int rank, int index) { return make_case(CaseSpec{}, t, rank, index); }

// ---------------------------------------------------------------- running one case

inline deconv::ConstTensorView cview_of(const Buffer &b, const std::vector<int64_t> &shape,
                                        const std::vector<int64_t> &strides) {
    return deconv::ConstTensorView(b.data(), b.dtype, shape, strides);
}

// Fills a strided view's backing buffer: the view's elements get `values`, the gaps get a
// poison value (NaN for floats, 77 for integers) that would spoil any result that read it.
inline void fill_strided(Buffer &b, const std::vector<int64_t> &shape,
                         const std::vector<int64_t> &strides, const std::vector<double> &values) {
    const double poison = deconv_ref::dt_is_float(to_ref(b.dtype))
                              ? std::numeric_limits<double>::quiet_NaN()
                              : 77.0;
    for (int64_t i = 0; i < b.count; i++) b.set(i, poison);
    for (size_t i = 0; i < values.size(); i++)
        b.set(offset_of(static_cast<int64_t>(i), shape, strides), values[i]);
}

// Reads a strided output view back (its elements in logical order) and checks that the run left
// every other element of the backing buffer as `before` (its payload before the run) held it.
struct ViewReadback {
    std::vector<double> values;
    int64_t gap = -1;  // the first element outside the view that changed, or -1
};
inline ViewReadback read_strided(const Buffer &out, const std::vector<int64_t> &shape, const StridedLayout &l,
                                 const std::vector<unsigned char> &before) {
    ViewReadback r;
    const int64_t n = deconv_ref::product(shape);
    r.values.resize(static_cast<size_t>(n));
    std::vector<char> used(static_cast<size_t>(l.span), 0);
    for (int64_t i = 0; i < n; i++) {
        const int64_t off = offset_of(i, shape, l.strides);
        r.values[static_cast<size_t>(i)] = out.get(off);
        used[static_cast<size_t>(off)] = 1;
    }
    const auto after = out.payload();
    const size_t es = out.elem();
    for (int64_t e = 0; e < l.span && r.gap < 0; e++)
        if (!used[static_cast<size_t>(e)] && std::memcmp(&after[e * es], &before[e * es], es) != 0) r.gap = e;
    return r;
}

// What a library call must produce for an input: the reference result in the output's layout,
// and the pads its ShapeInfo reports.
struct Expectation {
    deconv_ref::Result result;
    std::vector<int64_t> pads_begin, pads_end;
};

// A free function of the library under test (group_convolution_backprop_data, ..., with the
// case's attributes bound).
using LibraryCall = std::function<void(const deconv::ConstTensorView &, const deconv::ConstTensorView &,
                                       const deconv::TensorView &)>;

// One case as the library sees it. The suites build it from their own case types and
// conversions (the reference knows only NCX backprop tensors), so the runner needs no op's rules.
struct LibraryCase {
    std::string what;  // heads every failure message
    deconv::Op op = deconv::Op::GroupConvolutionBackpropData;
    DType dtype = DType::f32;
    int api = 0;  // 0: `call` on dense buffers; 1: a Plan, run twice; 2: strided views, through a Plan or `call`
    uint64_t seed = 0;
    std::vector<int64_t> in_shape, w_shape;  // the library's shapes
    std::vector<double> input, filter;       // dense values in those shapes
    deconv::Attributes attrs;
    std::optional<std::vector<int64_t>> shape_input;  // the op's output shape input
    deconv::ExecOptions exec;                         // Plan::create's, and the free functions'
    deconv::DataFormat format = deconv::DataFormat::NCX;  // what ShapeInfo must report
    int64_t groups = 1;                                   // likewise
    std::function<Expectation(const std::vector<double> &input)> expect;  // input: dense, in_shape
    LibraryCall call;
    // Strided views: each tensor's axes are laid out in a permuted memory order one time in this
    // many (channels-last cases mostly keep their channels innermost).
    int permute_one_in = 2;
};

// Runs the case through the library the way c.api says and compares with c.expect.
inline ::testing::AssertionResult run_and_check(const LibraryCase &c) {
    auto fail = [&]() { return ::testing::AssertionFailure() << c.what << "\n  "; };
    try {
        const Expectation e = c.expect(c.input);
        const auto &out_shape = e.result.shape.output_shape;
        const deconv::ShapeInfo info = deconv::infer_shape(c.op, c.in_shape, c.w_shape, c.attrs, c.shape_input);
        if (info.output_shape != out_shape || info.pads_begin != e.pads_begin || info.pads_end != e.pads_end)
            return fail() << "infer_shape gives " << vec_str(info.output_shape) << " pads "
                          << vec_str(info.pads_begin) << "/" << vec_str(info.pads_end) << ", expected "
                          << vec_str(out_shape) << " pads " << vec_str(e.pads_begin) << "/"
                          << vec_str(e.pads_end);
        if (info.groups != c.groups || info.data_format != c.format)
            return fail() << "infer_shape gives groups " << info.groups << ", data_format "
                          << format_str(info.data_format) << ", expected " << c.groups << ", "
                          << format_str(c.format);

        if (c.api == 0) {
            Buffer in(c.dtype, c.in_shape), w(c.dtype, c.w_shape), out(c.dtype, out_shape);
            fill(in, c.input);
            fill(w, c.filter);
            out.fill_bytes(0xCD);
            c.call(in.cview(), w.cview(), out.view());
            if (!out.guards_intact()) return fail() << "wrote outside the output buffer";
            auto r = compare_to_reference(c.dtype, read_all(out), e.result);
            if (!r) return fail() << r.message();
            return r;
        }
        if (c.api == 1) {
            const deconv::Plan plan =
                deconv::Plan::create(c.op, c.dtype, c.in_shape, c.w_shape, c.attrs, c.shape_input, c.exec);
            if (plan.shape().output_shape != out_shape)
                return fail() << "Plan::shape() " << vec_str(plan.shape().output_shape);
            if (plan.op() != c.op) return fail() << "Plan::op() is not the op it was created for";
            if (plan.macs() != e.result.macs)
                return fail() << "Plan::macs() " << plan.macs() << ", in-range terms " << e.result.macs;
            Buffer in(c.dtype, c.in_shape), w(c.dtype, c.w_shape), out(c.dtype, out_shape);
            fill(in, c.input);
            fill(w, c.filter);
            out.fill_bytes(0xCD);
            plan.run(in.data(), w.data(), out.data());
            if (!out.guards_intact()) return fail() << "wrote outside the output buffer";
            auto r = compare_to_reference(c.dtype, read_all(out), e.result);
            if (!r) return fail() << "first Plan::run: " << r.message();
            // Again on new input values, with the filter packed once (Plan::pack_filter) and the
            // caller's copy then overwritten (the packing must hold its own copy), into an output
            // poisoned anew: what the first run wrote, a zero tail included, must be written again.
            std::mt19937 rng(static_cast<uint32_t>(c.seed * 7 + 1));
            const auto input2 = random_values(c.dtype, in.count, rng);
            fill(in, input2);
            const Expectation e2 = c.expect(input2);
            const deconv::PackedFilter packed = plan.pack_filter(w.cview());
            w.fill_bytes(0x5A);
            out.fill_bytes(0x7B);
            plan.run(in.cview(), packed, out.view());
            r = compare_to_reference(c.dtype, read_all(out), e2.result);
            if (!r) return fail() << "second Plan::run (packed filter): " << r.message();
            return r;
        }
        // Strided views into larger buffers, possibly with permuted axis order.
        std::mt19937 rng(static_cast<uint32_t>(c.seed * 13 + 5));
        auto permute = [&] { return rng() % static_cast<unsigned>(c.permute_one_in) == 0; };
        const auto li = make_layout(c.in_shape, rng, permute());
        const auto lw = make_layout(c.w_shape, rng, permute());
        const auto lo = make_layout(out_shape, rng, permute());
        Buffer in(c.dtype, c.in_shape, li.span), w(c.dtype, c.w_shape, lw.span), out(c.dtype, out_shape, lo.span);
        fill_strided(in, c.in_shape, li.strides, c.input);
        fill_strided(w, c.w_shape, lw.strides, c.filter);
        out.fill_bytes(0xCD);
        const auto before = out.payload();
        const deconv::ConstTensorView iv = cview_of(in, c.in_shape, li.strides);
        const deconv::ConstTensorView wv = cview_of(w, c.w_shape, lw.strides);
        const deconv::TensorView ov{out.data(), c.dtype, out_shape, lo.strides};
        const bool use_plan = rng() % 2 == 0;
        if (use_plan)
            deconv::Plan::create(c.op, c.dtype, c.in_shape, c.w_shape, c.attrs, c.shape_input, c.exec).run(iv, wv, ov);
        else
            c.call(iv, wv, ov);
        if (!out.guards_intact()) return fail() << "wrote outside the output buffer";
        const auto read = read_strided(out, out_shape, lo, before);
        if (read.gap >= 0)
            return fail() << "wrote into a gap of the strided output view at element " << read.gap
                          << " (strides " << vec_str(lo.strides) << ")";
        auto r = compare_to_reference(c.dtype, read.values, e.result);
        if (!r)
            return fail() << (use_plan ? "Plan::run(views)" : "free function") << " in strides "
                          << vec_str(li.strides) << " w strides " << vec_str(lw.strides)
                          << " out strides " << vec_str(lo.strides) << ": " << r.message();
        return r;
    } catch (const deconv::Error &err) {
        return fail() << "deconv::Error: " << err.what();
    } catch (const std::exception &err) {
        return fail() << "exception: " << err.what();
    }
}

// A drawn case as the library sees it: its shapes and values in the case's format, the op's
// free function, and the reference (NCX) converted to that format.
inline LibraryCase library_case(const GenCase &g) {
    const bool fwd = g.op == CaseOp::Forward;
    const bool nxc = g.format == deconv::DataFormat::NXC;
    const std::vector<int64_t> ncx_in = fwd ? g.fp.input_shape : g.p.input_shape;
    LibraryCase c;
    c.what = describe(g);
    c.op = fwd ? deconv::Op::GroupConvolution : lib_op(g.p);
    c.dtype = g.dtype;
    c.api = g.api;
    c.seed = g.seed;
    c.in_shape = shape_in(g.format, ncx_in);
    c.w_shape = fwd ? g.fp.filter_shape : g.p.filter_shape;
    c.input = nxc ? ncx_to_nxc(g.input, ncx_in) : g.input;
    c.filter = g.filter;
    c.attrs = fwd ? to_lib_attrs(g.fp, g.format) : to_lib_attrs(g.p);
    c.attrs.data_format = g.format;
    if (!fwd) c.shape_input = g.p.output_shape;
    c.format = g.format;
    c.groups = fwd || g.p.grouped ? c.w_shape[0] : 1;
    c.expect = [g, ncx_in, nxc](const std::vector<double> &in) {
        const std::vector<double> in_ncx = nxc ? nxc_to_ncx(in, ncx_in) : in;
        const deconv_ref::Result r = g.op == CaseOp::Forward ? deconv_ref::compute_forward(g.fp, in_ncx, g.filter)
                                                             : deconv_ref::compute(g.p, in_ncx, g.filter);
        return Expectation{result_in(g.format, r), r.shape.pads_begin, r.shape.pads_end};
    };
    const deconv::Attributes attrs = c.attrs;
    c.exec = g.exec;
    c.call = [g, attrs](const deconv::ConstTensorView &in, const deconv::ConstTensorView &w,
                        const deconv::TensorView &out) {
        if (g.op == CaseOp::Forward)
            deconv::group_convolution(in, w, out, attrs, g.exec);
        else if (g.p.grouped)
            deconv::group_convolution_backprop_data(in, w, out, attrs, g.p.output_shape, g.exec);
        else
            deconv::convolution_backprop_data(in, w, out, attrs, g.p.output_shape, g.exec);
    };
    c.permute_one_in = nxc ? 4 : 2;
    return c;
}

inline ::testing::AssertionResult run_and_check(const GenCase &c) { return run_and_check(library_case(c)); }

// ---------------------------------------------------------------- sweep shards

// One shard of a seeded random sweep: the cases of one dtype and spatial rank, so that a failure
// names them and CTest runs shards in parallel.
struct Shard {
    DType dtype;
    int rank;
};
inline std::ostream &operator<<(std::ostream &os, const Shard &s) {
    return os << dt_str(s.dtype) << " rank " << s.rank;
}

// Every (dtype, rank 1..3) shard of the given dtypes (default: all).
inline std::vector<Shard> shards_of(const std::vector<DType> &dtypes = all_dtypes()) {
    std::vector<Shard> v;
    for (DType t : dtypes)
        for (int rank = 1; rank <= 3; rank++) v.push_back({t, rank});
    return v;
}

// GoogleTest parameter names: "f32_rank2".
inline std::string shard_name(const ::testing::TestParamInfo<Shard> &info) {
    return std::string(dt_str(info.param.dtype)) + "_rank" + std::to_string(info.param.rank);
}

}  // namespace deconv_test
