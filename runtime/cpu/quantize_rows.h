// The quantized epilogue's fast row (cpu/epilogue_pass.h): 8-bit outputs of dense f32 or i32 sums
// whose post-op list folds into one slot (fold_store_post_ops: a relu of slope alpha <= 1, then
// the bound hi), no sum. Every stage in registers, in the stage loops' order and so with their
// values: (v + bias) * scale, the slot, + zero point, saturated, rounded half to even, a NaN to 0.
#pragma once

#include "deconv/deconv.h"

#include <cstdint>

namespace deconv {
namespace detail {

struct QuantizeRow {
    // Per value (channels-last rows: the row's channels, repeated) or one for the row.
    const float *bias = nullptr, *scale = nullptr;
    bool per_value = false;
    float alpha = 1, hi = 0, zero_point = 0;
};

// `n` sums of `acc_t` (f32 or i32) at `acc` into `n` values of `dst_t` (u8 or i8) at `dst`, on
// vectors of up to `vector_bits` that the CPU has (AVX-512 or AVX2 intrinsics on x86-64).
void quantize_row(DType acc_t, const void *acc, DType dst_t, void *dst, int64_t n, const QuantizeRow &q,
                  int vector_bits);

}  // namespace detail
}  // namespace deconv
