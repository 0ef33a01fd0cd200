// Layer classes the dispatch rules test (layer_classes.h); each rule's measurement is in its
// comment and docs/performance.md.
#include "dispatch/layer_classes.h"

#include "facts/channel_dots_facts.h"
#include "facts/channels_last_tiles.h"

#include <algorithm>
#include <cstdint>

namespace deconv {
namespace detail {

// The class rules below were measured on x86-64 only; elsewhere no layer is in their classes.
#if defined(__x86_64__)
constexpr bool kMeasuredHere = true;
#else
constexpr bool kMeasuredHere = false;
#endif

namespace {

// 2D layers of stride 2 along both axes (the classes below that were swept at that stride).
bool stride_2_2d(const Plan::Impl &p) {
    return p.geo.rank == 2 && p.info.strides[0] == 2 && p.info.strides[1] == 2;
}

}  // namespace

bool unit_strides(const Plan::Impl &p) {
    for (int64_t s : p.info.strides)
        if (s != 1) return false;
    return true;
}

// The channel-dot kernels (cpu_channel_dots_schedule.h) serve up to tiles::kDotsMaxChannels output
// channels per group from a vector of input channels. The channels-last kernels ran 1-3 output
// channels scalar and the channels-first twin the layers took instead transposed the whole input
// (dcgan_l5_nxc, 64 -> 3 channels: 5.4-6.0 -> 3.5-3.7 ms on AVX-512, 8.4 -> 3.8-4.2 on AVX2, with
// the image slices of cpu_executor.cpp).
// 4-6 output channels (above kDotsFewChannels), which the channels-first twin took, from
// kDotsMinVectors vectors of input channels (one vector: 0.9x), and in 2D and 3D at stride 1 from
// kDotsStrideOneVectors, whose twin reads planes as flat rows (0.35-0.74x on dots at 16-32 input
// channels; 128: 1.66x). AVX-512, 2 threads: 1.3-12x on 12 of 12 random layers of 32-256 input
// channels (d8_0: 256 -> 6 channels, 12^3, kernel 3 stride 2: 9.9 -> 0.9 ms). At 8 the
// channels-last kernels' half-vector tiles ran faster (0.56-0.88x on dots).
constexpr int64_t kDotsFewChannels = 3;
constexpr int64_t kDotsMinVectors = 2;
constexpr int64_t kDotsStrideOneVectors = 8;

bool channel_dots_class(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    const int64_t lanes = p.tiles.lanes;
    if (g.c_out > tiles::kDotsMaxChannels || g.c_in < lanes) return false;
    if (g.c_out <= kDotsFewChannels) return true;
    return g.c_in >= kDotsMinVectors * lanes &&
           (g.rank < 2 || !unit_strides(p) || g.c_in >= kDotsStrideOneVectors * lanes);
}

// A phase's reduction, at most: input channels x its taps.
int64_t phase_reduction(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    int64_t taps = 1;
    for (int i = 0; i < g.rank; i++) taps *= (g.kernel[i] + p.info.strides[i] - 1) / p.info.strides[i];
    return g.c_in * taps;
}

// 2D layers of stride 2 on both axes whose phase reductions (phase_reduction) are
// kShortReduction2D or shorter stay channels-first, on the interleaved position kernel (a
// bordered copy), as do those of kManyGroups2D groups or more up to twice that: the twin's two
// transposes and its channel tiles' group-strided reads cost more than its tiles save (4 groups
// of 16 -> 16, kernel 3, 28x28: 0.163 ms twinned, 0.085 here, Zen 5). Only with at most
// kShortMaxCout2D output channels per group, rows of kShortMinRowGroups groups of 2 outputs or
// more, and no odd last output (which runs per phase, a call per row): each of those ran faster
// on the twin. On 16 registers (AVX2) neither route won; ARM64 is not measured. The sweep is
// bench/strided_2d_layers.json, its numbers in docs/performance.md.
constexpr int64_t kShortReduction2D = 64;
constexpr int64_t kManyGroups2D = 16;
constexpr int64_t kShortMaxCout2D = 32;
constexpr int64_t kShortMinRowGroups = 16;

bool short_strided_2d(const Plan::Impl &p) {
    if (!kMeasuredHere) return false;
    const OpGeometry &g = p.geo;
    if (!stride_2_2d(p) || !p.regs.many || g.c_out > kShortMaxCout2D || p.out_spatial[1] % 2 != 0 ||
        p.out_spatial[1] / 2 < kShortMinRowGroups)
        return false;
    const int64_t r = phase_reduction(p);
    return r <= kShortReduction2D || (g.groups >= kManyGroups2D && r <= 2 * kShortReduction2D);
}

// 1D layers at stride 2 of kShort1DMaxCout or fewer output and kShort1DMaxCin or fewer input
// channels, whose every phase has taps, run on the plain interleaved position kernel (a bordered
// copy) where the blocked one does not serve them (prefers_blocked_interleave), not on the
// channel tiles or the twin: 32 -> 32, kernel 2, 400 positions: 0.101 ms on the channel tiles,
// 0.008 here (Zen 5; 0.69x -> 0.87x of oneDNN over 60 layers, docs/performance.md). Measured on
// x86-64 only.
constexpr int64_t kShort1DMaxCout = 64;
constexpr int64_t kShort1DMaxCin = 128;

bool short_1d_positions(const Plan::Impl &p) {
    if (!kMeasuredHere) return false;
    const OpGeometry &g = p.geo;
    if (g.rank != 1 || g.forward || g.data_format != DataFormat::NCX || p.policy.route != Policy::Route::Auto ||
        p.info.strides[0] != 2 || g.c_out > kShort1DMaxCout || g.c_in > kShort1DMaxCin || g.c_out < 16)
        return false;
    return every_phase_tapped(p.phases[0]);
}

// 1D channels-last layers of one group at stride 1 or 2 on the channel tiles read the caller's
// input in place instead of a zero-bordered copy of it, which moves every input byte once more
// per run: the outputs whose taps all read inside run on the interior kernel, the few at either
// end of a row on the bounded one (Plan::Impl::in_place_edges). 32 -> 32 channels, kernel 3
// stride 1, 25600 positions: 0.66 -> 0.39 ms (2 threads, Zen 5). The sweep
// (bench/in_place_1d_layers.json, docs/performance.md): 91 layers of 16-512 channels, 400-25600
// positions, kernels 2-7 at stride 1-2, 1.13x in geomean on AVX-512 (0.87-1.72x) and 1.09x under
// AVX2 (0.93-1.48x); under SSE4.1 (4 lanes) 1.03x with a sixth of them slower, and at stride 8
// (kernel 16) 1.04x with 0.78x at worst: not those.
constexpr int64_t kInPlace1DMaxStride = 2;
constexpr int64_t kInPlace1DMinLanes = 8;

bool in_place_1d_channels_last(const Plan::Impl &p) {
    if (!kMeasuredHere) return false;
    const OpGeometry &g = p.geo;
    return g.rank == 1 && !g.forward && g.data_format == DataFormat::NXC && g.groups == 1 &&
           p.tiles.lanes >= kInPlace1DMinLanes && p.channel_major && !p.groups && !p.dots && !p.ci_pairs &&
           !p.group_block && p.info.strides[0] <= kInPlace1DMaxStride;
}

// 2D channels-first layers of half a vector of output channels per group (8 on AVX-512, 4 on
// AVX2; on AVX2 also a whole vector, 8), kNarrowRowsMinCin or more input channels and phase
// reductions (phase_reduction) up to kNarrowRowsMaxReduction, whose phase rows along the
// innermost axis are a vector of positions or narrower, run on the channel tiles: the position
// tiles of such a row are one partly empty vector or quarter vectors. 32 -> 8, kernel 4 stride
// 2, 14x14: 0.052 -> 0.024 ms (AVX-512, 2 threads, Zen 4 VM). The sweep (bench/
// narrow_rows_layers.json, docs/performance.md): 1-4 groups of 16-64 -> 8 at 7x7 and 14x14,
// 1.12-2.81x on AVX-512; under AVX2 16-32 -> 4 at 7x7 1.04-3.3x, 16-64 -> 8 at 7x7 1.6-2.0x.
// What lost: three quarters of a vector (12 channels, 6 on AVX2: two overlapping half-vector
// tiles, 0.7-1.8x), a whole vector on AVX-512 (16 channels at 7x7: 0.76-1.03x), rows of two
// vectors (14x14 under AVX2, 4 channels: 0.2-0.4x) and a reduction of 96 x 25 taps (kernel 5
// dilation 2: 0.063 -> 0.074 ms). Not measured with 4 lanes (SSE4.1, NEON).
constexpr int64_t kNarrowRowsMinCin = 16;
constexpr int64_t kNarrowRowsMaxReduction = 256;

bool narrow_rows_channel_tiles(const Plan::Impl &p) {
    if (!kMeasuredHere) return false;
    const OpGeometry &g = p.geo;
    if (g.rank != 2 || g.forward || g.data_format != DataFormat::NCX || p.dtype != DType::f32 ||
        p.policy.route != Policy::Route::Auto)
        return false;
    const bool half_vector = 2 * g.c_out == p.tiles.lanes, avx2_vector = !p.regs.many && g.c_out == p.tiles.lanes;
    return p.tiles.lanes >= 8 && (half_vector || avx2_vector) && g.c_in >= kNarrowRowsMinCin &&
           phase_reduction(p) <= kNarrowRowsMaxReduction && widest_phase(p.phases[1]) <= p.tiles.lanes;
}

// Channels-first backprop layers of stride 1 on every axis, 2D and 3D, with fewer than 16 output
// channels per group (the position kernels' layers) and output rows narrower than the position
// tile (two vectors) run on the position kernels with flat rows (Plan::Impl::flat_rows): each
// plane of the zero-bordered input copy is one row, so the kernel's vectors span its rows instead
// of running 8- and 4-lane vectors along rows narrower than a native one, and the channels-last
// twin's transposes and half-vector tiles are not needed. 48 random such layers (1-256 -> 1-12
// channels, 1-64 groups, kernels 1-5, dilations 1-3, 6-28 wide, 2 threads, Zen 4): 1.1-7.5x on
// 33 of them (96 -> 8 channels, 12^3, kernel 3: 2.0 -> 1.0 ms). Not 3D depthwise layers, whose
// twin vectorizes groups (0.15-0.45x here), nor groups of 8 -> 8-15 channels, whose twin has
// dense-group tiles (0.64x). On 16 registers (AVX2) only below 4 output channels per group: 1.2-6x
// there, where 4-12 channels ran 0.55-1.2x. Measured on x86-64 only.
bool flat_rows_class(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NCX || g.rank < 2 || p.policy.flat_rows == Toggle::Off) return false;
    if (!unit_strides(p)) return false;
    if (p.policy.flat_rows == Toggle::On) return true;
    if (!kMeasuredHere || p.policy.route != Policy::Route::Auto) return false;
    const bool depthwise = g.c_in == 1 && g.c_out == 1;
    const bool dense_groups =
        g.groups > 1 && g.c_in == tiles::kDenseGroupChannels && tiles::dense_group_tile(p.tiles.lanes, g.c_out);
    if ((depthwise && g.rank == 3) || dense_groups) return false;
    return g.c_out < (p.regs.many ? 16 : 4) && p.out_spatial[g.rank - 1] < 2 * p.tiles.lanes;
}

// 2D position-vectorized layers of kPerPhaseMinCout to 15 output channels and
// kPerPhaseMinCin or more input channels at stride 2 run per phase, not interleaved: the
// per-phase tile holds a vector of positions for each of its channels, the interleaved one splits
// its accumulators between the two phases (64 -> 4, kernel 3, 32x32, batch 16: 0.84 ms
// interleaved, 0.33 per phase, Zen 5 AVX-512; AVX2 gained too). Fewer output channels or input
// channels were faster either way by layer (docs/performance.md). Measured on x86-64 only.
constexpr int64_t kPerPhaseMinCout = 4;
constexpr int64_t kPerPhaseMinCin = 32;

bool per_phase_few_channels(const Plan::Impl &p) {
    if (!kMeasuredHere) return false;
    const OpGeometry &g = p.geo;
    return g.rank == 2 && !p.groups && p.info.strides[1] == 2 && g.c_out >= kPerPhaseMinCout && g.c_out < 16 &&
           g.c_in >= kPerPhaseMinCin;
}

// 2D layers of one or three output channels (a group) and kFewOutputsMinCin or more input
// channels at stride 2 on both axes run on the channels-last twin, where the position kernels'
// tiles are short of accumulators or of positions:
// - on 16 vector registers (AVX2), one output channel at any size (the interleaved tile holds 2
//   accumulators; 64 -> 1, kernel 4, 16x16, batch 64: 1.03 -> 0.54 ms), and three with a batch of
//   kFewOutputsMinImages or kFewOutputsManyCin input channels where a phase has one tap fewer
//   (kernel 3: 32 -> 3, 32x32, batch 32: 1.49 ms interleaved, 0.89 twinned), or
//   kFewOutputsTwoTapsCin at kernel 4 (two taps per phase; 64 -> 3, 32x32, batch 64 (dcgan_l5):
//   4.0 ms interleaved on its 12-accumulator tile, 5.4 twinned; 256 -> 3: 55 against 28);
// - on any x86 CPU, a batch of kFewOutputsMinImages or more whose phase rows hold at most
//   kFewOutputsNarrowRow positions (under the position kernel's two 16-lane vectors on AVX-512;
//   32 -> 3, kernel 3, 16x16, batch 64: 0.48 -> 0.25 ms).
// Three output channels of a single image and 32-64 input channels stayed, at 0.81-1.19x either
// way (AVX2). The 44-layer sweep is in docs/performance.md. Measured on x86-64 only.
constexpr int64_t kFewOutputsMinCin = 32;
constexpr int64_t kFewOutputsMinImages = 16;
constexpr int64_t kFewOutputsManyCin = 128;
constexpr int64_t kFewOutputsTwoTapsCin = 256;
constexpr int64_t kFewOutputsNarrowRow = 16;

bool few_outputs_twin(const Plan::Impl &p) {
    if (!kMeasuredHere) return false;
    const OpGeometry &g = p.geo;
    if (!stride_2_2d(p) || g.forward || g.data_format != DataFormat::NCX || g.groups != 1 ||
        (g.c_out != 1 && g.c_out != 3) || g.c_in < kFewOutputsMinCin)
        return false;
    if (g.n >= kFewOutputsMinImages && widest_phase(p.phases[1]) <= kFewOutputsNarrowRow) return true;
    if (p.regs.many) return false;
    if (g.c_out == 1) return true;
    const bool two_taps =
        g.kernel[0] == 4 && g.kernel[1] == 4 && p.info.dilations[0] == 1 && p.info.dilations[1] == 1;
    if (two_taps) return g.c_in >= kFewOutputsTwoTapsCin;
    return g.n >= kFewOutputsMinImages || g.c_in >= kFewOutputsManyCin;
}

// Channels-first 2D and 3D layers of 4-6 output channels (above kDotsFewChannels) with a stride
// above 1 that the channel dots serve (channel_dots_class) run on the channels-last twin, on its
// channel-dot kernels, on CPUs of 32 vector registers: 3D layers, and
// 2D ones whose phase reduction (phase_reduction) is kDotTwinMinReduction or longer. AVX-512, 2
// threads, 32 random layers of 32-256 input channels: 1.2-5.5x on the 16 taken (64 -> 5, kernel
// 3 stride 2, 16^3: 4.0 -> 0.78 ms). Left out, as slower twinned: 2D stride 1 (0.06-0.21x), 1D
// (0.28-0.74x), 2D reductions of 32-128 (0.47-0.91x); 3D stride 1 (0.45-14x, no rule found);
// AVX2 (2D 0.3-0.74x, 3D 0.6-2.5x).
constexpr int64_t kDotTwinMinReduction = 256;

bool dot_outputs_twin(const Plan::Impl &p) {
    if (!kMeasuredHere) return false;
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NCX || g.rank < 2 || !p.regs.many ||
        g.c_out <= kDotsFewChannels || unit_strides(p) || !channel_dots_class(p))
        return false;
    return g.rank == 3 || phase_reduction(p) >= kDotTwinMinReduction;
}

