// The Winograd minimal-filtering algorithms F(m, r), written once: the transform generators
// (winograd_algorithm.h) compile them into the input and output transforms, the runtime
// (runtime/cpu/winograd_executor.cpp) applies G to the filter. No Halide here: the runtime includes
// this header.
//
// F(m, r) computes m outputs of an r-tap correlation, y[i] = sum_j d[i + j] g[j], from
// alpha = m + r - 1 inputs with alpha multiplications instead of m * r:
//
//     y = AT [ (G g) . (BT d) ]      (AT: m x alpha, G: alpha x r, BT: alpha x alpha)
//
// Nested per spatial axis it computes an m x m output tile from an alpha x alpha input tile with
// alpha^2 multiplications instead of m^2 r^2; over channels those products become alpha^2
// independent matrix products, [tiles x C_in] by [C_in x C_out], which the channel-vectorized
// phase kernels run (a 1x1 convolution with the alpha^2 products as groups).
//
// Each is the transpose of a Toom-Cook linear convolution: the polynomials are evaluated at the
// alpha - 1 points listed and at infinity (BT's rows were scaled to integers, G's rows
// inversely). Points 1/2 and -2 rather than 2 and -2 in F(4, r): smaller transform entries, so
// less rounding error (tests/correctness/winograd_test.cpp measures it per dtype).
#pragma once

namespace deconv {
namespace winograd {

constexpr int kMaxAlpha = 6;

struct Algorithm {
    int m, r;  // outputs per tile, taps
    // Row-major, alpha = m + r - 1: at[m][alpha], g[alpha][r], bt[alpha][alpha].
    double at[4][kMaxAlpha];
    double g[kMaxAlpha][3];
    double bt[kMaxAlpha][kMaxAlpha];
    constexpr int alpha() const { return m + r - 1; }
};

// Points 0, -1, infinity.
constexpr Algorithm kF2x2 = {2, 2,
                             {{1, 1, 0}, {0, -1, 1}},
                             {{1, 0}, {1, -1}, {0, 1}},
                             {{1, 1, 0}, {0, -1, 0}, {0, 1, 1}}};
// Points 0, 1, -1, 1/2, infinity.
constexpr Algorithm kF4x2 = {4, 2,
                             {{1, 1, 1, 1, 0}, {0, 1, -1, 0.5, 0}, {0, 1, 1, 0.25, 0}, {0, 1, -1, 0.125, 1}},
                             {{1, 0}, {1. / 2, 1. / 2}, {1. / 6, -1. / 6}, {1. / 3, 1. / 6}, {0, 1. / 2}},
                             {{1, -2, -1, 2, 0}, {0, -1, 1, 2, 0}, {0, -1, 3, -2, 0}, {0, 8, 0, -8, 0}, {0, 1, -2, -1, 2}}};
// Points 0, 1, -1, infinity (the classic F(2, 3)).
constexpr Algorithm kF2x3 = {2, 3,
                             {{1, 1, 1, 0}, {0, 1, -1, 1}},
                             {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
                             {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, -1, 0, 1}}};
// Points 0, 1, -1, 1/2, -2, infinity.
constexpr Algorithm kF4x3 = {
    4, 3,
    {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 0.5, -2, 0}, {0, 1, 1, 0.25, 4, 0}, {0, 1, -1, 0.125, -8, 1}},
    {{1. / 2, 0, 0}, {1. / 6, 1. / 6, 1. / 6}, {1. / 6, -1. / 6, 1. / 6}, {1. / 15, 1. / 30, 1. / 60},
     {1. / 30, -1. / 15, 2. / 15}, {0, 0, 1. / 2}},
    {{2, -3, -4, 3, 2, 0},
     {0, -2, 1, 5, 2, 0},
     {0, -2, 5, -1, -2, 0},
     {0, 32, 16, -32, -16, 0},
     {0, 1, -2, -1, 2, 0},
     {0, 2, -3, -4, 3, 2}}};

constexpr const Algorithm *kAlgorithms[] = {&kF2x2, &kF4x2, &kF2x3, &kF4x3};

// F(m, r), or nullptr when there is none.
inline const Algorithm *find_algorithm(int m, int r) {
    for (const Algorithm *a : kAlgorithms)
        if (a->m == m && a->r == r) return a;
    return nullptr;
}

}  // namespace winograd
}  // namespace deconv
