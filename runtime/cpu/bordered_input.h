// The zero-bordered input copy of backprop layers on the CPU: the input with margins on every
// spatial axis wide enough that every tap of every phase reads inside it, so that every phase
// runs an interior kernel (no bounds test per read). Plans keep the copies' buffers between runs
// (BufferPool): their margins stay zero, so a run rewrites the interior alone and touches no
// fresh pages.
#pragma once

#include "kernels/buffer_pool.h"
#include "layer/op_geometry.h"
#include "layer/phase_decomposition.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace deconv {
namespace detail {

// The largest zero-bordered input copy a plan makes (bytes, Threshold::MaxBorderedInputBytes);
// larger inputs run the bounded kernel on the caller's buffer, so that the spec's 3D example keeps
// its memory at the tensors' size. (the implementations (dispatch/impl_*.cpp) reads the row by this name.)
extern const int64_t kMaxBorderedInputBytes;

// Margins (before, after) each spatial axis (spec order) needs so that every tap of every phase
// reads inside a zero-bordered copy of the input; false when the copy would be too large.
// `interleave` (the innermost axis's stride s, 0: none): also what the interleaved kernel reads
// there (interleaved_reach; the packed filter gives the shorter phases zero taps).
bool border_margins(const std::vector<std::vector<AxisPhase>> &phases, const OpGeometry &geo, size_t elem,
                    int64_t interleave, int64_t inner_pad_begin, int64_t inner_out, std::vector<int64_t> &lo,
                    std::vector<int64_t> &hi);

// A zero-bordered copy of the input: the pool's buffer, its dense strides (shape order) and the
// element offset of the interior's first element.
// `group_channels` > 0 (group-major, channels last): the channel axis holds groups of so many
// channels, each group's block of positions `group_stride` elements after the previous one's; the
// channels of `strides` are then those within a group.
// `group_block` > 1 (block-interleaved): each block of group_channels holds that many groups'
// channels with the groups innermost, channel ci of the block's group gi at ci * group_block + gi
// (the group-block kernels' input: generators/group_block_layout.h).
struct BorderedInput {
    BufferPool::Lease buffer;
    std::vector<int64_t> strides;
    int64_t origin = 0;
    int64_t group_channels = 0, group_stride = 0;
    int64_t group_block = 0;
};

// A buffer of `pool` for the input of `shape` with margins `lo`/`hi` per spatial axis;
// `first_spatial`: the shape index of spatial axis 0 (2 for NCX, 1 for NXC, whose channels stay
// the innermost axis, without margins). A plan's pool hands back buffers of its earlier runs,
// whose margins are still zero: only the interior is ever written. `channels_in_rows` (NCX, two
// or more spatial axes): the channel axis is laid out between the innermost spatial axis and the
// others ([N, outer spatial.., C, X]), so that a kernel reducing over channels at fixed rows
// steps one padded row per channel rather than one whole plane (see cpu_executor.cpp).
// `group_channels` > 0 (NXC): group-major ([N, X_1, C / group_channels, X_2.., group_channels] for
// two or more spatial axes, [N, C / group_channels, X, group_channels] for one), so that each
// group's positions lie group_channels elements apart (Plan::Impl::group_major_input).
// `group_block` > 1 with it: blocks of so many groups, block-interleaved (BorderedInput).
BorderedInput bordered_buffer(BufferPool &pool, const std::vector<int64_t> &shape, const std::vector<int64_t> &lo,
                              const std::vector<int64_t> &hi, size_t first_spatial, size_t elem,
                              bool channels_in_rows = false, int64_t group_channels = 0, int64_t group_block = 0);

// Copies the interior of the leading axes' index range [begin, begin + count) of `src` (strides
// `src_st`, any layout; `leading` = the shape's axes before the spatial ones, flattened) into
// `dst`: a whole copy with leading = [0, product of those axes).
void copy_bordered(BorderedInput &dst, const uint8_t *src, const std::vector<int64_t> &src_st,
                   const std::vector<int64_t> &shape, size_t first_spatial, size_t elem, int64_t begin = 0,
                   int64_t count = -1);

// Both: the whole input copied.
BorderedInput bordered_copy(BufferPool &pool, const uint8_t *src, const std::vector<int64_t> &src_st,
                            const std::vector<int64_t> &shape, const std::vector<int64_t> &lo,
                            const std::vector<int64_t> &hi, size_t first_spatial, size_t elem);

// Edge windows of 1D layers (the implementations (dispatch/impl_*.cpp)): positions [first, first + width) of every row of an NCX
// input (images x channels rows: row (n, c) at src + n * image_stride + c * row_stride elements,
// `extent` dense positions), zero outside [0, extent), into dst's dense rows of `width` elements.
// Every element of dst is written.
void copy_row_window(uint8_t *dst, const uint8_t *src, int64_t images, int64_t image_stride, int64_t channels,
                     int64_t row_stride, int64_t extent, int64_t first, int64_t width, size_t elem);

}  // namespace detail
}  // namespace deconv
