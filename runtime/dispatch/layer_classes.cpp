// Layer classes the dispatch rules test (layer_classes.h). Their thresholds, and whether a rule
// applies on the plan's CPU class, are rows of plan/thresholds.cpp; each rule's measurements are
// in docs/performance-log.md, "Rules: the measurements behind the thresholds".
#include "dispatch/layer_classes.h"

#include "plan/thresholds.h"

#include "facts/channel_dots_facts.h"
#include "facts/channels_last_tiles.h"

#include <algorithm>
#include <cstdint>

namespace deconv {
namespace detail {

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

// The channel dots serve 1-3 output channels per group from a vector of input channels, 4-6
// from more vectors (2D-3D stride 1: more still, where the twin reads flat rows). dcgan_l5_nxc,
// 64 -> 3: 5.4-6.0 -> 3.5-3.7 ms (AVX-512).
bool channel_dots_class(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    const int64_t lanes = p.tiles.lanes;
    if (g.c_out > tiles::kDotsMaxChannels || g.c_in < lanes) return false;
    if (g.c_out <= threshold(p, Threshold::DotsFewChannels)) return true;
    return g.c_in >= threshold(p, Threshold::DotsMinVectors) * lanes &&
           (g.rank < 2 || !unit_strides(p) || g.c_in >= threshold(p, Threshold::DotsStrideOneVectors) * lanes);
}

namespace {

// A phase's reduction, at most: input channels x its taps; `reached`: no more taps per axis than
// the input's extent (a 1x1 input under a 4x4 kernel at stride 1: each output reads one tap's
// weights, a sixteenth of the phase's).
int64_t reduction(const Plan::Impl &p, bool reached) {
    const OpGeometry &g = p.geo;
    int64_t taps = 1;
    for (int i = 0; i < g.rank; i++) {
        const int64_t t = (g.kernel[i] + p.info.strides[i] - 1) / p.info.strides[i];
        taps *= reached ? std::min<int64_t>(t, g.in_spatial[i]) : t;
    }
    return g.c_in * taps;
}

}  // namespace

int64_t phase_reduction(const Plan::Impl &p) { return reduction(p, false); }

// 2D stride-2 layers of short phase reductions (or many groups) stay channels-first on the
// interleaved position kernel: the twin's transposes cost more than its tiles save (4 groups of
// 16 -> 16, kernel 3, 28x28: 0.163 ms twinned, 0.085 here).
bool short_strided_2d(const Plan::Impl &p) {
    if (!rule_applies(p, Threshold::ShortStrided2D)) return false;
    const OpGeometry &g = p.geo;
    if (!stride_2_2d(p) || g.c_out > threshold(p, Threshold::ShortStrided2DMaxCout) || p.out_spatial[1] % 2 != 0 ||
        p.out_spatial[1] / 2 < threshold(p, Threshold::ShortStrided2DMinRowGroups))
        return false;
    const int64_t r = phase_reduction(p);
    return r <= threshold(p, Threshold::ShortStrided2DMaxReduction) ||
           (g.groups >= threshold(p, Threshold::ShortStrided2DManyGroups) &&
            r <= threshold(p, Threshold::ShortStrided2DManyGroupsMaxReduction));
}

// 1D stride-2 layers of few channels, every phase tapped, run on the plain interleaved position
// kernel, not the channel tiles or the twin (32 -> 32, kernel 2, 400 positions: 0.101 -> 0.008 ms).
bool short_1d_positions(const Plan::Impl &p) {
    if (!rule_applies(p, Threshold::Short1DPositions)) return false;
    const OpGeometry &g = p.geo;
    if (g.rank != 1 || g.forward || g.data_format != DataFormat::NCX || p.policy.route != Policy::Route::Auto ||
        p.info.strides[0] != 2 || g.c_out > threshold(p, Threshold::Short1DMaxCout) ||
        g.c_in > threshold(p, Threshold::Short1DMaxCin) || g.c_out < threshold(p, Threshold::Short1DMinCout))
        return false;
    return every_phase_tapped(p.phases[0]);
}

// 1D channels-last layers of one group at small strides read the caller's input in place, the
// rows' ends on the bounded kernel, instead of a bordered copy (32 -> 32, kernel 3, 25600
// positions: 0.66 -> 0.39 ms).
bool in_place_1d_channels_last(const Plan::Impl &p) {
    if (!rule_applies(p, Threshold::InPlace1DChannelsLast)) return false;
    const OpGeometry &g = p.geo;
    return g.rank == 1 && !g.forward && g.data_format == DataFormat::NXC && g.groups == 1 &&
           p.tiles.lanes >= threshold(p, Threshold::InPlace1DMinLanes) && p.channel_major && !p.groups && !p.dots &&
           !p.ci_pairs && !p.group_block && p.info.strides[0] <= threshold(p, Threshold::InPlace1DMaxStride);
}

// 2D channels-first layers of half a vector of output channels (a whole one where the row says
// so) on phase rows of a vector or less run on the channel tiles, not on partly empty position
// vectors (32 -> 8, kernel 4 stride 2, 14x14: 0.052 -> 0.024 ms).
bool narrow_rows_channel_tiles(const Plan::Impl &p) {
    if (!rule_applies(p, Threshold::NarrowRowsChannelTiles)) return false;
    const OpGeometry &g = p.geo;
    if (g.rank != 2 || g.forward || g.data_format != DataFormat::NCX || p.dtype != DType::f32 ||
        p.policy.route != Policy::Route::Auto)
        return false;
    const bool half_vector = 2 * g.c_out == p.tiles.lanes,
               whole_vector = rule_applies(p, Threshold::NarrowRowsWholeVector) && g.c_out == p.tiles.lanes;
    return p.tiles.lanes >= threshold(p, Threshold::NarrowRowsMinLanes) && (half_vector || whole_vector) &&
           g.c_in >= threshold(p, Threshold::NarrowRowsMinCin) &&
           phase_reduction(p) <= threshold(p, Threshold::NarrowRowsMaxReduction) &&
           widest_phase(p.phases[1]) <= p.tiles.lanes;
}

// Stride-1 channels-first 2D-3D layers of few output channels on rows narrower than the position
// tile read each plane of the bordered copy as one row (flat rows): 96 -> 8 channels, 12^3,
// kernel 3: 2.0 -> 1.0 ms. Not 3D depthwise layers, nor dense-group ones (their twin wins).
bool flat_rows_class(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NCX || g.rank < 2 || p.policy.flat_rows == Toggle::Off) return false;
    if (!unit_strides(p)) return false;
    if (p.policy.flat_rows == Toggle::On) return true;
    if (!rule_applies(p, Threshold::FlatRows) || p.policy.route != Policy::Route::Auto) return false;
    const bool depthwise = g.c_in == 1 && g.c_out == 1;
    const bool dense_groups =
        g.groups > 1 && g.c_in == tiles::kDenseGroupChannels && tiles::dense_group_tile(p.tiles.lanes, g.c_out);
    if ((depthwise && g.rank == 3) || dense_groups) return false;
    return g.c_out < threshold(p, Threshold::FlatRowsCoutBelow) && p.out_spatial[g.rank - 1] < 2 * p.tiles.lanes;
}

// 2D position-vectorized layers of a few output channels and enough input channels at stride 2
// run per phase, not interleaved, whose tile splits its accumulators between the phases (64 ->
// 4, kernel 3, 32x32, batch 16: 0.84 ms interleaved, 0.33 per phase).
bool per_phase_few_channels(const Plan::Impl &p) {
    if (!rule_applies(p, Threshold::PerPhaseFewChannels)) return false;
    const OpGeometry &g = p.geo;
    return g.rank == 2 && !p.groups && p.info.strides[1] == 2 && g.c_out >= threshold(p, Threshold::PerPhaseMinCout) &&
           g.c_out < threshold(p, Threshold::PerPhaseCoutBelow) && g.c_in >= threshold(p, Threshold::PerPhaseMinCin);
}

// 2D stride-2 layers of one or three output channels run on the channels-last twin where the
// position tiles are short of accumulators (16 registers) or of positions (narrow rows of a
// batch): 32 -> 3, kernel 3, 16x16, batch 64: 0.48 -> 0.25 ms.
bool few_outputs_twin(const Plan::Impl &p) {
    if (!rule_applies(p, Threshold::FewOutputsTwin)) return false;
    const OpGeometry &g = p.geo;
    if (!stride_2_2d(p) || g.forward || g.data_format != DataFormat::NCX || g.groups != 1 ||
        (g.c_out != 1 && g.c_out != 3) || g.c_in < threshold(p, Threshold::FewOutputsMinCin))
        return false;
    const int64_t min_images = threshold(p, Threshold::FewOutputsMinImages);
    if (g.n >= min_images && widest_phase(p.phases[1]) <= threshold(p, Threshold::FewOutputsNarrowRow)) return true;
    if (!rule_applies(p, Threshold::FewOutputsTwinFewRegisters)) return false;
    if (g.c_out == 1) return true;
    const bool two_taps =
        g.kernel[0] == 4 && g.kernel[1] == 4 && p.info.dilations[0] == 1 && p.info.dilations[1] == 1;
    if (two_taps) return g.c_in >= threshold(p, Threshold::FewOutputsTwoTapsCin);
    return g.n >= min_images || g.c_in >= threshold(p, Threshold::FewOutputsManyCin);
}

// Strided channels-first 2D-3D layers of 4-6 output channels in the channel-dot class run on the
// twin's channel dots: 3D ones, and 2D ones of long phase reductions (64 -> 5, kernel 3 stride 2,
// 16^3: 4.0 -> 0.78 ms).
bool dot_outputs_twin(const Plan::Impl &p) {
    if (!rule_applies(p, Threshold::DotOutputsTwin)) return false;
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NCX || g.rank < 2 ||
        g.c_out <= threshold(p, Threshold::DotsFewChannels) || unit_strides(p) || !channel_dots_class(p))
        return false;
    return g.rank == 3 || phase_reduction(p) >= threshold(p, Threshold::DotTwinMinReduction);
}

