// Strategy: a layer and its policy (policy.h) in, the plan's kernels and steps out. Every knob
// the policy leaves Auto is decided here by the hand rules below (the heuristics), each with the
// measurement it rests on; docs/performance.md has the rest. A pin that does not apply to the
// layer falls back to the rule.
#include "dispatch/strategy.h"

#include "cpu/bordered_input.h"
#include "dispatch/channels_last_families.h"
#include "layer/checked_math.h"
#include "cpu/cpu_executor.h"
#include "kernels/cpu_thread_pool.h"
#include "kernels/cpu_tiles.h"
#include "kernels/halide_glue.h"
#include "kernels/kernel_call.h"
#include "dispatch/layer_classes.h"
#include "cpu/phase_tasks.h"
#include "cpu/winograd_executor.h"

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

namespace {

constexpr int64_t kLongReduction = 256;

// Whether a phase's reduction exceeds kLongReduction.
bool long_reduction(const Plan::Impl &p) { return phase_reduction(p) > kLongReduction; }

// Channels-first backprop layers choose their schedule: vectorized output channels when a
// group has at least a vector of them (KernelTiles::lanes) and each tile's reduction (input
// channels x taps per phase: long_reduction) is long enough to amortize its stores, which scatter
// across channel planes; else vectorized output positions (unet3d_up, 128 x 1 tap, runs faster
// on positions; dilated_s1, 64 x 9, on channels: docs/performance.md). The policy's route pins it.
bool one_tap_channel_tiles(const Plan::Impl &p);
bool prefers_blocked_interleave(const Plan::Impl &p);

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
    p.kernel = find_kernel(bounded);
    p.interior_kernel = find_kernel(interior);
    p.group_block = channel_major && !p.groups && !p.ci_pairs && !p.dots ? uses_group_blocks(p) : 0;
    if (p.group_block) {
        KernelKey blocks = interior;
        blocks.group_block = p.group_block;
        p.interior_kernel = find_kernel(blocks);
    }
    // Pinned register tiles: the channel-vectorized kernels built with them, where this build has
    // them (generators/CMakeLists.txt, DECONV_SCHEDULES).
    const Policy &pin = p.policy;
    if (bounded.channels && !p.geo.forward && !p.groups && !p.dots && !p.group_block &&
        (pin.kernel_q_tile > 0 || pin.kernel_vectors > 0)) {
        ScheduleKnobs knobs = p.kernel ? p.kernel->knobs : ScheduleKnobs{};
        if (pin.kernel_q_tile > 0) knobs.q_tile = (int)pin.kernel_q_tile;
        if (pin.kernel_vectors > 0) knobs.vectors = (int)pin.kernel_vectors;
        const KernelEntry *b = find_kernel(bounded, knobs), *i = find_kernel(interior, knobs);
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
        if (const KernelEntry *k = find_kernel(short0)) return k;
    }
    return find_kernel(key);
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
constexpr int64_t kExactGroupsMinTiles = 4;
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

// Edge windows (Plan::Impl::edges) for 1D layers on the interleaved kernel whose input needs
// margins: the whole bordered copy moved every input byte once more per run (hifigan_up3: 13 MB,
// 6% of its samples in memmove). The edges run on the plain interleaved kernel, each at least
// kEdgeMinGroups wide so that it takes the kernel's vector tiles; the blocked kernel's part is a
// whole number of its row tiles.
constexpr int64_t kEdgeMinGroups = 16;

void choose_edge_windows(Plan::Impl &p, bool blocked) {
    const OpGeometry &geo = p.geo;
    if (geo.rank != 1 || !p.interleaved_kernel || !p.border_copy || p.channels_in_rows || !p.kernel ||
        geo.data_format != DataFormat::NCX || p.policy.edge_windows == Toggle::Off)
        return;
    const int64_t s = p.info.strides[0], pad = p.info.pads_begin[0], x = geo.in_spatial[0];
    const int64_t groups = p.out_spatial[0] / s;
    Plan::Impl::EdgeWindows e;
    e.reach = interleaved_reach(s, pad, most_taps(p.phases[0]));
    const int64_t inside_first = std::min(std::max(-e.reach.lo, int64_t(0)), groups);
    const int64_t inside_end = std::min(std::max(x - e.reach.hi, int64_t(0)), groups);
    e.left = std::min(groups, std::max(inside_first, kEdgeMinGroups));
    e.middle = std::min(inside_end, groups - kEdgeMinGroups) - e.left;
    if (blocked) e.middle = e.middle / p.tiles.blocked_groups * p.tiles.blocked_groups;
    e.kernel = blocked ? interleaved_kernel_for(p, false, false) : p.interleaved_kernel;
    if (e.middle >= kEdgeMinGroups && e.kernel) p.edges = e;
}

// Channels-last grouped layers whose tiles have the dense-group branch (tile_facts.h) copy their
// input group-major (Plan::Impl::group_major_input). With one group the caller's layout is
// already so. f32 accumulators only, as the branch. (32 groups of 8 -> 8 channels, 28x28,
// kernel 3 stride 2: 0.278 -> 0.249 ms, 2 threads, Zen 4.)
bool group_major_copy(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    const bool f32_accumulators = p.dtype == DType::f32 || p.dtype == DType::f16 || p.dtype == DType::bf16;
    if (p.policy.group_major == Toggle::Off || g.data_format != DataFormat::NXC || !p.channel_major || p.groups ||
        p.dots || p.ci_pairs || p.group_block || g.groups < 2 || !f32_accumulators)
        return false;
    if (p.policy.group_major == Toggle::On) return true;
    return g.c_in == tiles::kDenseGroupChannels && tiles::dense_group_tile((int)p.tiles.lanes, g.c_out);
}

// Whether a CPU backprop layer reads a zero-bordered input copy, and whether it runs the
// interleaved kernel (both need the phases). `in_place`: the plan's runs read their input as the
// caller (or the f32 plan of a 16-bit layer) hands it; a layout twin's runs read a transposed
// copy, which takes the margins at no further cost.
void choose_bordered_input(Plan::Impl &p, bool in_place) {
    const OpGeometry &geo = p.geo;
    const int rank = geo.rank;
    const DType dtype = p.dtype;
    if (in_place && p.policy.bordered_input == Toggle::Auto && p.interior_kernel && in_place_1d_channels_last(p)) {
        p.in_place_edges = true;
        return;
    }
    if (!geo.forward && p.policy.bordered_input != Toggle::Off) {
        // The interleaved kernel is a positions schedule.
        const bool blocked = prefers_blocked_interleave(p);
        if (blocked && p.channel_major) set_cpu_kernels(p, false);
        const int in = rank - 1;  // the innermost axis, spec order
        const int64_t s = p.info.strides[in];
        const KernelEntry *ik =
            p.policy.interleave == Policy::Interleave::Off ? nullptr : interleaved_kernel_for(p, p.channel_major, blocked);
        const bool interleave = ik != nullptr;
        if (ik && !p.groups) p.tiles.interleaved_groups = kernel_tiles(p.regs, p.dtype, nullptr, ik).interleaved_groups;
        std::vector<int64_t> lo, hi;
        // Channel-vectorized kernels always (but in_place_1d_channels_last): their bounded twin
        // reads each input value through a scalar load behind a bounds select, and the copy is
        // small beside their reduction.
        // Positions kernels with few output channels: with 16 or more, the position kernel's
        // wider register tile (2 vectors x 8 channels) beats the interleaved one and the copy
        // does not pay (measured: unet_up4, unet3d_up 1.4-1.6x slower bordered and interleaved),
        // unless the blocked kernel serves the layer.
        const auto positive = [](int64_t v) { return v > 0; };
        const bool pinned = p.policy.bordered_input == Toggle::On || p.policy.interleave == Policy::Interleave::Plain;
        if ((p.channel_major || geo.c_out < 16 || blocked || pinned || short_strided_2d(p) ||
             short_1d_positions(p)) &&
            border_margins(p.phases, geo, dtype_size(dtype), interleave ? s : 0, p.info.pads_begin[in],
                                   p.out_spatial[in], lo, hi)) {
            const bool margins = std::any_of(lo.begin(), lo.end(), positive) || std::any_of(hi.begin(), hi.end(), positive);
            // (The group-block kernels read their block-interleaved copy, margins or not.)
            if (interleave || margins || p.group_block) {
                p.border_lo = lo;
                p.border_hi = hi;
                p.border_copy = margins || p.group_block;
                if (interleave) p.interleaved_kernel = ik;
                if (interleave && blocked && (p.out_spatial[in] / s) % p.tiles.blocked_groups != 0 &&
                    p.policy.interleaved_tail != Toggle::Off) {
                    p.interleaved_tail_kernel = interleaved_kernel_for(p, false, false);
                }
                const int64_t groups = p.out_spatial[in] / s;
                const int64_t tile = p.tiles.interleaved_groups;
                // (With 16 registers the split measured slower: fcn8s_upscore8 1.75x without, on AVX2;
                // and so it did on rows of fewer than kExactGroupsMinTiles tiles.)
                p.interleaved_exact_rows =
                    interleave && !blocked && geo.c_in == 1 && rank >= 2 && tile > 0 && groups % tile != 0 &&
                    ((groups >= kExactGroupsMinTiles * tile && p.policy.exact_groups != Toggle::Off && p.regs.many) ||
                     (groups > tile && p.policy.exact_groups == Toggle::On));
                // The blocked kernel reduces every input channel at the rows of its block; in 3D a
                // plain copy (or the caller's input) puts each channel a whole plane further on
                // (unet3d_up: 128 KiB), with channels in rows a row's channels are one contiguous
                // run (17 KiB). Measured on a Zen 4 VM (2 threads, ms, medians of 3-4 alternating
                // runs, plain -> channels in rows, the copy included): unet3d_up 27.8 -> 24.7;
                // plain planes padded to an odd number of cache lines (against cache-set
                // conflicts) 29.7, plain with transparent huge pages (against TLB misses) 34.6: the
                // contiguous run itself is what helps. In 2D it lost (unet_up4, whose input needs
                // no margins and so no copy otherwise, 18.1 -> 21.6; 192x192 15.3 -> 16.7): 3D only.
                p.channels_in_rows = interleave && blocked && rank == 3 && p.policy.channels_in_rows != Toggle::Off;
                p.group_major_input = !interleave && group_major_copy(p);
                choose_edge_windows(p, blocked);
            }
        }
    }
}

// Channels-first backprop layers with at least 16 output channels per group run on the
// channels-last kernels, over a transposed copy of the input, their result transposed back: the
// channels-first kernels store each register tile across output planes, an element at a time,
// which costs more than their arithmetic unless the reduction per output is long (dcgan_l4: 40
// -> 13 ms). On CPUs of 32 vector registers, one-tap phases (kernel = stride, no phase without
// taps) with 128 or more output channels and a long reduction (the channel-vectorized kernels:
// choose_channel_major) stay on the channels-first kernels, whose tiles then read contiguous
// input rows (unet_up1: 17.7 against 18.6 ms on AVX-512; kernel 3 at stride 4, 3D, 256 -> 128:
// 125 ms there against 59 here; 16 -> 128 at 7x7 on the position kernels 0.27 ms); with 16
// registers the channels-last route wins there too (AVX2: unet_up1 1.47x, unet_up4 1.23x, found
// by deconv tune). bf16 layers always take this route,
// where the dot-product kernels are. docs/performance.md has the measurements.
constexpr int64_t kOneTapChannelsFirstMinCout = 128;

constexpr int64_t kMaxLayoutCopyBytes = int64_t(512) << 20;

// Bytes of the layer's tensors `shapes`, together.
int64_t tensors_bytes(const Plan::Impl &p, std::initializer_list<const std::vector<int64_t> *> shapes) {
    int64_t elements = 0;
    for (const std::vector<int64_t> *shape : shapes) {
        int64_t n = 1;
        for (int64_t v : *shape) n = checked_mul(n, v, "tensor elements");
        elements = checked_add(elements, n, "tensor elements");
    }
    return checked_mul(elements, (int64_t)dtype_size(p.dtype), "tensor bytes");
}

// The copies of a layout change (the input, and the output before it is copied back) stay within
// kMaxLayoutCopyBytes; larger layers run on the kernels of their own layout, on the caller's buffers.
bool layout_copies_fit(const Plan::Impl &p) {
    return tensors_bytes(p, {&p.input_shape, &p.info.output_shape}) <= kMaxLayoutCopyBytes;
}

// Whether this build has the bounded and interior kernels of the layer in `format`: the
// channel-vectorized ones under NXC, the position-vectorized ones under NCX.
bool has_layout_kernels(const Plan::Impl &p, DataFormat format) {
    KernelKey bounded = cpu_kernel_key(p, p.geo.rank, format == DataFormat::NXC, false);
    bounded.layout = format;
    bounded.channels = format == DataFormat::NXC;
    KernelKey interior = bounded;
    interior.bounded = false;
    return find_kernel(bounded) && find_kernel(interior);
}

// The fraction of the outputs that phases with taps write (kernels below the stride leave the
// rest zero), leaving out the innermost axis when `all_inner` (an interleaved kernel writes every
// phase of it).
double tapped_fraction(const Plan::Impl &p, bool all_inner) {
    double written = 1.0;
    for (int i = 0; i < p.geo.rank; i++) {
        if (all_inner && i == p.geo.rank - 1) continue;
        int64_t with_taps = 0;
        for (const AxisPhase &a : p.phases[i])
            if (a.tap_count > 0) with_taps += a.out_count;
        written *= (double)with_taps / (double)std::max<int64_t>(1, p.out_spatial[i]);
    }
    return written;
}

// Depthwise channels-first layers (one input and one output channel per group) run on the
// channels-last twin's group-vectorized kernels where the channels-first kernels have no good tile:
// 3D layers (but kernel = stride = 2, below), whose reduction strides whole planes (kernel 4 at
// stride 3, 48 groups, 12^3, batch 4: 94 -> 9.5 ms), and 2D layers at stride 3 or more on the
// innermost axis (but see below), or at stride 2 with phases of three taps or more there (kernel 5,
// 96 groups of 14x14, batch 2: 0.55 -> 0.09 ms). Kernels of 2s and less at stride 2
// (centernet_dla_dw: 0.078 against 0.46 twinned) and stride 1 stay, and so do 2D layers whose
// phases with taps write a quarter of the outputs or less (kernels below the stride:
// kFewTappedOutputs): the twin transposes the whole output, of which the channels-first kernels
// write those few after one dense zero fill (zero_first; kernel 1 at stride 4, 48 groups of 32x32:
// 0.105 -> 0.033 ms; kernel 2 at stride 4: 0.24 -> 0.19; kernel 2 at stride 3, 44% written, stays:
// 0.16 twinned against 0.22). Only where this build has the group kernels (x86-64). The bound is a
// third, not a quarter: kernels below the stride write a quarter and the last row of each axis
// (kernel 1 at stride 2, 28x28: (28/55)^2, 26%).
constexpr double kFewTappedOutputs = 1.0 / 3.0;
constexpr int64_t kDepthwiseOneTap3dRows = 16;

bool depthwise_prefers_twin(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.c_in != 1 || g.c_out != 1 || g.rank < 2 || !has_channels_last_pair(p, &KernelKey::groups)) return false;
    const int in = g.rank - 1;
    const int64_t s = p.info.strides[in];
    // 3D kernel = stride = 2 on rows of kDepthwiseOneTap3dRows inputs or more stays: its one-tap
    // tiles are a product per output, no reduction strides (48 groups of 16^3, batch 2: 0.42-0.50
    // ms here, 0.73-0.77 twinned; rows of 8: 0.13-0.17 against 0.10-0.11).
    if (g.rank == 3) return !(s == 2 && every_phase_one_tap(p) && g.in_spatial[in] >= kDepthwiseOneTap3dRows);
    if (s == 1 || tapped_fraction(p, false) <= kFewTappedOutputs) return false;
    // At strides 4 and 8 the interleaved kernel writes every phase of a row as dense vectors (48
    // groups of 32x32, kernel 4: 0.19 ms twinned, 0.076 here; fcn8s_upscore8, kernel 16 stride 8:
    // 1.46 against 0.70). At stride 3 at kernel = stride (its one-tap tiles, any pad: 128 groups
    // of 56x56, pad 1: 0.86 ms twinned, 0.34 here), and at kernel 6 where its depthwise tiles have
    // their fast branch (interleaved_depthwise_facts.h: pads a multiple of 3); elsewhere the
    // three-way interleave of its vectors costs more than the twin (64 groups of 20x20, batch 2,
    // kernel 4 or 7: 0.18-0.25 ms twinned, 0.35-0.66 here).
    const bool fast_s3 =
        s == 3 && (every_phase_one_tap(p) ||
                   (floor_mod(p.info.pads_begin[in], s) == tiles::interleaved_depthwise_pad_residue((int)s) &&
                    uniform_taps(p, tiles::kInterleavedDepthwiseTaps)));
    if ((s == 4 || s == 8 || fast_s3) && interleaved_kernel_for(p, false, false)) return false;
    // At stride 2, phases of at most two taps (kernel 3 with the short-phase kernel, kernel 4)
    // run well here (kernel 3: 0.11 against 0.14 ms twinned).
    return s > 2 || most_taps(p.phases[in]) > 2;
}