// 1D layers of kernel 4 at stride 2 run on the channels-last twin on 16 vector registers of 8
// lanes (AVX2), not on the position kernels (blocked or plain interleaved), where the twin's
// channel tiles outrun them by more than its two transposes cost: rows of kLongRows1D input
// positions or more (kLongRowsMinCin+ -> kLongRowsMinCout+ channels), and kMidCinMin to
// kMidCinMax input channels to at most half as many output channels at any row length
// (hifigan_up3, 128 -> 64 at 25600 positions: 14.9 -> 12.0 ms). 64 input channels on shorter
// rows and 128 -> 128 did not gain; the sweep is bench/vocoder_1d_layers.json, its numbers in
// docs/performance.md. On 32 registers the tuner kept the position kernels. Measured on x86-64
// only.
constexpr int64_t kLongRows1D = 16384;
constexpr int64_t kLongRowsMinCin = 64;
constexpr int64_t kLongRowsMinCout = 32;
constexpr int64_t kMidCinMin = 128;
constexpr int64_t kMidCinMax = 256;

bool kernel4_stride2_1d_twin(const Plan::Impl &p) {
    if (!kMeasuredHere) return false;
    const OpGeometry &g = p.geo;
    if (g.rank != 1 || g.forward || g.data_format != DataFormat::NCX || g.groups != 1 || p.regs.many ||
        p.regs.vector_bits != 256 || p.info.strides[0] != 2 || g.kernel[0] != 4 || p.info.dilations[0] != 1 ||
        g.c_in < kLongRowsMinCin || g.c_out < kLongRowsMinCout)
        return false;
    if (g.in_spatial[0] >= kLongRows1D) return true;
    return g.c_in >= kMidCinMin && g.c_in <= kMidCinMax && 2 * g.c_out <= g.c_in;
}

