#include "layer/phase_decomposition.h"

#include "layer/checked_math.h"

#include <algorithm>
#include <numeric>

namespace deconv {
namespace detail {

namespace {

// x such that a*x = 1 (mod m), for gcd(a, m) = 1 and m >= 1.
int64_t mod_inverse(int64_t a, int64_t m) {
    if (m == 1) return 0;
    int64_t old_r = floor_mod(a, m), r = m, old_s = 1, s = 0;
    while (r != 0) {
        const int64_t q = old_r / r;
        int64_t t = old_r - q * r;
        old_r = r;
        r = t;
        t = old_s - q * s;
        old_s = s;
        s = t;
    }
    return floor_mod(old_s, m);
}

}  // namespace

std::vector<AxisPhase> decompose_axis(int64_t stride, int64_t dilation, int64_t kernel, int64_t in_size,
                                      int64_t out_size, int64_t pad_begin) {
    std::vector<AxisPhase> phases;
    const int64_t g = std::gcd(stride, dilation);
    const int64_t s1 = stride / g, d1 = dilation / g;
    const int64_t d1_inv = mod_inverse(d1, s1);
    for (int64_t a = 0; a < stride && a < out_size; a++) {
        AxisPhase p;
        p.out_first = a;
        p.out_count = (out_size - a + stride - 1) / stride;
        p.tap_step = s1;
        p.in_step = d1;
        // y + pad_begin = r + s*(q + base) for y = a + s*q.
        const int64_t r = floor_mod(a + pad_begin, stride);
        const int64_t base = floor_div(a + pad_begin, stride);
        if (r % g == 0) {
            // k*d = r (mod s)  <=>  k*d1 = r/g (mod s1)
            p.tap_first = floor_mod((r / g) * d1_inv, s1);
            if (p.tap_first < kernel) p.tap_count = (kernel - p.tap_first + s1 - 1) / s1;
            // x = (r + s*(q+base) - k*d)/s with k = k0 + j*s1  =  q + base + (r - k0*d)/s - j*d1
            p.in_offset = base + (r - p.tap_first * dilation) / stride;
        }
        for (int64_t j = 0; j < p.tap_count; j++) {
            // q with 0 <= q + in_offset - j*in_step < in_size, q in [0, out_count)
            const int64_t lo = std::max<int64_t>(0, j * p.in_step - p.in_offset);
            const int64_t hi = std::min<int64_t>(p.out_count, in_size + j * p.in_step - p.in_offset);
            if (hi > lo) p.pairs += hi - lo;
        }
        phases.push_back(p);
    }
    return phases;
}

int64_t most_taps(const std::vector<AxisPhase> &axis) {
    int64_t most = 0;
    for (const AxisPhase &a : axis) most = std::max(most, a.tap_count);
    return most;
}

int64_t widest_phase(const std::vector<AxisPhase> &axis) {
    int64_t widest = 0;
    for (const AxisPhase &a : axis) widest = std::max(widest, a.out_count);
    return widest;
}

bool every_phase_tapped(const std::vector<AxisPhase> &axis) {
    for (const AxisPhase &a : axis)
        if (a.tap_count == 0) return false;
    return true;
}

std::vector<TapWindow> tap_windows(const AxisPhase &a, int64_t in_size) {
    std::vector<TapWindow> windows;
    for (int64_t q = 0; q < a.out_count; q++) {
        // Input q + in_offset - j*in_step lies in [0, X) for j in [lo, hi] (in_step >= 1).
        const int64_t at = q + a.in_offset;
        const int64_t lo = std::max<int64_t>(0, -floor_div(-(at - in_size + 1), a.in_step));
        const int64_t hi = std::min<int64_t>(a.tap_count - 1, floor_div(at, a.in_step));
        const int64_t first = hi >= lo ? lo : 0, count = std::max<int64_t>(0, hi - lo + 1);
        if (!windows.empty() && windows.back().j_first == first && windows.back().j_count == count) {
            windows.back().q_count++;
        } else {
            windows.push_back({q, 1, first, count});
        }
    }
    return windows;
}

bool uniform_taps(const std::vector<std::vector<AxisPhase>> &phases, int64_t taps) {
    for (const auto &axis : phases)
        for (const AxisPhase &a : axis)
            if (a.tap_count != taps) return false;
    return true;
}

InterleavedReach interleaved_reach(int64_t s, int64_t pad_begin, int64_t taps) {
    return {floor_div(pad_begin, s) - (taps - 1), floor_div(s - 1 + pad_begin, s)};
}

}  // namespace detail
}  // namespace deconv