// 1D kernel-4 stride-2 layers of long rows, or of mid-size input channels to at most half as many
// outputs, run on the channels-last twin, whose channel tiles outrun the position kernels by more
// than its transposes cost (hifigan_up3, 128 -> 64, 25600 positions: 14.9 -> 12.0 ms).
bool kernel4_stride2_1d_twin(const Plan::Impl &p) {
    if (!rule_applies(p, Threshold::Kernel4Stride2Twin)) return false;
    const OpGeometry &g = p.geo;
    if (g.rank != 1 || g.forward || g.data_format != DataFormat::NCX || g.groups != 1 ||
        p.regs.vector_bits != threshold(p, Threshold::Kernel4Stride2TwinVectorBits) || p.info.strides[0] != 2 ||
        g.kernel[0] != 4 || p.info.dilations[0] != 1 || g.c_in < threshold(p, Threshold::LongRowsMinCin) ||
        g.c_out < threshold(p, Threshold::LongRowsMinCout))
        return false;
    if (g.in_spatial[0] >= threshold(p, Threshold::LongRows1D)) return true;
    return g.c_in >= threshold(p, Threshold::MidCinMin) && g.c_in <= threshold(p, Threshold::MidCinMax) &&
           threshold(p, Threshold::MidCinPerCout) * g.c_out <= g.c_in;
}

