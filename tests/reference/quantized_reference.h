// deconv_ref, quantized: an independent reference for quantized transposed convolutions and
// their epilogues (oneDNN 2.6 order), written from the contract in deconv.h's section
// "quantization and epilogues". Like reference.h it shares no code with the library and does
// not include deconv/deconv.h; it reuses only reference.h's geometry (resolve(), the spec's
// pad and output-shape rules).
//
//   acc[n, c, y] = sum over (ci, x, k) with y = x*s - pb + k*d inside the output of
//                  (src[n, g*C_IN + ci, x] - src_zero_point) * w[g, ci, c_out, k]
//                  (int64, exact; pads and stride holes contribute nothing), c = g*C_OUT + c_out
//   v   = scale[c] * (acc + bias[c])      emulated in f32 (float variables, one rounding per
//                                         operation, in that order); f64 layers in double
//   v   = post_ops(v) in order            sum: v += scale * (dst_old - zero_point)
//   dst = saturate(round_half_even(v + dst_zero_point))   integer dst (v + zp added in f32)
//         v rounded once (nearest even)                    float dst
#pragma once

#include "reference.h"

#include <cstdint>
#include <string>
#include <vector>

namespace deconv_ref {

// ---------------------------------------------------------------- integer accumulation

struct QAccumulation {
    Resolved shape;
    std::vector<int64_t> acc;    // dense NCX, shape.output_shape
    std::vector<int32_t> terms;  // taps that read a real input element, per output element
};

// The direct scatter loop over input positions and taps (y = x*s - pb + k*d per axis, outputs
// outside [0, Y) skipped), accumulating (src - src_zero_point) * w in int64. `src` is dense NCX
// [N, G*C_IN, X..], `weights` dense [G, C_IN, C_OUT, K..] (or [C_IN, C_OUT, K..] when
// !p.grouped). Throws std::invalid_argument on malformed problems (resolve()'s checks).
QAccumulation accumulate_quantized(const Problem &p, const std::vector<int32_t> &src,
                                   const std::vector<int32_t> &weights, int32_t src_zero_point);

// ---------------------------------------------------------------- epilogue

enum class QEltwise {
    relu, clip, linear, bounded_relu, tanh, logistic, abs, square, elu, swish, gelu_tanh,
    gelu_erf, hardswish
};
const char *qeltwise_name(QEltwise e);
std::vector<QEltwise> all_qeltwise();
// Whether the reference evaluates the eltwise through a transcendental function (exp, tanh,
// erf): the library's approximation may differ from the C library's by a few f32 ulps.
bool qeltwise_transcendental(QEltwise e);

struct QPostOp {
    bool is_sum = false;
    QEltwise alg = QEltwise::relu;
    float alpha = 0, beta = 0;  // eltwise
    float scale = 1;            // sum
    int32_t zero_point = 0;     // sum
};

struct QEpilogue {
    // Empty: no scale (1). One value: per tensor. G*C_OUT values: per output channel.
    std::vector<float> scales;
    // Empty: no bias. Else G*C_OUT values as the layer reads them (f32 biases: f32 values; i32
    // biases: integers). Added to the accumulator in the layer's arithmetic (f32 or f64).
    std::vector<double> bias;
    std::vector<QPostOp> post_ops;
    int32_t dst_zero_point = 0;
};

struct QResult {
    // v + dst_zero_point before the store (integer dst) or v (float dst), dense NCX.
    std::vector<double> value;
    // Absolute uncertainty of `value`: 0 where the contract fixes every rounding (the scale
    // and bias arithmetic, relu/clip/abs/square/bounded_relu, linear and sum where the product
    // is exact); an ulp or two where a fused multiply-add could round once instead of twice;
    // for the eltwise ops through exp/tanh/erf and hardswish 8 ulps of the result plus 2 ulps of
    // 1 times the factor in front of a cancelling term (tanh: 1, elu: alpha, gelu: |v|/2). Carried
    // through the later post-ops by their slopes.
    std::vector<double> tol;
    // The value a store of `value` gives: integer dst rounded half to even and saturated, float
    // dst rounded once to nearest even (f32, bf16, f16; f64 as is).
    std::vector<double> stored;
};

// Applies the epilogue to accumulators (dense NCX of r.output_shape, channel axis 1).
// `f64_math`: the layer computes in double (f64 layers), else in f32. `dst_old` (dense NCX,
// may be null when there is no sum post-op) holds the output's earlier contents as values of
// `dst`. Throws std::invalid_argument on malformed inputs (scale or bias count).
QResult apply_epilogue(const Resolved &r, const std::vector<double> &acc, const QEpilogue &e,
                       DT dst, bool f64_math, const std::vector<double> *dst_old);

// The store of an exact value into an integer dtype: round half to even, then saturate. For
// float dtypes: round_to_dtype.
double q_store(DT dst, double v);

// The eltwise function evaluated in double (for tests that reason about the functions).
double qeltwise_eval(QEltwise e, double alpha, double beta, double v);

}  // namespace deconv_ref
