// The channels-last kernel families' rules (channels_last_families.h), each with the measurement
// it rests on; docs/performance.md has the rest.
#include "dispatch/channels_last_families.h"

#include "cpu/bordered_input.h"
#include "kernels/halide_glue.h"
#include "dispatch/layer_classes.h"
#include "dispatch/strategy.h"

#include "facts/group_block_facts.h"

#include <vector>

namespace deconv {
namespace detail {

// bf16 backprop layers on channels-last data with an even number of input channels per group
// run on the dot-product kernels where the CPU has AVX512-BF16 (phase_conv_nxc_pairs: two
// multiply-adds per lane and instruction). DECONV_BF16_DOT=0 keeps the f32-FMA kernels (for
// measuring).
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

// Channels-last depthwise layers (one input and one output channel per group) run the
// group-vectorized kernels, where this build has them: every operand a vector load. On the
// channels-last kernels they ran scalar (centernet_dla_dw_nxc 10.3 ms); on the channels-first
// twin the transposes took three times the kernels' time (0.35-0.41 ms against 0.08-0.10 for
// the channels-first layer). At stride 2 or 8 on the innermost axis their interleaved kernel
// serves every phase of that axis at once (interleaved_kernel_for): the per-phase calls wrote
// every s-th position of the rows and fetched the output's lines again per phase
// (fcn8s_upscore8_nxc 2.4-2.9 -> 1.2 ms, centernet_dla_dw_nxc 0.12-0.16 -> 0.077). The route
// pins channels_first or channels_last instead.
bool uses_groups(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NXC || g.c_in != 1 || g.c_out != 1) return false;
    const Policy::Route r = p.policy.route;
    if (r != Policy::Route::Auto && r != Policy::Route::Groups) return false;
    return has_channels_last_pair(p, &KernelKey::groups);
}

// Channels-last backprop layers of the channel-dot class (channel_dots_class: up to
// tiles::kDotsMaxChannels output channels per group) run the kernels that vectorize input channels
// (cpu_channel_dots_schedule.h), where this build has them: each output a dot product over the
// channels-last input's dense channels. The route pins channels_first instead.
bool uses_channel_dots(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NXC || !channel_dots_class(p)) return false;
    const Policy::Route r = p.policy.route;
    if (r != Policy::Route::Auto && r != Policy::Route::ChannelsLast) return false;
    return has_channels_last_pair(p, &KernelKey::dots);
}

// Channels-last grouped layers whose output channels per group fill a half or a quarter of a
// vector (tiles::group_block: 8 or 4 f32 channels on AVX-512, 4 on AVX2) run on the group-block
// kernels, where this build has them: each vector holds two or four groups' channels, over a
// block-interleaved copy of the input (64 groups of 4 -> 4, 56x56, kernel 3 stride 2, 2 threads,
// AVX-512: 4.7 ms on the channels-first twin, 2.6 here; docs/performance.md). Not on CPUs of
// 4-lane vectors (SSE4.1), or where the copy would pass its limit (border_margins). Layers of
// one-tap phases with more than kGroupBlockOneTapMaxCout output channels per group stay on the
// channels-last kernels' one-vector tiles, which read the caller's input without a copy that 8
// products per output do not pay for (32 groups of 8 -> 8, kernel 1, 56x56: 0.72x with the
// blocks); at 4 channels their alternative is the twin, which the blocks beat 2-7x. The policy's
// group_blocks turns them off; the route pins others.
constexpr int64_t kGroupBlockOneTapMaxCout = 7;

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
    if (g.data_format != DataFormat::NXC || p.tiles.lanes < 8) return 0;
    // (Pins of the channels-last kernels' own paths keep those.)
    if (p.policy.group_major == Toggle::On || p.policy.tap_rows == Toggle::On) return 0;
    const Policy::Route r = p.policy.route;
    if (r != Policy::Route::Auto && r != Policy::Route::ChannelsLast) return 0;
    const int b = group_block_kernel(p);
    if (b == 0) return 0;
    if (g.c_out > kGroupBlockOneTapMaxCout && every_phase_one_tap(p) && p.policy.group_blocks != Toggle::On) return 0;
    const int in = g.rank - 1;
    std::vector<int64_t> lo, hi;
    if (!border_margins(p.phases, g, dtype_size(p.dtype), 0, p.info.pads_begin[in], p.out_spatial[in], lo, hi))
        return 0;
    return b;
}

// Channels-first grouped layers of a quarter vector of output channels per group (4 f32 channels
// on AVX-512: blocks of four groups) at a stride of 2 or more along rows narrower than a vector
// take the channels-last twin, whose group blocks fill whole vectors where the position kernels
// run such rows on 8- or 4-lane ones (16 groups of 2 -> 4, 7x7, kernel 3 stride 2: 0.093 ->
// 0.030 ms). 95 grouped layers of 4 and 8 channels per group, 2 threads, Sapphire Rapids
// (docs/performance.md): 1.05-7.7x on such rows but for two of 31 (0.79x, 0.89x); rows of 28 and
// 56 ran 0.3-3.2x and stay, as do blocks of two (8 channels, or 4 under AVX2: 0.18-3.3x). Only
// that class: blocks of four of other widths (2 channels under AVX2, depthwise under SSE4.1)
// were not measured.
constexpr int kGroupBlocksTwinBlock = 4;
constexpr int64_t kGroupBlocksTwinChannels = 4;

bool group_blocks_twin(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.data_format != DataFormat::NCX || g.c_out != kGroupBlocksTwinChannels) return false;
    const int in = g.rank - 1;
    if (p.info.strides[in] < 2 || widest_phase(p.phases[in]) >= p.tiles.lanes) return false;
    return group_block_kernel(p) == kGroupBlocksTwinBlock;
}

}  // namespace detail
}  // namespace deconv
