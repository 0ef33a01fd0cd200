// 16-bit float storage (f16, bf16) <-> f32 conversion outside Halide, for the layers that run as
// f32 (Plan::Impl::via_wider).
//
// Halide 14 emulates f16 arithmetic with integer code on x86 (even with f16c), and converts bf16
// inside the kernels' inner loops (a shift per weight vector and per broadcast input) where the
// CPU has no bf16 dot product: unet_up1_bf16 ran 1.4x slower than unet_up1 in f32 on AVX2. Such
// layers run faster as: convert the inputs to f32 (exact), run the f32 kernels (the same f32
// accumulation the 16-bit kernels do), and round the result once to the storage type (to nearest
// even). Same numbers up to summation order, f32 speed, at the cost of f32 copies of the tensors.
#pragma once

#include "deconv/deconv.h"

#include <string>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace deconv {
namespace detail {

// Whether layers of `t` on CPU variant `variant` run as f32: f16 on x86-64 with F16C (and AVX),
// bf16 where that variant has no bf16 dot-product kernels (cpu_has_bf16_dot); neither on sse41
// (which then also tests the 16-bit kernels themselves).
bool runs_as_f32(DType t, const std::string &variant);

// One f16 value (its bits) <-> f32 in integer arithmetic, for CPUs without F16C (ARM64 and old
// x86 CPUs run f16 layers on their own kernels, but the Winograd path computes every layer in
// f32). Widening is exact; narrowing rounds to nearest even, overflows to infinity from 65520 on
// and keeps a NaN a NaN: what F16C's conversions do.
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);

// One row of `n` values of `t` (f16 or bf16), `stride` elements apart on the 16-bit side, the
// conversions below use.
void half_row_to_f32(DType t, const uint16_t *src, int64_t src_stride, float *dst, int64_t n);
void f32_row_to_half(DType t, const float *src, uint16_t *dst, int64_t dst_stride, int64_t n);

// Strided 16-bit tensor of `t` (f16 or bf16) -> dense f32 copy (C order), into `out` (the shape's
// element count).
void half_to_dense_f32(DType t, const uint16_t *src, const std::vector<int64_t> &shape,
                       const std::vector<int64_t> &strides, float *out);
// The same into a new vector.
std::vector<float> half_to_dense_f32(DType t, const uint16_t *src, const std::vector<int64_t> &shape,
                                     const std::vector<int64_t> &strides);
// Dense f32 tensor -> strided 16-bit tensor of `t`, rounding to nearest even (NaN stays NaN).
void dense_f32_to_half(DType t, const float *src, uint16_t *dst, const std::vector<int64_t> &shape,
                       const std::vector<int64_t> &strides);

}  // namespace detail
}  // namespace deconv
