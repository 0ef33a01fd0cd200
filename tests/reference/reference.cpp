// The naive reference. See reference.h. Written from the spec text only; no library code.
#include "reference.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace deconv_ref {

namespace {

std::string vec_str(const std::vector<int64_t> &v) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < v.size(); i++) os << (i ? "," : "") << v[i];
    os << "]";
    return os.str();
}

[[noreturn]] void bad(const std::string &what) { throw std::invalid_argument("reference: " + what); }

// floor(a / 2) for any sign.
int64_t floor_half(int64_t a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

std::vector<int64_t> attr_or(const std::vector<int64_t> &v, size_t rank, int64_t dflt,
                             const char *name) {
    if (v.empty()) return std::vector<int64_t>(rank, dflt);
    if (v.size() != rank) bad(std::string(name) + " has the wrong length");
    return v;
}

// Dense C-order strides of a shape.
std::vector<int64_t> dense_strides(const std::vector<int64_t> &shape) {
    std::vector<int64_t> st(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) st[i - 1] = st[i] * shape[i];
    return st;
}

// Decodes a flat index into coordinates of `dims` (C order).
void decode(int64_t flat, const std::vector<int64_t> &dims, int64_t *coords) {
    for (size_t i = dims.size(); i-- > 0;) {
        coords[i] = flat % dims[i];
        flat /= dims[i];
    }
}

// Rounds to a binary format with p significant bits, minimum normal exponent emin and largest
// finite value maxval, round to nearest even (the default rounding mode of nearbyint).
double round_to_precision(double x, int p, int emin, double maxval) {
    if (!std::isfinite(x) || x == 0.0) return x;
    int e = std::ilogb(x);
    if (e < emin) e = emin;
    const double q = std::ldexp(1.0, e - (p - 1));  // spacing of the format at x
    const double r = std::nearbyint(x / q) * q;      // both operations exact (powers of two)
    if (std::fabs(r) > maxval) return std::copysign(std::numeric_limits<double>::infinity(), x);
    return r;
}

constexpr double kF16Max = 65504.0;
const double kBf16Max = std::ldexp(255.0, 120);  // (2 - 2^-7) * 2^127 = 0x7F7F

}  // namespace

const char *auto_pad_str(AutoPad a) {
    switch (a) {
    case AutoPad::Explicit: return "explicit";
    case AutoPad::SameUpper: return "same_upper";
    case AutoPad::SameLower: return "same_lower";
    case AutoPad::Valid: return "valid";
    }
    return "?";
}

int64_t product(const std::vector<int64_t> &v) {
    int64_t p = 1;
    for (int64_t x : v) p *= x;
    return p;
}

std::string describe(const Problem &p) {
    std::ostringstream os;
    os << (p.grouped ? "GCBD" : "CBD") << " in=" << vec_str(p.input_shape)
       << " w=" << vec_str(p.filter_shape) << " s=" << vec_str(p.strides)
       << " pb=" << vec_str(p.pads_begin) << " pe=" << vec_str(p.pads_end)
       << " d=" << vec_str(p.dilations) << " op=" << vec_str(p.output_padding)
       << " auto_pad=" << auto_pad_str(p.auto_pad);
    if (p.output_shape) os << " output_shape=" << vec_str(*p.output_shape);
    return os.str();
}

AxisPads resolve_axis(int64_t x, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                      int64_t output_padding, AutoPad auto_pad,
                      std::optional<int64_t> output_shape) {
    AxisPads a{};
    const int64_t span = s * (x - 1) + (k - 1) * d + 1;
    if (output_shape) {
        const int64_t total = span - *output_shape + output_padding;
        if (auto_pad != AutoPad::SameUpper) {
            a.raw_begin = floor_half(total);
            a.raw_end = total - a.raw_begin;
        } else {
            a.raw_end = floor_half(total);
            a.raw_begin = total - a.raw_end;
        }
        a.out = *output_shape;
    } else if (auto_pad != AutoPad::Explicit) {
        a.raw_begin = a.raw_end = 0;
        a.out = span + output_padding;
    } else {
        a.raw_begin = pb;
        a.raw_end = pe;
        a.out = span - pb - pe + output_padding;
    }
    a.begin = a.raw_begin < 0 ? 0 : a.raw_begin;
    a.end = a.raw_end < 0 ? 0 : a.raw_end;
    return a;
}