bool uniform_taps(const Plan::Impl &p, int64_t taps) { return uniform_taps(p.phases, taps); }

// Every phase of every axis with exactly one tap (kernel = stride): the layer is a plain matrix
// product per phase, with no phase left without taps.
bool every_phase_one_tap(const Plan::Impl &p) { return uniform_taps(p, 1); }

// Large 2D one-tap layers take the twin: large output planes of many channels (the channels-first
// tiles' stores scatter across planes), or many weights (unet_up1, 1024 -> 512, 28x28: 12.6-14.9
// ms on the channel tiles, 9.4 twinned).
bool large_one_tap_2d(const Plan::Impl &p) {
    if (!rule_applies(p, Threshold::LargeOneTap2D)) return false;
    const OpGeometry &g = p.geo;
    if (g.rank != 2 || !every_phase_one_tap(p)) return false;
    const int64_t plane_bytes = p.out_spatial[0] * p.out_spatial[1] * 4;
    const int64_t weights = g.c_in * g.c_out * g.kernel[0] * g.kernel[1];
    return (plane_bytes >= threshold(p, Threshold::OneTapTwinPlaneBytes) &&
            g.c_out > threshold(p, Threshold::OneTapTwinMaxCout)) ||
           weights >= threshold(p, Threshold::OneTapTwinProducts);
}

