// The phase-kernel implementation's conf (dispatch/implementations.h): a bordered or in-place
// input, the interleaved kernels and their edges, the filter's channel blocks, tap rows, the
// output zeroed first, flat rows, phase tasks, and running serially. Their thresholds are rows of
// plan/thresholds.cpp, their measurements in docs/performance-log.md ("Rules: the measurements
// behind the thresholds").
#include "cpu/bordered_input.h"
#include "cpu/cpu_executor.h"
#include "cpu/phase_tasks.h"
#include "cpu/winograd_executor.h"
#include "dispatch/implementations.h"
#include "dispatch/channels_last_families.h"
#include "dispatch/layer_classes.h"
#include "dispatch/strategy.h"
#include "kernels/cpu_thread_pool.h"
#include "kernels/cpu_tiles.h"
#include "kernels/halide_glue.h"
#include "kernels/kernel_call.h"
#include "layer/checked_math.h"
#include "plan/thresholds.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <set>

namespace deconv {
namespace detail {

// Edge windows for 1D interleaved layers whose input needs margins, instead of a whole bordered
// copy (hifigan_up3: 13 MB moved, 6% of its samples in memmove); each edge at least
// edge_min_groups wide on the plain interleaved kernel.
void choose_edge_windows(Plan::Impl &p, bool blocked) {
    const OpGeometry &geo = p.geo;
    if (geo.rank != 1 || !p.interleaved_kernel || !p.border_copy || p.channels_in_rows || !p.kernel ||
        geo.data_format != DataFormat::NCX || p.policy.edge_windows == Toggle::Off)
        return;
    const int64_t s = p.info.strides[0], pad = p.info.pads_begin[0], x = geo.in_spatial[0];
    const int64_t groups = p.out_spatial[0] / s;
    CpuConf::EdgeWindows e;
    e.reach = interleaved_reach(s, pad, most_taps(p.phases[0]));
    const int64_t inside_first = std::min(std::max(-e.reach.lo, int64_t(0)), groups);
    const int64_t inside_end = std::min(std::max(x - e.reach.hi, int64_t(0)), groups);
    const int64_t min_groups = threshold(p, Threshold::EdgeMinGroups);
    e.left = std::min(groups, std::max(inside_first, min_groups));
    e.middle = std::min(inside_end, groups - min_groups) - e.left;
    if (blocked) e.middle = e.middle / p.tiles.blocked_groups * p.tiles.blocked_groups;
    e.kernel = blocked ? interleaved_kernel_for(p, false, false) : p.interleaved_kernel;
    if (e.middle >= min_groups && e.kernel) p.edges = e;
}

// Channels-last grouped layers whose tiles have the dense-group branch (tile_facts.h) copy their
// input group-major; f32 accumulators only, as the branch (32 groups of 8 -> 8 channels, 28x28,
// kernel 3 stride 2: 0.278 -> 0.249 ms).
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
        // Channel-vectorized kernels always (their bounded twin loads each input behind a bounds
        // select); position kernels below bordered_positions_cout_below output channels, or
        // interleaved by a rule (16 or more: unet_up4, unet3d_up 1.4-1.6x slower bordered).
        const auto positive = [](int64_t v) { return v > 0; };
        const bool pinned = p.policy.bordered_input == Toggle::On || p.policy.interleave == Policy::Interleave::Plain;
        if ((p.channel_major || geo.c_out < threshold(p, Threshold::BorderedPositionsCoutBelow) || blocked || pinned ||
             short_strided_2d(p) || short_1d_positions(p)) &&
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
                // exact_groups: depthwise rows of exact_groups_min_tiles whole tiles or more run
                // their whole multiple (the exact-tile branch), then the rest (fcn8s_upscore8, 65
                // groups of 8 outputs: 2.0 -> 1.8 ms).
                p.interleaved_exact_rows =
                    interleave && !blocked && geo.c_in == 1 && rank >= 2 && tile > 0 && groups % tile != 0 &&
                    ((groups >= threshold(p, Threshold::ExactGroupsMinTiles) * tile &&
                      p.policy.exact_groups != Toggle::Off && rule_applies(p, Threshold::ExactGroups)) ||
                     (groups > tile && p.policy.exact_groups == Toggle::On));
                // channels_in_rows: 3D blocked copies hold each row's channels as one contiguous run,
                // not a plane apart (unet3d_up 27.8 -> 24.7 ms); in 2D it lost.
                p.channels_in_rows = interleave && blocked && rank == 3 && p.policy.channels_in_rows != Toggle::Off;
                p.group_major_input = !interleave && group_major_copy(p);
                choose_edge_windows(p, blocked);
            }
        }
    }
}

