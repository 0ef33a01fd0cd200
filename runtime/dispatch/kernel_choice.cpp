// The kernels a CPU layer runs on (the choice every implementation starts from): the schedule
// (channel- or position-vectorized), the channels-last family, and the bounded, interior and
// interleaved kernels, each by a rule of the heuristics or the policy's pin. The rules' thresholds
// are rows of plan/thresholds.cpp; their measurements are in docs/performance-log.md, "Rules: the
// measurements behind the thresholds".
#include "cpu/bordered_input.h"
#include "cpu/cpu_executor.h"
#include "cpu/phase_tasks.h"
#include "cpu/winograd_executor.h"
#include "dispatch/channels_last_families.h"
#include "dispatch/layer_classes.h"
#include "dispatch/strategy.h"
#include "kernels/cpu_thread_pool.h"
#include "kernels/cpu_tiles.h"
#include "kernels/halide_glue.h"
#include "kernels/kernel_call.h"
#include "layer/checked_math.h"
#include "plan/thresholds.h"

#include "facts/interleaved_depthwise_facts.h"
#include "facts/tile_facts.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <set>

namespace deconv {
namespace detail {

// The key of a CPU kernel of plan `p` (`rank` spatial axes: the layer's, or one more for batch
// rows). `ci_pairs`: the bf16 dot-product kernels (channels-last backprop only). The forward op
// has one kernel per layout (channel-vectorized, bounded).
KernelKey cpu_kernel_key(const Plan::Impl &p, int rank, bool channel_major, bool interior, bool ci_pairs) {
    const bool nxc = p.geo.data_format == DataFormat::NXC;
    KernelKey k;
    k.family = p.geo.forward ? KernelFamily::GroupConv : KernelFamily::Phase;
    k.rank = rank;
    k.dtype = p.dtype;
    k.layout = p.geo.data_format;
    k.channels = nxc || channel_major || p.geo.forward;
    k.bounded = p.geo.forward || !interior;
    k.ci_pairs = nxc && ci_pairs && !p.geo.forward;
    k.groups = p.groups && !p.geo.forward;
    k.dots = p.dots && !p.geo.forward;
    return k;
}

// Whether a phase's reduction exceeds the long_reduction row.
bool long_reduction(const Plan::Impl &p) { return phase_reduction(p) > threshold(p, Threshold::LongReduction); }

// Channels-first backprop layers vectorize output channels where a group holds a vector of them
// and the reduction amortizes the tiles' stores across planes, else positions (unet3d_up, 128 x 1
// tap: positions; dilated_s1, 64 x 9: channels). The policy's route pins it.
bool choose_channel_major(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format == DataFormat::NXC) return true;
    if (p.policy.route == Policy::Route::Channels) return true;
    if (p.policy.route == Policy::Route::Positions) return false;
    if (flat_rows_class(p)) return false;
    if (short_1d_positions(p) && !prefers_blocked_interleave(p)) return false;
    if (narrow_rows_channel_tiles(p)) return true;
    return g.c_out >= p.tiles.lanes && (long_reduction(p) || one_tap_channel_tiles(p));
}

// A database entry that pins kernels this build lacks gets one warning per entry and process.
void warn_once(const std::string &message) {
    static std::mutex lock;
    static std::set<std::string> said;
    const std::lock_guard<std::mutex> hold(lock);
    if (said.insert(message).second) std::fprintf(stderr, "deconv: warning: %s\n", message.c_str());
}

// The CPU kernels of a layer: which schedule (channel_major) and the bounded and interior kernels.
void set_cpu_kernels(Plan::Impl &p, bool channel_major) {
    const int rank = p.geo.rank;
    p.channel_major = channel_major;
    p.groups = channel_major && uses_groups(p);
    p.ci_pairs = channel_major && !p.groups && uses_bf16_dot(p);
    p.dots = channel_major && !p.groups && !p.ci_pairs && uses_channel_dots(p);
    const KernelKey bounded = cpu_kernel_key(p, rank, p.channel_major, false, p.ci_pairs);
    const KernelKey interior = cpu_kernel_key(p, rank, p.channel_major, true, p.ci_pairs);
    p.kernel = find_kernel(bounded, p.variant);
    p.interior_kernel = find_kernel(interior, p.variant);
    p.group_block = channel_major && !p.groups && !p.ci_pairs && !p.dots ? uses_group_blocks(p) : 0;
    if (p.group_block) {
        KernelKey blocks = interior;
        blocks.group_block = p.group_block;
        p.interior_kernel = find_kernel(blocks, p.variant);
    }
    // Pinned register tiles: the channel-vectorized kernels built with them, where this build has
    // them (generators/CMakeLists.txt, DECONV_SCHEDULES).
    const Policy &pin = p.policy;
    if (bounded.channels && !p.geo.forward && !p.groups && !p.dots && !p.group_block &&
        (pin.kernel_q_tile > 0 || pin.kernel_vectors > 0)) {
        ScheduleKnobs knobs = p.kernel ? p.kernel->knobs : ScheduleKnobs{};
        if (pin.kernel_q_tile > 0) knobs.q_tile = (int)pin.kernel_q_tile;
        if (pin.kernel_vectors > 0) knobs.vectors = (int)pin.kernel_vectors;
        const KernelEntry *b = find_kernel(bounded, knobs, p.variant), *i = find_kernel(interior, knobs, p.variant);
        if (b && i) {
            p.kernel = b;
            p.interior_kernel = i;
        } else if (p.policy_source.find("heuristics") != 0) {
            warn_once(p.policy_source + " pins kernel_q_tile=" + policy_knob_value(pin, "kernel_q_tile") +
                      " kernel_vectors=" + policy_knob_value(pin, "kernel_vectors") + " for " + (p.kernel ? p.kernel->name : "?") +
                      ", a kernel this build lacks (build it with -DDECONV_SCHEDULES): the default kernel runs");
        }
    }
    p.tiles = kernel_tiles(p.regs, p.dtype, p.channel_major ? p.kernel : nullptr, nullptr);
}

// The interleaved kernel of a channels-first backprop layer on the position-vectorized
// schedule, or of a channels-last depthwise layer on the group-vectorized kernels (p.groups), if
// the layer can run it: a stride this build has the kernel of (positions: 2, 3, 4 and 8, the
// blocked kernel 2, the group kernels 2 and 8; 3 and 4 f32 only) and dilation 1 on the
// innermost axis, one phase per output residue in residue order (every residue has an output).
// Null otherwise.
const KernelEntry *interleaved_kernel_for(const Plan::Impl &p, bool channel_major, bool blocked) {
    const int in = p.geo.rank - 1;  // the innermost axis, spec order
    const int64_t s = p.info.strides[in];
    const bool positions = !channel_major && p.geo.data_format == DataFormat::NCX;
    if (p.geo.forward || !(positions || (p.groups && !blocked)) || s < 2 || (blocked && s != 2) ||
        p.info.dilations[in] != 1 || p.out_spatial[in] < s || (int64_t)p.phases[in].size() != s)
        return nullptr;
    for (int64_t r = 0; r < s; r++)
        if (p.phases[in][r].out_first != r) return nullptr;
    // interleaved_few_registers: strides 3-4 on 16 registers interleave 1D and depthwise layers
    // only, whose 8 accumulators hold 2 channels of s phases (AVX2, 64 -> 12, kernel 5 stride 3:
    // 0.46 ms interleaved, 0.28 per phase). The pin interleave=plain runs it anyway.
    if (rule_applies(p, Threshold::InterleavedFewRegisters) &&
        s >= threshold(p, Threshold::InterleavedFewRegistersMinStride) &&
        s <= threshold(p, Threshold::InterleavedFewRegistersMaxStride) && p.geo.rank > 1 &&
        !(p.geo.c_in == 1 && p.geo.c_out == 1) && p.policy.interleave != Policy::Interleave::Plain)
        return nullptr;
    // Kernels below the stride leave phases without taps, whose packed zeros the per-phase kernels
    // skip (1D 128 -> 64, kernel 1 stride 2: 0.13 ms blocked, 0.05-0.06 per phase); depthwise
    // layers still interleave (depthwise_interleaves_below_stride). Pins still run them.
    const bool depthwise = depthwise_interleaves_below_stride(p);
    if (p.policy.interleave == Policy::Interleave::Auto) {
        if ((!every_phase_tapped(p.phases[in]) && !depthwise) || per_phase_few_channels(p)) return nullptr;
    }
    // The group kernel only where its fast branch runs (two taps per phase on the two
    // innermost axes; one-tap phases beside them on whole vectors of groups and whole rows): the
    // per-phase group kernels ran 2-10x faster elsewhere. The pin interleave=plain runs it anywhere.
    if (p.groups && p.policy.interleave != Policy::Interleave::Plain) {
        if (floor_mod(p.info.pads_begin[in], s) != tiles::interleaved_depthwise_pad_residue((int)s)) return nullptr;
        if (most_taps(p.phases[in]) != tiles::kInterleavedDepthwiseTaps) return nullptr;
        bool one_tap = false;
        for (int axis = in; axis >= std::max(0, in - 1); axis--)
            for (const AxisPhase &a : p.phases[axis]) {
                if (a.tap_count < 1 || a.tap_count > tiles::kInterleavedDepthwiseTaps) return nullptr;
                one_tap = one_tap || a.tap_count == 1;
            }
        const bool whole_rows = p.geo.rank == 1 || (p.geo.rank == 2 && p.out_spatial[in] % s == 0);
        if (one_tap && (!whole_rows || p.tiles.lanes <= 0 || p.geo.groups % p.tiles.lanes != 0)) return nullptr;
    }
    KernelKey key;
    key.family = KernelFamily::Interleaved;
    key.rank = p.geo.rank;
    key.dtype = p.dtype;
    key.layout = p.geo.data_format;
    key.channels = key.groups = p.groups;
    key.x_stride = (int)s;
    key.blocked = blocked;
    // Phase 0 one tap short of phase 1 (an odd kernel, odd pads_begin): the variant that skips the
    // packed zero. grouped32_up (kernel 3, pad 1): 0.237 -> 0.184 ms.
    if (!blocked && !p.groups && s == 2 && p.phases[in][0].tap_count + 1 == p.phases[in][1].tap_count &&
        p.policy.short_phase != Toggle::Off) {
        KernelKey short0 = key;
        short0.short_phase0 = true;
        if (const KernelEntry *k = find_kernel(short0, p.variant)) return k;
    }
    return find_kernel(key, p.variant);
}

// 1D-2D layers of one-tap phases and enough input and output channels run on the channel tiles
// however short their reduction: they read contiguous rows, cheaper than the twin's transposes
// (128 -> 32, kernel 1, 56x56, batch 2: 0.41 ms twinned, 0.30 here).
bool one_tap_channel_tiles(const Plan::Impl &p) {
    if (!rule_applies(p, Threshold::OneTapChannelTiles)) return false;
    const OpGeometry &g = p.geo;
    const int64_t min_channels = threshold(p, Threshold::OneTapChannelTilesMin);
    return !g.forward && g.rank <= 2 && g.c_in >= min_channels && g.c_out >= min_channels &&
           p.dtype != DType::bf16 && every_phase_one_tap(p) && !strided_one_tap_2d(p);
}

// 1D layers, and 3D ones of one-tap phases, of enough output channels, weights per call within
// half of L2 and long rows run on the blocked interleaved kernel, not the channels-last kernels'
// transposes (hifigan_up3 7.3 -> 4.8 ms); 3D ones of few channels on shorter rows too.
bool prefers_blocked_interleave(const Plan::Impl &p) {
    const int in = p.geo.rank - 1;
    const Policy::Interleave pin = p.policy.interleave;
    if (pin == Policy::Interleave::Off || pin == Policy::Interleave::Plain || !interleaved_kernel_for(p, false, true))
        return false;
    const bool forced = pin == Policy::Interleave::Blocked;
    const int64_t row_groups = p.out_spatial[in] / p.info.strides[in];
    const bool one_tap_3d = p.geo.rank == 3 && every_phase_one_tap(p);
    const bool few_channels_3d =
        one_tap_3d && p.geo.c_in * p.geo.c_out <= threshold(p, Threshold::BlockedFewChannelProducts) &&
        row_groups >= threshold(p, Threshold::BlockedFewChannelsMinGroups) && p.out_spatial[in] % p.info.strides[in] == 0;
    if (!forced && (p.geo.c_out < threshold(p, Threshold::BlockedMinCout) || p.policy.route != Policy::Route::Auto ||
                    (row_groups < threshold(p, Threshold::BlockedMinGroups) && !few_channels_3d) ||
                    !(p.geo.rank == 1 || one_tap_3d)))
        return false;
    // 1D: its tasks are blocks of a row; fewer blocks than threads leave threads idle (128 -> 64,
    // kernel 4 stride 2, 1000 positions, one block: 0.62 ms on two threads, 0.33 plain).
    const int64_t task_groups = blocked_task_groups(p.tiles, p.geo.c_in);
    if (!forced && p.geo.rank == 1 &&
        (row_groups + task_groups - 1) / task_groups * p.geo.n * p.geo.groups < pool_threads())
        return false;
    int64_t taps = 1;  // per call: the most taps of a phase on the outer axes, every phase of the innermost
    for (int i = 0; i < p.geo.rank; i++) {
        const int64_t most = most_taps(p.phases[i]);
        taps *= i == p.geo.rank - 1 ? most * p.info.strides[i] : most;
    }
    const int64_t acc_bytes = 4;  // f32 accumulators (the kernel's dtypes are f32, f16, bf16)
    if (!forced && p.geo.c_in * taps * p.geo.c_out * acc_bytes > threshold(p, Threshold::BlockedWeightBytes))
        return false;
    // It reads a zero-bordered input copy: within that copy's limit.
    std::vector<int64_t> lo, hi;
    return border_margins(p.phases, p.geo, dtype_size(p.dtype), p.info.strides[in], p.info.pads_begin[in],
                                  p.out_spatial[in], lo, hi);
}

void choose_cpu_kernels(Plan::Impl &p) {
    p.variant = p.policy.cpu_variant.empty() ? default_cpu_variant() : p.policy.cpu_variant;
    if (!p.policy.cpu_variant.empty()) {
        const std::vector<std::string> built = built_cpu_variants();
        std::string names;
        for (const std::string &b : built) names += (names.empty() ? "" : ", ") + b;
        if (std::find(built.begin(), built.end(), p.variant) == built.end()) {
            throw Error(ErrorKind::Unsupported, "cpu_variant=" + p.variant + " (" + p.policy_source +
                                                    "): this build has CPU kernels for " + names + " only");
        }
        if (!cpu_supports_variant(p.variant)) {
            throw Error(ErrorKind::Unsupported,
                        "cpu_variant=" + p.variant + " (" + p.policy_source + "): this CPU does not run it");
        }
    }
    p.regs = cpu_registers(p.variant);
    p.tiles = kernel_tiles(p.regs, p.dtype, nullptr, nullptr);  // lanes, for choose_channel_major
    set_cpu_kernels(p, choose_channel_major(p));
}

}  // namespace detail
}  // namespace deconv