bool uniform_taps(const Plan::Impl &p, int64_t taps) { return uniform_taps(p.phases, taps); }

// Every phase of every axis with exactly one tap (kernel = stride): the layer is a plain matrix
// product per phase, with no phase left without taps.
bool every_phase_one_tap(const Plan::Impl &p) { return uniform_taps(p, 1); }

// Large 2D layers of one-tap phases take the twin after all: those whose output planes hold
// kOneTapTwinPlaneBytes or more (of f32) with more than kOneTapTwinMaxCout output channels (the
// channels-first tiles' stores then scatter across planes that far apart), and those of
// kOneTapTwinProducts or more weights (8 MiB of f32). unet_up1 (1024 -> 512, 28x28): 12.6-14.9 ms
// on the channel tiles, 9.4 twinned on Zen 5 (5% the other way on Zen 4); the sweep is in
// docs/performance.md. x86-64 only, where it was measured.
constexpr int64_t kOneTapTwinPlaneBytes = int64_t(32) << 10;
constexpr int64_t kOneTapTwinMaxCout = 32;
constexpr int64_t kOneTapTwinProducts = int64_t(1) << 21;

bool large_one_tap_2d(const Plan::Impl &p) {
    if (!kMeasuredHere) return false;
    const OpGeometry &g = p.geo;
    if (g.rank != 2 || !every_phase_one_tap(p)) return false;
    const int64_t plane_bytes = p.out_spatial[0] * p.out_spatial[1] * 4;
    const int64_t weights = g.c_in * g.c_out * g.kernel[0] * g.kernel[1];
    return (plane_bytes >= kOneTapTwinPlaneBytes && g.c_out > kOneTapTwinMaxCout) || weights >= kOneTapTwinProducts;
}

