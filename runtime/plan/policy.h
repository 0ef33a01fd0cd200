// The dispatch policy: every choice a CPU plan makes about how to run a layer, as one value.
// Each knob is Auto (the heuristics of the implementations (dispatch/impl_*.cpp) decide) or pinned to a value. Pins come from
// ExecOptions::schedule, the environment's measuring switches (read once, when a plan is made),
// or a schedule-database entry (schedule_database.h); the implementations (dispatch/impl_*.cpp) turns a layer and its policy
// into the kernels and steps the plan runs. A pin that does not apply to a layer (interleaving a
// layer of stride 3, say) leaves that choice to the heuristics.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace deconv {
namespace detail {

enum class Toggle : int8_t { Auto, Off, On };

struct Policy {
    // Channels-first backprop layers: the position-vectorized or channel-vectorized kernels on
    // the caller's layout, or the channels-last kernels on transposed copies. Channels-last
    // backprop layers: their own kernels, or the channels-first ones on transposed copies, or
    // (depthwise) the group-vectorized kernels.
    enum class Route : int8_t { Auto, Positions, Channels, ChannelsLast, ChannelsFirst, Groups };
    // Position-vectorized layers of stride 2 or 8 innermost: every phase of that axis per call.
    enum class Interleave : int8_t { Auto, Off, Plain, Blocked };

    Route route = Route::Auto;
    Interleave interleave = Interleave::Auto;
    Toggle bordered_input = Toggle::Auto;    // read a zero-bordered copy of the input
    Toggle batch_rows = Toggle::Auto;        // channels-last: the images as the innermost row
    Toggle bf16_dot = Toggle::Auto;          // bf16 input-channel pairs on vdpbf16ps kernels
    // Quantized layers: the dot-product kernels of u8 x i8 quads (VNNI) or i16 pairs, or none
    // (the f32 or i32 plain plans accumulate).
    enum class QuantDots : int8_t { Auto, Off, Quads, Pairs };
    QuantDots quant_dots = QuantDots::Auto;
    Toggle short_phase = Toggle::Auto;       // interleaved stride 2 with phase 0 a tap short
    Toggle interleaved_tail = Toggle::Auto;  // blocked rows' rest on the plain kernel
    Toggle exact_groups = Toggle::Auto;      // depthwise interleaved rows split at a tile multiple
    Toggle channels_in_rows = Toggle::Auto;  // 3D blocked: channels between the rows of the copy
    Toggle edge_windows = Toggle::Auto;      // 1D interleaved: only the rows' edges copied
    Toggle exact_row_tiles = Toggle::Auto;   // channels-last rows split at a tile multiple
    Toggle serial = Toggle::Auto;            // run on the calling thread alone
    Toggle zero_first = Toggle::Auto;        // zero the output in one pass, then skip tap-less phases
    Toggle group_major = Toggle::Auto;       // channels-last grouped input copies laid out by group
    Toggle group_blocks = Toggle::Auto;      // channels-last: several groups' channels per vector
    Toggle tap_windows = Toggle::Auto;       // outer axes' edge outputs called with only their taps
    Toggle flat_rows = Toggle::Auto;         // stride-1 channels-first planes as one row each
    Toggle phase_tasks = Toggle::Auto;       // phases as the tasks of one parallel loop
    Toggle tap_rows = Toggle::Auto;          // channels-last interior calls on the tap-row kernels
    int64_t channel_block = -1;              // output channels per packed block; 0 one packing
    int64_t group_slices = -1;               // tasks per thread of sliced runs; 0 whole
    int64_t row_slabs = -1;                  // rows per slab of channels-last results; 0 none
    // Channel-vectorized kernels built with other register tiles (generator knobs q_tile and
    // vectors; -DDECONV_SCHEDULES builds them): positions x channel vectors per tile.
    int64_t kernel_q_tile = -1;
    int64_t kernel_vectors = -1;
    // Backprop layers on the Winograd path (runtime/cpu/winograd_executor.cpp), followed only where
    // ExecOptions::algorithm is Auto; its tile: outputs per axis m of F(m, r).
    enum class Algorithm : int8_t { Auto, Direct, Winograd };
    Algorithm algorithm = Algorithm::Auto;
    int64_t winograd_tile = -1;
    int64_t winograd_slice_kib = -1;  // bytes of transformed tiles and products per slice, KiB
    // The CPU implementation (dispatch/implementations.h) the plan runs where it can take the
    // layer, the heuristics of those before it skipped; empty: the first that accepts.
    std::string implementation;
    // The CPU variant whose kernels the plan runs (halide_glue.h's names); empty: the default,
    // the best built variant this CPU runs under DECONV_CPU_VARIANT (cpu_variant()).
    std::string cpu_variant;

    bool operator==(const Policy &o) const;
    bool operator!=(const Policy &o) const { return !(*this == o); }
    bool all_auto() const { return *this == Policy(); }
};

// The knobs by name, for parsing, printing and searching.
std::vector<std::string> policy_knobs();
// The values a search tries for a knob ("auto" first).
std::vector<std::string> policy_knob_values(const std::string &knob);
// Pins `knob` to `value` (both as printed); throws Error(InvalidArgument) naming an unknown knob
// or a value the knob does not take.
void set_policy_knob(Policy &p, const std::string &knob, const std::string &value);
std::string policy_knob_value(const Policy &p, const std::string &knob);
// "knob=value knob=value" of the pinned knobs ("" when every knob is Auto), and back. `what`
// names the text's origin in error messages.
std::string format_policy(const Policy &p);
Policy parse_policy(const std::string &text, const std::string &what);
// Pinned knobs of `over` replace those of `base`.
Policy overlay(Policy base, const Policy &over);
// The measuring switches (DECONV_NCX_SCHEDULE, DECONV_BORDERED_INPUT=0, ...; docs/tuning.md) as
// pins: read when a plan is made, never while it runs.
Policy policy_from_environment();
// The cpu_variant an unpinned plan runs: the best built variant this CPU runs, at or below
// DECONV_CPU_VARIANT where it names one (read once); "none" where no built variant runs here.
const std::string &default_cpu_variant();
// Why this CPU runs none of the build's variants (under DECONV_CPU_VARIANT); "" where it runs one.
std::string missing_cpu_variant_reason();
// DECONV_VERBOSE (any value but 0; read once): each plan prints what it chose, and why the
// implementations before its own refused.
bool verbose_plans();

}  // namespace detail
}  // namespace deconv
