// The dispatch thresholds (thresholds.h): each row's values on the three CPU classes, a one-line
// reason with the figure it rests on, and the heading of docs/performance-log.md ("Rules: the
// measurements behind the thresholds") that holds its measurements. Rules measured on x86-64
// only have a 0/1 row of their own name that is 0 on Other; values read only where such a rule
// is off repeat the nearest measured class (Other: X86Many, whose 32 registers ARM64 has too), and
// so do the rows of the register file alone (exact_groups, one_tap_channels_first,
// one_tile_channel_block, interleaved_few_registers).
#include "plan/thresholds.h"

#include "plan/plan_impl.h"

#include <iterator>
#include <stdexcept>

namespace deconv {
namespace detail {

namespace {

constexpr int kThresholdClasses = (int)CpuClass::Count;

struct ThresholdEntry {
    Threshold id;
    const char *name;
    int64_t values[kThresholdClasses];  // X86Many, X86Few, Other
    const char *reason;
    const char *section;
};

#define DECONV_RULE_LOG(rule) "docs/performance-log.md#" #rule

constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;

constexpr ThresholdEntry kThresholdRows[] = {
    // channel_dots_class
    {Threshold::DotsFewChannels, "dots_few_channels", {3, 3, 3},
     "output channels per group the channel dots take from one vector of input channels (dcgan_l5_nxc 5.4 -> 3.5 ms)",
     DECONV_RULE_LOG(channel_dots_class)},
    {Threshold::DotsMinVectors, "dots_min_vectors", {2, 2, 2},
     "vectors of input channels 4-6 output channels need on the dots (one vector: 0.9x)",
     DECONV_RULE_LOG(channel_dots_class)},
    {Threshold::DotsStrideOneVectors, "dots_stride_one_vectors", {8, 8, 8},
     "vectors of input channels 2D-3D stride-1 layers of 4-6 outputs need (16-32 channels: 0.35-0.74x)",
     DECONV_RULE_LOG(channel_dots_class)},
    // short_strided_2d
    {Threshold::ShortStrided2D, "short_strided_2d", {1, 0, 0},
     "rule applies: measured on AVX-512 (0.163 -> 0.085 ms); on AVX2 neither route won; ARM64 not measured",
     DECONV_RULE_LOG(short_strided_2d)},
    {Threshold::ShortStrided2DMaxReduction, "short_strided_2d_max_reduction", {64, 64, 64},
     "longest phase reduction that stays channels-first on the interleaved position kernel",
     DECONV_RULE_LOG(short_strided_2d)},
    {Threshold::ShortStrided2DManyGroups, "short_strided_2d_many_groups", {16, 16, 16},
     "groups from which a longer reduction stays channels-first too (4 groups of 16: 0.163 -> 0.085 ms)",
     DECONV_RULE_LOG(short_strided_2d)},
    {Threshold::ShortStrided2DManyGroupsMaxReduction, "short_strided_2d_many_groups_max_reduction", {128, 128, 128},
     "longest phase reduction of such many-group layers (twice the plain one)", DECONV_RULE_LOG(short_strided_2d)},
    {Threshold::ShortStrided2DMaxCout, "short_strided_2d_max_cout", {32, 32, 32},
     "most output channels per group: wider ones ran faster on the twin", DECONV_RULE_LOG(short_strided_2d)},
    {Threshold::ShortStrided2DMinRowGroups, "short_strided_2d_min_row_groups", {16, 16, 16},
     "fewest groups of 2 outputs per row: shorter rows ran faster on the twin", DECONV_RULE_LOG(short_strided_2d)},
    // short_1d_positions
    {Threshold::Short1DPositions, "short_1d_positions", {1, 1, 0},
     "rule applies: measured on x86-64 (0.69x -> 0.87x of oneDNN over 60 layers)", DECONV_RULE_LOG(short_1d_positions)},
    {Threshold::Short1DMaxCout, "short_1d_max_cout", {64, 64, 64},
     "most output channels of 1D stride-2 layers on the interleaved position kernel",
     DECONV_RULE_LOG(short_1d_positions)},
    {Threshold::Short1DMaxCin, "short_1d_max_cin", {128, 128, 128},
     "most input channels of those layers (32 -> 32, kernel 2: 0.101 -> 0.008 ms)", DECONV_RULE_LOG(short_1d_positions)},
    {Threshold::Short1DMinCout, "short_1d_min_cout", {16, 16, 16},
     "fewest output channels: fewer are the position kernels' own layers already", DECONV_RULE_LOG(short_1d_positions)},
    // in_place_1d_channels_last
    {Threshold::InPlace1DChannelsLast, "in_place_1d_channels_last", {1, 1, 0},
     "rule applies: 1.13x in geomean on AVX-512, 1.09x under AVX2; ARM64 not measured",
     DECONV_RULE_LOG(in_place_1d_channels_last)},
    {Threshold::InPlace1DMaxStride, "in_place_1d_max_stride", {2, 2, 2},
     "largest stride read in place (stride 8: 1.04x with 0.78x at worst)", DECONV_RULE_LOG(in_place_1d_channels_last)},
    {Threshold::InPlace1DMinLanes, "in_place_1d_min_lanes", {8, 8, 8},
     "fewest lanes read in place (SSE4.1's 4: 1.03x, a sixth of the layers slower)",
     DECONV_RULE_LOG(in_place_1d_channels_last)},
    // narrow_rows_channel_tiles
    {Threshold::NarrowRowsChannelTiles, "narrow_rows_channel_tiles", {1, 1, 0},
     "rule applies: 1.12-2.81x on AVX-512, 1.04-3.3x under AVX2; ARM64 not measured",
     DECONV_RULE_LOG(narrow_rows_channel_tiles)},
    {Threshold::NarrowRowsWholeVector, "narrow_rows_whole_vector", {0, 1, 0},
     "a whole vector of output channels takes the rule too (AVX2 16-64 -> 8: 1.6-2.0x; AVX-512 16: 0.76-1.03x)",
     DECONV_RULE_LOG(narrow_rows_channel_tiles)},
    {Threshold::NarrowRowsMinLanes, "narrow_rows_min_lanes", {8, 8, 8},
     "fewest lanes: 4-lane vectors (SSE4.1, NEON) were not measured", DECONV_RULE_LOG(narrow_rows_channel_tiles)},
    {Threshold::NarrowRowsMinCin, "narrow_rows_min_cin", {16, 16, 16},
     "fewest input channels of the swept layers (32 -> 8, 14x14: 0.052 -> 0.024 ms)",
     DECONV_RULE_LOG(narrow_rows_channel_tiles)},
    {Threshold::NarrowRowsMaxReduction, "narrow_rows_max_reduction", {256, 256, 256},
     "longest phase reduction (96 x 25 taps: 0.063 -> 0.074 ms)", DECONV_RULE_LOG(narrow_rows_channel_tiles)},
    // flat_rows_class
    {Threshold::FlatRows, "flat_rows", {1, 1, 0},
     "rule applies: 1.1-7.5x on 33 of 48 layers (Zen 4); ARM64 not measured", DECONV_RULE_LOG(flat_rows_class)},
    {Threshold::FlatRowsCoutBelow, "flat_rows_cout_below", {16, 4, 16},
     "output channels per group below this take flat rows (AVX2 4-12 channels: 0.55-1.2x)",
     DECONV_RULE_LOG(flat_rows_class)},
    // per_phase_few_channels
    {Threshold::PerPhaseFewChannels, "per_phase_few_channels", {1, 1, 0},
     "rule applies: measured on x86-64, AVX-512 and AVX2 (64 -> 4: 0.84 -> 0.33 ms)",
     DECONV_RULE_LOG(per_phase_few_channels)},
    {Threshold::PerPhaseMinCout, "per_phase_min_cout", {4, 4, 4},
     "fewest output channels that run per phase (fewer: either way by layer)", DECONV_RULE_LOG(per_phase_few_channels)},
    {Threshold::PerPhaseCoutBelow, "per_phase_cout_below", {16, 16, 16},
     "output channels below this are the position kernels' layers", DECONV_RULE_LOG(per_phase_few_channels)},
    {Threshold::PerPhaseMinCin, "per_phase_min_cin", {32, 32, 32},
     "fewest input channels that run per phase (fewer: either way by layer)", DECONV_RULE_LOG(per_phase_few_channels)},
    // few_outputs_twin
    {Threshold::FewOutputsTwin, "few_outputs_twin", {1, 1, 0},
     "rule applies: measured on x86-64 (44 layers; 32 -> 3, batch 64: 0.48 -> 0.25 ms)",
     DECONV_RULE_LOG(few_outputs_twin)},
    {Threshold::FewOutputsTwinFewRegisters, "few_outputs_twin_few_registers", {0, 1, 0},
     "the 16-register cases apply (AVX2 64 -> 1, kernel 4, batch 64: 1.03 -> 0.54 ms)",
     DECONV_RULE_LOG(few_outputs_twin)},
    {Threshold::FewOutputsMinCin, "few_outputs_min_cin", {32, 32, 32},
     "fewest input channels that take the twin", DECONV_RULE_LOG(few_outputs_twin)},
    {Threshold::FewOutputsMinImages, "few_outputs_min_images", {16, 16, 16},
     "batch from which narrow rows (and AVX2's three channels) take the twin", DECONV_RULE_LOG(few_outputs_twin)},
    {Threshold::FewOutputsManyCin, "few_outputs_many_cin", {128, 128, 128},
     "input channels from which three outputs of one image take the twin on AVX2", DECONV_RULE_LOG(few_outputs_twin)},
    {Threshold::FewOutputsTwoTapsCin, "few_outputs_two_taps_cin", {256, 256, 256},
     "input channels from which kernel 4 takes the twin on AVX2 (256 -> 3: 55 -> 28 ms)",
     DECONV_RULE_LOG(few_outputs_twin)},
    {Threshold::FewOutputsNarrowRow, "few_outputs_narrow_row", {16, 16, 16},
     "widest phase row that takes the twin with a batch (under two 16-lane vectors)",
     DECONV_RULE_LOG(few_outputs_twin)},
    // dot_outputs_twin
    {Threshold::DotOutputsTwin, "dot_outputs_twin", {1, 0, 0},
     "rule applies: 1.2-5.5x on AVX-512; AVX2 ran 0.3-2.5x; ARM64 not measured", DECONV_RULE_LOG(dot_outputs_twin)},
    {Threshold::DotTwinMinReduction, "dot_twin_min_reduction", {256, 256, 256},
     "shortest 2D phase reduction on the twin's dots (32-128: 0.47-0.91x)", DECONV_RULE_LOG(dot_outputs_twin)},
    // kernel4_stride2_1d_twin
    {Threshold::Kernel4Stride2Twin, "kernel4_stride2_1d_twin", {0, 1, 0},
     "rule applies: AVX2 only (hifigan_up3 14.9 -> 12.0 ms); the tuner kept AVX-512 on the position kernels",
     DECONV_RULE_LOG(kernel4_stride2_1d_twin)},
    {Threshold::Kernel4Stride2TwinVectorBits, "kernel4_stride2_1d_twin_vector_bits", {256, 256, 256},
     "the vector width it was measured at (AVX2; SSE4.1 not measured)", DECONV_RULE_LOG(kernel4_stride2_1d_twin)},
    {Threshold::LongRows1D, "long_rows_1d", {16384, 16384, 16384},
     "input positions from which a row takes the twin", DECONV_RULE_LOG(kernel4_stride2_1d_twin)},
    {Threshold::LongRowsMinCin, "long_rows_min_cin", {64, 64, 64},
     "fewest input channels that take the twin", DECONV_RULE_LOG(kernel4_stride2_1d_twin)},
    {Threshold::LongRowsMinCout, "long_rows_min_cout", {32, 32, 32},
     "fewest output channels that take the twin", DECONV_RULE_LOG(kernel4_stride2_1d_twin)},
    {Threshold::MidCinMin, "mid_cin_min", {128, 128, 128},
     "fewest input channels that take the twin at any row length (64 on shorter rows: no gain)",
     DECONV_RULE_LOG(kernel4_stride2_1d_twin)},
    {Threshold::MidCinMax, "mid_cin_max", {256, 256, 256},
     "most input channels that take the twin at any row length", DECONV_RULE_LOG(kernel4_stride2_1d_twin)},
    {Threshold::MidCinPerCout, "mid_cin_per_cout", {2, 2, 2},
     "input channels per output channel of those, at least (128 -> 128: no gain)",
     DECONV_RULE_LOG(kernel4_stride2_1d_twin)},
    // large_one_tap_2d
    {Threshold::LargeOneTap2D, "large_one_tap_2d", {1, 1, 0},
     "rule applies: measured on x86-64 (unet_up1 12.6-14.9 -> 9.4 ms, Zen 5)", DECONV_RULE_LOG(large_one_tap_2d)},
    {Threshold::OneTapTwinPlaneBytes, "one_tap_twin_plane_bytes", {32 * kKiB, 32 * kKiB, 32 * kKiB},
     "f32 output plane bytes from which many channels' stores scatter too far apart", DECONV_RULE_LOG(large_one_tap_2d)},
    {Threshold::OneTapTwinMaxCout, "one_tap_twin_max_cout", {32, 32, 32},
     "output channels above which such planes take the twin", DECONV_RULE_LOG(large_one_tap_2d)},
    {Threshold::OneTapTwinProducts, "one_tap_twin_products", {2 * kMiB, 2 * kMiB, 2 * kMiB},
     "weights (8 kMiB of f32) from which any one-tap 2D layer takes the twin", DECONV_RULE_LOG(large_one_tap_2d)},
    // large_one_tap_1d
    {Threshold::LargeOneTap1D, "large_one_tap_1d", {1, 1, 0},
     "rule applies: measured on x86-64 (1.3-3.9x from 16 kKiB rows)", DECONV_RULE_LOG(large_one_tap_1d)},
    {Threshold::OneTapTwinRowBytes, "one_tap_twin_row_bytes", {16 * kKiB, 16 * kKiB, 16 * kKiB},
     "f32 output row bytes from which 1D one-tap layers take the twin (4.8-12.8 kKiB: 0.6-1.5x)",
     DECONV_RULE_LOG(large_one_tap_1d)},
    // strided_one_tap_2d
    {Threshold::StridedOneTap2D, "strided_one_tap_2d", {1, 1, 0},
     "rule applies: measured on x86-64 (64 -> 32, kernel 2 stride 2: 4.1 -> 0.61 ms)",
     DECONV_RULE_LOG(strided_one_tap_2d)},
    // winograd_pays_on_few_tiles
    {Threshold::WinogradFewTiles, "winograd_pays_on_few_tiles", {1, 1, 0},
     "rule applies: measured on x86-64 (1.06-2.62x)", DECONV_RULE_LOG(winograd_pays_on_few_tiles)},
    {Threshold::WinogradFewTilesMin, "winograd_few_tiles_min", {4, 4, 4},
     "fewest tiles per phase over the batch (7x7, 4 tiles: 1.21-1.31x)", DECONV_RULE_LOG(winograd_pays_on_few_tiles)},
    {Threshold::WinogradFewTilesMinChannels, "winograd_few_tiles_min_channels", {64, 64, 64},
     "fewest input and output channels per group (64 -> 32: 0.64-2.0x)", DECONV_RULE_LOG(winograd_pays_on_few_tiles)},
    {Threshold::WinogradFewTilesSavingNum, "winograd_few_tiles_saving_num", {5, 13, 5},
     "least saving, num/den of the direct products: 1.67x (AVX-512), 2.6x (AVX2: F(4, 2) ran 0.43-0.97x)",
     DECONV_RULE_LOG(winograd_pays_on_few_tiles)},
    {Threshold::WinogradFewTilesSavingDen, "winograd_few_tiles_saving_den", {3, 5, 3},
     "the denominator of that saving", DECONV_RULE_LOG(winograd_pays_on_few_tiles)},
    // one_tile_blocks
    {Threshold::OneTileBlockLanes, "one_tile_block_lanes", {16, 16, 16},
     "fewest lanes of channel blocks of one tile (Sapphire Rapids, 36 layers: 1.11x)",
     DECONV_RULE_LOG(channels_last_channel_block)},
    // channels_last_channel_block
    {Threshold::ChannelsLastChannelBlock, "channels_last_channel_block", {1, 1, 0},
     "rule applies: measured on x86-64 (192 -> 128: 1.11 -> 0.87 ms)", DECONV_RULE_LOG(channels_last_channel_block)},
    {Threshold::BlockWeightBytes, "block_weight_bytes", {768 * kKiB, 768 * kKiB, 768 * kKiB},
     "weights per phase and block past which two tiles' weights leave a 1 kMiB L2 (384 -> 128: 2.9 -> 2.0 ms)",
     DECONV_RULE_LOG(channels_last_channel_block)},
    // batch_rows_channel_block
    {Threshold::BatchRowsChannelBlock, "batch_rows_channel_block", {1, 1, 0},
     "rule applies: measured on x86-64 (dcgan_l2 39.6 -> 30.4 ms)", DECONV_RULE_LOG(batch_rows_channel_block)},
    {Threshold::BatchRowsWeightBytes, "batch_rows_weight_bytes", {1 * kMiB, 1 * kMiB, 1 * kMiB},
     "weights a call's outputs read (taps reaching the input) past which batch rows run one channel "
     "tile at a time (1-1.5 kMiB: 0.77-1.64x)",
     DECONV_RULE_LOG(batch_rows_channel_block)},
    // exact_channel_blocks
    {Threshold::ExactChannelBlocks, "exact_channel_blocks", {1, 0, 0},
     "rule applies: measured on AVX-512 only (40 and 72 channels: 1.26-1.47x)", DECONV_RULE_LOG(exact_channel_blocks)},
    {Threshold::ExactBlocksMinLanes, "exact_blocks_min_lanes", {16, 16, 16},
     "fewest lanes of the tiles it was measured on", DECONV_RULE_LOG(exact_channel_blocks)},
    {Threshold::ExactBlocksMinSaving, "exact_blocks_min_saving", {10, 10, 10},
     "least share of the channels (products) computed that blocks save, percent", DECONV_RULE_LOG(exact_channel_blocks)},
    // tap_rows_class
    {Threshold::TapRows, "tap_rows", {1, 1, 0},
     "rule applies: measured on x86-64 (1024 -> 256: 22.8 -> 15.0 ms)", DECONV_RULE_LOG(tap_rows_class)},
    {Threshold::TapRowsMinRows, "tap_rows_min_rows", {16, 16, 16},
     "fewest phase rows of the next axis, to share the bands among threads (14 rows: 0.75-1.1x)",
     DECONV_RULE_LOG(tap_rows_class)},
    {Threshold::TapRowsMinTapRows, "tap_rows_min_tap_rows", {2, 2, 2},
     "fewest tap rows per phase: each tap row's weights serve a band of rows", DECONV_RULE_LOG(tap_rows_class)},
    // narrow_row_channel_block
    {Threshold::NarrowRowChannelBlock, "narrow_row_channel_block", {1, 0, 0},
     "rule applies: measured on AVX-512 only (56 channels as 32 + 24: 1.22x)",
     DECONV_RULE_LOG(narrow_row_channel_block)},
    {Threshold::NarrowRowCostFullTile, "narrow_row_cost_full_tile", {3, 3, 3},
     "measured cost of a full-tile product, in thirds", DECONV_RULE_LOG(narrow_row_channel_block)},
    {Threshold::NarrowRowCostTwoVectors, "narrow_row_cost_two_vectors", {4, 4, 4},
     "measured cost of a product on two or three vectors, in thirds of a full tile's",
     DECONV_RULE_LOG(narrow_row_channel_block)},
    {Threshold::NarrowRowCostOneVector, "narrow_row_cost_one_vector", {5, 5, 5},
     "measured cost of a product on one vector (an input broadcast per multiply-add), in thirds",
     DECONV_RULE_LOG(narrow_row_channel_block)},
    // one_tap_1d_positions
    {Threshold::OneTap1DPositions, "one_tap_1d_positions", {1, 1, 0},
     "rule applies: measured on x86-64 (1.48x and 1.33x in geomean)", DECONV_RULE_LOG(one_tap_1d_positions)},
    {Threshold::OneTap1DFewTappedShare, "one_tap_1d_few_tapped_share", {3, 3, 3},
     "1/share of the phases with taps, at most, at any row (kernel 1 stride 3: 1.48x)",
     DECONV_RULE_LOG(one_tap_1d_positions)},
    {Threshold::OneTap1DHalfTappedShare, "one_tap_1d_half_tapped_share", {2, 2, 2},
     "1/share of the phases with taps where every phase holds as many outputs (1.33x)",
     DECONV_RULE_LOG(one_tap_1d_positions)},
    // depthwise_interleaves_below_stride
    {Threshold::DepthwiseInterleavesBelowStride, "depthwise_interleaves_below_stride", {1, 0, 0},
     "rule applies: 1.41x in geomean on AVX-512; AVX2 ran 0.5-4.3x", DECONV_RULE_LOG(depthwise_interleaves_below_stride)},
    {Threshold::TailedMinGroups, "tailed_min_groups", {12, 12, 12},
     "fewest groups of s outputs per row with many tail outputs (kernel 3 stride 4 on 7x7: 0.5-0.6x)",
     DECONV_RULE_LOG(depthwise_interleaves_below_stride)},
    {Threshold::ManyTailOutputs, "many_tail_outputs", {3, 3, 3},
     "tail outputs from which a short row stays per phase (each a transposed column call)",
     DECONV_RULE_LOG(depthwise_interleaves_below_stride)},
    // uses_group_blocks
    {Threshold::GroupBlocksMinLanes, "group_blocks_min_lanes", {8, 8, 8},
     "fewest lanes of the group-block kernels (SSE4.1's 4: not measured)", DECONV_RULE_LOG(uses_group_blocks)},
    {Threshold::GroupBlockOneTapMaxCout, "group_block_one_tap_max_cout", {7, 7, 7},
     "most output channels per group of one-tap layers on group blocks (8 channels: 0.72x)",
     DECONV_RULE_LOG(uses_group_blocks)},
    // group_blocks_twin
    {Threshold::GroupBlocksTwinBlock, "group_blocks_twin_block", {4, 4, 4},
     "groups per vector of the blocks that take the twin (blocks of two: 0.18-3.3x)", DECONV_RULE_LOG(group_blocks_twin)},
    {Threshold::GroupBlocksTwinChannels, "group_blocks_twin_channels", {4, 4, 4},
     "output channels per group of that class (16 groups of 2 -> 4: 0.093 -> 0.030 ms)",
     DECONV_RULE_LOG(group_blocks_twin)},
    // slicing
    {Threshold::SliceTasksPerThread, "slice_tasks_per_thread", {1, 1, 1},
     "group slices per thread (2 and 4 ran no faster)", DECONV_RULE_LOG(group_slices)},
    {Threshold::SlicesPerThreadMin, "slices_per_thread_min", {2, 2, 2},
     "fewest slices (images, pairs or slabs) per thread for a layer to run sliced", DECONV_RULE_LOG(group_slices)},
    {Threshold::SliceMaxGrowth, "slice_max_growth", {4, 4, 4},
     "most output elements per input element of group slices (fcn8s_upscore8, 64x: ran no faster)",
     DECONV_RULE_LOG(group_slices)},
    {Threshold::SliceMaxFilterBytes, "slice_max_filter_bytes", {512 * kKiB, 512 * kKiB, 512 * kKiB},
     "largest packed filter of any slices, half of L2: every slice streams it again", DECONV_RULE_LOG(group_slices)},
    {Threshold::SliceOutputBytes, "slice_output_bytes", {512 * kKiB, 512 * kKiB, 512 * kKiB},
     "output bytes of an image slice or a row slab, at most (stays in L2)", DECONV_RULE_LOG(image_slices)},
    {Threshold::SliceInputBytes, "slice_input_bytes", {512 * kKiB, 512 * kKiB, 512 * kKiB},
     "input bytes of a channels-last image slice (dcgan_l5_nxc 5.5 -> 3.6 ms)", DECONV_RULE_LOG(image_slices)},
    {Threshold::SlabMaxRowBytes, "slab_max_row_bytes", {2 * kMiB, 2 * kMiB, 2 * kMiB},
     "largest row (a 3D layer's plane) run as a slab of its own (24^3: 8.6 -> 5.5 ms)", DECONV_RULE_LOG(row_slabs)},
    {Threshold::SlabMinImageBytes, "slab_min_image_bytes", {1 * kMiB, 1 * kMiB, 1 * kMiB},
     "output bytes per image from which a batch runs in slabs (0.6 kMiB images: 0.8-0.88x)", DECONV_RULE_LOG(row_slabs)},
    // windows_axis
    {Threshold::TapWindowShare, "tap_window_share", {24, 24, 24},
     "1/share of an axis's products that its border must skip for tap windows (8^3: 1.42x)",
     DECONV_RULE_LOG(tap_windows)},
    {Threshold::TapWindowMinSaved, "tap_window_min_saved", {256 * kKiB, 256 * kKiB, 256 * kKiB},
     "MACs the windows must save, about (50-130K saved: 0.88-0.96x)", DECONV_RULE_LOG(tap_windows)},
    // exact_row_head
    {Threshold::MaxExactRest, "max_exact_rest", {30, 30, 30},
     "longest rest searched, enough for the best split of any row on tiles of 3-8", DECONV_RULE_LOG(exact_row_head)},
    {Threshold::ExactRowSaving, "exact_row_saving", {32, 32, 32},
     "1/share of a row's positions a split must save (31 as 25 + 6: 1.13x)", DECONV_RULE_LOG(exact_row_head)},
    // phase_tasks
    {Threshold::SplitInnerBytes, "split_inner_bytes", {256, 256, 256},
     "bytes between outputs from which innermost phases are tasks of their own (closer: 0.68-0.8x)",
     DECONV_RULE_LOG(phase_tasks)},
    {Threshold::PhaseTasksMaxPositions, "phase_tasks_max_positions", {100, 100, 0},
     "most outputs per phase times the batch of layers run as phase tasks (batch 8 of 4x4: 0.96-1.0x)",
     DECONV_RULE_LOG(phase_tasks)},
    {Threshold::PhaseTasksMinWeights, "phase_tasks_min_weights", {512 * 1024, 128 * 1024, 0},
     "fewest weights per phase of layers run as phase tasks (256 -> 128, 4 taps, AVX-512: 0.91x)",
     DECONV_RULE_LOG(phase_tasks)},
    // run_winograd
    {Threshold::WinogradSliceKib, "winograd_slice_kib", {4096, 4096, 4096},
     "kKiB of transformed tiles and products per slice (centernet_up3 24-26 ms, 40-65 at 0.5-2 kMiB)",
     DECONV_RULE_LOG(winograd_slices)},
    // border_margins
    {Threshold::MaxBorderedInputBytes, "max_bordered_input_bytes", {64 * kMiB, 64 * kMiB, 64 * kMiB},
     "largest zero-bordered input copy; larger inputs run the bounded kernel in place",
     DECONV_RULE_LOG(bordered_input)},
    // choose_channel_major
    {Threshold::LongReduction, "long_reduction", {256, 256, 256},
     "longest phase reduction (input channels x taps) left on the position kernels (dilated_s1, 64 x 9: channels)",
     DECONV_RULE_LOG(choose_channel_major)},
    // interleaved_few_registers
    {Threshold::InterleavedFewRegisters, "interleaved_few_registers", {0, 1, 0},
     "rule applies: 16 registers run 2D-3D layers per phase at strides 3-4 (AVX2 64 -> 12, kernel 5: 0.46 -> 0.28 ms)",
     DECONV_RULE_LOG(interleaved_few_registers)},
    {Threshold::InterleavedFewRegistersMinStride, "interleaved_few_registers_min_stride", {3, 3, 3},
     "least stride whose interleaved kernel holds too few channels in 8 accumulators", DECONV_RULE_LOG(interleaved_few_registers)},
    {Threshold::InterleavedFewRegistersMaxStride, "interleaved_few_registers_max_stride", {4, 4, 4},
     "largest such stride (stride 8 not measured)", DECONV_RULE_LOG(interleaved_few_registers)},
    // one_tap_channel_tiles
    {Threshold::OneTapChannelTiles, "one_tap_channel_tiles", {1, 0, 0},
     "rule applies: measured on AVX-512 only (128 -> 32, kernel 1, 56x56: 0.41 ms twinned, 0.30 here)",
     DECONV_RULE_LOG(one_tap_channel_tiles)},
    {Threshold::OneTapChannelTilesMin, "one_tap_channel_tiles_min", {32, 32, 32},
     "fewest input and output channels (16 -> 128, kernel 2 stride 2: 0.061 ms against 0.049 twinned)",
     DECONV_RULE_LOG(one_tap_channel_tiles)},
    // prefers_blocked_interleave
    {Threshold::BlockedMinCout, "blocked_min_cout", {16, 16, 16},
     "fewest output channels on the blocked interleaved kernel (hifigan_up3 7.3 -> 4.8 ms)",
     DECONV_RULE_LOG(prefers_blocked_interleave)},
    {Threshold::BlockedMinGroups, "blocked_min_groups", {32, 32, 32},
     "fewest groups of s outputs per row (vnet_up_3x3x3, 24 groups: 4.6 -> 8.1 ms)",
     DECONV_RULE_LOG(prefers_blocked_interleave)},
    {Threshold::BlockedWeightBytes, "blocked_weight_bytes", {512 * kKiB, 512 * kKiB, 512 * kKiB},
     "f32 weights per kernel call, at most: half of L2 (more would stream from L3 once per block)",
     DECONV_RULE_LOG(prefers_blocked_interleave)},
    {Threshold::BlockedFewChannelProducts, "blocked_few_channel_products", {512, 512, 512},
     "most input x output channels of 3D one-tap layers taken on shorter rows (16 -> 16, 16^3: 1.64x)",
     DECONV_RULE_LOG(prefers_blocked_interleave)},
    {Threshold::BlockedFewChannelsMinGroups, "blocked_few_channels_min_groups", {16, 16, 16},
     "fewest groups of s outputs per row of those, with no tail output", DECONV_RULE_LOG(prefers_blocked_interleave)},
    // exact_groups
    {Threshold::ExactGroups, "exact_groups", {1, 0, 1},
     "rule applies on 32 registers (AVX-512, ARM64's too); on AVX2 the split ran slower (fcn8s_upscore8: 1.75x without)",
     DECONV_RULE_LOG(exact_groups)},
    {Threshold::ExactGroupsMinTiles, "exact_groups_min_tiles", {4, 4, 4},
     "fewest whole group tiles of a row that splits (fcn8s_upscore8, 65 groups of 8 outputs: 2.0 -> 1.8 ms)",
     DECONV_RULE_LOG(exact_groups)},
    // choose_edge_windows
    {Threshold::EdgeMinGroups, "edge_min_groups", {16, 16, 16},
     "fewest groups of s outputs per edge window, to take the kernel's vector tiles (hifigan_up3: 6% in memmove)",
     DECONV_RULE_LOG(choose_edge_windows)},
    // choose_bordered_input
    {Threshold::BorderedPositionsCoutBelow, "bordered_positions_cout_below", {16, 16, 16},
     "output channels below which the position kernels read a bordered copy (16+: unet_up4 1.4-1.6x slower)",
     DECONV_RULE_LOG(choose_bordered_input)},
    // choose_channel_block
    {Threshold::ChannelBlock, "channel_block", {128, 128, 128},
     "output channels per block of the channels-last packing (unet_up1_bf16: 64 4.68 ms, 128 4.51, 256 4.73)",
     DECONV_RULE_LOG(choose_channel_block)},
    {Threshold::NarrowRowBlock, "narrow_row_block", {192, 192, 192},
     "output channels per block of narrow rows (dcgan_l2: unblocked 20.0 ms, blocks of 192 15.7)",
     DECONV_RULE_LOG(choose_channel_block)},
    {Threshold::OneTileChannelBlock, "one_tile_channel_block", {0, 1, 0},
     "blocks of one channel tile on 16 registers (AVX2 unet_up1 27-43 -> 18-20 ms, two tiles 21)",
     DECONV_RULE_LOG(choose_channel_block)},
    // choose_zero_first
    {Threshold::ZeroFirstTappedNum, "zero_first_tapped_num", {1, 1, 1},
     "share of the outputs written by tapped phases, num/den, at most, to zero first (46^3: 12-16 -> 2.1-2.8 ms)",
     DECONV_RULE_LOG(choose_zero_first)},
    {Threshold::ZeroFirstTappedDen, "zero_first_tapped_den", {2, 2, 2},
     "the denominator of that share", DECONV_RULE_LOG(choose_zero_first)},
    // choose_flat_rows
    {Threshold::FlatRowsAliasBytes, "flat_rows_alias_bytes", {4096, 4096, 4096},
     "the L1 set period: channels a multiple apart get one more row (96 -> 8, 12^3: 2.2 -> 1.0 ms)",
     DECONV_RULE_LOG(choose_flat_rows)},
    // choose_serial
    {Threshold::SerialMacs, "serial_macs", {768 * kKiB, 768 * kKiB, 768 * kKiB},
     "MACs below which a small layer runs on the calling thread (ov_spec_1d: 8 -> 3 us)", DECONV_RULE_LOG(choose_serial)},
    {Threshold::SerialBytes, "serial_bytes", {1 * kMiB, 1 * kMiB, 1 * kMiB},
     "tensor bytes, at most, of those (1.05x in geomean, 1.08x under AVX2)", DECONV_RULE_LOG(choose_serial)},
    // layout_copies_fit
    {Threshold::MaxLayoutCopyBytes, "max_layout_copy_bytes", {512 * kMiB, 512 * kMiB, 512 * kMiB},
     "largest input and output copies of a layout twin; larger layers run on their own layout's kernels",
     DECONV_RULE_LOG(layout_copies_fit)},
    // depthwise_prefers_twin
    {Threshold::FewTappedOutputsNum, "few_tapped_outputs_num", {1, 1, 1},
     "share of the outputs tapped phases write, num/den, at most, that stays off the twin (0.105 -> 0.033 ms)",
     DECONV_RULE_LOG(depthwise_prefers_twin)},
    {Threshold::FewTappedOutputsDen, "few_tapped_outputs_den", {3, 3, 3},
     "the denominator of that share (a third: a quarter and each axis's last row)", DECONV_RULE_LOG(depthwise_prefers_twin)},
    {Threshold::DepthwiseOneTap3DRows, "depthwise_one_tap_3d_rows", {16, 16, 16},
     "input row from which 3D depthwise kernel = stride = 2 stays (16^3: 0.42-0.50 ms, 0.73-0.77 twinned)",
     DECONV_RULE_LOG(depthwise_prefers_twin)},
    // favours_channel_vectors
    {Threshold::FavoursChannelVectorsMinCout, "favours_channel_vectors_min_cout", {8, 8, 8},
     "fewest output channels per group the twin's channel vectors take (96 -> 8, 12^3: 12-15 -> 5-7.7 ms)",
     DECONV_RULE_LOG(favours_channel_vectors)},
    {Threshold::FavoursChannelVectorsNarrowRow, "favours_channel_vectors_narrow_row", {16, 16, 16},
     "phase rows narrower than this take the twin (rows of 28 stay: 0.12 against 0.18 ms twinned)",
     DECONV_RULE_LOG(favours_channel_vectors)},
    // choose_via_channels_last
    {Threshold::ChannelsLastTwinMinCout, "channels_last_twin_min_cout", {16, 16, 16},
     "fewest output channels per group on the channels-last twin (dcgan_l4: 40 -> 13 ms)",
     DECONV_RULE_LOG(choose_via_channels_last)},
    {Threshold::OneTapChannelsFirst, "one_tap_channels_first", {1, 0, 1},
     "one-tap layers stay channels-first on 32 registers (unet_up1 17.7 against 18.6 ms); AVX2 twinned 1.47x",
     DECONV_RULE_LOG(choose_via_channels_last)},
    {Threshold::OneTapChannelsFirstMinCout, "one_tap_channels_first_min_cout", {128, 128, 128},
     "fewest output channels of those (kernel 3 stride 4, 3D, 256 -> 128: 125 ms twinned, 59 here)",
     DECONV_RULE_LOG(choose_via_channels_last)},
    {Threshold::OneDimDenseMaxReduction, "one_dim_dense_max_reduction", {96, 96, 96},
     "most input channels x taps of 1D stride-1 layers that stay (8 groups of 8 -> 16: 0.225 -> 0.150 ms)",
     DECONV_RULE_LOG(choose_via_channels_last)},
    // choose_via_channels_first
    {Threshold::ChannelsFirstTwinCoutBelow, "channels_first_twin_cout_below", {8, 8, 8},
     "output channels per group below which channels-last layers take the twin (10.3 -> 0.30 ms)",
     DECONV_RULE_LOG(choose_via_channels_first)},
    // choose_batch_rows
    {Threshold::BatchRowsMinImages, "batch_rows_min_images", {16, 16, 16},
     "fewest images of a batch run as rows (dcgan_l2, batch 64: 25.7-27.2 -> 18.9-19.3 ms)",
     DECONV_RULE_LOG(choose_batch_rows)},
    {Threshold::BatchRowsNarrowMinImages, "batch_rows_narrow_min_images", {4, 4, 4},
     "fewest images run as rows where tap windows are narrower (batch 2: 0.22-0.53x, 4: 3.5-11x)",
     DECONV_RULE_LOG(choose_batch_rows)},
    // choose_winograd_tile
    {Threshold::WinogradTile, "winograd_tile", {4, 4, 4},
     "outputs per axis m of the Winograd tile F(m, r) a rule takes", DECONV_RULE_LOG(choose_winograd_tile)},
    {Threshold::WinogradMinChannels, "winograd_min_channels", {32, 32, 32},
     "fewest input and output channels per group on the Winograd path", DECONV_RULE_LOG(choose_winograd_tile)},
    {Threshold::WinogradMinTiles, "winograd_min_tiles", {128, 128, 128},
     "fewest tiles per phase over the batch (dcgan_l2, one tile per phase and image: 17.2 -> 21.5 ms)",
     DECONV_RULE_LOG(choose_winograd_tile)},
    {Threshold::WinogradSavingNum, "winograd_saving_num", {2, 2, 2},
     "least saving of the multiplications, num/den of the direct products (2D F(4, 2): 2.56x)",
     DECONV_RULE_LOG(choose_winograd_tile)},
    {Threshold::WinogradSavingDen, "winograd_saving_den", {1, 1, 1},
     "the denominator of that saving", DECONV_RULE_LOG(choose_winograd_tile)},
    {Threshold::WinogradChannelsLastSavingNum, "winograd_channels_last_saving_num", {3, 3, 3},
     "least saving where the direct kernels run channels-last too (hifigan_up1: 8.2 -> 7.4 ms)",
     DECONV_RULE_LOG(choose_winograd_tile)},
    {Threshold::WinogradChannelsLastSavingDen, "winograd_channels_last_saving_den", {2, 2, 2},
     "the denominator of that saving", DECONV_RULE_LOG(choose_winograd_tile)},
};

#undef DECONV_RULE_LOG

static_assert(std::size(kThresholdRows) == (size_t)Threshold::Count, "a row per Threshold");

constexpr bool rows_in_order() {
    for (size_t i = 0; i < std::size(kThresholdRows); i++)
        if ((size_t)kThresholdRows[i].id != i) return false;
    return true;
}
static_assert(rows_in_order(), "kThresholdRows in the order of the Threshold enum");

const ThresholdEntry &threshold_entry(Threshold t) { return kThresholdRows[(size_t)t]; }

}  // namespace

CpuClass cpu_class(const CpuRegisters &regs) {
#if defined(__x86_64__)
    return regs.many ? CpuClass::X86Many : CpuClass::X86Few;
#else
    (void)regs;
    return CpuClass::Other;
#endif
}

const char *cpu_class_name(CpuClass c) {
    switch (c) {
    case CpuClass::X86Many: return "x86-64, 32 vector registers (AVX-512)";
    case CpuClass::X86Few: return "x86-64, 16 vector registers (AVX2, SSE4.1)";
    default: return "other (ARM64)";
    }
}

int64_t threshold(CpuClass c, Threshold t) { return threshold_entry(t).values[(int)c]; }

int64_t threshold(const Plan::Impl &p, Threshold t) { return threshold(cpu_class(p.regs), t); }

int64_t uniform_threshold(Threshold t) {
    const ThresholdEntry &e = threshold_entry(t);
    for (int c = 1; c < kThresholdClasses; c++)
        if (e.values[c] != e.values[0])
            throw std::logic_error(std::string("threshold ") + e.name + " differs between CPU classes");
    return e.values[0];
}

ThresholdRow threshold_row(CpuClass c, Threshold t) {
    const ThresholdEntry &e = threshold_entry(t);
    return {e.id, e.name, e.values[(int)c], e.reason, e.section};
}

void for_each_threshold(CpuClass c, const std::function<void(const ThresholdRow &)> &fn) {
    for (const ThresholdEntry &e : kThresholdRows) fn(threshold_row(c, e.id));
}

std::optional<ThresholdRow> find_threshold(CpuClass c, const std::string &name) {
    for (const ThresholdEntry &e : kThresholdRows)
        if (name == e.name) return threshold_row(c, e.id);
    return std::nullopt;
}

}  // namespace detail
}  // namespace deconv