// 1D layers of one-tap phases whose output rows hold kOneTapTwinRowBytes or more (of f32) take
// the twin too, where they would run the channel tiles (one_tap_channel_tiles): a tile stores
// each position's channels a row apart, and on rows of a power of two every store of a tile
// lands in one cache set. 64 -> 64, kernel 1, 8192 positions: 1.94 ms there, 0.76 twinned;
// kernel 4 stride 4 into 4096: 1.94 against 0.53 (2 threads, Sapphire Rapids; the 47-layer sweep
// in docs/performance.md: 1.3-3.9x from 16 KiB rows). Rows of 4.8-12.8 KiB ran 0.6-1.5x twinned,
// so they stay. x86-64 only, where it was measured.
constexpr int64_t kOneTapTwinRowBytes = int64_t(16) << 10;

bool large_one_tap_1d(const Plan::Impl &p) {
    return kMeasuredHere && p.geo.rank == 1 && every_phase_one_tap(p) && p.out_spatial[0] * 4 >= kOneTapTwinRowBytes;
}

// 2D layers of one-tap phases at a stride of 2 or more along rows (kernel = stride, as UNet's
// up-convolutions) leave the channel-vectorized channels-first kernels: each phase's outputs lie
// every s-th element of a row, so their tiles store an element at a time across output planes
// (64 -> 32, kernel 2 stride 2, 32x32, batch 8: 4.1 ms there, 0.61 on the position kernels; 256
// -> 128 at 16x16: 0.80, 0.24 twinned; 2 threads, Zen 5). They take the channels-last twin, or
// the position kernels where a short reduction keeps them channels-first (short_strided_2d); the
// 20-layer sweep is in docs/performance.md.
// Measured on x86-64 only.
bool strided_one_tap_2d(const Plan::Impl &p) {
    return kMeasuredHere && p.geo.rank == 2 && p.info.strides[1] > 1 && every_phase_one_tap(p);
}

