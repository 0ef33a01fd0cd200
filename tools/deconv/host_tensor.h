// A dense, C-order tensor the command line owns, and the element-type conversions and seeded
// random fills it needs around the library call.
//
// Conversions go through double: floating types round to nearest even (f16 and bf16 by exact
// arithmetic, not double rounding); integer types round to nearest even and saturate, NaN
// becomes 0. bf16 elements are stored as their uint16 bit patterns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "deconv/deconv.h"
#include "dims.h"

namespace deconv_cli {

struct HostTensor {
    deconv::DType dtype = deconv::DType::f32;
    Dims shape;
    std::vector<unsigned char> bytes;

    size_t elements() const;
    void *data() { return bytes.data(); }
    const void *data() const { return bytes.data(); }

    // Allocates shape's elements (zeroed); the caller has checked the size.
    static HostTensor zeros(deconv::DType dtype, const Dims &shape);
};

// IEEE half and bfloat16 bit patterns.
uint16_t float_to_f16_bits(double v);
double f16_bits_to_double(uint16_t h);
uint16_t float_to_bf16_bits(double v);
double bf16_bits_to_double(uint16_t b);

// Element i as a double (exact for every dtype but i64-range values, which we do not have).
double load_element(const void *data, deconv::DType dtype, size_t i);
// Stores v with the rounding/saturation rules above.
void store_element(void *data, deconv::DType dtype, size_t i, double v);

// A copy in another dtype (same shape).
HostTensor convert(const HostTensor &t, deconv::DType to);

// Small integers, exact in every dtype: -3..3, or 0..5 for u8. Deterministic for a seed on
// every platform (own generator, no std distributions).
void fill_random(HostTensor &t, uint64_t seed);

}  // namespace deconv_cli
