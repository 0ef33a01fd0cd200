// The CPU implementations: the ways a CPU plan can run a layer, in the order the dispatcher
// tries them (the way oneDNN's implementation lists work). Each is one unit: a name, `accept`
// (takes the layer and computes its conf, or says why not), and its executor's entry point.
// A plan runs the first that accepts; the policy's pins (a schedule-database entry, the
// environment, ExecOptions::schedule) steer the rules inside each accept. DECONV_VERBOSE=1 prints
// why each implementation before the chosen one refused.
#pragma once

#include "cpu/filter_packing.h"
#include "plan/plan_impl.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace deconv {
namespace detail {

// What an implementation's accept reads besides the plan.
struct PlanRequest {
    // The Winograd tile Plan::create chose (choose_winograd_tile), 0 for the direct kernels.
    int winograd_tile = 0;
    // A narrow layer whose own kernels this build left out (runs_on_wider_kernel).
    bool on_wider = false;
    // The plan's runs read the caller's input as it is; false for a layout twin, which reads a
    // transposed copy (that copy takes any margins at no further cost).
    bool in_place = true;
    // The plan is a layout twin: it runs on its own layout's kernels (no further twin), and the
    // plan it serves decides whether the run is serial.
    bool twin = false;
    // ExecOptions::algorithm demands the Winograd path (not Auto).
    bool winograd_demanded = false;
    // The policy pins this implementation (implementation=...): it takes the layer wherever it can.
    bool pinned = false;
    // Makes the plan of the same layer in dtype `t` under `exec` (for as_f32 and as_f64).
    std::function<std::shared_ptr<const Plan::Impl>(DType t, const ExecOptions &exec)> make_plan;
};

// Runs a validated CPU plan: views checked, strides fitting the kernels' 32-bit fields (`in_st`,
// `out_st`: the caller's, in the plan's layout), the filter packed for the plan's kernels.
using RunCpuFn = void (*)(const Plan::Impl &p, const ConstTensorView &input, std::vector<int64_t> in_st,
                          const TensorView &output, std::vector<int64_t> out_st, const FilterPacking &packed);

struct Implementation {
    const char *name;
    // Takes `p` (its conf filled in) and returns an empty string, or returns why it does not.
    std::string (*accept)(Plan::Impl &p, const PlanRequest &request);
    // The executor; null for as_f32 and as_f64, whose plans run their wider plan between
    // conversions (Plan::run).
    RunCpuFn run;
    // Its executor takes a float epilogue offered to its runs (cpu/fused_epilogue.h) and stores it
    // in every output it writes.
    bool stores_epilogue = false;
};

// Quantized layers and layers with an epilogue: the epilogue pass around a plain plan that
// accumulates (Plan::Impl::acc_plan). Not in the list: the plan's types and epilogue choose it.
extern const Implementation kEpilogue;
// "epilogue: src zero point 128, per-channel scales, bias f32, post-ops relu, sum(0.5)".
std::string describe_epilogue(const Plan::Impl &p);

// Every CPU implementation, in the order they are tried.
const std::vector<Implementation> &cpu_implementations();
// The implementation of that name, or null.
const Implementation *find_implementation(const std::string &name);
// Sets p.implementation to the first implementation from `first` on that accepts `p` (the last,
// phase_kernels, takes every layer). With DECONV_VERBOSE each refusal is printed with its reason.
void choose_implementation(Plan::Impl &p, const PlanRequest &request, const char *first = nullptr);
// The implementations that run a CPU plan, outermost first: "phase_kernels", or through another
// plan, "channels_last_twin > batch_rows", "as_f32 > phase_kernels".
std::string implementation_chain(const Plan::Impl &p);
// The last of them: the one whose executor runs the kernels.
const Implementation *innermost_implementation(const Plan::Impl &p);
// What the plan runs, in words (Plan::describe): kernels, copies, splits.
std::string describe_execution(const Plan::Impl &p);

}  // namespace detail
}  // namespace deconv