// Winograd under Algorithm::Auto (strategy.cpp, choose_winograd_tile) on phases of fewer tiles
// than its general limit: from kWinogradFewTiles tiles per phase over the batch, with
// kWinogradFewTilesMinChannels or more input and output channels per group, whose products then
// reuse each transformed weight across enough channels to pay for its transforms. On AVX-512
// where it saves 1.67x of the products or more (2D F(4, 2) on 2x2-tap phases whose pads clip the
// border, F(4, 3)); on 16 registers only where it saves more than F(4, 2) can (2.56x: F(4, 3) on
// 3x3 phases), F(4, 2) there ran 0.43-0.97x as fast as the direct kernels. Zen 4, 2 threads:
// kernel 4 stride 2 pad 1 (1.96x saved at 4x4 inputs), 64-512 -> 64-256 channels, 4x4 to 16x16,
// 1.06-2.27x; 7x7, 4 tiles, 1.21-1.31x; kernel 3 stride 1, 64-96 -> 64-128 channels, 7x7 to
// 16x16, 1.94-2.62x. 64 -> 32 ran 0.64-2.0x (docs/performance.md). Measured on x86-64 only.
constexpr int64_t kWinogradFewTiles = 4;
constexpr int64_t kWinogradFewTilesMinChannels = 64;

bool winograd_pays_on_few_tiles(const Plan::Impl &p, int64_t tiles, int64_t products) {
    if (!kMeasuredHere || tiles < kWinogradFewTiles || p.geo.c_in < kWinogradFewTilesMinChannels ||
        p.geo.c_out < kWinogradFewTilesMinChannels)
        return false;
    return p.regs.many ? products * 5 <= p.macs * 3 : products * 13 <= p.macs * 5;  // 1.67x, 2.6x
}