// 1D one-tap layers of long output rows take the twin too: a channel tile's stores land a row
// apart, in one cache set on rows of a power of two (64 -> 64, kernel 1, 8192 positions: 1.94 ->
// 0.76 ms).
bool large_one_tap_1d(const Plan::Impl &p) {
    return rule_applies(p, Threshold::LargeOneTap1D) && p.geo.rank == 1 && every_phase_one_tap(p) &&
           p.out_spatial[0] * 4 >= threshold(p, Threshold::OneTapTwinRowBytes);
}

// 2D one-tap layers at a stride of 2 or more along rows leave the channels-first channel tiles,
// which store an element at a time across planes (64 -> 32, kernel 2 stride 2, 32x32, batch 8:
// 4.1 ms there, 0.61 on the position kernels).
bool strided_one_tap_2d(const Plan::Impl &p) {
    return rule_applies(p, Threshold::StridedOneTap2D) && p.geo.rank == 2 && p.info.strides[1] > 1 &&
           every_phase_one_tap(p);
}

// Winograd (Algorithm::Auto) on phases of few tiles, with enough channels to reuse each
// transformed weight, where it saves enough of the direct products for the class (kernel 3
// stride 1, 64-96 -> 64-128 channels, 7x7 to 16x16: 1.94-2.62x).
bool winograd_pays_on_few_tiles(const Plan::Impl &p, int64_t tiles, int64_t products) {
    const int64_t min_channels = threshold(p, Threshold::WinogradFewTilesMinChannels);
    if (!rule_applies(p, Threshold::WinogradFewTiles) || tiles < threshold(p, Threshold::WinogradFewTilesMin) ||
        p.geo.c_in < min_channels || p.geo.c_out < min_channels)
        return false;
    return products * threshold(p, Threshold::WinogradFewTilesSavingNum) <=
           p.macs * threshold(p, Threshold::WinogradFewTilesSavingDen);
}

namespace {

// Channel blocks of one channel tile (16-lane vectors) wherever a group holds two tiles or more:
// a tile's weights then stream from one contiguous run (36 layers, Sapphire Rapids: 1.11x).
bool one_tile_blocks(const Plan::Impl &p) {
    const int64_t tile = p.tiles.four_position_channels;
    return tile > 0 && p.tiles.lanes >= threshold(p, Threshold::OneTileBlockLanes) && p.geo.c_out >= 2 * tile;
}

// Bytes of the weights one call of `channels` output channels reads over the densest phase
// (`reached`: over the taps that reach the input, reduction()).
int64_t block_weight_bytes(const Plan::Impl &p, int64_t channels, bool reached = false) {
    return channels * reduction(p, reached) * (int64_t)dtype_size(p.dtype);
}

}  // namespace

// Channels-last blocks narrow to one tile (one_tile_blocks), or where their weights per phase
// leave no room in L2 beside the rows they serve (192 -> 128, kernel 3, 28x28: 1.11 -> 0.87 ms).
int64_t channels_last_channel_block(const Plan::Impl &p, int64_t block) {
    const int64_t tile = p.tiles.four_position_channels;
    if (!rule_applies(p, Threshold::ChannelsLastChannelBlock) || tile <= 0 || block <= tile) return block;
    if (one_tile_blocks(p)) return tile;
    return block_weight_bytes(p, block) > threshold(p, Threshold::BlockWeightBytes) ? tile : block;
}

// Batch rows run every output channel in one call, or blocks of one channel tile where the
// weights the outputs read pass L2's share: each block serves all the images from L2 (dcgan_l2:
// 39.6 -> 30.4 ms). Counted over the taps that reach the input: by the phase's whole kernel,
// projections from a 1x1 input (100-256 -> 256-1024 channels, kernel 3-4, batch 16-64) ran in
// blocks 1.24-1.47x slower than whole (bench/projection_layers.json).
int64_t batch_rows_channel_block(const Plan::Impl &p) {
    const int64_t tile = p.tiles.four_position_channels;
    if (!rule_applies(p, Threshold::BatchRowsChannelBlock) || tile <= 0 || p.geo.c_out <= tile) return 0;
    return block_weight_bytes(p, p.geo.c_out, true) > threshold(p, Threshold::BatchRowsWeightBytes) ? tile : 0;
}

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

