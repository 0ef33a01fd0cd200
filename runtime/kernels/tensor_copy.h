// Copies between strided layouts of one tensor shape: the dispatcher's repacks of the caller's
// views (densifying a strided input, filling the zero-bordered input copy, writing a dense
// result back into a strided output) and the layout change of channels-first layers run on the
// channels-last kernels (the implementations (dispatch/impl_*.cpp), the channels-last twin), which is a transpose of channels against positions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace deconv {
namespace detail {

// The axes of one walk over tensors of the same shape `extent`, tensor t's strides strides[t]:
// axes of one index dropped, ordered by the first tensor's strides (innermost first), and each
// axis that continues the one inside it in every tensor merged into it (the positions and
// channels of a channels-last row, an interleaved call's phases and groups: one dense run).
struct WalkAxes {
    std::vector<int64_t> extent;
    std::vector<std::vector<int64_t>> stride;  // [tensor][axis]
};
WalkAxes merged_axes(const std::vector<int64_t> &extent, const std::vector<const std::vector<int64_t> *> &strides);

// dst[i] = src[i] for every index i of `shape`, strides in elements of `elem` bytes (1, 2, 4 or
// 8). Layouts whose fastest axes differ are copied in square tiles (reads and writes both stay
// within a few cache lines per tile); large copies run on the kernels' thread pool.
void copy_tensor(const uint8_t *src, const std::vector<int64_t> &src_st, uint8_t *dst,
                 const std::vector<int64_t> &dst_st, const std::vector<int64_t> &shape, size_t elem);

}  // namespace detail
}  // namespace deconv