Resolved resolve(const Problem &p) {
    Resolved r;
    const size_t in_rank = p.input_shape.size();
    if (in_rank < 3 || in_rank > 5) bad("input rank must be 3..5, got " + vec_str(p.input_shape));
    const size_t D = in_rank - 2;
    const size_t w_rank = D + (p.grouped ? 3 : 2);
    if (p.filter_shape.size() != w_rank) bad("filter rank mismatch " + vec_str(p.filter_shape));
    for (int64_t v : p.input_shape)
        if (v < 1) bad("input dims must be positive");
    for (int64_t v : p.filter_shape)
        if (v < 1) bad("filter dims must be positive");
    r.rank = static_cast<int64_t>(D);
    r.n = p.input_shape[0];
    const size_t o = p.grouped ? 1 : 0;
    r.groups = p.grouped ? p.filter_shape[0] : 1;
    r.c_in = p.filter_shape[o];
    r.c_out = p.filter_shape[o + 1];
    if (p.input_shape[1] != r.groups * r.c_in) bad("channel mismatch");
    r.in_spatial.assign(p.input_shape.begin() + 2, p.input_shape.end());
    r.kernel.assign(p.filter_shape.begin() + o + 2, p.filter_shape.end());
    r.strides = attr_or(p.strides, D, 1, "strides");
    r.dilations = attr_or(p.dilations, D, 1, "dilations");
    const auto pb = attr_or(p.pads_begin, D, 0, "pads_begin");
    const auto pe = attr_or(p.pads_end, D, 0, "pads_end");
    r.output_padding = attr_or(p.output_padding, D, 0, "output_padding");
    if (p.output_shape && p.output_shape->size() != D) bad("output_shape has the wrong length");
    for (size_t i = 0; i < D; i++) {
        if (r.strides[i] < 1) bad("strides must be positive");
        if (r.dilations[i] < 1) bad("dilations must be positive");
        if (r.output_padding[i] < 0) bad("output_padding must be non-negative");
        if (p.auto_pad == AutoPad::Explicit && !p.output_shape && (pb[i] < 0 || pe[i] < 0))
            bad("pads must be non-negative");
        std::optional<int64_t> os;
        if (p.output_shape) {
            os = (*p.output_shape)[i];
            if (*os < 1) bad("output_shape must be positive");
        }
        const AxisPads a = resolve_axis(r.in_spatial[i], r.kernel[i], r.strides[i], r.dilations[i],
                                        pb[i], pe[i], r.output_padding[i], p.auto_pad, os);
        if (a.out < 1) bad("output size is not positive");
        r.pads_begin.push_back(a.begin);
        r.pads_end.push_back(a.end);
        r.raw_pads_begin.push_back(a.raw_begin);
        r.raw_pads_end.push_back(a.raw_end);
        r.out_spatial.push_back(a.out);
    }
    r.output_shape = {r.n, r.groups * r.c_out};
    r.output_shape.insert(r.output_shape.end(), r.out_spatial.begin(), r.out_spatial.end());
    return r;
}

