#include "cpu/quantize_rows.h"

#include "kernels/x86_features.h"

#include <algorithm>
#include <cstring>
#include <limits>

#if defined(__x86_64__) && !defined(__clang__)
#include <immintrin.h>
#define DECONV_QUANTIZE_X86 1
#endif

namespace deconv {
namespace detail {

namespace {

// The portable row: the stage loops' operations per value. (GCC vectorized it 16 wide, but
// through masked blends and word permutes: 1 instruction per value, 37% of centernet_dla_dw_nxc's
// u8 run against 25% in its kernels.)
template <bool PerValue, typename A, typename I>
void row_portable(const A *__restrict a, I *__restrict d, int64_t n, const QuantizeRow &q) {
    const float lo8 = (float)std::numeric_limits<I>::min(), hi8 = (float)std::numeric_limits<I>::max();
    // Adding and subtracting 1.5 * 2^23 rounds half to even below 2^22, which saturated values are.
    const float magic = 12582912.0f;
    for (int64_t i = 0; i < n; i++) {
        float v = ((float)a[i] + (PerValue ? q.bias[i] : q.bias[0])) * (PerValue ? q.scale[i] : q.scale[0]);
        const float m = q.alpha * v;
        v = v > 0 ? v : m;
        v = q.hi < v ? q.hi : v;
        v += q.zero_point;
        const float c = std::min(std::max(v, lo8), hi8);
        const float r = (c + magic) - magic;
        d[i] = v != v ? I(0) : (I)r;
    }
}

#if DECONV_QUANTIZE_X86
// 16 values under mask `m` from value i: load (converted from i32), bias, scale, the slot as a
// multiply and a masked select, the bound and the saturation as min/max with the value second
// (a NaN stays a NaN), the conversion's own round half to even, a NaN's lanes zeroed, and a
// narrowing store. About 13 instructions per 16 values.
template <bool PerValue, typename A, typename I>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"), always_inline)) inline void
step_avx512(const A *a, I *d, int64_t i, __mmask16 m, const QuantizeRow &q, __m512 b1, __m512 s1, __m512 alpha,
            __m512 hi, __m512 zp, __m512 lo8, __m512 hi8) {
    __m512 v;
    if constexpr (std::numeric_limits<A>::is_integer) {
        v = _mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(m, a + i));
    } else {
        v = _mm512_maskz_loadu_ps(m, a + i);
    }
    const __m512 b = PerValue ? _mm512_maskz_loadu_ps(m, q.bias + i) : b1;
    const __m512 s = PerValue ? _mm512_maskz_loadu_ps(m, q.scale + i) : s1;
    v = _mm512_mul_ps(_mm512_add_ps(v, b), s);
    v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ), _mm512_mul_ps(alpha, v), v);
    v = _mm512_add_ps(_mm512_min_ps(hi, v), zp);  // hi < v ? hi : v, then the zero point
    const __mmask16 number = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
    const __m512 c = _mm512_min_ps(hi8, _mm512_max_ps(lo8, v));
    _mm_mask_storeu_epi8(d + i, m, _mm512_cvtepi32_epi8(_mm512_maskz_cvtps_epi32(number, c)));
}

// Four steps at a time (one step per loop ran 1.25x slower than GCC's own unrolled loop on the
// spec's 2D example as u8), then the tail a masked step at a time.
template <bool PerValue, typename A, typename I>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void row_avx512(const A *a, I *d, int64_t n,
                                                                               const QuantizeRow &q) {
    const __m512 alpha = _mm512_set1_ps(q.alpha), hi = _mm512_set1_ps(q.hi), zp = _mm512_set1_ps(q.zero_point);
    const __m512 lo8 = _mm512_set1_ps((float)std::numeric_limits<I>::min());
    const __m512 hi8 = _mm512_set1_ps((float)std::numeric_limits<I>::max());
    const __m512 b1 = _mm512_set1_ps(q.bias[0]), s1 = _mm512_set1_ps(q.scale[0]);
    const __mmask16 all = 0xFFFF;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        step_avx512<PerValue>(a, d, i, all, q, b1, s1, alpha, hi, zp, lo8, hi8);
        step_avx512<PerValue>(a, d, i + 16, all, q, b1, s1, alpha, hi, zp, lo8, hi8);
        step_avx512<PerValue>(a, d, i + 32, all, q, b1, s1, alpha, hi, zp, lo8, hi8);
        step_avx512<PerValue>(a, d, i + 48, all, q, b1, s1, alpha, hi, zp, lo8, hi8);
    }
    for (; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? all : (__mmask16)((1u << (n - i)) - 1);
        step_avx512<PerValue>(a, d, i, m, q, b1, s1, alpha, hi, zp, lo8, hi8);
    }
}

