// f16 <-> f32 conversion with the CPU's F16C instructions, outside Halide.
//
// Halide 14 emulates f16 arithmetic with integer code on x86 (even with f16c), so f16 layers run
// faster as: convert the inputs to f32 (exact), run the f32 kernels (the same f32 accumulation the
// f16 kernels do), and round the result once to f16 (round to nearest even). Same numbers, f32
// speed, at the cost of f32 copies of the three tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace deconv {
namespace detail {

// True on x86-64 CPUs with F16C (and AVX), unless DECONV_CPU_VARIANT caps the kernels to sse41
// (which then also tests the f16 kernels themselves).
bool use_f16c_conversion();

// Strided f16 tensor -> dense f32 copy (C order), into `out` (the shape's element count).
void f16_to_dense_f32(const uint16_t *src, const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                      float *out);
// The same into a new vector.
std::vector<float> f16_to_dense_f32(const uint16_t *src, const std::vector<int64_t> &shape,
                                    const std::vector<int64_t> &strides);
// Dense f32 tensor -> strided f16, rounding to nearest even.
void dense_f32_to_f16(const float *src, uint16_t *dst, const std::vector<int64_t> &shape,
                      const std::vector<int64_t> &strides);

}  // namespace detail
}  // namespace deconv