// Channels-first layers of 8-15 output channels per group with a long reduction (long_reduction)
// whose phase rows are narrower than kTwinNarrowRowPositions run on the channels-last kernels, on
// their twin (channels-last layers of 8 or more run there anyway): the position kernels fill a
// fraction of a vector per row there, the channels-last ones a vector (8 lanes on AVX-512) of
// channels. 96 -> 8, kernel 3, 12^3, batch 4: 12-15 ms on positions, 5-7.7 twinned (AVX2:
// 4.7-8.1 against 3.4); 256 -> 8, kernel 4 stride 2, 14x14 (rows of 14): 1.45 against 0.40-0.79.
// Rows of 28 stay (96 -> 8 at 28x28: 0.12 against 0.18 twinned).
// 3D layers of 8-15 output channels whose phases have several taps run there whatever their
// reduction and rows (the position kernels' strided planes: 32 -> 8, kernel 3 stride 3, 12^3:
// 0.76 ms on positions, 0.33 twinned; 256 -> 8, kernel 6 stride 3, 16^3: 49 against 23; 4
// groups of 32 -> 8, kernel 2 dilation 2: 1.54 against 0.52); of one-tap phases they stay
// (128 -> 8, kernel 2 stride 2: 0.50 against 0.72).
constexpr int64_t kTwinMinCout = 8;
constexpr int64_t kTwinNarrowRowPositions = 16;

