// The quantized reference. See quantized_reference.h. Written from deconv.h's contract only; no
// library code. The f32 steps are done on float variables, one rounding per operation: this file
// is compiled with -ffp-contract=off (tests/reference/CMakeLists.txt) so that the compiler fuses
// none of them.
#include "quantized_reference.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace deconv_ref {

namespace {

[[noreturn]] void bad(const std::string &what) {
    throw std::invalid_argument("quantized reference: " + what);
}

// Coordinates of a flat C-order index.
std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t> &dims) {
    std::vector<int64_t> c(dims.size());
    for (size_t i = dims.size(); i-- > 0;) {
        c[i] = flat % dims[i];
        flat /= dims[i];
    }
    return c;
}

// The spacing of the format's values at |x| (f32: 24 significant bits; f64: 53).
template <class T> double ulp_of(double x) {
    const int digits = std::numeric_limits<T>::digits;
    const int emin = std::numeric_limits<T>::min_exponent - 1;  // exponent of the smallest normal
    x = std::fabs(x);
    int e = x == 0.0 ? emin : std::ilogb(x);
    if (e < emin) e = emin;
    return std::ldexp(1.0, e - (digits - 1));
}

double eval(QEltwise e, double a, double b, double v) {
    switch (e) {
    case QEltwise::relu: return v > 0 ? v : a * v;
    case QEltwise::clip: return std::min(std::max(v, a), b);
    case QEltwise::linear: return a * v + b;
    case QEltwise::bounded_relu: return std::min(std::max(v, 0.0), a);
    case QEltwise::tanh: return std::tanh(v);
    case QEltwise::logistic: return 1.0 / (1.0 + std::exp(-v));
    case QEltwise::abs: return std::fabs(v);
    case QEltwise::square: return v * v;
    case QEltwise::elu: return v > 0 ? v : a * std::expm1(v);
    case QEltwise::swish: return v / (1.0 + std::exp(-a * v));
    case QEltwise::gelu_tanh: {
        const double k = 0.79788456080286535588;  // sqrt(2 / pi)
        return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
    }
    case QEltwise::gelu_erf: return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case QEltwise::hardswish: return v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0;
    }
    bad("unknown eltwise");
}

// One eltwise step in the arithmetic T (float: the f32 layers), with its uncertainty `tol`
// carried and widened where the contract leaves the rounding open.
template <class T> T eltwise_step(const QPostOp &op, T t, double &tol) {
    const T a = static_cast<T>(op.alpha), b = static_cast<T>(op.beta);
    T r;
    double slope = 1.0;  // bound of |f'| near t, for carrying tol
    double own = 0.0;    // uncertainty this step adds
    switch (op.alg) {
    case QEltwise::relu:
        r = t > 0 ? t : a * t;
        slope = std::max(1.0, std::fabs(static_cast<double>(a)));
        break;
    case QEltwise::clip: r = std::min(std::max(t, a), b); break;
    case QEltwise::linear: {
        const T prod = a * t;
        r = prod + b;
        slope = std::fabs(static_cast<double>(a));
        // A fused multiply-add rounds once instead of twice; the same result where the product
        // is exact (fma(a, t, -prod) is the product's rounding error, exactly).
        if (std::fma(a, t, -prod) != 0) own = ulp_of<T>(prod) + ulp_of<T>(r);
        break;
    }
    case QEltwise::bounded_relu: r = std::min(std::max(t, T(0)), a); break;
    case QEltwise::abs: r = std::fabs(t); break;
    case QEltwise::square:
        r = t * t;
        slope = 2.0 * std::fabs(static_cast<double>(t)) + tol;
        break;
    default: {
        // The remaining ones go through exp / tanh / erf (or, for hardswish, three roundings in
        // an order the contract does not fix): evaluated in double, rounded once to T.
        const double x = static_cast<double>(t);
        r = static_cast<T>(eval(op.alg, a, b, x));
        const double h = std::max(tol, 1e-3);
        const double f0 = eval(op.alg, a, b, x);
        slope = 2.0 * std::max(std::fabs(eval(op.alg, a, b, x + h) - f0),
                               std::fabs(f0 - eval(op.alg, a, b, x - h))) / h + 0.01;
        // A few ulps of the result for the library's own exp/tanh/erf and its order of
        // operations, plus, where the formula cancels (1 + tanh, 1 + erf, e^v - 1), two ulps of
        // 1 times the factor in front of it (tanh and erf round their values near -1 to a
        // quarter ulp of 1 or so).
        own = 8.0 * ulp_of<T>(r);
        double cancel = 0.0;
        switch (op.alg) {
        case QEltwise::tanh: cancel = 1.0; break;
        case QEltwise::elu: cancel = std::fabs(static_cast<double>(a)); break;
        case QEltwise::gelu_tanh:
        case QEltwise::gelu_erf: cancel = 0.5 * std::fabs(x); break;
        default: break;
        }
        own += 2.0 * ulp_of<T>(1.0) * cancel;
        break;
    }
    }
    tol = tol * slope + own;
    return r;
}

