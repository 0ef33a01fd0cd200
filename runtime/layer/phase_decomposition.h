// Splits a transposed convolution along one spatial axis into its stride phases.
//
// Output position y receives input x through tap k exactly when x*s + k*d = y + pad_begin.
// Group the outputs by y mod s: for the outputs y = a + s*q of residue a, the contributing taps
// are k = k0 + j*s' (s' = s/gcd(s,d)) and the input index is x = q + in_offset - j*in_step
// (in_step = d/gcd(s,d)). Every phase is therefore a dense, dilated correlation: the Halide
// kernel computes one, the dispatcher runs one per combination of per-axis phases.
#pragma once

#include <cstdint>
#include <vector>

namespace deconv {
namespace detail {

struct AxisPhase {
    int64_t out_first = 0;  // a: the first output position of this phase
    int64_t out_count = 0;  // number of output positions a, a+s, a+2s, ... below Y
    int64_t tap_first = 0;  // k0
    int64_t tap_step = 1;   // s'
    int64_t tap_count = 0;  // taps k0, k0+s', ... below K (0: this phase only receives zeros)
    int64_t in_offset = 0;  // input index of q=0, j=0
    int64_t in_step = 1;    // input index step per tap
    int64_t pairs = 0;      // (output, tap) pairs whose input index lies inside [0, X)
};

// All non-empty phases of one axis (at most `stride` of them).
std::vector<AxisPhase> decompose_axis(int64_t stride, int64_t dilation, int64_t kernel, int64_t in_size,
                                      int64_t out_size, int64_t pad_begin);

// The most taps of any phase of one axis.
int64_t most_taps(const std::vector<AxisPhase> &axis);
// The most outputs of any phase of one axis (its widest phase row).
int64_t widest_phase(const std::vector<AxisPhase> &axis);
// Whether every phase of one axis has taps (none only receives zeros).
bool every_phase_tapped(const std::vector<AxisPhase> &axis);

// Every phase of every axis (`phases`, one list per spatial axis) has exactly `taps` taps.
bool uniform_taps(const std::vector<std::vector<AxisPhase>> &phases, int64_t taps);

// What the interleaved kernel reads along the innermost axis (stride s, dilation 1, `taps` the
// most taps of a phase): group q of phase ph < s reads q + floor((ph + pad_begin) / s) - j for
// j < taps, so every phase of group q reads inside [q + lo, q + hi].
struct InterleavedReach {
    int64_t lo, hi;
};
InterleavedReach interleaved_reach(int64_t s, int64_t pad_begin, int64_t taps);

// A run of a phase's outputs q in [q_first, q_first + q_count) whose taps reading inside the
// input [0, X) are the same window j in [j_first, j_first + j_count) (0 taps: outputs that only
// receive zeros). A kernel call per window computes exactly the phase's pairs, no product with a
// zero border.
struct TapWindow {
    int64_t q_first = 0, q_count = 0;
    int64_t j_first = 0, j_count = 0;
};

// The windows of phase `a` over an input axis of `in_size`, in order of q, covering every output
// of the phase once.
std::vector<TapWindow> tap_windows(const AxisPhase &a, int64_t in_size);

}  // namespace detail
}  // namespace deconv