bool favours_channel_vectors(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.c_out < kTwinMinCout) return false;
    if (g.rank == 3 && has_multi_tap_phase(p)) return true;
    if (!long_reduction(p)) return false;
    return widest_phase(p.phases[g.rank - 1]) < kTwinNarrowRowPositions;
}

constexpr int64_t kOneDimDenseMaxReduction = 96;

bool choose_via_channels_last(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NCX) return false;
    const bool forced = p.policy.route == Policy::Route::ChannelsLast;
    if (p.policy.route != Policy::Route::Auto && !forced) return false;
    if (!has_layout_kernels(p, DataFormat::NXC)) return false;
    if (forced) return true;
    if (flat_rows_class(p)) return false;
    if (depthwise_prefers_twin(p)) return layout_copies_fit(p);
    // Kernels below the stride whose phases have one tap at most and write a quarter of the
    // outputs or less (kFewTappedOutputs) stay on the channels-first kernels (zero first): the
    // twin transposes the whole output, mostly zeros, around a short reduction (64 -> 32, kernel 1
    // stride 3, 64x64: 0.32 ms twinned, 0.15 here; 2 groups of 4 -> 16, 1D kernel 1 stride 4: 0.20
    // against 0.09).
    // With more taps the reduction pays for the copies (4 groups of 32 -> 8, 3D kernel 2 dilation
    // 2, an eighth written: 0.52 twinned against 1.54), and so it does at half written (16 -> 32,
    // 1D kernel 1 stride 2: 0.056 against 0.073).
    if (!has_multi_tap_phase(p) && tapped_fraction(p, false) <= kFewTappedOutputs) return false;
    if (one_tap_1d_positions(p)) return false;
    if (one_tap_channel_tiles(p) && large_one_tap_1d(p)) return layout_copies_fit(p);
    // 1D layers at stride 1 with kOneDimDenseMaxReduction or fewer products per output (input
    // channels x taps) stay too: their rows are long and stored a vector at a time, and the
    // twin's two transposes cost more than its channel tiles save (8 groups of 8 -> 16, kernel 2,
    // 4000 positions: 0.225 ms twinned, 0.150 here; 16 -> 32, kernel 3: 0.100 against 0.073; 32
    // -> 64, kernel 2: 0.126 against 0.104). From 32 x 4 on the twin is as fast or faster (rows
    // of 100: 0.008 against 0.012; 64 x 3: 0.241 against 0.270).
    if (g.rank == 1 && p.info.strides[0] == 1 && g.c_in * g.kernel[0] <= kOneDimDenseMaxReduction) return false;
    if (few_outputs_twin(p) || dot_outputs_twin(p)) return layout_copies_fit(p);
    if (kernel4_stride2_1d_twin(p)) return layout_copies_fit(p);
    if (group_blocks_twin(p)) return layout_copies_fit(p);
    if ((g.c_out < 16 && !favours_channel_vectors(p)) || prefers_blocked_interleave(p)) return false;
    if (short_strided_2d(p) || short_1d_positions(p)) return false;
    if (!large_one_tap_2d(p) && !strided_one_tap_2d(p) && (one_tap_channel_tiles(p) ||
         (every_phase_one_tap(p) && g.c_out >= kOneTapChannelsFirstMinCout && p.dtype != DType::bf16 && p.regs.many)) &&
        choose_channel_major(p))
        return false;
    return layout_copies_fit(p);
}

