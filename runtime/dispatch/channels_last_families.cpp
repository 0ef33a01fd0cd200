// The channels-last kernel families' rules (channels_last_families.h), each with the measurement
// it rests on; their thresholds are rows of plan/thresholds.cpp, their measurements in
// docs/performance-log.md.
#include "dispatch/channels_last_families.h"

#include "cpu/bordered_input.h"
#include "kernels/halide_glue.h"
#include "dispatch/layer_classes.h"
#include "dispatch/strategy.h"
#include "plan/thresholds.h"

#include "facts/group_block_facts.h"

#include <vector>

namespace deconv {
namespace detail {

// bf16 channels-last backprop layers of an even number of input channels per group run on the
// dot-product kernels where the CPU has AVX512-BF16 (phase_conv_nxc_pairs: two multiply-adds per
// lane and instruction); DECONV_BF16_DOT=0 keeps the f32-FMA kernels.
bool uses_bf16_dot(const Plan::Impl &p) {
    const int rank = p.geo.rank;
    return p.dtype == DType::bf16 && !p.geo.forward && p.geo.data_format == DataFormat::NXC && p.geo.c_in % 2 == 0 &&
           p.policy.bf16_dot != Toggle::Off && find_kernel(cpu_kernel_key(p, rank, true, false, true), p.variant) &&
           find_kernel(cpu_kernel_key(p, rank, true, true, true), p.variant) && cpu_has_bf16_dot(p.variant);
}

// Whether this build has the bounded and interior channels-last kernels of layer `p` of the
// family that `flag` of KernelKey marks (groups, dots); for a channels-first layer, those its
// channels-last twin would run.
bool has_channels_last_pair(const Plan::Impl &p, bool KernelKey::*flag) {
    KernelKey bounded = cpu_kernel_key(p, p.geo.rank, true, false, false);
    bounded.layout = DataFormat::NXC;
    bounded.*flag = true;
    KernelKey interior = bounded;
    interior.bounded = false;
    return find_kernel(bounded, p.variant) && find_kernel(interior, p.variant);
}

// Channels-last depthwise layers run the group-vectorized kernels where this build has them:
// every operand a vector load (centernet_dla_dw_nxc: 10.3 ms scalar on the channels-last kernels,
// 0.077 here with the interleaved ones). The route pins channels_first or channels_last instead.
bool uses_groups(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NXC || g.c_in != 1 || g.c_out != 1) return false;
    const Policy::Route r = p.policy.route;
    if (r != Policy::Route::Auto && r != Policy::Route::Groups) return false;
    return has_channels_last_pair(p, &KernelKey::groups);
}

// Channels-last backprop layers of the channel-dot class run the kernels that vectorize input
// channels (cpu_channel_dots_schedule.h) where this build has them: each output a dot product over
// the input's dense channels. The route pins channels_first instead.
bool uses_channel_dots(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NXC || !channel_dots_class(p)) return false;
    const Policy::Route r = p.policy.route;
    if (r != Policy::Route::Auto && r != Policy::Route::ChannelsLast) return false;
    return has_channels_last_pair(p, &KernelKey::dots);
}

// Channels-last grouped layers whose output channels per group fill a half or a quarter of a
// vector run on the group-block kernels over a block-interleaved input copy (64 groups of 4 -> 4,
// 56x56, kernel 3 stride 2: 4.7 ms on the twin, 2.6 here); one-tap layers of more channels don't.
namespace {

// Groups per vector of the group-block kernels for `p`'s output channels per group, where its
// groups fill whole blocks, the policy leaves the blocks and the bordered copy on, and this build
// has the interior kernel (for a channels-first layer, its channels-last twin's); 0 elsewhere.
int group_block_kernel(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.groups < 2 || p.policy.group_blocks == Toggle::Off || p.policy.bordered_input == Toggle::Off)
        return 0;
    const int b = tiles::group_block((int)p.tiles.lanes, g.c_out);
    if (b == 0 || g.groups % b != 0) return 0;
    KernelKey key = cpu_kernel_key(p, g.rank, true, true, false);
    key.layout = DataFormat::NXC;
    key.group_block = b;
    return find_kernel(key, p.variant) ? b : 0;
}

}  // namespace

int uses_group_blocks(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.data_format != DataFormat::NXC || p.tiles.lanes < threshold(p, Threshold::GroupBlocksMinLanes)) return 0;
    // (Pins of the channels-last kernels' own paths keep those.)
    if (p.policy.group_major == Toggle::On || p.policy.tap_rows == Toggle::On) return 0;
    const Policy::Route r = p.policy.route;
    if (r != Policy::Route::Auto && r != Policy::Route::ChannelsLast) return 0;
    const int b = group_block_kernel(p);
    if (b == 0) return 0;
    if (g.c_out > threshold(p, Threshold::GroupBlockOneTapMaxCout) && every_phase_one_tap(p) &&
        p.policy.group_blocks != Toggle::On)
        return 0;
    const int in = g.rank - 1;
    std::vector<int64_t> lo, hi;
    if (!border_margins(p.phases, g, dtype_size(p.dtype), 0, p.info.pads_begin[in], p.out_spatial[in], lo, hi))
        return 0;
    return b;
}

// Channels-first grouped layers of a quarter vector of output channels per group, at a stride
// along rows narrower than a vector, take the twin, whose group blocks fill whole vectors (16
// groups of 2 -> 4, 7x7, kernel 3 stride 2: 0.093 -> 0.030 ms).
bool group_blocks_twin(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.data_format != DataFormat::NCX || g.c_out != threshold(p, Threshold::GroupBlocksTwinChannels)) return false;
    const int in = g.rank - 1;
    if (p.info.strides[in] < 2 || widest_phase(p.phases[in]) >= p.tiles.lanes) return false;
    return group_block_kernel(p) == threshold(p, Threshold::GroupBlocksTwinBlock);
}

}  // namespace detail
}  // namespace deconv