// 8 values from value i, the same operations; pairs of 32-bit lanes packed to bytes through 16
// bits (the saturated values fit).
template <bool PerValue, typename A, typename I>
__attribute__((target("avx2,fma"), always_inline)) inline void step_avx2(const A *a, I *d, int64_t i,
                                                                        const QuantizeRow &q, __m256 b1, __m256 s1,
                                                                        __m256 alpha, __m256 hi, __m256 zp,
                                                                        __m256 lo8, __m256 hi8) {
    __m256 v;
    if constexpr (std::numeric_limits<A>::is_integer) {
        v = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(a + i)));
    } else {
        v = _mm256_loadu_ps((const float *)(a + i));
    }
    const __m256 b = PerValue ? _mm256_loadu_ps(q.bias + i) : b1;
    const __m256 s = PerValue ? _mm256_loadu_ps(q.scale + i) : s1;
    v = _mm256_mul_ps(_mm256_add_ps(v, b), s);
    v = _mm256_blendv_ps(_mm256_mul_ps(alpha, v), v, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GT_OQ));
    v = _mm256_add_ps(_mm256_min_ps(hi, v), zp);
    const __m256 number = _mm256_cmp_ps(v, v, _CMP_ORD_Q);
    const __m256 c = _mm256_min_ps(hi8, _mm256_max_ps(lo8, v));
    const __m256i r = _mm256_and_si256(_mm256_cvtps_epi32(c), _mm256_castps_si256(number));
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    const __m128i bytes = std::numeric_limits<I>::is_signed ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
    _mm_storel_epi64((__m128i *)(d + i), bytes);
}

// Four steps at a time, then single steps; the last values on the portable row.
template <bool PerValue, typename A, typename I>
__attribute__((target("avx2,fma"))) void row_avx2(const A *a, I *d, int64_t n, const QuantizeRow &q) {
    const __m256 alpha = _mm256_set1_ps(q.alpha), hi = _mm256_set1_ps(q.hi), zp = _mm256_set1_ps(q.zero_point);
    const __m256 lo8 = _mm256_set1_ps((float)std::numeric_limits<I>::min());
    const __m256 hi8 = _mm256_set1_ps((float)std::numeric_limits<I>::max());
    const __m256 b1 = _mm256_set1_ps(q.bias[0]), s1 = _mm256_set1_ps(q.scale[0]);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        step_avx2<PerValue>(a, d, i, q, b1, s1, alpha, hi, zp, lo8, hi8);
        step_avx2<PerValue>(a, d, i + 8, q, b1, s1, alpha, hi, zp, lo8, hi8);
        step_avx2<PerValue>(a, d, i + 16, q, b1, s1, alpha, hi, zp, lo8, hi8);
        step_avx2<PerValue>(a, d, i + 24, q, b1, s1, alpha, hi, zp, lo8, hi8);
    }
    for (; i + 8 <= n; i += 8) step_avx2<PerValue>(a, d, i, q, b1, s1, alpha, hi, zp, lo8, hi8);
    if (i < n) {
        QuantizeRow tail = q;
        if (PerValue) {
            tail.bias += i;
            tail.scale += i;
        }
        row_portable<PerValue>(a + i, d + i, n - i, tail);
    }
}

#endif

template <bool PerValue, typename A, typename I>
void row(const void *acc, void *dst, int64_t n, const QuantizeRow &q, int vector_bits) {
    const A *a = (const A *)acc;
    I *d = (I *)dst;
#if DECONV_QUANTIZE_X86
    if (vector_bits >= 512 && cpu_has_avx512()) return row_avx512<PerValue>(a, d, n, q);
    if (vector_bits >= 256 && cpu_has_avx2_fma()) return row_avx2<PerValue>(a, d, n, q);
#endif
    (void)vector_bits;
    row_portable<PerValue>(a, d, n, q);
}

template <bool PerValue>
void row_of(DType acc_t, const void *acc, DType dst_t, void *dst, int64_t n, const QuantizeRow &q, int bits) {
    const bool u8 = dst_t == DType::u8;
    if (acc_t == DType::f32) {
        if (u8) row<PerValue, float, uint8_t>(acc, dst, n, q, bits);
        else row<PerValue, float, int8_t>(acc, dst, n, q, bits);
    } else {
        if (u8) row<PerValue, int32_t, uint8_t>(acc, dst, n, q, bits);
        else row<PerValue, int32_t, int8_t>(acc, dst, n, q, bits);
    }
}

}  // namespace

void quantize_row(DType acc_t, const void *acc, DType dst_t, void *dst, int64_t n, const QuantizeRow &q,
                  int vector_bits) {
    if (q.per_value) row_of<true>(acc_t, acc, dst_t, dst, n, q, vector_bits);
    else row_of<false>(acc_t, acc, dst_t, dst, n, q, vector_bits);
}

}  // namespace detail
}  // namespace deconv