// Whether `best` of `whole` products (or channels) computed saves the share a second block needs.
bool saves_enough(const Plan::Impl &p, int64_t whole, int64_t best) {
    return (whole - best) * 100 >= whole * threshold(p, Threshold::ExactBlocksMinSaving);
}

}  // namespace

// Output channels that the tiles cover only by shifting a tile back over computed channels run
// in blocks the tiles cover exactly (72: 64 + 8; 24: 16 + 8), where that computes fewer channels
// enough (40 and 72 channels, 14x14 to 28x28 and 8^3: 1.26-1.47x). `block` 0: one packing.
int64_t exact_channel_blocks(const Plan::Impl &p, int64_t block) {
    const int64_t c = p.geo.c_out, full = p.tiles.four_position_channels, l = p.tiles.lanes;
    if (!rule_applies(p, Threshold::ExactChannelBlocks) || full <= 0 ||
        l < threshold(p, Threshold::ExactBlocksMinLanes) || (block > 0 && block < c))
        return block;
    // The candidate: full tiles, or under one, the whole vectors before a half vector.
    const int64_t b = c > full ? full : c % l == l / 2 && (c - l / 2 == l || c - l / 2 == 2 * l) ? c - l / 2 : 0;
    if (b == 0) return block;
    const int64_t width = widest_phase(p.phases[p.geo.rank - 1]), rows = fewest_phase_rows(p);
    const int64_t whole = tiled_channels(p.tiles, c, width, rows),
                  split = c / b * b + tiled_channels(p.tiles, c % b, width, rows);
    return saves_enough(p, whole, split) ? b : block;
}

namespace {

// The phases' rows along an axis, their mean width weighted by their products (rows x taps).
double mean_phase_row(const std::vector<AxisPhase> &phases) {
    double products = 0, weighted = 0;
    for (const AxisPhase &a : phases) {
        const double work = (double)a.out_count * (double)a.tap_count;
        products += work;
        weighted += work * (double)a.out_count;
    }
    return products > 0 ? weighted / products : 0;
}

}  // namespace

// Interior calls whose weights pass L2's share, over several tap rows per phase on wide enough
// and enough rows, run on the tap-row kernels (where the implementations (dispatch/impl_*.cpp) finds one): each tap row's
// weights serve a band of rows from L2 (1024 -> 256, kernel 4: 22.8 -> 15.0 ms). So do layers
// whose phase rows are narrower than the four-position tile on average, weighted by their
// products, with a full channel tile of outputs per group (inputs of 2-4 positions: batches of
// 1-3 that batch rows do not take), which the channels-last kernels run one position per step:
// 1.7-3.5x natively and 2.0-4.0x under AVX2 on such layers of a 72-layer sweep (Zen 4); rows of
// four alone gained on some and lost on others (0.79-1.4x).
bool tap_rows_class(const Plan::Impl &p, int64_t block) {
    const OpGeometry &g = p.geo;
    if (!rule_applies(p, Threshold::TapRows) || g.forward || g.rank < 2) return false;
    if (mean_phase_row(p.phases[g.rank - 1]) < (double)p.tiles.short_positions &&
        g.c_out >= p.tiles.four_position_channels)
        return true;
    // (Rows narrower than the position tile keep the channels-last kernels' narrow-row tiles.)
    if (widest_phase(p.phases[g.rank - 1]) < p.tiles.row_positions ||
        fewest_phase_rows(p) < threshold(p, Threshold::TapRowsMinRows))
        return false;
    int64_t rows = 1, taps = 1;
    for (int i = 0; i < g.rank; i++) {
        const int64_t most = most_taps(p.phases[i]);
        taps *= most;
        if (i + 1 < g.rank) rows *= most;  // spec order: the innermost axis is the last
    }
    const int64_t channels = block > 0 ? std::min(block, g.c_out) : g.c_out;
    return rows >= threshold(p, Threshold::TapRowsMinTapRows) &&
           channels * g.c_in * taps * (int64_t)dtype_size(p.dtype) > threshold(p, Threshold::BlockWeightBytes);
}

