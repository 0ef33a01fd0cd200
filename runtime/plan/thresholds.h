// The dispatch thresholds as data: one table per CPU class, each row a name, its value on that
// class, a one-line reason and the docs section that holds its measurements (thresholds.cpp).
// The rules (dispatch/: layer_classes.cpp, channels_last_families.cpp, kernel_choice.cpp and the
// implementations' impl_*.cpp) and the CPU executors read their numbers here rather than from
// constants of their own. A rule measured on some classes only has a row of its own name whose
// value is 1 where it applies and 0 elsewhere.
#pragma once

#include "deconv/deconv.h"
#include "kernels/cpu_tiles.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace deconv {
namespace detail {

// What the rules condition on: the register file of the plan's CPU variant, and whether the
// build's architecture is the one they were measured on.
enum class CpuClass : int {
    X86Many,  // x86-64, 32 vector registers (AVX-512)
    X86Few,   // x86-64, 16 vector registers (AVX2, SSE4.1)
    Other,    // ARM64 and other hosts: no class rule was measured there
    Count
};

// The class of a plan on a CPU variant of these registers (CpuRegisters::many) in this build.
CpuClass cpu_class(const CpuRegisters &regs);
const char *cpu_class_name(CpuClass c);

// One row per threshold, grouped by the rule that reads it (thresholds.cpp has the values).
enum class Threshold : int {
    // channel_dots_class
    DotsFewChannels,
    DotsMinVectors,
    DotsStrideOneVectors,
    // short_strided_2d
    ShortStrided2D,
    ShortStrided2DMaxReduction,
    ShortStrided2DManyGroups,
    ShortStrided2DManyGroupsMaxReduction,
    ShortStrided2DMaxCout,
    ShortStrided2DMinRowGroups,
    // short_1d_positions
    Short1DPositions,
    Short1DMaxCout,
    Short1DMaxCin,
    Short1DMinCout,
    // in_place_1d_channels_last
    InPlace1DChannelsLast,
    InPlace1DMaxStride,
    InPlace1DMinLanes,
    // narrow_rows_channel_tiles
    NarrowRowsChannelTiles,
    NarrowRowsWholeVector,
    NarrowRowsMinLanes,
    NarrowRowsMinCin,
    NarrowRowsMaxReduction,
    // flat_rows_class
    FlatRows,
    FlatRowsCoutBelow,
    // per_phase_few_channels
    PerPhaseFewChannels,
    PerPhaseMinCout,
    PerPhaseCoutBelow,
    PerPhaseMinCin,
    // few_outputs_twin
    FewOutputsTwin,
    FewOutputsTwinFewRegisters,
    FewOutputsMinCin,
    FewOutputsMinImages,
    FewOutputsManyCin,
    FewOutputsTwoTapsCin,
    FewOutputsNarrowRow,
    // dot_outputs_twin
    DotOutputsTwin,
    DotTwinMinReduction,
    // kernel4_stride2_1d_twin
    Kernel4Stride2Twin,
    Kernel4Stride2TwinVectorBits,
    LongRows1D,
    LongRowsMinCin,
    LongRowsMinCout,
    MidCinMin,
    MidCinMax,
    MidCinPerCout,
    // large_one_tap_2d
    LargeOneTap2D,
    OneTapTwinPlaneBytes,
    OneTapTwinMaxCout,
    OneTapTwinProducts,
    // large_one_tap_1d
    LargeOneTap1D,
    OneTapTwinRowBytes,
    // strided_one_tap_2d
    StridedOneTap2D,
    // winograd_pays_on_few_tiles
    WinogradFewTiles,
    WinogradFewTilesMin,
    WinogradFewTilesMinChannels,
    WinogradFewTilesSavingNum,
    WinogradFewTilesSavingDen,
    // one_tile_blocks
    OneTileBlockLanes,
    // channels_last_channel_block
    ChannelsLastChannelBlock,
    BlockWeightBytes,
    // batch_rows_channel_block
    BatchRowsChannelBlock,
    BatchRowsWeightBytes,
    // exact_channel_blocks
    ExactChannelBlocks,
    ExactBlocksMinLanes,
    ExactBlocksMinSaving,
    // tap_rows_class
    TapRows,
    TapRowsMinRows,
    TapRowsMinTapRows,
    // narrow_row_channel_block
    NarrowRowChannelBlock,
    NarrowRowCostFullTile,
    NarrowRowCostTwoVectors,
    NarrowRowCostOneVector,
    // one_tap_1d_positions
    OneTap1DPositions,
    OneTap1DFewTappedShare,
    OneTap1DHalfTappedShare,
    // depthwise_interleaves_below_stride
    DepthwiseInterleavesBelowStride,
    TailedMinGroups,
    ManyTailOutputs,
    // uses_group_blocks
    GroupBlocksMinLanes,
    GroupBlockOneTapMaxCout,
    // group_blocks_twin
    GroupBlocksTwinBlock,
    GroupBlocksTwinChannels,
    // slices and slabs (cpu_executor.cpp, slicing)
    SliceTasksPerThread,
    SlicesPerThreadMin,
    SliceMaxGrowth,
    SliceMaxFilterBytes,
    SliceOutputBytes,
    SliceInputBytes,
    SlabMaxRowBytes,
    SlabMinImageBytes,
    // tap windows (cpu_executor.cpp, windows_axis)
    TapWindowShare,
    TapWindowMinSaved,
    // exact row tiles (phase_kernel_calls.cpp, exact_row_head)
    MaxExactRest,
    ExactRowSaving,
    // phase tasks (phase_tasks.cpp)
    SplitInnerBytes,
    PhaseTasksMaxPositions,
    PhaseTasksMinWeights,
    // Winograd slices (winograd_executor.cpp)
    WinogradSliceKib,
    // the bordered input copy (bordered_input.h)
    MaxBorderedInputBytes,
    // choose_channel_major (kernel_choice.cpp)
    LongReduction,
    // interleaved_few_registers (kernel_choice.cpp, interleaved_kernel_for)
    InterleavedFewRegisters,
    InterleavedFewRegistersMinStride,
    InterleavedFewRegistersMaxStride,
    // one_tap_channel_tiles (kernel_choice.cpp)
    OneTapChannelTiles,
    OneTapChannelTilesMin,
    // prefers_blocked_interleave (kernel_choice.cpp)
    BlockedMinCout,
    BlockedMinGroups,
    BlockedWeightBytes,
    BlockedFewChannelProducts,
    BlockedFewChannelsMinGroups,
    // exact_groups (impl_phase_kernels.cpp, choose_bordered_input)
    ExactGroups,
    ExactGroupsMinTiles,
    // choose_edge_windows (impl_phase_kernels.cpp)
    EdgeMinGroups,
    // choose_bordered_input (impl_phase_kernels.cpp)
    BorderedPositionsCoutBelow,
    // choose_channel_block (impl_phase_kernels.cpp)
    ChannelBlock,
    NarrowRowBlock,
    OneTileChannelBlock,
    // choose_zero_first (impl_phase_kernels.cpp)
    ZeroFirstTappedNum,
    ZeroFirstTappedDen,
    // choose_flat_rows (impl_phase_kernels.cpp)
    FlatRowsAliasBytes,
    // choose_serial (impl_phase_kernels.cpp)
    SerialMacs,
    SerialBytes,
    // layout_copies_fit (impl_layout_twins.cpp)
    MaxLayoutCopyBytes,
    // depthwise_prefers_twin (impl_layout_twins.cpp; the few-tapped share in choose_via_channels_last too)
    FewTappedOutputsNum,
    FewTappedOutputsDen,
    DepthwiseOneTap3DRows,
    // favours_channel_vectors (impl_layout_twins.cpp)
    FavoursChannelVectorsMinCout,
    FavoursChannelVectorsNarrowRow,
    // choose_via_channels_last (impl_layout_twins.cpp)
    ChannelsLastTwinMinCout,
    OneTapChannelsFirst,
    OneTapChannelsFirstMinCout,
    OneDimDenseMaxReduction,
    // choose_via_channels_first (impl_layout_twins.cpp)
    ChannelsFirstTwinCoutBelow,
    // choose_batch_rows (impl_batch_rows.cpp)
    BatchRowsMinImages,
    BatchRowsNarrowMinImages,
    // choose_winograd_tile (impl_winograd.cpp)
    WinogradTile,
    WinogradMinChannels,
    WinogradMinTiles,
    WinogradSavingNum,
    WinogradSavingDen,
    WinogradChannelsLastSavingNum,
    WinogradChannelsLastSavingDen,
    Count
};

// A row of one class's table.
struct ThresholdRow {
    Threshold id;
    const char *name;     // the enumerator's name in snake case
    int64_t value;        // on that class
    const char *reason;   // one line: the rule and its figure
    const char *section;  // where its measurements are: docs/<page>.md#<heading>
};

int64_t threshold(CpuClass c, Threshold t);
// On the plan's class (cpu_class(p.regs)).
int64_t threshold(const Plan::Impl &p, Threshold t);
// Whether a rule's row of 0/1 is 1 on the plan's class.
inline bool rule_applies(const Plan::Impl &p, Threshold rule) { return threshold(p, rule) != 0; }
// A row whose value is the same on every class, for code that has no plan; throws
// std::logic_error for a row that differs between classes.
int64_t uniform_threshold(Threshold t);

ThresholdRow threshold_row(CpuClass c, Threshold t);
// Every row of a class's table, in the enum's order.
void for_each_threshold(CpuClass c, const std::function<void(const ThresholdRow &)> &fn);
// The row of that name (ThresholdRow::name), if any.
std::optional<ThresholdRow> find_threshold(CpuClass c, const std::string &name);

}  // namespace detail
}  // namespace deconv