Result compute(const Problem &p, const std::vector<double> &input,
               const std::vector<double> &filter) {
    Result res;
    res.shape = resolve(p);
    const Resolved &r = res.shape;
    if (static_cast<int64_t>(input.size()) != product(p.input_shape)) bad("input size");
    if (static_cast<int64_t>(filter.size()) != product(p.filter_shape)) bad("filter size");
    const int64_t out_count = product(r.output_shape);
    res.output.assign(out_count, 0.0);
    res.abs_sum.assign(out_count, 0.0);
    res.terms.assign(out_count, 0);

    const size_t D = static_cast<size_t>(r.rank);
    const int64_t X = product(r.in_spatial), K = product(r.kernel), Y = product(r.out_spatial);
    const auto y_strides = dense_strides(r.out_spatial);

    // Which output position each (input position, tap) pair scatters to, when it lands inside
    // the output: the same for every image, group and channel pair, so found once. (Walking the
    // spatial axes per multiply-add made this loop most of the test suite's time under qemu.)
    struct Hit {
        int64_t xi, ki, y_flat;
    };
    std::vector<Hit> hits;
    std::vector<int64_t> xc(D), kc(D);
    for (int64_t xi = 0; xi < X; xi++) {
        decode(xi, r.in_spatial, xc.data());
        for (int64_t ki = 0; ki < K; ki++) {
            decode(ki, r.kernel, kc.data());
            int64_t y_flat = 0;
            bool inside = true;
            for (size_t a = 0; a < D && inside; a++) {
                const int64_t y = xc[a] * r.strides[a] - r.pads_begin[a] + kc[a] * r.dilations[a];
                inside = y >= 0 && y < r.out_spatial[a];
                y_flat += y * y_strides[a];
            }
            if (inside) hits.push_back({xi, ki, y_flat});
        }
    }

    // Every output element sums its terms in the order (ci, x, k), as a loop over x then k
    // inside ci would.
    for (int64_t n = 0; n < r.n; n++)
        for (int64_t g = 0; g < r.groups; g++)
            for (int64_t ci = 0; ci < r.c_in; ci++) {
                const double *in = input.data() + ((n * r.groups + g) * r.c_in + ci) * X;
                for (int64_t co = 0; co < r.c_out; co++) {
                    const double *w = filter.data() + ((g * r.c_in + ci) * r.c_out + co) * K;
                    const int64_t out_base = (n * r.groups * r.c_out + g * r.c_out + co) * Y;
                    double *out = res.output.data() + out_base, *abs_sum = res.abs_sum.data() + out_base;
                    for (const Hit &h : hits) {
                        const double t = in[h.xi] * w[h.ki];
                        out[h.y_flat] += t;
                        abs_sum[h.y_flat] += std::fabs(t);
                    }
                }
            }
    // Terms per output element: c_in per hit on it, in every image and output channel.
    std::vector<int32_t> hit_count(Y, 0);
    for (const Hit &h : hits) hit_count[h.y_flat] += static_cast<int32_t>(r.c_in);
    for (int64_t plane = 0; plane < r.n * r.groups * r.c_out; plane++)
        std::copy(hit_count.begin(), hit_count.end(), res.terms.begin() + plane * Y);
    res.macs = r.n * r.groups * r.c_in * r.c_out * static_cast<int64_t>(hits.size());
    return res;
}

double gather_point(const Resolved &r, const std::vector<int64_t> &out_index,
                    const std::function<double(int64_t)> &in_at,
                    const std::function<double(int64_t)> &w_at, double *abs_sum) {
    const size_t D = static_cast<size_t>(r.rank);
    if (out_index.size() != D + 2) bad("gather_point: index rank");
    const int64_t n = out_index[0];
    const int64_t g = out_index[1] / r.c_out, co = out_index[1] % r.c_out;
    const int64_t K = product(r.kernel);
    std::vector<int64_t> k(D);
    double sum = 0.0, asum = 0.0;
    for (int64_t ci = 0; ci < r.c_in; ci++) {
        for (int64_t ki = 0; ki < K; ki++) {
            decode(ki, r.kernel, k.data());
            // Input flat index: [n, g*C_IN+ci, x...]
            int64_t in_flat = n * r.groups * r.c_in + g * r.c_in + ci;
            bool ok = true;
            for (size_t a = 0; a < D; a++) {
                const int64_t t = out_index[2 + a] + r.pads_begin[a] - k[a] * r.dilations[a];
                if (t < 0 || t % r.strides[a] != 0) {
                    ok = false;
                    break;
                }
                const int64_t x = t / r.strides[a];
                if (x >= r.in_spatial[a]) {
                    ok = false;
                    break;
                }
                in_flat = in_flat * r.in_spatial[a] + x;
            }
            if (!ok) continue;
            const int64_t w_flat = ((g * r.c_in + ci) * r.c_out + co) * K + ki;
            const double t = in_at(in_flat) * w_at(w_flat);
            sum += t;
            asum += std::fabs(t);
        }
    }
    if (abs_sum) *abs_sum = asum;
    return sum;
}

// ---------------------------------------------------------------- the forward op

std::string describe(const ForwardProblem &p) {
    std::ostringstream os;
    os << "GC in=" << vec_str(p.input_shape) << " w=" << vec_str(p.filter_shape)
       << " s=" << vec_str(p.strides) << " pb=" << vec_str(p.pads_begin)
       << " pe=" << vec_str(p.pads_end) << " d=" << vec_str(p.dilations)
       << " auto_pad=" << auto_pad_str(p.auto_pad);
    return os.str();
}