template <class T>
void epilogue_in(const Resolved &r, const std::vector<double> &acc, const QEpilogue &e, DT dst,
                 const std::vector<double> *dst_old, QResult &out) {
    const int64_t channels = r.groups * r.c_out;
    const int64_t plane = product(r.out_spatial);
    const bool int_dst = !dt_is_float(dst);
    out.value.resize(acc.size());
    out.tol.resize(acc.size());
    out.stored.resize(acc.size());
    for (size_t i = 0; i < acc.size(); i++) {
        const int64_t c = (static_cast<int64_t>(i) / plane) % channels;
        double tol = 0.0;
        T v = static_cast<T>(acc[i]);
        if (!e.bias.empty()) v = v + static_cast<T>(e.bias[c]);
        if (!e.scales.empty()) v = static_cast<T>(e.scales.size() == 1 ? e.scales[0] : e.scales[c]) * v;
        for (const QPostOp &op : e.post_ops) {
            if (op.is_sum) {
                if (!dst_old) bad("a sum post-op needs the earlier output");
                const T d = static_cast<T>((*dst_old)[i]) - static_cast<T>(op.zero_point);
                const T sc = static_cast<T>(op.scale);
                const T s = sc * d;
                v = v + s;
                // scale * d + v may be one fused operation: the same result where s is exact
                if (std::fma(sc, d, -s) != 0) tol += ulp_of<T>(s) + ulp_of<T>(v);
            } else {
                v = eltwise_step<T>(op, v, tol);
            }
        }
        if (int_dst) v = v + static_cast<T>(e.dst_zero_point);
        out.value[i] = static_cast<double>(v);
        out.tol[i] = tol;
        out.stored[i] = q_store(dst, static_cast<double>(v));
    }
}

}  // namespace

QAccumulation accumulate_quantized(const Problem &p, const std::vector<int32_t> &src,
                                   const std::vector<int32_t> &weights, int32_t src_zero_point) {
    QAccumulation q;
    q.shape = resolve(p);
    const Resolved &r = q.shape;
    if (static_cast<int64_t>(src.size()) != product(p.input_shape)) bad("src size");
    if (static_cast<int64_t>(weights.size()) != product(p.filter_shape)) bad("weights size");
    const size_t D = static_cast<size_t>(r.rank);
    const int64_t X = product(r.in_spatial), K = product(r.kernel), Y = product(r.out_spatial);
    q.acc.assign(static_cast<size_t>(product(r.output_shape)), 0);
    q.terms.assign(q.acc.size(), 0);
    for (int64_t n = 0; n < r.n; n++)
        for (int64_t g = 0; g < r.groups; g++)
            for (int64_t ci = 0; ci < r.c_in; ci++)
                for (int64_t xi = 0; xi < X; xi++) {
                    const auto x = unflatten(xi, r.in_spatial);
                    const int64_t s =
                        static_cast<int64_t>(src[static_cast<size_t>(((n * r.groups + g) * r.c_in + ci) * X + xi)]) -
                        src_zero_point;
                    for (int64_t ki = 0; ki < K; ki++) {
                        const auto k = unflatten(ki, r.kernel);
                        int64_t y_flat = 0;
                        bool inside = true;
                        for (size_t a = 0; a < D; a++) {
                            const int64_t y = x[a] * r.strides[a] - r.pads_begin[a] + k[a] * r.dilations[a];
                            if (y < 0 || y >= r.out_spatial[a]) {
                                inside = false;
                                break;
                            }
                            y_flat = y_flat * r.out_spatial[a] + y;
                        }
                        if (!inside) continue;
                        for (int64_t co = 0; co < r.c_out; co++) {
                            const int64_t w = weights[static_cast<size_t>(((g * r.c_in + ci) * r.c_out + co) * K + ki)];
                            const size_t o = static_cast<size_t>((n * r.groups * r.c_out + g * r.c_out + co) * Y + y_flat);
                            q.acc[o] += s * w;
                            q.terms[o] += 1;
                        }
                    }
                }
    return q;
}

