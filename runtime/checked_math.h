// 64-bit shape arithmetic that reports overflow instead of wrapping.
#pragma once

#include "deconv/deconv.h"

#include <cstdint>
#include <string>

namespace deconv {
namespace detail {

// a * b, or throws Error(TooLarge) naming `what`.
inline int64_t checked_mul(int64_t a, int64_t b, const std::string &what) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        throw Error(ErrorKind::TooLarge, what + " overflows 64-bit arithmetic (" + std::to_string(a) +
                                             " * " + std::to_string(b) + ")");
    }
    return r;
}

inline int64_t checked_add(int64_t a, int64_t b, const std::string &what) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        throw Error(ErrorKind::TooLarge, what + " overflows 64-bit arithmetic (" + std::to_string(a) +
                                             " + " + std::to_string(b) + ")");
    }
    return r;
}

inline int64_t checked_sub(int64_t a, int64_t b, const std::string &what) {
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) {
        throw Error(ErrorKind::TooLarge, what + " overflows 64-bit arithmetic (" + std::to_string(a) +
                                             " - " + std::to_string(b) + ")");
    }
    return r;
}

// Floor division for possibly negative numerators (the spec's `//`).
inline int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

inline int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

}  // namespace detail
}  // namespace deconv