// Batch rows: channels-last plans (channels-last layers, and the twins of channels-first ones)
// whose phase rows along the innermost axis are narrower than the kernels' position tile, with a
// batch of kBatchRowsMinImages or more, 1D and 2D. Their data is laid out [X_1 .. X_D, N, C]
// (outermost first) and each phase runs on the interior kernel of rank D + 1 with the images as
// its innermost axis (one tap there): rows of N positions instead of a few, so the wide register
// tile serves them. The phases are cut into tap windows (tap_windows), one kernel call each, so no
// copy needs a zero border and no product with one is computed. dcgan_l2 (batch 64, 4x4 input,
// 512 -> 256, kernel 4 stride 2 pad 1) spends 23% of its nominal products on the border
// otherwise. Measured on a Zen 4 VM (2 threads, ms): as the channels-last 2D layer it ran
// 25.7-27.2; in the batch-rows layout over a bordered copy, every tap computed, 21-22; in tap
// windows 18.9-19.3 (oneDNN 16-18 in the same runs). dcgan_l4 (rows of 16) measured the same either
// way (24 ms: its whole-tensor transposes cost what its tiles gain) and keeps its image slices.
// DECONV_BATCH_ROWS=0 turns it off (for measuring).
constexpr int64_t kBatchRowsMinImages = 16;