ForwardAxis resolve_forward_axis(int64_t x, int64_t k, int64_t s, int64_t d, int64_t pb,
                                 int64_t pe, AutoPad auto_pad) {
    if (x < 1 || k < 1 || s < 1 || d < 1) bad("forward axis: sizes must be positive");
    const int64_t eff = d * (k - 1) + 1;  // extent of the dilated kernel
    ForwardAxis a{};
    switch (auto_pad) {
    case AutoPad::Explicit:
        if (pb < 0 || pe < 0) bad("pads must be non-negative");
        a.begin = pb;
        a.end = pe;
        break;
    case AutoPad::Valid:
        a.begin = a.end = 0;
        break;
    case AutoPad::SameUpper:
    case AutoPad::SameLower: {
        const int64_t y = (x + s - 1) / s;  // ceil(X / s)
        int64_t total = (y - 1) * s + eff - x;
        if (total < 0) total = 0;
        if (auto_pad == AutoPad::SameUpper) {
            a.begin = total / 2;
            a.end = total - a.begin;
        } else {
            a.end = total / 2;
            a.begin = total - a.end;
        }
        break;
    }
    }
    // Y = floor((X + pb + pe - eff) / s) + 1; a negative numerator means no output position.
    const int64_t num = x + a.begin + a.end - eff;
    if (num < 0) bad("forward output size is not positive");
    a.out = num / s + 1;
    return a;
}

Resolved resolve_forward(const ForwardProblem &p) {
    Resolved r;
    const size_t in_rank = p.input_shape.size();
    if (in_rank < 3 || in_rank > 5) bad("input rank must be 3..5, got " + vec_str(p.input_shape));
    const size_t D = in_rank - 2;
    if (p.filter_shape.size() != D + 3) bad("filter rank mismatch " + vec_str(p.filter_shape));
    for (int64_t v : p.input_shape)
        if (v < 1) bad("input dims must be positive");
    for (int64_t v : p.filter_shape)
        if (v < 1) bad("filter dims must be positive");
    r.rank = static_cast<int64_t>(D);
    r.n = p.input_shape[0];
    r.groups = p.filter_shape[0];
    r.c_out = p.filter_shape[1];
    r.c_in = p.filter_shape[2];
    if (p.input_shape[1] != r.groups * r.c_in) bad("channel mismatch");
    r.in_spatial.assign(p.input_shape.begin() + 2, p.input_shape.end());
    r.kernel.assign(p.filter_shape.begin() + 3, p.filter_shape.end());
    r.strides = attr_or(p.strides, D, 1, "strides");
    r.dilations = attr_or(p.dilations, D, 1, "dilations");
    const auto pb = attr_or(p.pads_begin, D, 0, "pads_begin");
    const auto pe = attr_or(p.pads_end, D, 0, "pads_end");
    r.output_padding.assign(D, 0);
    for (size_t i = 0; i < D; i++) {
        const ForwardAxis a = resolve_forward_axis(r.in_spatial[i], r.kernel[i], r.strides[i],
                                                   r.dilations[i], pb[i], pe[i], p.auto_pad);
        r.pads_begin.push_back(a.begin);
        r.pads_end.push_back(a.end);
        r.raw_pads_begin.push_back(a.begin);
        r.raw_pads_end.push_back(a.end);
        r.out_spatial.push_back(a.out);
    }
    r.output_shape = {r.n, r.groups * r.c_out};
    r.output_shape.insert(r.output_shape.end(), r.out_spatial.begin(), r.out_spatial.end());
    return r;
}