// Channels-last output-channel blocks (strategy.cpp, choose_channel_block) narrow to one channel
// tile of 16-lane vectors (AVX-512: 64 channels of 32-bit accumulators) wherever a group holds two
// such tiles or more: a tile's weights then stream from one contiguous run, where a block of two
// tiles read 256 of every 512 bytes. 36 layers of 128-1024 -> 128-512 channels, 2 threads,
// Sapphire Rapids: 1.11x in geomean (bench/one_tile_blocks_layers.json; docs/performance.md).
constexpr int64_t kOneTileBlockLanes = 16;

namespace {

bool one_tile_blocks(const Plan::Impl &p) {
    const int64_t tile = p.tiles.four_position_channels;
    return tile > 0 && p.tiles.lanes >= kOneTileBlockLanes && p.geo.c_out >= 2 * tile;
}

}  // namespace

// Blocks whose weights per phase (block x input channels x taps of the densest phase) pass
// kBlockWeightBytes narrow to one tile too: two tiles' weights stop fitting a 1 MiB L2 beside the
// rows they serve. 192 -> 128, kernel 3, stride 1, 28x28: 1.11 -> 0.87 ms; 384 -> 128: 2.9 -> 2.0
// (2 threads, Zen 5; the 39-layer sweep is bench/channel_block_layers.json, its numbers in
// docs/performance.md). Measured on x86-64 only.
constexpr int64_t kBlockWeightBytes = int64_t(768) << 10;

namespace {

// Bytes of the weights one call of `channels` output channels reads over the densest phase.
int64_t block_weight_bytes(const Plan::Impl &p, int64_t channels) {
    return channels * phase_reduction(p) * (int64_t)dtype_size(p.dtype);
}

}  // namespace

int64_t channels_last_channel_block(const Plan::Impl &p, int64_t block) {
    const int64_t tile = p.tiles.four_position_channels;
    if (!kMeasuredHere || tile <= 0 || block <= tile) return block;
    if (one_tile_blocks(p)) return tile;
    return block_weight_bytes(p, block) > kBlockWeightBytes ? tile : block;
}

// Batch rows (strategy.cpp, choose_batch_rows) run every output channel in one call, unless the
// call's weights (output channels x the phase reduction) pass kBatchRowsWeightBytes: then blocks
// of one channel tile, each block's weights serving all the images from L2 before the next
// streams in. 512 -> 256, batch 64, 4x4, kernel 4 stride 2 (dcgan_l2): 39.6 -> 30.4 ms on
// Emerald Rapids (2 MiB of weights; 1.03-3.1x over the sweep's layers of 2-16 MiB, at 1-1.5 MiB
// 0.77-1.64x, so those stay whole). The sweep is bench/batch_rows_layers.json, its numbers in
// docs/performance.md. Measured on x86-64.
constexpr int64_t kBatchRowsWeightBytes = int64_t(1) << 20;

int64_t batch_rows_channel_block(const Plan::Impl &p) {
    const int64_t tile = p.tiles.four_position_channels;
    if (!kMeasuredHere || tile <= 0 || p.geo.c_out <= tile) return 0;
    return block_weight_bytes(p, p.geo.c_out) > kBatchRowsWeightBytes ? tile : 0;
}

// Output channels per group that the tiles a call takes (generators/schedules/channels_last_
// tiles.h) cover only by shifting a tile back over channels already computed (40 f32 channels
// computed as 64, 72 to 112 as 128) run in blocks the tiles cover exactly, where that computes a
// tenth fewer channels or more: blocks of the full tile and a last block of the rest (72: 64 + 8;
// 112: 64 + 48, on the three-vector tile of two rows), or under a full tile, whole vectors and a
// half vector (24: 16 + 8, 40: 32 + 8; not 48 as 32 + 16, whose one-vector tiles broadcast an
// input value per multiply-add). In one block or the last of blocks `block` (0: one packing). 40
// and 72 channels, 14x14 to 28x28 and 8^3, 2 threads, Zen 4: 1.26-1.47x (the sweeps are in
// docs/performance.md). Measured on x86-64 with 32 registers only.
constexpr int64_t kExactBlocksMinSaving = 10;  // percent of the channels computed

namespace {

// Channels a call of `c` output channels per group computes on tile `tile` (its last tile shifted
// back over channels already computed; null: scalar, exactly `c`).
int64_t tiled_channels(const tiles::ChannelTile *tile, int64_t c) {
    return tile ? tiles::tiled_positions<int64_t>(c, tiles::tile_channels(*tile)) : c;
}

// The same for the tile such a call takes over phase rows of `width` outputs and `rows` rows of
// the next axis (facts/channels_last_tiles.h).
int64_t tiled_channels(const KernelTiles &t, int64_t c, int64_t width, int64_t rows) {
    return tiled_channels(tiles::channels_last_tile(t.channel_tiles, c, width, rows), c);
}

// The rows of the next axis that the calls of a plan's phases hold, at least (two-row tiles need
// two); 1 for 1D layers.
int64_t fewest_phase_rows(const Plan::Impl &p) {
    if (p.geo.rank < 2) return 1;
    int64_t rows = INT64_MAX;
    for (const AxisPhase &a : p.phases[p.geo.rank - 2]) rows = std::min(rows, a.out_count);
    return rows;
}

}  // namespace