bool choose_batch_rows(Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NXC || !p.channel_major || p.groups || p.dots || p.group_block ||
        g.rank > 2 || p.policy.batch_rows == Toggle::Off)
        return false;
    if (p.policy.batch_rows != Toggle::On) {
        if (g.n < kBatchRowsMinImages) return false;
        for (const AxisPhase &a : p.phases[g.rank - 1])
            if (a.out_count >= p.tiles.row_positions) return false;
    }
    const KernelEntry *k = find_kernel(cpu_kernel_key(p, g.rank + 1, true, true, p.ci_pairs));
    if (!k) return false;
    if (!layout_copies_fit(p)) return false;
    p.batch_rows_kernel = k;
    p.tap_windows.clear();
    for (int i = 0; i < g.rank; i++) {
        std::vector<std::vector<TapWindow>> axis;
        for (const AxisPhase &a : p.phases[i]) axis.push_back(tap_windows(a, g.in_spatial[i]));
        p.tap_windows.push_back(std::move(axis));
    }
    return true;
}

// Output channels per block of the channel-vectorized kernels' packing: one kernel call per block.
// Channels-last: one of the kernels' channel tiles where a group holds two or more, else two
// tiles, or one where two tiles' weights would leave L2 (channels_last_channel_block); the bf16
// pair kernels two (unet_up1_bf16: 64 channels 4.68 ms, 128 4.51, 256 4.73). On CPUs
// of 16 vector registers one tile (AVX2, 16 channels), whose weights then
// stream as one contiguous run instead of a tile's 64 bytes in every 512 (unet_up1 27-43 ms ->
// 18-20, two tiles 21; 128 -> 64 channels, kernel 5, 16^3: 146 -> 78; the narrow-row blocks
// likewise). Rows narrower than the kernels' position tile, either layout: up to four of the
// narrow-row branch's 3-vector tiles (dcgan_l2: unblocked 20.0 ms, blocks of 192 15.7), one full
// tile where a group holds two (narrow_row_channel_block). Channels-first layers with wider rows
// keep one packing (centernet_up3 measured 25.5 -> 31.7 ms blocked). Batch rows: every output
// channel in one call, whose parallel loops then hold all the channel tiles, up to a limit of
// weights (batch_rows_channel_block).
constexpr int64_t kChannelBlock = 128;
constexpr int64_t kNarrowRowChannelBlock = 192;