Result compute_forward(const ForwardProblem &p, const std::vector<double> &input,
                       const std::vector<double> &filter) {
    Result res;
    res.shape = resolve_forward(p);
    const Resolved &r = res.shape;
    if (static_cast<int64_t>(input.size()) != product(p.input_shape)) bad("input size");
    if (static_cast<int64_t>(filter.size()) != product(p.filter_shape)) bad("filter size");
    const size_t D = static_cast<size_t>(r.rank);
    const int64_t X = product(r.in_spatial), K = product(r.kernel), Y = product(r.out_spatial);
    const auto x_strides = dense_strides(r.in_spatial);
    const int64_t out_count = product(r.output_shape);
    res.output.assign(out_count, 0.0);
    res.abs_sum.assign(out_count, 0.0);
    res.terms.assign(out_count, 0);

    std::vector<int64_t> yc(D), kc(D);
    for (int64_t n = 0; n < r.n; n++)
        for (int64_t g = 0; g < r.groups; g++)
            for (int64_t co = 0; co < r.c_out; co++)
                for (int64_t yi = 0; yi < Y; yi++) {
                    decode(yi, r.out_spatial, yc.data());
                    const int64_t o = ((n * r.groups + g) * r.c_out + co) * Y + yi;
                    double sum = 0.0, asum = 0.0;
                    int32_t terms = 0;
                    for (int64_t ci = 0; ci < r.c_in; ci++) {
                        const int64_t in_base = ((n * r.groups + g) * r.c_in + ci) * X;
                        const int64_t w_base = ((g * r.c_out + co) * r.c_in + ci) * K;
                        for (int64_t ki = 0; ki < K; ki++) {
                            decode(ki, r.kernel, kc.data());
                            int64_t x_flat = 0;
                            bool inside = true;
                            for (size_t a = 0; a < D; a++) {
                                const int64_t x = yc[a] * r.strides[a] + kc[a] * r.dilations[a] -
                                                  r.pads_begin[a];
                                if (x < 0 || x >= r.in_spatial[a]) {
                                    inside = false;
                                    break;
                                }
                                x_flat += x * x_strides[a];
                            }
                            if (!inside) continue;
                            const double t = input[in_base + x_flat] * filter[w_base + ki];
                            sum += t;
                            asum += std::fabs(t);
                            terms++;
                        }
                    }
                    res.output[o] = sum;
                    res.abs_sum[o] = asum;
                    res.terms[o] = terms;
                    res.macs += terms;
                }
    return res;
}

// ---------------------------------------------------------------- element types

const char *dt_name(DT t) {
    switch (t) {
    case DT::f32: return "f32";
    case DT::f16: return "f16";
    case DT::bf16: return "bf16";
    case DT::f64: return "f64";
    case DT::i8: return "i8";
    case DT::u8: return "u8";
    case DT::i32: return "i32";
    }
    return "?";
}

size_t dt_size(DT t) {
    switch (t) {
    case DT::f32: return 4;
    case DT::f16: return 2;
    case DT::bf16: return 2;
    case DT::f64: return 8;
    case DT::i8: return 1;
    case DT::u8: return 1;
    case DT::i32: return 4;
    }
    return 0;
}

bool dt_is_float(DT t) {
    return t == DT::f32 || t == DT::f16 || t == DT::bf16 || t == DT::f64;
}

double dt_max(DT t) {
    switch (t) {
    case DT::f32: return FLT_MAX;
    case DT::f16: return kF16Max;
    case DT::bf16: return kBf16Max;
    case DT::f64: return DBL_MAX;
    case DT::i8: return 127.0;
    case DT::u8: return 255.0;
    case DT::i32: return 2147483647.0;
    }
    return 0;
}

double dt_lowest(DT t) {
    switch (t) {
    case DT::i8: return -128.0;
    case DT::u8: return 0.0;
    case DT::i32: return -2147483648.0;
    default: return -dt_max(t);
    }
}

double dt_unit_roundoff(DT t) {
    switch (t) {
    case DT::f32: return std::ldexp(1.0, -24);
    case DT::f16: return std::ldexp(1.0, -11);
    case DT::bf16: return std::ldexp(1.0, -8);
    case DT::f64: return std::ldexp(1.0, -53);
    default: return 0.0;
    }
}

double round_to_f32(double x) { return round_to_precision(x, 24, -126, FLT_MAX); }
double round_to_f16(double x) { return round_to_precision(x, 11, -14, kF16Max); }
double round_to_bf16(double x) { return round_to_precision(x, 8, -126, kBf16Max); }

