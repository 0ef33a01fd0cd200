// exp and tanh for the epilogue pass's f32 chunks (cpu/epilogue_pass.cpp), as plain arithmetic
// that the compiler vectorizes in the pass's AVX2 and AVX-512 copies: the C library's tanhf and
// expf are a call per value (a tanh after fcn8s_upscore8_nxc's 5.7 million outputs took 80 ms,
// 90 times its plain run). Cephes' single-precision polynomials, within 2 ulps of the C library
// on the ranges the callers keep them to; the tests' reference allows 8
// (tests/reference/quantized_reference.h).
#pragma once

#include <cstdint>

namespace deconv {
namespace detail {

// e^x with x clamped to [-80, 80] (a NaN to -80: callers select around it), where callers need
// no more: x = n ln 2 + r with |r| <= ln 2 / 2, a degree-6 polynomial for e^r, and 2^n built in
// the exponent field (n in [-116, 116]).
inline __attribute__((always_inline)) float exp_small(float x) {
    x = x > -80.f ? x : -80.f;
    x = x < 80.f ? x : 80.f;
    const float n = (x * 1.44269504088896341f + 12582912.f) - 12582912.f;  // nearest integer
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    const float z = r * r;
    float y = 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * z + r + 1.0f;
    const int32_t bits = ((int32_t)n + 127) << 23;
    return y * __builtin_bit_cast(float, bits);
}

// tanh: an odd polynomial below |x| = 0.625, 1 - 2 / (e^(2|x|) + 1) above with its sign (|x|
// clamped at 10, where tanh is 1 in f32). A NaN stays a NaN.
inline __attribute__((always_inline)) float tanh_f32(float x) {
    const float a = x < 0 ? -x : x;
    const float z = x * x;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    const float small = p * z * x + x;
    const float e = exp_small(2.0f * (a < 10.0f ? a : 10.0f));
    const float big = 1.0f - 2.0f / (e + 1.0f);
    const float large = x < 0 ? -big : big;
    return a < 0.625f ? small : (x != x ? x : large);
}

}  // namespace detail
}  // namespace deconv