int64_t choose_channel_block(const Plan::Impl &p) {
    const int64_t pinned = p.policy.channel_block;
    if (p.group_block) return 0;  // the group-block kernels take every channel of a group per call
    if (p.ci_pairs) return pinned > 0 ? pinned : kChannelBlock;  // the pair kernels read blocked packings only
    if (!p.channel_major || p.geo.forward || pinned == 0) return 0;
    if (pinned > 0) return pinned;
    if (p.batch_rows_kernel) return batch_rows_channel_block(p);
    bool narrow = p.geo.rank >= 2;
    for (const AxisPhase &a : p.phases[p.geo.rank - 1]) narrow = narrow && a.out_count < p.tiles.row_positions;
    const bool one_tile = !p.regs.many && p.tiles.four_position_channels > 0;
    // (Narrow rows' blocks hold their own branches' tiles: narrow_row_channel_block counts them,
    // exact_channel_blocks the others.)
    if (narrow) return one_tile ? p.tiles.four_position_channels : narrow_row_channel_block(p, kNarrowRowChannelBlock);
    if (p.geo.data_format != DataFormat::NXC) return 0;
    return exact_channel_blocks(
        p, one_tile ? p.tiles.four_position_channels : channels_last_channel_block(p, kChannelBlock));
}

// The interior calls of channels-last layers of tap_rows_class (layer_classes.cpp) on the
// tap-row kernels, where this build has them (x86-64, f32, ranks 2-3); the policy's tap_rows
// pins them on or off. Their register tiles are the channels-last kernels' (p.tiles holds).
void choose_tap_rows(Plan::Impl &p) {
    const Toggle pin = p.policy.tap_rows;
    if (pin == Toggle::Off || !p.interior_kernel || p.batch_rows_kernel || p.group_block) return;
    if (pin != Toggle::On && (!tap_rows_class(p, p.channel_block) || p.interior_kernel->knobs.q_tile > 0 ||
                              p.interior_kernel->knobs.vectors > 0))
        return;  // (a kernel of pinned register tiles stays)
    KernelKey key = p.interior_kernel->key;
    key.tap_rows = true;
    if (const KernelEntry *k = find_kernel(key)) p.interior_kernel = k;
}

// Phase plans whose phases without taps (kernel below the stride) hold half of the output or more
// zero the whole output first, densely and on the pool, and skip those phases: zeroed phase by
// phase, each pass wrote every s-th element of rows it fetched again for the next phase (kernel 1
// at stride 3, 3D, 46^3 outputs: 67% of the run in the fill, 12-16 -> 2.1-2.8 ms). Phases the
// interleaved kernel serves count as written: it stores their zeros itself. (Batch rows and the
// Winograd path zero their own way.)
bool choose_zero_first(const Plan::Impl &p) {
    if (p.geo.forward || p.batch_rows_kernel || p.winograd.f) return false;
    if (p.policy.zero_first != Toggle::Auto) return p.policy.zero_first == Toggle::On;
    return tapped_fraction(p, p.interleaved_kernel != nullptr) <= 0.5;
}

// The L1 set period: addresses this far apart share a set (4 KiB: 64 sets of 64-byte lines).
constexpr int64_t kFlatRowsAliasBytes = 4096;

// The scratch output of flat rows (phase_kernel_calls.cpp, call_flat_rows): the output with its rows
// at the bordered copy's pitch; held to the copy's own limit.
int64_t flat_rows_scratch_bytes(const Plan::Impl &p) {
    const int in = p.geo.rank - 1;
    const int64_t pitch = p.geo.in_spatial[in] + p.border_lo[in] + p.border_hi[in];
    int64_t bytes = (int64_t)dtype_size(p.dtype) * pitch;
    for (size_t i = 0; i + 1 < p.info.output_shape.size() && bytes <= kMaxBorderedInputBytes; i++)
        bytes *= p.info.output_shape[i];  // (at most 2^26 x an extent of 31 bits: no overflow)
    return bytes;
}

// Flat rows (Plan::Impl::flat_rows) for the layers of flat_rows_class on the position kernels
// over a bordered copy, the copy's margins grown where its channels would alias in L1.
void choose_flat_rows(Plan::Impl &p) {
    p.flat_rows = flat_rows_class(p) && !p.channel_major && p.border_copy && !p.interleaved_kernel &&
                  !p.channels_in_rows && !p.zero_first && flat_rows_scratch_bytes(p) <= kMaxBorderedInputBytes;
    if (!p.flat_rows) return;
    // Channels of the copy a multiple of kFlatRowsAliasBytes apart put every channel's rows in the
    // same L1 sets, which the reduction over input channels then evicts: one more row apart they
    // are not (96 -> 8 channels, 12^3, kernel 3: 2.2 -> 1.0 ms, 2 threads).
    int64_t channel_bytes = (int64_t)dtype_size(p.dtype);
    for (int i = 0; i < p.geo.rank; i++) channel_bytes *= p.geo.in_spatial[i] + p.border_lo[i] + p.border_hi[i];
    if (channel_bytes % kFlatRowsAliasBytes == 0) p.border_hi[p.geo.rank - 2] += 1;
}