int64_t exact_channel_blocks(const Plan::Impl &p, int64_t block) {
    const int64_t c = p.geo.c_out, full = p.tiles.four_position_channels, l = p.tiles.lanes;
    if (!kMeasuredHere || !p.regs.many || full <= 0 || l <= 8 || (block > 0 && block < c)) return block;
    // The candidate: full tiles, or under one, the whole vectors before a half vector.
    const int64_t b = c > full ? full : c % l == l / 2 && (c - l / 2 == l || c - l / 2 == 2 * l) ? c - l / 2 : 0;
    if (b == 0) return block;
    const int64_t width = widest_phase(p.phases[p.geo.rank - 1]), rows = fewest_phase_rows(p);
    const int64_t whole = tiled_channels(p.tiles, c, width, rows),
                  split = c / b * b + tiled_channels(p.tiles, c % b, width, rows);
    return (whole - split) * 100 >= whole * kExactBlocksMinSaving ? b : block;
}

// Channels-last layers whose weights per call (block x input channels x a phase's taps) pass
// kBlockWeightBytes, more than a block of one channel tile keeps in L2 (channels_last_channel_block
// narrows wider blocks to one tile), over two or more tap rows per phase, on rows as wide as the
// position tile or wider, run their interior calls on the tap-row kernels
// (generators/schedules/cpu_tap_rows_schedule.h): each tap row's weights serve a band of output
// rows from L2, where the channels-last kernels' position tiles each stream every tap's. 1024 ->
// 256, kernel 4 stride 2, 16x16: 22.8 -> 15.0 ms; the seven such layers of
// bench/channel_block_layers.json 1.17x in geomean, those of 256-768 KiB 1.0x (2 threads,
// Sapphire Rapids; docs/performance.md).
// Phases of fewer rows than kTapRowsMinRows (the next axis's) leave the bands of
// tiles::kTapRowsBandRows too few to share among the threads (14 rows: 0.75-1.1x).
constexpr int64_t kTapRowsMinRows = 16;

// (Which kernels have a tap-row twin, channels-last f32 ones of ranks 2-3 and no pairs, groups or
// dots, the kernel matrix says: strategy.cpp looks it up.)
bool tap_rows_class(const Plan::Impl &p, int64_t block) {
    const OpGeometry &g = p.geo;
    if (!kMeasuredHere || g.forward || g.rank < 2) return false;
    // (Rows narrower than the position tile keep the channels-last kernels' narrow-row tiles.)
    if (widest_phase(p.phases[g.rank - 1]) < p.tiles.row_positions || fewest_phase_rows(p) < kTapRowsMinRows)
        return false;
    int64_t rows = 1, taps = 1;
    for (int i = 0; i < g.rank; i++) {
        const int64_t most = most_taps(p.phases[i]);
        taps *= most;
        if (i + 1 < g.rank) rows *= most;  // spec order: the innermost axis is the last
    }
    const int64_t channels = block > 0 ? std::min(block, g.c_out) : g.c_out;
    return rows >= 2 && channels * g.c_in * taps * (int64_t)dtype_size(p.dtype) > kBlockWeightBytes;
}

// Channels-last output-channel blocks on narrow rows (strategy.cpp, choose_channel_block: every
// phase row of the innermost axis under the kernels' position tile), where the channel tiles of
// four positions run: the full tile, then 3, 2 and 1 vectors, each shifting its last tile back
// over channels already computed (56 channels: 48 + a shifted 48 in one call). The block, among
// multiples of the full tile up to `block` (and two vectors under one full tile), whose calls
// compute the fewest products, where it saves a tenth (kExactBlocksMinSaving); no last block
// under a vector, which would run one position per step. Products count by their tile's
// measured cost: 4/3 of the full tile's on two and three vectors, 5/3 on one vector, which
// broadcasts an input value per multiply-add. 56 channels as 32 + 24, 4x4 inputs, 2 threads,
// Zen 4: 1.22x (docs/performance.md has the sweep). Groups of two full tiles or more take blocks
// of one (one_tile_blocks), whose weights stream contiguously: 1.15x over the counted blocks on 28
// layers of rows of 4 and 5 (bench/one_tile_blocks_layers.json). Measured on x86-64 with 32
// registers only.
namespace {

// Products the narrow-row tiles compute for `c` output channels over a row of `width` (4 or
// more) and `rows` rows in one call, in thirds of a full-tile product.
int64_t narrow_row_cost(const KernelTiles &t, int64_t c, int64_t width, int64_t rows) {
    // (c is a vector or more: the one-vector tile of one position per step takes any row.)
    const tiles::ChannelTile *tile = tiles::channels_last_tile(t.channel_tiles, c, width, rows);
    const int64_t weight = tile->channels == t.four_position_channels ? 3 : tile->channels >= 2 * t.lanes ? 4 : 5;
    return weight * tiled_channels(tile, c) * tiles::tiled_positions<int64_t>(width, tile->positions);
}

}  // namespace

