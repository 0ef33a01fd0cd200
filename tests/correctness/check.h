// Comparison of library output against the reference, with per-dtype tolerances, and the
// deterministic random problem generator of the sweep.
#pragma once

#include "test_support.h"

#include <cmath>
#include <limits>
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

struct GenCase {
    deconv_ref::Problem p;
    DType dtype = DType::f32;
    int api = 0;  // 0: free function, dense; 1: Plan; 2: strided views
    uint64_t seed = 0;
    std::vector<double> input, filter;  // already representable in dtype
};

inline std::string describe(const GenCase &c) {
    static const char *apis[] = {"free-function", "plan", "strided-views"};
    return deconv_ref::describe(c.p) + " dtype=" + dt_str(c.dtype) + " api=" + apis[c.api] +
           " seed=" + std::to_string(c.seed);
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

// One deterministic problem of the sweep.
inline GenCase make_case(DType t, int rank, int index) {
    GenCase c;
    c.dtype = t;
    c.seed = sweep_seed(t, rank, index);
    std::mt19937 rng(static_cast<uint32_t>(c.seed ^ (c.seed >> 32)));
    auto ri = [&](int64_t lo, int64_t hi) {
        return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    const bool big3 = rank == 3;
    // One case in five is "medium": rows long enough (>= 2 native vectors per stride phase) and
    // enough output channels per group for the kernels' full register tiles, not only the
    // narrow-row and few-channel paths that the small cases exercise.
    const bool medium = index % 5 == 3;
    deconv_ref::Problem &p = c.p;
    p.grouped = ri(0, 9) < 6;
    int64_t G = 1, cin, cout;
    if (p.grouped && ri(0, 3) == 0) {  // depthwise: C_IN = C_OUT = 1, many groups
        G = ri(3, big3 ? 6 : 12);
        cin = cout = 1;
    } else if (medium) {
        G = p.grouped ? ri(1, rank == 1 ? 3 : 2) : 1;
        cin = ri(1, rank == 1 ? 16 : rank == 2 ? 8 : 4);
        cout = ri(4, rank == 1 ? 12 : rank == 2 ? 10 : 9);
    } else {
        G = p.grouped ? ri(1, 4) : 1;
        cin = ri(1, big3 ? 2 : 3);
        cout = ri(1, big3 ? 2 : 3);
    }
    const int64_t N = ri(1, big3 || medium ? 2 : 3);
    p.input_shape = {N, G * cin};
    p.filter_shape = p.grouped ? std::vector<int64_t>{G, cin, cout} : std::vector<int64_t>{cin, cout};
    const int ap = static_cast<int>(ri(0, 9));
    p.auto_pad = ap < 4 ? deconv_ref::AutoPad::Explicit
                 : ap < 6 ? deconv_ref::AutoPad::SameUpper
                 : ap < 8 ? deconv_ref::AutoPad::SameLower
                          : deconv_ref::AutoPad::Valid;
    const bool with_output_shape = ri(0, 9) < 3;
    std::vector<int64_t> os;
    for (int a = 0; a < rank; a++) {
        const bool inner = a == rank - 1;
        int64_t X;
        if (medium && inner)
            X = ri(16, rank == 1 ? 80 : rank == 2 ? 48 : 40);
        else if (medium)
            X = ri(1, rank == 2 ? 6 : 3);
        else
            X = ri(1, rank == 1 ? 12 : rank == 2 ? 6 : 4);
        const int64_t K = ri(1, big3 ? 3 : 5);
        const int64_t d = ri(1, big3 ? 2 : 3);
        const int64_t s = ri(1, 4);
        const int64_t op = ri(0, 1) ? 0 : ri(0, s + 1);  // includes values >= stride
        const int64_t eff = (K - 1) * d + 1;
        const int64_t span = s * (X - 1) + eff;
        int64_t pb = ri(0, eff), pe = ri(0, eff);
        if (p.auto_pad == deconv_ref::AutoPad::Explicit && !with_output_shape) {
            // Keep the output non-empty.
            while (span - pb - pe + op < 1) (pe > 0 ? pe : pb)--;
        }
        p.input_shape.push_back(X);
        p.filter_shape.push_back(K);
        p.strides.push_back(s);
        p.dilations.push_back(d);
        p.pads_begin.push_back(pb);
        p.pads_end.push_back(pe);
        p.output_padding.push_back(op);
        // output_shape: anywhere from large pads down to a negative total padding.
        os.push_back(ri(std::max<int64_t>(1, span - 2 * eff - s), span + op + 3));
    }
    if (with_output_shape) p.output_shape = os;
    // Sometimes leave attributes at their defaults (empty vectors).
    auto all_eq = [](const std::vector<int64_t> &v, int64_t x) {
        return std::all_of(v.begin(), v.end(), [x](int64_t y) { return y == x; });
    };
    if (all_eq(p.strides, 1) && ri(0, 1)) p.strides.clear();
    if (all_eq(p.dilations, 1) && ri(0, 1)) p.dilations.clear();
    if (all_eq(p.output_padding, 0) && ri(0, 1)) p.output_padding.clear();
    if (all_eq(p.pads_begin, 0) && all_eq(p.pads_end, 0) && ri(0, 1)) {
        p.pads_begin.clear();
        p.pads_end.clear();
    }
    // API: 7 and 8 of every 10 through a Plan, 9 (and every third medium case) through strided
    // views, the rest through the free functions on dense buffers.
    const int k = static_cast<int>(index % 10);
    c.api = (k == 7 || k == 8) ? 1 : (k == 9 || (k == 3 && (index / 10) % 3 == 0)) ? 2 : 0;
    c.input = random_values(t, deconv_ref::product(p.input_shape), rng);
    c.filter = random_values(t, deconv_ref::product(p.filter_shape), rng);
    return c;
}

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

// Runs the case through the library the way c.api says and compares with the reference.
inline ::testing::AssertionResult run_and_check(const GenCase &c) {
    const deconv_ref::Problem &p = c.p;
    const deconv_ref::Result ref = deconv_ref::compute(p, c.input, c.filter);
    const auto attrs = to_lib_attrs(p);
    const deconv::Op op = lib_op(p);
    auto fail = [&]() { return ::testing::AssertionFailure() << describe(c) << "\n  "; };
    try {
        const deconv::ShapeInfo info =
            deconv::infer_shape(op, p.input_shape, p.filter_shape, attrs, p.output_shape);
        if (info.output_shape != ref.shape.output_shape || info.pads_begin != ref.shape.pads_begin ||
            info.pads_end != ref.shape.pads_end)
            return fail() << "infer_shape gives " << vec_str(info.output_shape) << " pads "
                          << vec_str(info.pads_begin) << "/" << vec_str(info.pads_end)
                          << ", reference " << vec_str(ref.shape.output_shape) << " pads "
                          << vec_str(ref.shape.pads_begin) << "/" << vec_str(ref.shape.pads_end);

        if (c.api == 0) {
            Buffer in(c.dtype, p.input_shape), w(c.dtype, p.filter_shape),
                out(c.dtype, ref.shape.output_shape);
            fill(in, c.input);
            fill(w, c.filter);
            out.fill_bytes(0xCD);
            run_free(p, in.cview(), w.cview(), out.view());
            if (!out.guards_intact()) return fail() << "wrote outside the output buffer";
            auto r = compare_to_reference(c.dtype, read_all(out), ref);
            if (!r) return fail() << r.message();
            return r;
        }
        if (c.api == 1) {
            const deconv::Plan plan = deconv::Plan::create(op, c.dtype, p.input_shape,
                                                           p.filter_shape, attrs, p.output_shape);
            if (plan.shape().output_shape != ref.shape.output_shape)
                return fail() << "Plan::shape() " << vec_str(plan.shape().output_shape);
            Buffer in(c.dtype, p.input_shape), w(c.dtype, p.filter_shape),
                out(c.dtype, ref.shape.output_shape);
            fill(in, c.input);
            fill(w, c.filter);
            out.fill_bytes(0xCD);
            plan.run(in.data(), w.data(), out.data());
            if (!out.guards_intact()) return fail() << "wrote outside the output buffer";
            auto r = compare_to_reference(c.dtype, read_all(out), ref);
            if (!r) return fail() << "first Plan::run: " << r.message();
            // Run again on new input values, into the output that holds the first result, with
            // the filter packed once (Plan::pack_filter) and the caller's copy then overwritten:
            // the packing must hold its own copy.
            std::mt19937 rng(static_cast<uint32_t>(c.seed * 7 + 1));
            const auto input2 = random_values(c.dtype, in.count, rng);
            fill(in, input2);
            const deconv_ref::Result ref2 = deconv_ref::compute(p, input2, c.filter);
            const deconv::PackedFilter packed = plan.pack_filter(w.cview());
            w.fill_bytes(0x5A);
            plan.run(in.cview(), packed, out.view());
            r = compare_to_reference(c.dtype, read_all(out), ref2);
            if (!r) return fail() << "second Plan::run (packed filter): " << r.message();
            return r;
        }
        // Strided views into larger buffers, possibly with permuted axis order.
        std::mt19937 rng(static_cast<uint32_t>(c.seed * 13 + 5));
        const auto li = make_layout(p.input_shape, rng, rng() % 2 == 0);
        const auto lw = make_layout(p.filter_shape, rng, rng() % 2 == 0);
        const auto lo = make_layout(ref.shape.output_shape, rng, rng() % 2 == 0);
        Buffer in(c.dtype, p.input_shape, li.span), w(c.dtype, p.filter_shape, lw.span),
            out(c.dtype, ref.shape.output_shape, lo.span);
        fill_strided(in, p.input_shape, li.strides, c.input);
        fill_strided(w, p.filter_shape, lw.strides, c.filter);
        out.fill_bytes(0xCD);
        const auto before = out.payload();
        const deconv::ConstTensorView iv = cview_of(in, p.input_shape, li.strides);
        const deconv::ConstTensorView wv = cview_of(w, p.filter_shape, lw.strides);
        const deconv::TensorView ov{out.data(), c.dtype, ref.shape.output_shape, lo.strides};
        const bool use_plan = rng() % 2 == 0;
        if (use_plan)
            deconv::Plan::create(op, c.dtype, p.input_shape, p.filter_shape, attrs, p.output_shape)
                .run(iv, wv, ov);
        else
            run_free(p, iv, wv, ov);
        if (!out.guards_intact()) return fail() << "wrote outside the output buffer";
        const auto read = read_strided(out, ref.shape.output_shape, lo, before);
        if (read.gap >= 0)
            return fail() << "wrote into a gap of the strided output view at element " << read.gap
                              << " (strides " << vec_str(lo.strides) << ")";
        auto r = compare_to_reference(c.dtype, read.values, ref);
        if (!r)
            return fail() << (use_plan ? "Plan::run(views)" : "free function") << " in strides "
                          << vec_str(li.strides) << " w strides " << vec_str(lw.strides)
                          << " out strides " << vec_str(lo.strides) << ": " << r.message();
        return r;
    } catch (const deconv::Error &e) {
        return fail() << "deconv::Error: " << e.what();
    } catch (const std::exception &e) {
        return fail() << "exception: " << e.what();
    }
}

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
