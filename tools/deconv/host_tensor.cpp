#include "host_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace deconv_cli {

using deconv::DType;

size_t HostTensor::elements() const {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    return n;
}

HostTensor HostTensor::zeros(DType dtype, const Dims &shape) {
    HostTensor t;
    t.dtype = dtype;
    t.shape = shape;
    t.bytes.assign(t.elements() * deconv::dtype_size(dtype), 0);
    return t;
}

namespace {

// Rounds v to a binary floating format with `precision` significant bits (implicit bit
// included), normal exponents from emin, largest finite value max_finite. Round to nearest
// even, overflow to infinity. The result is exact in double.
double round_to_format(double v, int precision, int emin, double max_finite) {
    if (std::isnan(v) || std::isinf(v) || v == 0.0) return v;
    int e;
    std::frexp(v, &e);  // |v| = f * 2^e, 0.5 <= f < 1: the leading bit has exponent e-1
    int lead = e - 1;
    if (lead < emin) lead = emin;  // subnormal: fixed quantum
    const double quantum = std::ldexp(1.0, lead - (precision - 1));
    double r = std::nearbyint(v / quantum) * quantum;  // default rounding mode: to even
    if (std::fabs(r) > max_finite) r = std::copysign(std::numeric_limits<double>::infinity(), v);
    return r;
}

}  // namespace

uint16_t float_to_f16_bits(double v) {
    const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    if (std::isnan(v)) return sign | 0x7e00;
    double r = round_to_format(v, 11, -14, 65504.0);
    double a = std::fabs(r);
    if (std::isinf(a)) return sign | 0x7c00;
    if (a == 0.0) return sign;
    int e;
    std::frexp(a, &e);
    int lead = e - 1;
    if (lead < -14) {  // subnormal: a = m * 2^-24
        return sign | static_cast<uint16_t>(std::ldexp(a, 24));
    }
    const uint16_t mant = static_cast<uint16_t>(std::ldexp(a, 10 - lead) - 1024.0);
    return sign | static_cast<uint16_t>((lead + 15) << 10) | mant;
}

double f16_bits_to_double(uint16_t h) {
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    const int exp = (h >> 10) & 0x1f;
    const int mant = h & 0x3ff;
    if (exp == 0x1f) return mant ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
    if (exp == 0) return sign * std::ldexp(mant, -24);
    return sign * std::ldexp(1024 + mant, exp - 25);
}

uint16_t float_to_bf16_bits(double v) {
    if (std::isnan(v)) return std::signbit(v) ? 0xffc0 : 0x7fc0;
    const double max_bf16 = std::ldexp(255.0, 120);  // (2 - 2^-7) * 2^127
    const float r = static_cast<float>(round_to_format(v, 8, -126, max_bf16));  // exact
    uint32_t bits;
    std::memcpy(&bits, &r, 4);
    return static_cast<uint16_t>(bits >> 16);
}

double bf16_bits_to_double(uint16_t b) {
    const uint32_t bits = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

double load_element(const void *data, DType dtype, size_t i) {
    switch (dtype) {
    case DType::f32: return static_cast<const float *>(data)[i];
    case DType::f64: return static_cast<const double *>(data)[i];
    case DType::f16: return f16_bits_to_double(static_cast<const uint16_t *>(data)[i]);
    case DType::bf16: return bf16_bits_to_double(static_cast<const uint16_t *>(data)[i]);
    case DType::i8: return static_cast<const int8_t *>(data)[i];
    case DType::u8: return static_cast<const uint8_t *>(data)[i];
    case DType::i32: return static_cast<const int32_t *>(data)[i];
    }
    return 0.0;
}

namespace {

template <typename T>
T saturate(double v) {
    if (std::isnan(v)) return 0;
    v = std::nearbyint(v);
    if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
}

}  // namespace

void store_element(void *data, DType dtype, size_t i, double v) {
    switch (dtype) {
    case DType::f32: static_cast<float *>(data)[i] = static_cast<float>(v); break;
    case DType::f64: static_cast<double *>(data)[i] = v; break;
    case DType::f16: static_cast<uint16_t *>(data)[i] = float_to_f16_bits(v); break;
    case DType::bf16: static_cast<uint16_t *>(data)[i] = float_to_bf16_bits(v); break;
    case DType::i8: static_cast<int8_t *>(data)[i] = saturate<int8_t>(v); break;
    case DType::u8: static_cast<uint8_t *>(data)[i] = saturate<uint8_t>(v); break;
    case DType::i32: static_cast<int32_t *>(data)[i] = saturate<int32_t>(v); break;
    }
}

HostTensor convert(const HostTensor &t, DType to) {
    if (t.dtype == to) return t;
    HostTensor r = HostTensor::zeros(to, t.shape);
    const size_t n = t.elements();
    for (size_t i = 0; i < n; ++i) store_element(r.data(), to, i, load_element(t.data(), t.dtype, i));
    return r;
}

void fill_random(HostTensor &t, uint64_t seed) {
    // splitmix64: the same sequence on every platform.
    uint64_t state = seed;
    auto next = [&state]() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    };
    const bool unsigned_type = t.dtype == DType::u8;
    const size_t n = t.elements();
    for (size_t i = 0; i < n; ++i) {
        const uint64_t r = next() >> 33;
        const double v = unsigned_type ? static_cast<double>(r % 6)
                                       : static_cast<double>(static_cast<int64_t>(r % 7) - 3);
        store_element(t.data(), t.dtype, i, v);
    }
}

}  // namespace deconv_cli
