// What the api room's files share about a plan's runs: the checks of a run's views, the packed
// filter's state, and the error a run reports when its scratch buffers cannot be allocated.
#pragma once

#include "cpu/filter_packing.h"
#include "cpu/quantized_dots_executor.h"
#include "gpu/gpu_executor.h"
#include "layer/messages.h"
#include "plan/plan_impl.h"
#include "plan/policy.h"
#include "tuning/schedule_database.h"

#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace deconv {

namespace detail {

// Checks a view against the plan: dtype, shape, pointer and strides. Returns the strides to
// use (dense when the view gives none).
std::vector<int64_t> check_view(const char *what, const void *data, DType dtype, const std::vector<int64_t> &shape,
                                const std::vector<int64_t> &strides, DType want_dtype,
                                const std::vector<int64_t> &want_shape, bool is_output);
// A view of device memory handed to a CPU plan is refused, saying why the plan runs on the CPU.
void check_host_memory(const Plan::Impl &p, const char *what, Memory memory);

// The elements of a validated shape (its product fits: Plan::create checked it).
inline int64_t element_count(const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t v : shape) n *= v;
    return n;
}

// The filter's output channel: (g, C_OUT) of [G, C_IN, C_OUT, K..], C_OUT of [C_IN, C_OUT, K..],
// (g, C_OUT) of the forward op's [G, C_OUT, C_IN, K..].
inline bool grouped_filter(Op op) { return op == Op::GroupConvolutionBackpropData || op == Op::GroupConvolution; }
inline int output_channel_filter_axis(Op op) { return op == Op::GroupConvolutionBackpropData ? 2 : 1; }

// The output's channel axis in the plan's data format.
inline int output_channel_axis(const Plan::Impl &p) {
    return p.geo.data_format == DataFormat::NXC ? (int)p.info.output_shape.size() - 1 : 1;
}

// ExecOptions::schedule's pins (none when it is empty).
Policy options_policy(const ExecOptions &exec);
// The schedule-database entry for `key` under the pins `options` (a pinned CPU variant takes the
// entries tuned on that variant): its policy, and the source describe() names (with the CPU
// model it was tuned on, where that is another).
struct TunedEntry {
    Policy policy;
    std::string source;
};
std::optional<TunedEntry> tuned_entry(ScheduleKey key, const Policy &options);

// A scratch buffer a run cannot allocate (the bordered input, a dense output, an f32 copy) is
// reported as TooLarge, before any kernel has written the output.
template <typename Fn>
void out_of_memory_as_error(const Plan::Impl &p, Fn fn) {
    try {
        fn();
    } catch (const std::bad_alloc &) {
        throw Error(ErrorKind::TooLarge, std::string("out of memory: the scratch buffers of a run of ") + op_name(p.op) +
                                             " " + shape_str(p.input_shape) + " -> " + shape_str(p.info.output_shape) +
                                             " could not be allocated");
    }
}

}  // namespace detail

// What Plan::pack_filter keeps: the CPU kernels' packing, an epilogue plan's accumulating plan's, the f32 plan's packed filter of an f16
// layer run as f32, or a CUDA plan's filter packed on the GPU (gpu_executor.cpp), resident there.
struct PackedFilter::Impl {
    std::weak_ptr<const Plan::Impl> owner;
    detail::FilterPacking packing;   // CPU plans
    // Narrow plans run in a wider dtype (f16 and bf16 as f32, i8 and u8 as f64): that plan's
    // packing, of fast_via_wider's (f32) when `wider_fast`.
    PackedFilter via_wider;
    bool wider_fast = false;
    // Quantized plans and plans with an epilogue: the packing of the plan that accumulates
    // (Plan::Impl::acc_plan, or fast_acc_plan when `acc_fast`), of the converted weights.
    PackedFilter acc;
    bool acc_fast = false;
    // Quantized plans on the dot-product kernel: its packing instead.
    std::shared_ptr<const detail::QuantDotsFilter> quant_dots;
    std::shared_ptr<const detail::GpuPackedFilter> gpu;  // CUDA plans
};

}  // namespace deconv