// Output channels per block of the channel-vectorized kernels' packing, a kernel call each:
// channel_block channels-last (or a tile on 16 registers), narrow_row_block on narrow rows, one
// packing for wider channels-first rows (dcgan_l2: unblocked 20.0 ms, blocks of 192 15.7).

int64_t choose_channel_block(const Plan::Impl &p) {
    const int64_t pinned = p.policy.channel_block;
    if (p.group_block) return 0;  // the group-block kernels take every channel of a group per call
    const int64_t block = threshold(p, Threshold::ChannelBlock);
    if (p.ci_pairs) return pinned > 0 ? pinned : block;  // the pair kernels read blocked packings only
    if (!p.channel_major || p.geo.forward || pinned == 0) return 0;
    if (pinned > 0) return pinned;
    if (p.batch_rows_kernel) return batch_rows_channel_block(p);
    bool narrow = p.geo.rank >= 2;
    for (const AxisPhase &a : p.phases[p.geo.rank - 1]) narrow = narrow && a.out_count < p.tiles.row_positions;
    const bool one_tile = rule_applies(p, Threshold::OneTileChannelBlock) && p.tiles.four_position_channels > 0;
    // (Narrow rows' blocks hold their own branches' tiles: narrow_row_channel_block counts them,
    // exact_channel_blocks the others.)
    if (narrow)
        return one_tile ? p.tiles.four_position_channels
                        : narrow_row_channel_block(p, threshold(p, Threshold::NarrowRowBlock));
    if (p.geo.data_format != DataFormat::NXC) return 0;
    return exact_channel_blocks(
        p, one_tile ? p.tiles.four_position_channels : channels_last_channel_block(p, block));
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
    if (const KernelEntry *k = find_kernel(key, p.variant)) p.interior_kernel = k;
}

// Plans whose phases without taps hold half of the output or more (zero_first_tapped_*) zero it
// densely first and skip those phases, which the interleaved kernel writes itself (kernel 1 at
// stride 3, 3D, 46^3: 12-16 -> 2.1-2.8 ms).
bool choose_zero_first(const Plan::Impl &p) {
    if (p.geo.forward || p.batch_rows_kernel || p.winograd.f) return false;
    if (p.policy.zero_first != Toggle::Auto) return p.policy.zero_first == Toggle::On;
    return tapped_fraction(p, p.interleaved_kernel != nullptr) <=
           (double)threshold(p, Threshold::ZeroFirstTappedNum) / (double)threshold(p, Threshold::ZeroFirstTappedDen);
}

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
    // Channels of the copy a multiple of the L1 set period (flat_rows_alias_bytes) apart share L1
    // sets, which the reduction then evicts: one more row apart (96 -> 8, 12^3: 2.2 -> 1.0 ms).
    int64_t channel_bytes = (int64_t)dtype_size(p.dtype);
    for (int i = 0; i < p.geo.rank; i++) channel_bytes *= p.geo.in_spatial[i] + p.border_lo[i] + p.border_hi[i];
    if (channel_bytes % threshold(p, Threshold::FlatRowsAliasBytes) == 0) p.border_hi[p.geo.rank - 2] += 1;
}

// Layers below serial_macs and serial_bytes run on the calling thread alone: a second core pulls
// their data from the first one's caches, each call's hand-off costs microseconds (ov_spec_1d,
// 27 thousand MACs: 3 us on one thread, 8 on two).
bool choose_serial(const Plan::Impl &p) {
    if (p.policy.serial != Toggle::Auto) return p.policy.serial == Toggle::On;
    if (p.macs >= threshold(p, Threshold::SerialMacs)) return false;
    return tensors_bytes(p, {&p.input_shape, &p.filter_shape, &p.info.output_shape}) <=
           threshold(p, Threshold::SerialBytes);
}

// The steps every plan on its own kernels takes last (batch_rows shares them).
void finish_phase_kernels_conf(Plan::Impl &p) {
    p.channel_block = choose_channel_block(p);
    choose_tap_rows(p);
    p.zero_first = choose_zero_first(p);
    choose_flat_rows(p);
    p.phase_tasks = choose_phase_tasks(p);
}

namespace {

// Takes every layer: the last implementation of the list.
std::string accept_phase_kernels(Plan::Impl &p, const PlanRequest &request) {
    if (!request.twin) p.serial = choose_serial(p);
    choose_bordered_input(p, request.in_place);
    finish_phase_kernels_conf(p);
    return "";
}

}  // namespace

// One kernel call per phase combination (or per row part, slice, or tap window): the direct
// algorithm on the layer's own layout (cpu/cpu_executor.cpp).
extern const Implementation kPhaseKernels{"phase_kernels", accept_phase_kernels, run_phase_kernels, true};

}  // namespace detail
}  // namespace deconv