// The plan of the same layer in the other data layout (`format`): the same geometry, phases and
// filter, its own kernels.
std::shared_ptr<const Plan::Impl> layout_twin(const Plan::Impl &p, DataFormat format) {
    const bool to_nxc = format == DataFormat::NXC;
    auto t = std::make_shared<Plan::Impl>();
    t->op = p.op;
    t->dtype = p.dtype;
    t->policy = p.policy;
    t->policy_source = p.policy_source;
    t->regs = p.regs;
    t->input_shape = to_nxc ? ncx_to_nxc_order(p.input_shape) : nxc_to_ncx_order(p.input_shape);
    t->filter_shape = p.filter_shape;
    t->info = p.info;
    t->info.output_shape = to_nxc ? ncx_to_nxc_order(p.info.output_shape) : nxc_to_ncx_order(p.info.output_shape);
    t->info.data_format = format;
    t->geo = p.geo;
    t->geo.data_format = format;
    t->out_spatial = p.out_spatial;
    t->phases = p.phases;
    t->macs = p.macs;
    t->winograd = p.winograd;  // a channels-first layer's Winograd path runs on its channels-last twin
    t->tiles = kernel_tiles(t->regs, t->dtype, nullptr, nullptr);
    set_cpu_kernels(*t, choose_channel_major(*t));
    if (!choose_batch_rows(*t)) choose_bordered_input(*t, false);
    t->channel_block = choose_channel_block(*t);
    choose_tap_rows(*t);
    t->zero_first = choose_zero_first(*t);
    choose_flat_rows(*t);
    t->phase_tasks = choose_phase_tasks(*t);
    return t;
}

// Channels-last backprop layers with fewer than kTwinMinCout output channels per group run the
// channels-last kernels' narrow branches: 4-lane vectors, or scalar code under 4 channels
// (centernet_dla_dw_nxc, depthwise: 10.3 ms, against 0.30 ms on the channels-first kernels). They
// run on the channels-first kernels instead, over a transposed copy of the input, the result
// transposed back (the copies stay within kMaxLayoutCopyBytes). From 8 channels per group on,
// the channels-last kernels' one-vector tiles, every group at each position tile, run them without
// the copies (grouped32_up_nxc: 0.27 ms against 0.35 twinned; AVX2 0.44 against 0.50).

bool choose_via_channels_first(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.forward || g.data_format != DataFormat::NXC || p.ci_pairs || p.groups || p.dots || p.group_block) return false;
    const bool forced = p.policy.route == Policy::Route::ChannelsFirst;
    if (!forced && (p.policy.route != Policy::Route::Auto || g.c_out >= kTwinMinCout))
        return false;
    return has_layout_kernels(p, DataFormat::NCX) && layout_copies_fit(p);
}

// Layers below both limits run on the calling thread alone: a second core would first pull the
// input and output from the first one's caches, and each kernel call's hand-off costs
// microseconds (ov_spec_1d, 27 thousand MACs: 3 us on one thread, 8 on two; 16 -> 128 channels,
// 100 positions, kernel 3 stride 4, 0.61M MACs: 8 us against 26). Forced serial, random class
// layers below these limits ran 1.05x faster in geomean natively and 1.08x under AVX2 (Zen 5,
// 2 threads, two seeded sets), where 256K MACs and 256 KiB had held to 1.00-1.02x.
constexpr int64_t kSerialMacs = int64_t(3) << 18;
constexpr int64_t kSerialBytes = int64_t(1) << 20;

bool choose_serial(const Plan::Impl &p) {
    if (p.policy.serial != Toggle::Auto) return p.policy.serial == Toggle::On;
    if (p.macs >= kSerialMacs) return false;
    return tensors_bytes(p, {&p.input_shape, &p.filter_shape, &p.info.output_shape}) <= kSerialBytes;
}

}  // namespace

void choose_cpu_kernels(Plan::Impl &p) {
    p.regs = cpu_registers(cpu_variant());
    p.tiles = kernel_tiles(p.regs, p.dtype, nullptr, nullptr);  // lanes, for choose_channel_major
    set_cpu_kernels(p, choose_channel_major(p));
}

// Winograd under Algorithm::Auto: layers whose matrix products have kWinogradMinChannels or more
// input and output channels per group (fewer leave the products kernel's register tile part
// empty and the transforms, which cost per channel, unamortized) and that save at least half of
// the multiplications (2D: F(4, 2) saves 2.56x on 2x2-tap phases, F(4, 3) 4x on 3x3), or a third
// (1D: F(4, 2) saves 1.6x) where the direct kernels would run on channels-last data too: the
// Winograd path transposes channels-first layers to channels last, which a smaller saving does
// not pay for against kernels that read them as they are (hifigan_up3, on the blocked
// interleaved kernel: 9.6 ms direct, 12.5 on Winograd; hifigan_up1, on the channels-last twin
// either way: 8.2 and 7.4). Tiles of kWinogradTile outputs. And layers whose phases have
// kWinogradMinTiles tiles or more over the batch: the transformed filter is alpha^D / r^D times
// the direct one (6.25x for F(4, 2) in 2D), streamed once per slice, and fewer tiles leave the
// products kernel streaming more weights than it multiplies (dcgan_l2, 4x4 inputs, one tile per
// phase and image: 21.5 ms against 17.2 direct, Zen 4), unless the layer has many channels
// (layer_classes.cpp, winograd_pays_on_few_tiles).
constexpr int64_t kWinogradMinChannels = 32;
constexpr int64_t kWinogradMinTiles = 128;
constexpr int kWinogradTile = 4;

