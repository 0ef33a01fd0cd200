#include "kernels/half_conversion.h"

#include "kernels/halide_glue.h"

#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace deconv {
namespace detail {

float f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        const float sub = (float)mant * 0x1p-24f;  // zero or subnormal: exact
        return sign ? -sub : sub;
    }
    if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t f32_to_f16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));  // NaN
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // 65520 and up round to infinity
    if (ax >= 0x38800000u) {                                     // normal in f16 (2^-14 and up)
        uint32_t h = ((ax >> 23) - 112) << 10 | ((ax >> 13) & 0x3ffu);
        const uint32_t rest = ax & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++;  // a carry moves into the exponent
        return (uint16_t)(sign | h);
    }
    float a;
    std::memcpy(&a, &ax, 4);
    return (uint16_t)(sign | (uint32_t)std::nearbyint(a * 0x1p24f));  // subnormal: units of 2^-24
}

namespace {

void row_f16_to_f32_scalar(const uint16_t *src, int64_t src_stride, float *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++) dst[i] = f16_to_f32(src[i * src_stride]);
}

void row_f32_to_f16_scalar(const float *src, uint16_t *dst, int64_t dst_stride, int64_t n) {
    for (int64_t i = 0; i < n; i++) dst[i * dst_stride] = f32_to_f16(src[i]);
}

#if defined(__x86_64__)
// F16C from CPUID leaf 1 (ECX bit 29): Clang's __builtin_cpu_supports does not know "f16c"
// (GCC's does), and the sanitizer and fuzz builds use Clang.
bool has_f16c() {
    static const bool has = __builtin_cpu_supports("avx") && [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
    }();
    return has;
}

__attribute__((target("avx,f16c"))) void row_f16_to_f32_f16c(const uint16_t *src, int64_t src_stride, float *dst,
                                                              int64_t n) {
    int64_t i = 0;
    if (src_stride == 1) {
        for (; i + 8 <= n; i += 8) {
            __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i));
            _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
        }
    }
    for (; i < n; i++) dst[i] = _cvtsh_ss(src[i * src_stride]);
}

__attribute__((target("avx,f16c"))) void row_f32_to_f16_f16c(const float *src, uint16_t *dst, int64_t dst_stride,
                                                              int64_t n) {
    int64_t i = 0;
    if (dst_stride == 1) {
        for (; i + 8 <= n; i += 8) {
            __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
            _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + i), h);
        }
    }
    for (; i < n; i++) dst[i * dst_stride] = _cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
}
#else
bool has_f16c() { return false; }
void row_f16_to_f32_f16c(const uint16_t *, int64_t, float *, int64_t) {}
void row_f32_to_f16_f16c(const float *, uint16_t *, int64_t, int64_t) {}
#endif

void row_f16_to_f32(const uint16_t *src, int64_t src_stride, float *dst, int64_t n) {
    if (has_f16c()) row_f16_to_f32_f16c(src, src_stride, dst, n);
    else row_f16_to_f32_scalar(src, src_stride, dst, n);
}

void row_f32_to_f16(const float *src, uint16_t *dst, int64_t dst_stride, int64_t n) {
    if (has_f16c()) row_f32_to_f16_f16c(src, dst, dst_stride, n);
    else row_f32_to_f16_scalar(src, dst, dst_stride, n);
}

// bf16 is the top half of an f32: widening is exact; narrowing rounds to nearest even, and keeps
// a NaN a NaN (its payload's top bits could round away to an infinity).
void row_bf16_to_f32(const uint16_t *src, int64_t src_stride, float *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        const uint32_t bits = (uint32_t)src[i * src_stride] << 16;
        std::memcpy(dst + i, &bits, 4);
    }
}

void row_f32_to_bf16(const float *src, uint16_t *dst, int64_t dst_stride, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint32_t bits;
        std::memcpy(&bits, src + i, 4);
        if ((bits & 0x7fffffffu) > 0x7f800000u) {
            dst[i * dst_stride] = (uint16_t)((bits >> 16) | 0x40);
        } else {
            dst[i * dst_stride] = (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1)) >> 16);
        }
    }
}

// Calls row(offset_in_strided, offset_in_dense, n) for every innermost row, in C order.
template <typename Row>
void for_each_row(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides, Row row) {
    const size_t d = shape.size();
    if (d == 0) return;  // tensors here have rank >= 3
    const int64_t inner = shape[d - 1];
    int64_t rows = 1;
    for (size_t a = 0; a + 1 < d; a++) rows *= shape[a];
    std::vector<int64_t> idx(d - 1, 0);
    for (int64_t r = 0; r < rows; r++) {
        int64_t off = 0;
        for (size_t a = 0; a + 1 < d; a++) off += idx[a] * strides[a];
        row(off, r * inner, inner);
        for (size_t a = d - 1; a-- > 0;) {
            if (++idx[a] < shape[a]) break;
            idx[a] = 0;
        }
    }
}

}  // namespace

bool runs_as_f32(DType t, const std::string &variant) {
#if defined(__x86_64__)
    if (variant == "sse41") return false;
    if (t == DType::bf16) return !cpu_has_bf16_dot(variant);
    if (t != DType::f16) return false;
    return has_f16c();
#else
    (void)t;
    (void)variant;
    return false;
#endif
}

void half_to_dense_f32(DType t, const uint16_t *src, const std::vector<int64_t> &shape,
                       const std::vector<int64_t> &strides, float *out) {
    const int64_t inner_stride = strides.back();
    for_each_row(shape, strides, [&](int64_t src_off, int64_t dst_off, int64_t n) {
        if (t == DType::bf16) row_bf16_to_f32(src + src_off, inner_stride, out + dst_off, n);
        else row_f16_to_f32(src + src_off, inner_stride, out + dst_off, n);
    });
}

std::vector<float> half_to_dense_f32(DType t, const uint16_t *src, const std::vector<int64_t> &shape,
                                     const std::vector<int64_t> &strides) {
    int64_t count = 1;
    for (int64_t v : shape) count *= v;
    std::vector<float> out((size_t)count);
    half_to_dense_f32(t, src, shape, strides, out.data());
    return out;
}

void dense_f32_to_half(DType t, const float *src, uint16_t *dst, const std::vector<int64_t> &shape,
                       const std::vector<int64_t> &strides) {
    const int64_t inner_stride = strides.back();
    for_each_row(shape, strides, [&](int64_t dst_off, int64_t src_off, int64_t n) {
        if (t == DType::bf16) row_f32_to_bf16(src + src_off, dst + dst_off, inner_stride, n);
        else row_f32_to_f16(src + src_off, dst + dst_off, inner_stride, n);
    });
}

void half_row_to_f32(DType t, const uint16_t *src, int64_t src_stride, float *dst, int64_t n) {
    if (t == DType::bf16) row_bf16_to_f32(src, src_stride, dst, n);
    else row_f16_to_f32(src, src_stride, dst, n);
}

void f32_row_to_half(DType t, const float *src, uint16_t *dst, int64_t dst_stride, int64_t n) {
    if (t == DType::bf16) row_f32_to_bf16(src, dst, dst_stride, n);
    else row_f32_to_f16(src, dst, dst_stride, n);
}

}  // namespace detail
}  // namespace deconv
