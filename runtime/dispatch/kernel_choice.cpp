// The kernels a CPU layer runs on (the choice every implementation starts from): the schedule
// (channel- or position-vectorized), the channels-last family, and the bounded, interior and
// interleaved kernels, each by a rule of the heuristics or the policy's pin.
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

constexpr int64_t kLongReduction = 256;

// Whether a phase's reduction exceeds kLongReduction.
bool long_reduction(const Plan::Impl &p) { return phase_reduction(p) > kLongReduction; }

// Channels-first backprop layers choose their schedule: vectorized output channels when a
// group has at least a vector of them (KernelTiles::lanes) and each tile's reduction (input
// channels x taps per phase: long_reduction) is long enough to amortize its stores, which scatter
// across channel planes; else vectorized output positions (unet3d_up, 128 x 1 tap, runs faster
// on positions; dilated_s1, 64 x 9, on channels: docs/performance.md). The policy's route pins it.
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
    // Strides 3 and 4 on CPUs of 16 vector registers: 1D and depthwise layers only. The kernel's
    // 8 accumulators hold 2 channels of s phases, and 2D-3D layers of 4-12 output channels ran
    // 15-60% slower on it than per phase (AVX2: 64 -> 12, kernel 5 stride 3: 0.28 -> 0.46 ms; 8 ->
    // 4, kernel 3 stride 3: 0.067 -> 0.077), 1D and depthwise ones faster (64 -> 8, 1D kernel 6
    // stride 3: 0.099 -> 0.069; 48 groups, kernel 4 stride 4: 0.23 -> 0.13). The pin
    // interleave=plain runs it anyway.
    if ((s == 3 || s == 4) && !p.regs.many && p.geo.rank > 1 && !(p.geo.c_in == 1 && p.geo.c_out == 1) &&
        p.policy.interleave != Policy::Interleave::Plain)
        return nullptr;
    // Kernels below the stride leave phases of the innermost axis without taps: the interleaved
    // kernels would multiply their packed zeros, which the per-phase kernels skip (1D, 128 -> 64,
    // kernel 1 at stride 2: 0.13 ms blocked, 0.05-0.06 per phase with zero_first); but not
    // depthwise layers (layer_classes.cpp, depthwise_interleaves_below_stride). Pins still run
    // them.
    const bool depthwise = depthwise_interleaves_below_stride(p);
    if (p.policy.interleave == Policy::Interleave::Auto) {
        if ((!every_phase_tapped(p.phases[in]) && !depthwise) || per_phase_few_channels(p)) return nullptr;
    }
    // The group kernel only where its fast branch runs (interleaved_depthwise_facts.h): two taps
    // per phase along the two innermost axes. On the others the per-phase group kernels were 2-10x
    // faster (kernels 5-6 at stride 2, pads off the common residue, kernel 16 at stride 8 with
    // pad 3 or 4: 48 groups, 56x56). Phases of one tap beside them (kernel 2s - 1: a packed zero
    // along the innermost axis; one tap along the next) only where the groups fill whole vectors,
    // in 1D, and in 2D where the rows end on a whole group of s outputs: kernel 3 at stride 2 pad
    // 1, 16-128 groups, 1.0-1.9x over the per-phase kernels on two threads; 2D rows with a tail
    // output (their extra calls) 0.67-0.77x; 3D 0.2-0.6x. The pin interleave=plain runs it
    // anywhere (its other branches stay correct: the layout tests reach them so).
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

// 1D and 2D layers of one-tap phases (each phase a matrix product) with kOneTapChannelTilesMin or
// more input and output channels run on the channel-vectorized channels-first kernels however
// short their reduction, on CPUs of 32 vector registers: their tiles read contiguous input rows,
// and the channels-last twin's transposes cost more than the tiles' stores across output planes
// (128 -> 32, kernel 1, 56x56, batch 2: 0.41 ms twinned, 0.30 here; 128 -> 64, 1D kernel 1:
// 0.107 against 0.092). Fewer channels leave the stores unpaid: 16 -> 128, kernel 2 stride 2,
// 7x7: 0.061 here against 0.049 twinned; 32 -> 16, one vector: 0.21 against 0.09. 2D layers at
// a stride of 2 or more along rows do not (strided_one_tap_2d). Measured on x86-64 (AVX-512)
// only; 3D layers keep the rule below (kOneTapChannelsFirstMinCout).
constexpr int64_t kOneTapChannelTilesMin = 32;

