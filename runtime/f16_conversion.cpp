#include "f16_conversion.h"

#include "deconv/deconv.h"

#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace deconv {
namespace detail {

namespace {

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void row_f16_to_f32(const uint16_t *src, int64_t src_stride, float *dst,
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

__attribute__((target("avx,f16c"))) void row_f32_to_f16(const float *src, uint16_t *dst, int64_t dst_stride,
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
void row_f16_to_f32(const uint16_t *, int64_t, float *, int64_t) {}
void row_f32_to_f16(const float *, uint16_t *, int64_t, int64_t) {}
#endif

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

bool use_f16c_conversion() {
#if defined(__x86_64__)
    // F16C from CPUID leaf 1 (ECX bit 29): Clang's __builtin_cpu_supports does not know "f16c"
    // (GCC's does), and the sanitizer and fuzz builds use Clang.
    static const bool has = __builtin_cpu_supports("avx") && [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
    }();
    return has && cpu_variant() != "sse41";
#else
    return false;
#endif
}

void f16_to_dense_f32(const uint16_t *src, const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                      float *out) {
    const int64_t inner_stride = strides.back();
    for_each_row(shape, strides, [&](int64_t src_off, int64_t dst_off, int64_t n) {
        row_f16_to_f32(src + src_off, inner_stride, out + dst_off, n);
    });
}

std::vector<float> f16_to_dense_f32(const uint16_t *src, const std::vector<int64_t> &shape,
                                    const std::vector<int64_t> &strides) {
    int64_t count = 1;
    for (int64_t v : shape) count *= v;
    std::vector<float> out((size_t)count);
    f16_to_dense_f32(src, shape, strides, out.data());
    return out;
}

void dense_f32_to_f16(const float *src, uint16_t *dst, const std::vector<int64_t> &shape,
                      const std::vector<int64_t> &strides) {
    const int64_t inner_stride = strides.back();
    for_each_row(shape, strides, [&](int64_t dst_off, int64_t src_off, int64_t n) {
        row_f32_to_f16(src + src_off, dst + dst_off, inner_stride, n);
    });
}

}  // namespace detail
}  // namespace deconv
