// 64-bit shape arithmetic that reports overflow instead of wrapping.
#pragma once

#include "deconv/deconv.h"

#include <cstdint>
#include <string>

namespace deconv {
namespace detail {

// a op b, or throws Error(TooLarge) naming `what` and the operands. `overflows` is one of the
// compiler's __builtin_*_overflow.
template <typename Overflows>
int64_t checked_op(int64_t a, int64_t b, const std::string &what, const char *op, Overflows overflows) {
    int64_t r;
    if (overflows(a, b, &r)) {
        throw Error(ErrorKind::TooLarge, what + " overflows 64-bit arithmetic (" + std::to_string(a) + " " + op + " " +
                                             std::to_string(b) + ")");
    }
    return r;
}

inline int64_t checked_mul(int64_t a, int64_t b, const std::string &what) {
    return checked_op(a, b, what, "*", [](int64_t x, int64_t y, int64_t *r) { return __builtin_mul_overflow(x, y, r); });
}

inline int64_t checked_add(int64_t a, int64_t b, const std::string &what) {
    return checked_op(a, b, what, "+", [](int64_t x, int64_t y, int64_t *r) { return __builtin_add_overflow(x, y, r); });
}

inline int64_t checked_sub(int64_t a, int64_t b, const std::string &what) {
    return checked_op(a, b, what, "-", [](int64_t x, int64_t y, int64_t *r) { return __builtin_sub_overflow(x, y, r); });
}

// Floor division for possibly negative numerators (the spec's `//`).
inline int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

inline int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

}  // namespace detail
}  // namespace deconv
