// The CPU implementation list (implementations.h): the order they are tried, and the choice.
#include "dispatch/implementations.h"
#include "cpu/quantized_dots_executor.h"

#include "cpu/cpu_executor.h"
#include "dispatch/strategy.h"
#include "layer/messages.h"
#include "plan/policy.h"

#include <cstdio>
#include <cstring>

namespace deconv {
namespace detail {

// Each implementation's unit (impl_*.cpp).
extern const Implementation kAsF32, kAsF64, kWinograd, kChannelsLastTwin, kChannelsFirstTwin, kBatchRows, kPhaseKernels;

const std::vector<Implementation> &cpu_implementations() {
    static const std::vector<Implementation> list{
        kAsF32,              // 16-bit layers on the f32 plan
        kAsF64,              // 8-bit integer layers on the f64 plan
        kWinograd,           // F(m, r), where choose_winograd_tile takes the layer
        kChannelsLastTwin,   // channels-first layers on the channels-last kernels
        kChannelsFirstTwin,  // channels-last layers of few output channels on the channels-first kernels
        kBatchRows,          // narrow rows, wide batch: the images as the innermost row
        kPhaseKernels,       // the direct kernels on the layer's own layout: takes every layer
    };
    return list;
}

const Implementation *find_implementation(const std::string &name) {
    for (const Implementation &i : cpu_implementations())
        if (name == i.name) return &i;
    return nullptr;
}

namespace {

// The policy's pins that steer a pinned implementation's accept past its heuristics (the knobs
// each one's rules already obey); none for the others.
void steer_to(Policy &policy, const std::string &name) {
    if (name == "channels_last_twin") policy.route = Policy::Route::ChannelsLast;
    else if (name == "channels_first_twin") policy.route = Policy::Route::ChannelsFirst;
    else if (name == "batch_rows") policy.batch_rows = Toggle::On;
}

}  // namespace

void choose_implementation(Plan::Impl &p, const PlanRequest &request, const char *first) {
    const std::vector<Implementation> &list = cpu_implementations();
    size_t i = 0;
    if (first)
        while (i < list.size() && std::strcmp(list[i].name, first) != 0) i++;
    // A pinned implementation (policy implementation=...) is tried before the heuristic ones ahead
    // of it in the list, which are skipped (as_f32 and as_f64 are a type's necessity: never
    // skipped); where it refuses the layer, the list goes on after it. (Nor is the Winograd path
    // skipped where ExecOptions::algorithm demands it.)
    const Implementation *pinned = p.policy.implementation.empty() ? nullptr : find_implementation(p.policy.implementation);
    const size_t pinned_at = pinned && pinned >= &list[i] ? (size_t)(pinned - list.data()) : list.size();
    for (; i < list.size(); i++) {
        const bool is_pinned = i == pinned_at;
        std::string why;
        const bool necessary = std::strcmp(list[i].name, "as_f32") == 0 || std::strcmp(list[i].name, "as_f64") == 0 ||
                               (std::strcmp(list[i].name, "winograd") == 0 && request.winograd_demanded);
        if (i < pinned_at && pinned_at < list.size() && !necessary) {
            why = std::string("the policy pins implementation=") + pinned->name;
        } else {
            const Policy policy = p.policy;
            PlanRequest r = request;
            r.pinned = is_pinned;
            if (is_pinned) steer_to(p.policy, pinned->name);
            why = list[i].accept(p, r);
            p.policy = policy;
        }
        if (why.empty()) {
            p.implementation = &list[i];
            return;
        }
        if (verbose_plans()) {
            std::fprintf(stderr, "deconv: %s%s %s %s: %s refused: %s\n", request.twin ? "layout twin of " : "",
                         op_name(p.op), dtype_name(p.dtype), shape_str(p.input_shape).c_str(), list[i].name,
                         why.c_str());
        }
    }
    throw Error(ErrorKind::Kernel, "no CPU implementation took the layer (phase_kernels takes every layer)");
}

namespace {

// The plan `p` runs through, or null where its own implementation runs the kernels. (A Winograd
// plan's twin runs the Winograd path too.)
const Plan::Impl *next_in_chain(const Plan::Impl &p) {
    const Plan::Impl *next = p.acc_plan ? p.acc_plan.get()
                             : p.via_wider ? p.via_wider.get()
                             : p.via_nxc ? p.via_nxc.get()
                                         : p.via_ncx.get();
    return next && next->implementation != p.implementation ? next : nullptr;
}

}  // namespace

std::string implementation_chain(const Plan::Impl &p) {
    const std::string name = p.implementation ? p.implementation->name : "none";
    const Plan::Impl *next = next_in_chain(p);
    return next ? name + " > " + implementation_chain(*next) : name;
}

const Implementation *innermost_implementation(const Plan::Impl &p) {
    const Plan::Impl *next = next_in_chain(p);
    return next ? innermost_implementation(*next) : p.implementation;
}

std::string describe_execution(const Plan::Impl &p) {
    if (p.quant_dots_kernel && quant_dots_prefer(p)) {
        const int64_t merge = quant_dots_merge(p);
        const std::string merged =
            merge > 1 ? ", " + std::to_string(merge) + " groups merged in each of the kernel's (zero weights between them)"
                      : "";
        return describe_epilogue(p) + "; accumulates on " + p.quant_dots_kernel->name +
               (p.quant_dots_group != 4 ? " (i16 pairs) over a zero-bordered i16"
                : p.quant_dots_signed    ? " (i8 x i8 quads, sdot) over a zero-point-bordered"
                                         : " (u8 x i8 quads, vpdpbusd) over a zero-point-bordered") +
               " channels-last copy" + merged +
               (p.quant_dots_fused ? ", the epilogue in its store" : ", then the epilogue pass");
    }
    if (p.acc_plan) {
        if (p.store_fused) {
            return describe_epilogue(p) + "; in the store of the " + dtype_name(p.acc_plan->dtype) +
                   " plan's kernels: " + describe_execution(*p.acc_plan);
        }
        std::string s = describe_epilogue(p) + "; accumulates on the " + dtype_name(p.acc_plan->dtype) + " plan";
        if (p.fast_acc_plan) s += " (the f32 plan where exact for the filter)";
        if (p.quant_dots_kernel && p.acc_plan->dtype == DType::f32) {
            s += std::string(" where exact for the filter, else on ") + p.quant_dots_kernel->name;
        }
        return s + ": " + describe_execution(*p.acc_plan);
    }
    if (p.via_wider && p.via_wider->dtype == DType::f64) {
        return std::string("as f64 (exact conversions, saturated on store") +
               (p.fast_via_wider ? "; the f32 plan where exact for the filter" : "") +
               "): " + describe_execution(*p.via_wider);
    }
    if (p.via_wider) {
        return std::string("as f32 (") + (p.dtype == DType::f16 ? "F16C" : "bf16") +
               " conversions): " + describe_execution(*p.via_wider);
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