namespace {

// Products the narrow-row tiles compute for `c` output channels over a row of `width` (4 or
// more) and `rows` rows in one call, in thirds of a full-tile product (their measured costs).
int64_t narrow_row_cost(const Plan::Impl &p, int64_t c, int64_t width, int64_t rows) {
    const KernelTiles &t = p.tiles;
    // (c is a vector or more: the one-vector tile of one position per step takes any row.)
    const tiles::ChannelTile *tile = tiles::channels_last_tile(t.channel_tiles, c, width, rows);
    const int64_t weight = threshold(p, tile->channels == t.four_position_channels ? Threshold::NarrowRowCostFullTile
                                        : tile->channels >= 2 * t.lanes            ? Threshold::NarrowRowCostTwoVectors
                                                                                   : Threshold::NarrowRowCostOneVector);
    return weight * tiled_channels(tile, c) * tiles::tiled_positions<int64_t>(width, tile->positions);
}

}  // namespace

// Channel blocks on narrow rows (the four-position tiles): one tile where one_tile_blocks says so,
// else the block of the fewest products by the tiles' measured costs, where it saves enough (56
// channels as 32 + 24, 4x4 inputs: 1.22x). No last block under a vector.
int64_t narrow_row_channel_block(const Plan::Impl &p, int64_t block) {
    const int64_t c = p.geo.c_out, full = p.tiles.four_position_channels, l = p.tiles.lanes;
    if (!rule_applies(p, Threshold::NarrowRowChannelBlock) || full != 4 * l || c < 2 * l) return block;
    const auto &row_phases = p.phases[p.geo.rank - 1];
    for (const AxisPhase &a : row_phases)
        if (a.out_count < tiles::kChannelsLastShortTile) return block;
    if (one_tile_blocks(p)) return full;
    const int64_t rows = fewest_phase_rows(p);
    const auto cost = [&](int64_t b) {
        int64_t sum = 0;
        for (const AxisPhase &a : row_phases)
            sum += c / b * narrow_row_cost(p, b, a.out_count, rows) +
                   (c % b ? narrow_row_cost(p, c % b, a.out_count, rows) : 0);
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
    return saves_enough(p, whole, best_cost) ? best : block;
}

// 1D channels-first layers of one tap per phase at most stay on the position kernels where few of
// the phases have taps: the twin transposes a whole output those phases write a part of (kernel 1
// at stride 3: 1.48x in geomean).
bool one_tap_1d_positions(const Plan::Impl &p) {
    if (!rule_applies(p, Threshold::OneTap1DPositions) || p.geo.rank != 1 || p.geo.forward || has_multi_tap_phase(p))
        return false;
    const int64_t s = p.info.strides[0];
    int64_t tapped = 0;
    for (const AxisPhase &a : p.phases[0]) tapped += a.tap_count > 0;
    return tapped * threshold(p, Threshold::OneTap1DFewTappedShare) <= s ||
           (tapped * threshold(p, Threshold::OneTap1DHalfTappedShare) <= s && p.out_spatial[0] % s == 0);
}

// 2D-3D channels-first depthwise layers with kernels below the stride run the interleaved kernel,
// which stores whole vectors where per-phase rows store an element at a time (1.41x in geomean),
// unless a short row leaves many tail outputs, each a transposed column call.
bool depthwise_interleaves_below_stride(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    const int in = g.rank - 1;
    const int64_t s = p.info.strides[in], tail = p.out_spatial[in] % s;
    return rule_applies(p, Threshold::DepthwiseInterleavesBelowStride) && g.c_in == 1 && g.c_out == 1 &&
           g.rank >= 2 &&
           !(tail >= threshold(p, Threshold::ManyTailOutputs) &&
             p.out_spatial[in] / s < threshold(p, Threshold::TailedMinGroups));
}

// Whether any phase has more than one tap.
bool has_multi_tap_phase(const Plan::Impl &p) {
    for (const auto &axis : p.phases)
        if (most_taps(axis) > 1) return true;
    return false;
}

}  // namespace detail
}  // namespace deconv