uint16_t f32_to_f16_bits(float x) {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    if (std::isnan(x)) return sign | 0x7E00;
    const double r = round_to_f16(static_cast<double>(x));
    if (std::isinf(r)) return sign | 0x7C00;
    const double a = std::fabs(r);
    if (a == 0.0) return sign;
    if (a < std::ldexp(1.0, -14))  // subnormal: a multiple of 2^-24
        return sign | static_cast<uint16_t>(a * std::ldexp(1.0, 24));
    const int e = std::ilogb(a);
    const uint16_t mant = static_cast<uint16_t>((std::ldexp(a, -e) - 1.0) * 1024.0);
    return sign | static_cast<uint16_t>((e + 15) << 10) | mant;
}

float f16_bits_to_f32(uint16_t h) {
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    const int e = (h >> 10) & 0x1F;
    const int m = h & 0x3FF;
    double v;
    if (e == 0x1F)
        v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else if (e == 0)
        v = std::ldexp(static_cast<double>(m), -24);
    else
        v = std::ldexp(static_cast<double>(1024 + m), e - 25);
    return static_cast<float>(sign * v);
}

uint16_t f32_to_bf16_bits(float x) {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    if (std::isnan(x)) return sign | 0x7FC0;
    // r has at most 8 significant bits within float's exponent range, so it is exactly a float
    // whose low 16 bits are zero.
    const float r = static_cast<float>(round_to_bf16(static_cast<double>(x)));
    uint32_t bits;
    std::memcpy(&bits, &r, 4);
    return static_cast<uint16_t>(bits >> 16);
}

float bf16_bits_to_f32(uint16_t h) {
    const uint32_t bits = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

double round_to_dtype(DT t, double x) {
    switch (t) {
    case DT::f32: return round_to_f32(x);
    case DT::f16: return round_to_f16(x);
    case DT::bf16: return round_to_bf16(x);
    case DT::f64: return x;
    default: {
        double r = std::nearbyint(x);
        if (r > dt_max(t)) r = dt_max(t);
        if (r < dt_lowest(t)) r = dt_lowest(t);
        return r;
    }
    }
}

double half_ulp(DT t, double x) {
    int p, emin;
    switch (t) {
    case DT::f32: p = 24; emin = -126; break;
    case DT::f16: p = 11; emin = -14; break;
    case DT::bf16: p = 8; emin = -126; break;
    case DT::f64: p = 53; emin = -1022; break;
    default: return 0.0;
    }
    int e = (x == 0.0 || !std::isfinite(x)) ? emin : std::ilogb(x);
    if (e < emin) e = emin;
    return std::ldexp(1.0, e - (p - 1) - 1);
}

double load(DT t, const void *base, int64_t index) {
    const char *p = static_cast<const char *>(base) + index * static_cast<int64_t>(dt_size(t));
    switch (t) {
    case DT::f32: { float v; std::memcpy(&v, p, 4); return v; }
    case DT::f16: { uint16_t v; std::memcpy(&v, p, 2); return f16_bits_to_f32(v); }
    case DT::bf16: { uint16_t v; std::memcpy(&v, p, 2); return bf16_bits_to_f32(v); }
    case DT::f64: { double v; std::memcpy(&v, p, 8); return v; }
    case DT::i8: { int8_t v; std::memcpy(&v, p, 1); return v; }
    case DT::u8: { uint8_t v; std::memcpy(&v, p, 1); return v; }
    case DT::i32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    }
    return 0;
}

void store(DT t, void *base, int64_t index, double value) {
    char *p = static_cast<char *>(base) + index * static_cast<int64_t>(dt_size(t));
    const double r = round_to_dtype(t, value);
    switch (t) {
    case DT::f32: { float v = static_cast<float>(r); std::memcpy(p, &v, 4); break; }
    case DT::f16: { uint16_t v = f32_to_f16_bits(static_cast<float>(r)); std::memcpy(p, &v, 2); break; }
    case DT::bf16: { uint16_t v = f32_to_bf16_bits(static_cast<float>(r)); std::memcpy(p, &v, 2); break; }
    case DT::f64: { std::memcpy(p, &r, 8); break; }
    case DT::i8: { int8_t v = static_cast<int8_t>(r); std::memcpy(p, &v, 1); break; }
    case DT::u8: { uint8_t v = static_cast<uint8_t>(r); std::memcpy(p, &v, 1); break; }
    case DT::i32: { int32_t v = static_cast<int32_t>(r); std::memcpy(p, &v, 4); break; }
    }
}

}  // namespace deconv_ref