const char *qeltwise_name(QEltwise e) {
    switch (e) {
    case QEltwise::relu: return "relu";
    case QEltwise::clip: return "clip";
    case QEltwise::linear: return "linear";
    case QEltwise::bounded_relu: return "bounded_relu";
    case QEltwise::tanh: return "tanh";
    case QEltwise::logistic: return "logistic";
    case QEltwise::abs: return "abs";
    case QEltwise::square: return "square";
    case QEltwise::elu: return "elu";
    case QEltwise::swish: return "swish";
    case QEltwise::gelu_tanh: return "gelu_tanh";
    case QEltwise::gelu_erf: return "gelu_erf";
    case QEltwise::hardswish: return "hardswish";
    }
    return "?";
}

std::vector<QEltwise> all_qeltwise() {
    return {QEltwise::relu,     QEltwise::clip,  QEltwise::linear, QEltwise::bounded_relu,
            QEltwise::tanh,     QEltwise::logistic, QEltwise::abs, QEltwise::square,
            QEltwise::elu,      QEltwise::swish, QEltwise::gelu_tanh, QEltwise::gelu_erf,
            QEltwise::hardswish};
}

bool qeltwise_transcendental(QEltwise e) {
    switch (e) {
    case QEltwise::tanh:
    case QEltwise::logistic:
    case QEltwise::elu:
    case QEltwise::swish:
    case QEltwise::gelu_tanh:
    case QEltwise::gelu_erf: return true;
    default: return false;
    }
}

double qeltwise_eval(QEltwise e, double alpha, double beta, double v) { return eval(e, alpha, beta, v); }

double q_store(DT dst, double v) {
    if (dt_is_float(dst)) return round_to_dtype(dst, v);
    if (std::isnan(v)) bad("NaN stored to an integer dtype");
    const double r = std::nearbyint(v);  // the default rounding mode: half to even
    return std::min(std::max(r, dt_lowest(dst)), dt_max(dst));
}

QResult apply_epilogue(const Resolved &r, const std::vector<double> &acc, const QEpilogue &e, DT dst,
                       bool f64_math, const std::vector<double> *dst_old) {
    const int64_t channels = r.groups * r.c_out;
    if (static_cast<int64_t>(acc.size()) != product(r.output_shape)) bad("accumulator size");
    if (!e.scales.empty() && e.scales.size() != 1 && static_cast<int64_t>(e.scales.size()) != channels)
        bad("scale count");
    if (!e.bias.empty() && static_cast<int64_t>(e.bias.size()) != channels) bad("bias count");
    if (dst_old && dst_old->size() != acc.size()) bad("earlier output size");
    QResult out;
    if (f64_math)
        epilogue_in<double>(r, acc, e, dst, dst_old, out);
    else
        epilogue_in<float>(r, acc, e, dst, dst_old, out);
    return out;
}

}  // namespace deconv_ref
