// The algorithm of the Winograd kernels: the input and output transforms of F(m, r) nested over
// the spatial axes (winograd_transforms.h), around one stride phase's correlation
//
//     out[q] = sum_{ci, j} input[q + in_offset - j] * w[j]      (in_step 1, r taps per axis)
//
// with the dispatcher's phase views (runtime/cpu/winograd_executor.cpp). Output tile T holds outputs
// q = T*m + i (i < m); with d[k] = input[T*m + in_offset - (r - 1) + k] (k < alpha) it is
// y[i] = sum_j' d[i + j'] g[j'], g[j'] = w[r - 1 - j']: the correlation form of F(m, r). The
// dispatcher moves the input's origin by in_offset and reverses the taps when it transforms the
// filter, so these kernels read input coordinate T*m + k - (r - 1).
//
// Both transforms are separable: one axis at a time, each stage a sum of alpha constant
// multiples (the schedule unrolls the tile indices, so the coefficients fold to constants and
// the zeros of BT and AT drop out).
//
// Buffers (innermost first; channels-last, every transform vectorizes channels):
//   input    [ci, g, x_0 .. x_{D-1}, n]                 zero outside its bounds
//   tiles    [ci, xi_0 .. xi_{D-1}, g, T_0 .. T_{D-1}, n]  input transform's output: BT d B
//   products [co, xi_0 .. xi_{D-1}, g, T_0 .. T_{D-1}, n]  the per-xi matrix products
//   output   [co, g, q_0 .. q_{D-1}, n]                  output transform's: AT M A
#pragma once

#include "Halide.h"
#include "../facts/winograd_transforms.h"

#include <string>
#include <vector>

namespace deconv {
namespace gen {

// Coefficient row[index][col] for a run-time index (a constant once the schedule unrolls it).
template <size_t Rows, size_t Cols>
Halide::Expr coefficient(const double (&table)[Rows][Cols], int rows, const Halide::Expr &index, int col) {
    std::vector<Halide::Expr> values;
    for (int i = 0; i < rows; i++) values.push_back(Halide::Expr((float)table[i][col]));
    return Halide::mux(index, values);
}

struct WinogradInputStages {
    Halide::Var ci{"ci"}, g{"g"}, n{"n"};
    std::vector<Halide::Var> xi, t, x;  // per spatial axis
    std::vector<Halide::Func> stage;      // stage[a]: axes 0..a transformed
};

// `input`: the input buffer [ci, g, x.., n] with zero outside its bounds.
inline WinogradInputStages define_winograd_input(const Halide::Func &input, const winograd::Algorithm &f, int rank) {
    using namespace Halide;
    WinogradInputStages s;
    for (int a = 0; a < rank; a++) {
        s.xi.emplace_back("xi" + std::to_string(a));
        s.t.emplace_back("t" + std::to_string(a));
        s.x.emplace_back("x" + std::to_string(a));
    }
    // Stage a's arguments: ci, xi_0..xi_a, g, T_0..T_a, x_{a+1}.., n.
    auto args = [&](int a) {
        std::vector<Var> v = {s.ci};
        for (int i = 0; i <= a; i++) v.push_back(s.xi[i]);
        v.push_back(s.g);
        for (int i = 0; i <= a; i++) v.push_back(s.t[i]);
        for (int i = a + 1; i < rank; i++) v.push_back(s.x[i]);
        v.push_back(s.n);
        return v;
    };
    for (int a = 0; a < rank; a++) {
        Func st("winograd_in_" + std::to_string(a));
        Expr sum = 0.0f;
        for (int k = 0; k < f.alpha(); k++) {
            Expr pos = s.t[a] * f.m + (k - (f.r - 1));
            std::vector<Expr> from;
            if (a == 0) {
                // input [ci, g, x.., n]
                from = {s.ci, s.g, pos};
                for (int i = 1; i < rank; i++) from.push_back(s.x[i]);
                from.push_back(s.n);
                sum += coefficient(f.bt, f.alpha(), s.xi[a], k) * input(from);
            } else {
                // stage a-1 [ci, xi_0..xi_{a-1}, g, T_0..T_{a-1}, x_a.., n]
                from = {s.ci};
                for (int i = 0; i < a; i++) from.push_back(s.xi[i]);
                from.push_back(s.g);
                for (int i = 0; i < a; i++) from.push_back(s.t[i]);
                from.push_back(pos);
                for (int i = a + 1; i < rank; i++) from.push_back(s.x[i]);
                from.push_back(s.n);
                sum += coefficient(f.bt, f.alpha(), s.xi[a], k) * s.stage[a - 1](from);
            }
        }
        const std::vector<Var> v = args(a);
        st(v) = sum;
        s.stage.push_back(st);
    }
    return s;
}

struct WinogradOutputStages {
    Halide::Var co{"co"}, g{"g"}, n{"n"};
    std::vector<Halide::Var> xi, t, q;  // per spatial axis
    std::vector<Halide::Func> stage;      // stage[a]: axes 0..a transformed back
};

// `products`: the matrix products [co, xi.., g, T.., n]. The last stage is the output
// [co, g, q.., n]; output q of axis a is row q % m of tile q / m (the output's coordinates start
// at 0: the schedule's tiles then start at multiples of m).
inline WinogradOutputStages define_winograd_output(const Halide::Func &products, const winograd::Algorithm &f,
                                                   int rank) {
    using namespace Halide;
    WinogradOutputStages s;
    for (int a = 0; a < rank; a++) {
        s.xi.emplace_back("xi" + std::to_string(a));
        s.t.emplace_back("t" + std::to_string(a));
        s.q.emplace_back("q" + std::to_string(a));
    }
    // Stage a's arguments: co, q_0..q_a, xi_{a+1}.., g, T_{a+1}.., n (the last: co, g, q.., n).
    auto args = [&](int a) {
        std::vector<Var> v = {s.co};
        if (a == rank - 1) {
            v.push_back(s.g);
            for (int i = 0; i < rank; i++) v.push_back(s.q[i]);
        } else {
            for (int i = 0; i <= a; i++) v.push_back(s.q[i]);
            for (int i = a + 1; i < rank; i++) v.push_back(s.xi[i]);
            v.push_back(s.g);
            for (int i = a + 1; i < rank; i++) v.push_back(s.t[i]);
        }
        v.push_back(s.n);
        return v;
    };
    for (int a = 0; a < rank; a++) {
        Func st("winograd_out_" + std::to_string(a));
        Expr sum = 0.0f;
        const Expr row = s.q[a] % f.m, tile = s.q[a] / f.m;
        for (int k = 0; k < f.alpha(); k++) {
            // The previous stage (or the products) at xi_a = k, T_a = q_a / m.
            std::vector<Expr> from = {s.co};
            for (int i = 0; i < a; i++) from.push_back(s.q[i]);
            from.push_back(k);
            for (int i = a + 1; i < rank; i++) from.push_back(s.xi[i]);
            from.push_back(s.g);
            from.push_back(tile);
            for (int i = a + 1; i < rank; i++) from.push_back(s.t[i]);
            from.push_back(s.n);
            const Func &src = a == 0 ? products : s.stage[a - 1];
            sum += coefficient(f.at, f.m, row, k) * src(from);
        }
        const std::vector<Var> v = args(a);
        st(v) = sum;
        s.stage.push_back(st);
    }
    return s;
}

}  // namespace gen
}  // namespace deconv
