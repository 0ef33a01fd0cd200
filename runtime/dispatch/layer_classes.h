// Layer classes the dispatch rules (the implementations (dispatch/impl_*.cpp)) test: facts of a layer's stride phases and the
// classes that measured sweeps routed on their own. Each predicate reads the plan's geometry and
// phases only (and, for the routes, that the policy pins none); the rules decide what follows.
#pragma once

#include "plan/plan_impl.h"

#include <cstdint>

namespace deconv {
namespace detail {

// A phase's reduction, at most: input channels x its taps.
int64_t phase_reduction(const Plan::Impl &p);
// Whether every phase of every axis has exactly `taps` taps.
bool uniform_taps(const Plan::Impl &p, int64_t taps);
// Whether every phase of every axis has exactly one tap (kernel = stride).
bool every_phase_one_tap(const Plan::Impl &p);
// 1D channels-first layers of one tap per phase at most that stay on the position kernels.
bool one_tap_1d_positions(const Plan::Impl &p);
// 2D-3D channels-first depthwise layers that run the interleaved kernel with tap-less phases.
bool depthwise_interleaves_below_stride(const Plan::Impl &p);
// Whether any phase has more than one tap.
bool has_multi_tap_phase(const Plan::Impl &p);

// 2D stride-2 layers of short phase reductions that stay channels-first (AVX-512).
bool short_strided_2d(const Plan::Impl &p);
// 1D stride-2 layers of few channels for the interleaved position kernels.
bool short_1d_positions(const Plan::Impl &p);
// 1D channels-last layers of one group at stride 1-2 that read their input in place, without a
// bordered copy (vectors of 8 lanes or more).
bool in_place_1d_channels_last(const Plan::Impl &p);
// 2D channels-first layers of half a vector of output channels (AVX2: or a whole one) on rows
// of a vector or less, for the channel tiles.
bool narrow_rows_channel_tiles(const Plan::Impl &p);
// Every axis at stride 1.
bool unit_strides(const Plan::Impl &p);
// Channel counts and strides the channel-dot kernels serve (either layout; the routes check theirs).
bool channel_dots_class(const Plan::Impl &p);
// Stride-1 channels-first layers (2D, 3D) whose planes the position kernels read as flat rows.
bool flat_rows_class(const Plan::Impl &p);
// 2D stride-2 position layers of 4-15 output channels that run per phase, not interleaved.
bool per_phase_few_channels(const Plan::Impl &p);
// 2D stride-2 layers of one or three output channels that take the channels-last twin.
bool few_outputs_twin(const Plan::Impl &p);
// Strided 2D and 3D layers of 4-6 output channels that take the channel dots on the channels-last
// twin (AVX-512).
bool dot_outputs_twin(const Plan::Impl &p);
// 1D kernel-4 stride-2 layers of long rows or 128-256 -> half as many channels that take the
// channels-last twin (AVX2).
bool kernel4_stride2_1d_twin(const Plan::Impl &p);
// Large 2D one-tap layers that take the channels-last twin.
bool large_one_tap_2d(const Plan::Impl &p);
// 1D one-tap layers of long output rows, which take it off the channel tiles.
bool large_one_tap_1d(const Plan::Impl &p);
// 2D one-tap layers at a stride of 2 or more along rows, off the channels-first channel tiles.
bool strided_one_tap_2d(const Plan::Impl &p);
// Whether Winograd (Algorithm::Auto) pays on `tiles` tiles per phase, below its general limit,
// with `products` multiplications against the plan's direct ones.
bool winograd_pays_on_few_tiles(const Plan::Impl &p, int64_t tiles, int64_t products);
// A channels-last block of `block` output channels, narrowed to one channel tile where a group
// holds two tiles or more (16-lane tiles), or where its weights would not stay in L2.
int64_t channels_last_channel_block(const Plan::Impl &p, int64_t block);
// Output channels per call of batch rows: one channel tile where all of them would take more
// weights than stay in L2, else 0 (every channel in one call).
int64_t batch_rows_channel_block(const Plan::Impl &p);
// The channel block (0: one packing) whose blocks the channel tiles cover exactly, where one
// block of the output channels would compute a tenth more of them (AVX-512).
int64_t exact_channel_blocks(const Plan::Impl &p, int64_t block);
// Layers (ranks 2-3) whose interior calls take the tap-row kernels, where their kernel has such a
// twin: weights per call of a `block`-channel block past L2's share (Threshold::BlockWeightBytes),
// over two or more tap rows per phase, on rows as wide as the position tile or wider and 16 rows
// or more.
bool tap_rows_class(const Plan::Impl &p, int64_t block);
// The channel block on narrow rows (the kernels' four-position tiles): one full tile where a
// group holds two or more, else `block` or a narrower one whose calls compute a tenth fewer
// products (AVX-512).
int64_t narrow_row_channel_block(const Plan::Impl &p, int64_t block);
// The fraction of the outputs that phases with taps write (kernels below the stride leave the
// rest zero), leaving out the innermost axis when `all_inner` (impl_layout_twins.cpp).
double tapped_fraction(const Plan::Impl &p, bool all_inner);

}  // namespace detail
}  // namespace deconv
