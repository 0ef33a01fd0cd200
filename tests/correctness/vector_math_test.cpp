// The epilogue pass's exp and tanh (runtime/cpu/vector_math.h) against the C library's, in f32
// ulps of the C library's result: densely over the ranges the pass uses them on, near zero on a
// log scale, and at the special values. The quantized reference allows the library's own exp
// and tanh 8 ulps (tests/reference/quantized_reference.h); these stay within 1 and 2.
#include "cpu/vector_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

using deconv::detail::exp_small;
using deconv::detail::tanh_f32;

double ulps(float got, float want) {
    if (got == want) return 0;
    const float a = std::fabs(want);
    return std::fabs(double(got) - double(want)) / double(std::nextafter(a, std::numeric_limits<float>::infinity()) - a);
}

// The largest error of `f` against `ref` over a million evenly spaced points of [lo, hi], and
// where it is.
struct Worst {
    double ulps = 0;
    float at = 0;
    void see(float x, float got, float want) {
        const double e = ::ulps(got, want);
        if (e > ulps) ulps = e, at = x;
    }
};
template <typename F, typename R>
Worst sweep(F f, R ref, float lo, float hi) {
    Worst w;
    for (int i = 0; i <= 1000000; i++) {
        const float x = lo + (hi - lo) * float(i) / 1000000.f;
        w.see(x, f(x), ref(x));
    }
    return w;
}

TEST(VectorMath, ExpWithinOneUlpOnItsRange) {
    const Worst w = sweep(exp_small, [](float x) { return std::exp(x); }, -80.f, 80.f);
    EXPECT_LE(w.ulps, 1.0) << "at " << w.at;
    EXPECT_EQ(exp_small(0.f), 1.f);
    // Outside [-80, 80] the argument is clamped (a NaN to -80): callers select around it.
    EXPECT_EQ(exp_small(100.f), exp_small(80.f));
    EXPECT_EQ(exp_small(std::numeric_limits<float>::quiet_NaN()), exp_small(-80.f));
}

TEST(VectorMath, TanhWithinTwoUlps) {
    Worst w = sweep(tanh_f32, [](float x) { return std::tanh(x); }, -12.f, 12.f);
    for (int k = -40; k <= 0; k++)  // near zero, where the polynomial serves: 2^k (1 + j/64)
        for (int j = 0; j < 64; j++)
            for (float s : {1.f, -1.f}) {
                const float x = s * std::ldexp(1.f + j / 64.f, k);
                w.see(x, tanh_f32(x), std::tanh(x));
            }
    EXPECT_LE(w.ulps, 2.0) << "at " << w.at;
    EXPECT_EQ(tanh_f32(std::numeric_limits<float>::infinity()), 1.f);
    EXPECT_EQ(tanh_f32(-std::numeric_limits<float>::infinity()), -1.f);
    EXPECT_EQ(tanh_f32(0.f), 0.f);
    EXPECT_TRUE(std::isnan(tanh_f32(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