int choose_winograd_tile(const Plan::Impl &p, Algorithm algorithm) {
    if (algorithm == Algorithm::Direct || p.device != Device::CPU) return 0;
    const int m = p.policy.winograd_tile > 0 ? (int)p.policy.winograd_tile : kWinogradTile;
    const std::string why = winograd_unsupported(p, m);
    if (algorithm == Algorithm::Winograd) {
        if (!why.empty()) {
            throw Error(ErrorKind::Unsupported,
                        std::string("algorithm winograd cannot run ") + op_name(p.op) + " " + std::to_string(p.geo.rank) +
                            "D " + dtype_name(p.dtype) + ": " + why + " (use algorithm direct or auto)");
        }
        return m;
    }
    if (!why.empty() || p.policy.algorithm == Policy::Algorithm::Direct) return 0;
    if (p.policy.algorithm == Policy::Algorithm::Winograd) return m;
    if (p.geo.c_in < kWinogradMinChannels || p.geo.c_out < kWinogradMinChannels) return 0;
    const int64_t products = winograd_macs(p, m);
    const int64_t tiles = winograd_phase_tiles(p, m);
    if (tiles < kWinogradMinTiles) return winograd_pays_on_few_tiles(p, tiles, products) ? m : 0;
    if (products * 2 <= p.macs) return m;
    const bool channels_last = p.geo.data_format == DataFormat::NXC || choose_via_channels_last(p);
    return products * 3 <= p.macs * 2 && channels_last ? m : 0;
}

void choose_cpu_strategy(Plan::Impl &p, bool via_f32) {
    if (via_f32) return;
    if (p.winograd.f) {
        // Channels-first layers run it on their channels-last twin (transposed copies).
        if (p.geo.data_format == DataFormat::NCX) p.via_nxc = layout_twin(p, DataFormat::NXC);
        return;
    }
    p.serial = choose_serial(p);
    if (choose_via_channels_last(p)) {
        p.via_nxc = layout_twin(p, DataFormat::NXC);
        return;
    }
    if (choose_via_channels_first(p)) {
        p.via_ncx = layout_twin(p, DataFormat::NCX);
        return;
    }
    // Only a plan that runs its own CPU kernels reads a bordered input (the twins choose theirs).
    if (!choose_batch_rows(p)) choose_bordered_input(p, true);
    p.channel_block = choose_channel_block(p);
    choose_tap_rows(p);
    p.zero_first = choose_zero_first(p);
    choose_flat_rows(p);
    p.phase_tasks = choose_phase_tasks(p);
}

std::string describe_execution(const Plan::Impl &p) {
    if (p.via_f32) {
        return std::string("as f32 (") + (p.dtype == DType::f16 ? "F16C" : "bf16") +
               " conversions): " + describe_execution(*p.via_f32);
    }
    const Plan::Impl &k = p.via_nxc ? *p.via_nxc : p.via_ncx ? *p.via_ncx : p;
    std::string s;
    const auto add = [&s](const std::string &part) { s += (s.empty() ? "" : ", ") + part; };
    if (p.device == Device::CUDA) return std::string("kernel ") + p.kernel->name;
    if (p.via_nxc) add("channels-last twin (transposed copies)");
    if (p.via_ncx) add("channels-first twin (transposed copies)");
    if (k.winograd.f) {
        add("winograd F(" + std::to_string(k.winograd.f->m) + ", " + std::to_string(k.winograd.f->r) + "): " +
            k.winograd.input->name + ", products on " + k.winograd.products->name + ", " + k.winograd.output->name +
            ", slices of " + policy_knob_value(k.policy, "winograd_slice_kib") + " KiB");
        return s;
    }
    if (k.batch_rows_kernel) {
        add(std::string("batch rows on ") + k.batch_rows_kernel->name);
    } else {
        add(std::string("kernel ") + k.interior_kernel->name);
        if (!k.border_lo.empty()) add(k.border_copy ? "zero-bordered input" : "interior input");
        else if (k.in_place_edges) add(std::string("input in place, row ends on ") + k.kernel->name);
        else add(std::string("bounded ") + k.kernel->name);
    }
    if (k.interleaved_kernel) add(std::string("interleaved ") + k.interleaved_kernel->name);
    if (k.interleaved_tail_kernel) add(std::string("tail ") + k.interleaved_tail_kernel->name);
    if (k.interleaved_exact_rows) add("exact groups " + std::to_string(k.tiles.interleaved_groups));
    if (k.edges.middle > 0) add("edge windows");
    if (k.channels_in_rows) add("channels in rows");
    if (k.group_major_input) add("group-major input");
    if (k.group_block) add("group blocks of " + std::to_string(k.group_block));
    if (k.ci_pairs) add("bf16 pairs");
    // (One output channel per group: the group-vectorized kernels have no channel blocks or row
    // splits.)
    if (k.channel_block > 0 && !k.groups) add("channel blocks of " + std::to_string(k.channel_block));
    if (k.channel_major && !k.groups && !k.dots && !k.group_block && k.policy.exact_row_tiles != Toggle::Off) {
        add("row tile " + std::to_string(k.tiles.row_positions));
    }
    if (!k.interleaved_kernel && tap_windowed(k)) add("tap windows");
    if (k.zero_first) add("zero first");
    if (k.flat_rows) add("flat rows");
    if (k.phase_tasks) add("phase tasks");
    if (p.serial) add("serial");
    const std::string slices = policy_knob_value(p.policy, "group_slices"), slabs = policy_knob_value(p.policy, "row_slabs");
    add("slices " + slices + ", slabs " + slabs);
    return s;
}

}  // namespace detail
}  // namespace deconv