int64_t narrow_row_channel_block(const Plan::Impl &p, int64_t block) {
    const int64_t c = p.geo.c_out, full = p.tiles.four_position_channels, l = p.tiles.lanes;
    if (!kMeasuredHere || !p.regs.many || full != 4 * l || c < 2 * l) return block;
    const auto &row_phases = p.phases[p.geo.rank - 1];
    for (const AxisPhase &a : row_phases)
        if (a.out_count < tiles::kChannelsLastShortTile) return block;
    if (one_tile_blocks(p)) return full;
    const int64_t rows = fewest_phase_rows(p);
    const auto cost = [&](int64_t b) {
        int64_t sum = 0;
        for (const AxisPhase &a : row_phases)
            sum += c / b * narrow_row_cost(p.tiles, b, a.out_count, rows) +
                   (c % b ? narrow_row_cost(p.tiles, c % b, a.out_count, rows) : 0);
        return sum;
    };
    const int64_t whole = cost(block);
    int64_t best = block, best_cost = whole;
    for (int64_t b = block / full * full; b >= 2 * l; b -= b > full ? full : l) {
        if (b < full && c >= full) break;
        if (c % b && c % b < l) continue;
        const int64_t n = cost(b);
        if (n < best_cost) best = b, best_cost = n;
    }
    return (whole - best_cost) * 100 >= whole * kExactBlocksMinSaving ? best : block;
}

// 1D channels-first layers of one tap per phase at most (kernel below the stride) stay on the
// position kernels, not the channels-last twin, where a third of the phases or fewer have taps
// (kernel 1 at stride 3: 1.48x in geomean, 1.12x at least) or half of them do and every phase
// holds as many outputs (kernel 1 at stride 2 with output_padding 1: 1.33x, 1.04x at least).
// 16-256 -> 8-128 channels, rows of 100-4000, 2 threads, Zen 4: the twin transposes a whole
// output of which those phases write a part, around a reduction of the input channels alone.
// At stride 2 with a tail output (kernel 1, output_padding 0: 0.76-1.41x) and at kernels 2 of
// strides 3-4 (0.62-1.49x) it stays as it was. Measured on x86-64 only.
bool one_tap_1d_positions(const Plan::Impl &p) {
    if (!kMeasuredHere || p.geo.rank != 1 || p.geo.forward || has_multi_tap_phase(p)) return false;
    const int64_t s = p.info.strides[0];
    int64_t tapped = 0;
    for (const AxisPhase &a : p.phases[0]) tapped += a.tap_count > 0;
    return tapped * 3 <= s || (tapped * 2 <= s && p.out_spatial[0] % s == 0);
}

// 2D and 3D channels-first depthwise layers with kernels below the stride run the interleaved
// kernel on CPUs of 32 vector registers (strategy.cpp, interleaved_kernel_for): their per-phase
// rows of a stride's spacing store an element at a time, the interleaved rows whole vectors (the
// tap-less phases' zeros within them). 32-96 groups of 7x7 to 56x56, kernels 1-3 at strides 2-4,
// 2 threads, Zen 4: 1.41x in geomean, 1.61x where the rows hold whole groups of s outputs. Not
// rows of fewer than kTailedMinGroups groups with kManyTailOutputs outputs past them, each a
// transposed column call (kernel 3 stride 4 on 7x7: 0.5-0.6x), nor on 16 registers (AVX2:
// 0.58-0.82x at strides 2 and 3, 0.5-4.3x at stride 4). Measured on x86-64 only.
constexpr int64_t kTailedMinGroups = 12;
constexpr int64_t kManyTailOutputs = 3;

bool depthwise_interleaves_below_stride(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    const int in = g.rank - 1;
    const int64_t s = p.info.strides[in], tail = p.out_spatial[in] % s;
    return kMeasuredHere && g.c_in == 1 && g.c_out == 1 && g.rank >= 2 && p.regs.many &&
           !(tail >= kManyTailOutputs && p.out_spatial[in] / s < kTailedMinGroups);
}

// Whether any phase has more than one tap.
bool has_multi_tap_phase(const Plan::Impl &p) {
    for (const auto &axis : p.phases)
        if (most_taps(axis) > 1) return true;
    return false;
}

}  // namespace detail
}  // namespace deconv