bool one_tap_channel_tiles(const Plan::Impl &p) {
#if defined(__x86_64__)
    const OpGeometry &g = p.geo;
    return !g.forward && g.rank <= 2 && g.c_in >= kOneTapChannelTilesMin && g.c_out >= kOneTapChannelTilesMin &&
           p.regs.many && p.dtype != DType::bf16 && every_phase_one_tap(p) && !strided_one_tap_2d(p);
#else
    (void)p;
    return false;
#endif
}

// Layers with 16 or more output channels whose weights per kernel call fit half of L2 and whose
// rows hold at least 32 groups of s outputs run on the blocked interleaved kernel
// (cpu_interleaved_schedule.h) rather than on the channels-last kernels: no transposes
// (hifigan_up3 7.3 -> 4.8 ms). 1D layers, and 3D ones of one-tap phases (unet3d_up); in 2D the
// channels-last kernels won by 1.5-2x, with their transposes (3x3 and 5x5 at stride 2, 16-96
// channels at 56x56: 3.6 -> 1.8 ms for 96 -> 64), and 3D layers of more taps were not measured.
// Narrower rows recompute more in their tails and channel tiles (vnet_up_3x3x3, 24 groups: 4.6
// -> 8.1), and larger weights would stream from L3 once per block.
// A row that is no whole number of the kernel's tiles (KernelTiles::blocked_groups) runs its rest
// on the plain interleaved kernel (interleaved_tail); depthwise rows on the plain kernel that are
// no whole number of its tiles run as their first whole multiple, which takes the kernel's
// exact-tile branch, then the rest (exact_groups; fcn8s_upscore8, 65 groups of 8 outputs: 2.0 ->
// 1.8 ms), where the row holds kExactGroupsMinTiles tiles or more: on shorter rows the second
// call cost more than the tile saved (docs/performance.md).
// 3D one-tap layers of short reductions (input x output channels kBlockedFewChannelProducts or
// fewer) take it from rows of kBlockedFewChannelsMinGroups groups without a tail output: the
// twin's transposes cost more than its channel tiles gain there (16 -> 16 channels, 16^3 input,
// 2 threads, Zen 4: 1.64x; docs/performance.md has the sweep).
constexpr int64_t kBlockedWeightBytes = int64_t(512) << 10;
constexpr int64_t kBlockedMinGroups = 32;
constexpr int64_t kBlockedFewChannelProducts = 512;
constexpr int64_t kBlockedFewChannelsMinGroups = 16;

bool prefers_blocked_interleave(const Plan::Impl &p) {
    const int in = p.geo.rank - 1;
    const Policy::Interleave pin = p.policy.interleave;
    if (pin == Policy::Interleave::Off || pin == Policy::Interleave::Plain || !interleaved_kernel_for(p, false, true))
        return false;
    const bool forced = pin == Policy::Interleave::Blocked;
    const int64_t row_groups = p.out_spatial[in] / p.info.strides[in];
    const bool one_tap_3d = p.geo.rank == 3 && every_phase_one_tap(p);
    const bool few_channels_3d = one_tap_3d && p.geo.c_in * p.geo.c_out <= kBlockedFewChannelProducts &&
                                 row_groups >= kBlockedFewChannelsMinGroups &&
                                 p.out_spatial[in] % p.info.strides[in] == 0;
    if (!forced && (p.geo.c_out < 16 || p.policy.route != Policy::Route::Auto ||
                    (row_groups < kBlockedMinGroups && !few_channels_3d) || !(p.geo.rank == 1 || one_tap_3d)))
        return false;
    // 1D: its parallel tasks are blocks of a row (blocked_task_groups); rows of fewer blocks than
    // threads leave threads idle (128 -> 64, kernel 4 stride 2, 1000 positions, one block: 0.62 ms
    // on two threads as on one, 0.33 on the plain kernels).
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
    if (!forced && p.geo.c_in * taps * p.geo.c_out * acc_bytes > kBlockedWeightBytes) return false;
    // It reads a zero-bordered input copy: within that copy's limit.
    std::vector<int64_t> lo, hi;
    return border_margins(p.phases, p.geo, dtype_size(p.dtype), p.info.strides[in], p.info.pads_begin[in],
                                  p.out_spatial[in], lo, hi);
}

void choose_cpu_kernels(Plan::Impl &p) {
    p.variant = p.policy.cpu_variant.empty() ? cpu_variant() : p.policy.cpu_variant;
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
