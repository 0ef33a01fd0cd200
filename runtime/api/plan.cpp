// Plan: validates and resolves a layer once (shape inference, the dispatch policy, the
// strategy's kernels), then runs it on the CPU or CUDA executor.
#include "layer/checked_math.h"
#include "cpu/cpu_executor.h"
#include "cpu/epilogue_pass.h"
#include "kernels/cpu_thread_pool.h"
#include "gpu/cuda_executor.h"
#include "gpu/cuda_glue.h"
#include "deconv/deconv.h"
#include "kernels/half_conversion.h"
#include "cpu/filter_packing.h"
#include "kernels/halide_glue.h"
#include "kernels/kernel_call.h"
#include "layer/messages.h"
#include "plan/plan_impl.h"
#include "tuning/schedule_database.h"
#include "dispatch/implementations.h"
#include "dispatch/strategy.h"
#include "kernels/tensor_copy.h"
#include "api/plan_internals.h"
#include "cpu/winograd_executor.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace deconv {

using detail::checked_mul;
using detail::check_fits_int32;
using detail::dense_strides;

using detail::invalid;
using detail::shape_str;
using detail::check_host_memory;
using detail::check_view;
using detail::out_of_memory_as_error;

// Checks a view against the plan: dtype, shape, pointer and strides. Returns the strides to
// use (dense when the view gives none).
std::vector<int64_t> detail::check_view(const char *what, const void *data, DType dtype, const std::vector<int64_t> &shape,
                                const std::vector<int64_t> &strides, DType want_dtype,
                                const std::vector<int64_t> &want_shape, bool is_output) {
    if (dtype != want_dtype) {
        invalid(std::string(what) + " dtype " + dtype_name(dtype) + " does not match the layer's dtype " +
                dtype_name(want_dtype));
    }
    if (shape != want_shape) {
        invalid(std::string(what) + " shape " + shape_str(shape) + " does not match the expected " +
                shape_str(want_shape));
    }
    if (!data) invalid(std::string(what) + " data pointer is null");
    if (strides.empty()) return detail::dense_strides(shape);
    if (strides.size() != shape.size()) {
        invalid(std::string(what) + " has " + std::to_string(strides.size()) + " strides " + shape_str(strides) +
                " for " + std::to_string(shape.size()) + " axes");
    }
    for (size_t i = 0; i < strides.size(); i++) {
        if (strides[i] < 0) {
            invalid(std::string(what) + " strides[" + std::to_string(i) + "] is " + std::to_string(strides[i]) +
                    "; negative strides are not supported");
        }
        if (strides[i] > (int64_t(1) << 48)) {
            throw Error(ErrorKind::TooLarge, std::string(what) + " strides[" + std::to_string(i) + "] is " +
                                                 std::to_string(strides[i]) + ", beyond any addressable tensor");
        }
    }
    if (is_output) {
        // No two elements of the output may share memory: order the axes by stride and require
        // each stride to step over the whole extent of the axes inside it.
        std::vector<size_t> order(shape.size());
        for (size_t i = 0; i < order.size(); i++) order[i] = i;
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
        int64_t span = 1;
        for (size_t i : order) {
            if (shape[i] == 1) continue;
            if (strides[i] < span) {
                invalid(std::string(what) + " strides " + shape_str(strides) + " make elements overlap (axis " +
                        std::to_string(i) + " stride " + std::to_string(strides[i]) + " < " +
                        std::to_string(span) + ")");
            }
            span = checked_mul(strides[i], shape[i], "output span");
        }
    }
    return strides;
}


// Pairs (output position, tap) of a forward axis whose input index lies inside [0, X).
int64_t forward_pairs(int64_t x, int64_t k, int64_t y, int64_t s, int64_t d, int64_t pb) {
    int64_t pairs = 0;
    for (int64_t j = 0; j < k; j++) {
        // 0 <= q*s + j*d - pb < x, 0 <= q < y
        const int64_t lo = std::max<int64_t>(0, detail::floor_div(pb - j * d + s - 1, s));
        const int64_t hi = std::min<int64_t>(y, detail::floor_div(x - 1 + pb - j * d, s) + 1);
        if (hi > lo) pairs += hi - lo;
    }
    return pairs;
}


void detail::check_host_memory(const Plan::Impl &p, const char *what, Memory memory) {
    if (p.device == Device::CUDA || memory == Memory::Host) return;
    invalid(std::string(what) + " view is CUDA device memory but the plan runs on the CPU" +
            (p.fallback_reason.empty() ? std::string(" (create it with ExecOptions{Device::CUDA})")
                                       : " (CPU fallback: " + p.fallback_reason + ")"));
}

detail::Policy detail::options_policy(const ExecOptions &exec) {
    return exec.schedule.empty() ? Policy() : parse_policy(exec.schedule, "ExecOptions::schedule");
}

std::optional<detail::TunedEntry> detail::tuned_entry(ScheduleKey key, const Policy &options) {
    if (!options.cpu_variant.empty()) key.cpu_variant = options.cpu_variant;
    const std::optional<ScheduleMatch> match = find_schedule(key);
    if (!match) return std::nullopt;
    return TunedEntry{match->entry.policy,
                      match->source + (match->exact ? "" : " (tuned on " + match->entry.cpu + ")")};
}


namespace {

// The plan's pins: a schedule-database entry for the layer on this machine, then the
// environment's measuring switches, then ExecOptions::schedule, each over the one before.
void choose_policy(Plan::Impl &p, const Attributes &attrs, const ExecOptions &exec) {
    using detail::Policy;
    Policy policy;
    std::string source = "heuristics";
    // A plan whose options pin a CPU variant takes the entries tuned on that variant.
    const Policy options = detail::options_policy(exec);
    if (exec.use_schedule_database) {
        const detail::ScheduleKey key = detail::schedule_key(p.op, p.dtype, p.input_shape, p.filter_shape, p.info, attrs);
        if (const auto tuned = detail::tuned_entry(key, options)) {
            policy = tuned->policy;
            source = tuned->source;
        }
    }
    const Policy env = detail::policy_from_environment();
    if (!env.all_auto()) {
        policy = detail::overlay(policy, env);
        source += " + environment";
    }
    if (!exec.schedule.empty()) {
        policy = detail::overlay(policy, options);
        source += " + options";
    }
    p.policy = policy;
    p.policy_source = source;
}

}  // namespace

Plan::Plan(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
Plan::Plan(const Plan &) = default;
Plan &Plan::operator=(const Plan &) = default;
Plan::Plan(Plan &&) noexcept = default;
Plan &Plan::operator=(Plan &&) noexcept = default;
Plan::~Plan() = default;

const ShapeInfo &Plan::shape() const { return impl_->info; }
DType Plan::dtype() const { return impl_->dtype; }
Op Plan::op() const { return impl_->op; }
int64_t Plan::macs() const { return impl_->macs; }
Device Plan::device() const { return impl_->device; }
const std::string &Plan::fallback_reason() const { return impl_->fallback_reason; }

std::string Plan::describe() const {
    const Impl &p = *impl_;
    std::string s = std::string(op_name(p.op)) + " " + std::to_string(p.geo.rank) + "D " + dtype_name(p.dtype) + " " +
                    data_format_name(p.geo.data_format) + " " + shape_str(p.input_shape) + " -> " +
                    shape_str(p.info.output_shape) + " on " + device_name(p.device);
    if (p.device == Device::CPU) s += " (" + p.variant + ", " + std::to_string(cpu_threads()) + " threads)";
    s += ": ";
    if (p.device == Device::CPU) s += "implementation " + detail::implementation_chain(p) + "; ";
    s += detail::describe_execution(p);
    if (p.device == Device::CPU) {
        const std::string pins = detail::format_policy(p.policy);
        s += "; policy " + (pins.empty() ? std::string("all auto") : pins) + " from " + p.policy_source;
    }
    return s;
}

std::shared_ptr<Plan::Impl> detail::resolve_layer(Op op, DType dtype, const std::vector<int64_t> &input_shape,
                                                  const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                                                  const std::optional<std::vector<int64_t>> &output_shape) {
    auto impl = std::make_shared<Plan::Impl>();
    impl->op = op;
    impl->dtype = dtype;
    impl->types = {dtype, dtype, dtype};
    impl->input_shape = input_shape;
    impl->filter_shape = filter_shape;
    impl->geo = op_geometry(op, input_shape, filter_shape, attrs);
    impl->info = infer_shape(op, impl->geo, input_shape, filter_shape, attrs, output_shape);
    const std::vector<int64_t> out_ncx = to_ncx(impl->info.output_shape, impl->geo.data_format);
    impl->out_spatial.assign(out_ncx.begin() + 2, out_ncx.end());
    return impl;
}

Plan Plan::create(Op op, DType dtype, const std::vector<int64_t> &input_shape, const std::vector<int64_t> &filter_shape,
                  const Attributes &attrs, const std::optional<std::vector<int64_t>> &output_shape,
                  const ExecOptions &exec) {
    std::shared_ptr<Impl> impl = detail::resolve_layer(op, dtype, input_shape, filter_shape, attrs, output_shape);
    const detail::OpGeometry &geo = impl->geo;
    const int rank = geo.rank;
    if (op == Op::ConvolutionBackwardData && dtype != DType::f32 && dtype != DType::bf16 && dtype != DType::f16) {
        detail::invalid(std::string("ConvolutionBackwardData supports f32, bf16 and f16 (oneDNN Graph's table), not ") +
                        dtype_name(dtype));
    }

    if (exec.device == Device::CUDA) {
        // CUDA, or why not (then the CPU when the caller allows it).
        const detail::KernelEntry *k = detail::find_kernel(detail::cuda_kernel_key(geo, dtype), detail::default_cpu_variant());
        std::string why;
        ErrorKind kind = ErrorKind::Unsupported;
#if !defined(DECONV_HAVE_CUDA)
        why = "CUDA is unavailable: " + cuda_unavailable_reason();  // the build has no CUDA kernels
#else
        if (!k) {
            const char *detail = dtype == DType::bf16
                                     ? "Halide 14 cannot compile bf16 for CUDA: bf16 layers run on the CPU"
                                     : "not among this build's CUDA kernels: see DECONV_CUDA_DTYPES, DECONV_RANKS and "
                                       "built_dtypes(Device::CUDA)";
            why = std::string(op_name(op)) + " " + std::to_string(rank) + "D " + dtype_name(dtype) + " " +
                  data_format_name(geo.data_format) + " is not supported on CUDA (" + detail + ")";
        } else if (!cuda_available()) {
            why = "CUDA is unavailable: " + cuda_unavailable_reason();
        } else {
            why = detail::cuda_launch_problem(geo, impl->out_spatial);
            if (!why.empty()) kind = ErrorKind::TooLarge;
        }
#endif
        if (why.empty()) {
            impl->device = Device::CUDA;
            impl->channel_major = geo.data_format == DataFormat::NXC;
            impl->kernel = impl->interior_kernel = k;
        } else if (!exec.allow_cpu_fallback) {
            throw Error(kind, why);
        } else {
            impl->fallback_reason = why;
        }
    }
    // Every extent and stride handed to a kernel must fit Halide's 32-bit buffer fields.
    check_fits_int32(input_shape, "data shape");
    check_fits_int32(filter_shape, "filter shape");
    check_fits_int32(impl->info.output_shape, "output shape");

    int64_t macs = checked_mul(checked_mul(geo.n, geo.groups, "MACs"), checked_mul(geo.c_in, geo.c_out, "MACs"),
                               "MACs");
    for (int i = 0; i < rank; i++) {
        const int64_t k = geo.kernel[i], x = geo.in_spatial[i], y = impl->out_spatial[i];
        const int64_t s = impl->info.strides[i], d = impl->info.dilations[i], pb = impl->info.pads_begin[i];
        if (geo.forward) {
            check_fits_int32({pb, s, d}, "attribute");
            macs = checked_mul(macs, forward_pairs(x, k, y, s, d, pb), "MACs");
            continue;
        }
        impl->phases.push_back(detail::decompose_axis(s, d, k, x, y, pb));
        int64_t pairs = 0;
        for (const AxisPhase &p : impl->phases.back()) pairs += p.pairs;
        macs = checked_mul(macs, pairs, "MACs");
        for (const AxisPhase &p : impl->phases.back()) {
            check_fits_int32({p.in_offset, p.tap_step * k}, "phase");
        }
    }
    impl->macs = macs;
    // The kernel choice reads the phases (how many taps each has, how many outputs they write).
    if (impl->device == Device::CPU) {
        choose_policy(*impl, attrs, exec);
        detail::choose_cpu_kernels(*impl);
    }
    // f16, bf16, i8 and u8 where the build left their kernels out (they run in the wider dtype).
    bool on_wider = false;
    if (impl->device == Device::CPU && (!impl->kernel || !impl->interior_kernel)) {
        on_wider = detail::runs_on_wider_kernel(detail::cpu_kernel_key(*impl, rank, impl->channel_major, false),
                                                impl->variant);
    }
    if ((!impl->kernel || !impl->interior_kernel) && !on_wider) {
        const std::string no_variant = impl->device == Device::CPU ? detail::missing_cpu_variant_reason() : "";
        throw Error(ErrorKind::Unsupported, std::string("no kernel for ") + op_name(op) + " " + std::to_string(rank) +
                                                "D " + dtype_name(dtype) + " " + data_format_name(geo.data_format) +
                                                (no_variant.empty() ? std::string(" in this build (see DECONV_RANKS / DECONV_DTYPES") +
                                                                          (geo.forward ? " / DECONV_FORWARD)" : ")")
                                                                    : ": " + no_variant));
    }
    detail::install_halide_hooks();
    if (impl->device == Device::CPU) {
        detail::PlanRequest request;
        // (The Winograd path computes in f32: 16-bit layers on it run as f32 too.)
        request.winograd_tile = detail::choose_winograd_tile(*impl, exec.algorithm);
        request.winograd_demanded = exec.algorithm == Algorithm::Winograd;
        request.on_wider = on_wider;
        request.make_plan = [&](DType t, const ExecOptions &as_wide) {
            return create(op, t, input_shape, filter_shape, attrs, output_shape, as_wide).impl_;
        };
        detail::choose_implementation(*impl, request);
    }
    Plan plan(std::move(impl));
    if (detail::verbose_plans()) std::fprintf(stderr, "deconv: %s\n", plan.describe().c_str());
    return plan;
}

void Plan::run(const void *input, const void *filter, void *output) const {
    const DataTypes &t = impl_->types;
    run(ConstTensorView(input, t.src, impl_->input_shape), ConstTensorView(filter, t.weights, impl_->filter_shape),
        TensorView{output, t.dst, impl_->info.output_shape, {}});
}

namespace {


// Narrow layers run in a wider dtype (via_wider): the input converted exactly, `run_wide` runs
// the wider plan `wp` on dense buffers, the output is rounded once to the storage type: f16 and
// bf16 to nearest even, i8 and u8 saturated (their sums are exact integers). The wide buffers come
// from the plan's pools (which its own kernels never use): fresh vectors cost every run their page
// faults and the output's zeroing, 2-3% of centernet_up3_f16.
template <typename RunWide>
void run_via_wider(const Plan::Impl &p, const Plan::Impl &wp, const ConstTensorView &input,
                   const std::vector<int64_t> &in_st, const TensorView &output, const std::vector<int64_t> &out_st,
                   RunWide run_wide) {
    const size_t elem = dtype_size(wp.dtype);
    detail::BufferPool::Lease x = p.bordered_pool.take((size_t)detail::element_count(p.input_shape) * elem);
    detail::BufferPool::Lease y = p.output_pool.take((size_t)detail::element_count(p.info.output_shape) * elem);
    if (p.dtype == DType::f16 || p.dtype == DType::bf16) {
        detail::half_to_dense_f32(p.dtype, (const uint16_t *)input.data, p.input_shape, in_st, (float *)x.data());
        run_wide(x.data(), y.data());
        detail::dense_f32_to_half(p.dtype, (const float *)y.data(), (uint16_t *)output.data, p.info.output_shape, out_st);
        return;
    }
    detail::quantized_to_dense(p.dtype, 0, input.data, in_st, p.input_shape, wp.dtype, x.data());
    run_wide(x.data(), y.data());
    const Epilogue none;
    detail::EpilogueValues store;
    store.epilogue = &none;
    store.types = DataTypes{p.dtype, p.dtype, p.dtype};
    detail::apply_epilogue(store, wp.dtype, y.data(), detail::dense_strides(p.info.output_shape), output.data, out_st,
                           p.info.output_shape, detail::output_channel_axis(p));
}

// A narrow filter as a wider plan reads it, and that plan. 16-bit filters: dense f32. 8-bit
// filters: the f32 plan (fast_via_wider) where the filter keeps every partial sum an f32 integer
// (its largest output channel |weight| sum times the largest |input|, 255 or 128, under 2^24),
// else the f64 plan; dense in that plan's dtype, converted exactly.
struct WiderFilter {
    std::vector<uint8_t> data;
    const Plan::Impl *plan = nullptr;
    bool fast = false;
};

WiderFilter wider_filter(const Plan::Impl &p, const ConstTensorView &filter, const std::vector<int64_t> &w_st) {
    WiderFilter w;
    const size_t count = (size_t)detail::element_count(p.filter_shape);
    w.plan = p.via_wider.get();
    if (p.dtype == DType::f16 || p.dtype == DType::bf16) {
        w.data.resize(count * sizeof(float));
        detail::half_to_dense_f32(p.dtype, (const uint16_t *)filter.data, p.filter_shape, w_st, (float *)w.data.data());
        return w;
    }
    const std::vector<int64_t> dense = detail::dense_strides(p.filter_shape);
    std::vector<uint8_t> w8(count);
    detail::copy_tensor((const uint8_t *)filter.data, w_st, w8.data(), dense, p.filter_shape, 1);
    if (p.fast_via_wider) {
        const int64_t sum = detail::max_output_channel_weight_sum(p.dtype, w8.data(), p.filter_shape,
                                                                  detail::grouped_filter(p.op),
                                                                  detail::output_channel_filter_axis(p.op));
        w.fast = sum * (p.dtype == DType::u8 ? 255 : 128) < (int64_t(1) << 24);
        if (w.fast) w.plan = p.fast_via_wider.get();
    }
    w.data.resize(count * dtype_size(w.plan->dtype));
    detail::quantized_to_dense(p.dtype, 0, w8.data(), dense, p.filter_shape, w.plan->dtype, w.data.data());
    return w;
}

// The plan whose kernels run a CPU layer: its twin in the other layout, or itself. Filters are
// packed for it.
const Plan::Impl &kernel_plan(const Plan::Impl &p) { return p.via_nxc ? *p.via_nxc : p.via_ncx ? *p.via_ncx : p; }

// Runs a validated CPU layer on its implementation's executor.
void run_cpu_plan(const Plan::Impl &p, const ConstTensorView &input, std::vector<int64_t> in_st,
                  const TensorView &output, std::vector<int64_t> out_st, const detail::FilterPacking &packed) {
    const detail::SerialLoops serial(p.serial);
    p.implementation->run(p, input, std::move(in_st), output, std::move(out_st), packed);
}

}  // namespace

PackedFilter::PackedFilter() = default;
PackedFilter::PackedFilter(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
size_t PackedFilter::bytes() const {
    if (!impl_) return 0;
    return impl_->packing.data.size() + impl_->packing.interleaved.data.size() + impl_->via_wider.bytes() +
           (impl_->gpu ? impl_->gpu->bytes() : 0);
}
bool PackedFilter::empty() const { return !impl_; }

PackedFilter Plan::pack_filter(const ConstTensorView &filter) const {
    const Impl &p = *impl_;
    if (p.acc_plan) return pack_epilogue_filter(filter);
    const std::vector<int64_t> w_st = check_view("filter", filter.data, filter.dtype, filter.shape, filter.strides,
                                                 p.dtype, p.filter_shape, false);
    check_host_memory(p, "filter", filter.memory);
    auto packed = std::make_shared<PackedFilter::Impl>();
    packed->owner = impl_;
    const size_t elem = dtype_size(p.dtype);
    if (p.device == Device::CUDA) {
    #if defined(DECONV_HAVE_CUDA)
        check_fits_int32(w_st, "filter stride");
        packed->gpu = detail::pack_filter_cuda(p, filter, w_st);
    #endif
    } else if (p.via_wider) {
        const WiderFilter w = wider_filter(p, filter, w_st);
        packed->wider_fast = w.fast;
        packed->via_wider = Plan(w.fast ? p.fast_via_wider : p.via_wider)
                                .pack_filter(ConstTensorView(w.data.data(), w.plan->dtype, p.filter_shape));
    } else {
        check_fits_int32(w_st, "filter stride");
        packed->packing = detail::pack_filter(filter.data, w_st, kernel_plan(p), elem);
    }
    return PackedFilter(std::move(packed));
}

void Plan::run(const ConstTensorView &input, const PackedFilter &filter, const TensorView &output) const {
    if (impl_->acc_plan) return run(input, filter, output, RunArgs{});
    out_of_memory_as_error(*impl_, [&] {
        const Impl &p = *impl_;
        if (filter.empty()) invalid("packed filter is empty (make it with Plan::pack_filter)");
        if (filter.impl_->owner.lock().get() != &p) {
            invalid("packed filter was made by another plan (a packing serves the plan that made it and its copies)");
        }
        std::vector<int64_t> in_st = check_view("data", input.data, input.dtype, input.shape, input.strides, p.dtype,
                                                p.input_shape, false);
        std::vector<int64_t> out_st = check_view("output", output.data, output.dtype, output.shape, output.strides,
                                                 p.dtype, p.info.output_shape, true);
        check_host_memory(p, "data", input.memory);
        check_host_memory(p, "output", output.memory);
    #if defined(DECONV_HAVE_CUDA)
        if (p.device == Device::CUDA) {
            check_fits_int32(in_st, "data stride");
            check_fits_int32(out_st, "output stride");
            detail::run_cuda(p, input, ConstTensorView(nullptr, p.dtype, p.filter_shape), output, in_st, {}, out_st,
                             filter.impl_->gpu.get());
            return;
        }
    #endif
        if (p.via_wider) {
            const std::shared_ptr<const Impl> &wp = filter.impl_->wider_fast ? p.fast_via_wider : p.via_wider;
            run_via_wider(p, *wp, input, in_st, output, out_st, [&](const void *x, void *y) {
                Plan(wp).run(ConstTensorView(x, wp->dtype, p.input_shape), filter.impl_->via_wider,
                             TensorView{y, wp->dtype, p.info.output_shape, {}});
            });
            return;
        }
        check_fits_int32(in_st, "data stride");
        check_fits_int32(out_st, "output stride");
        run_cpu_plan(p, input, std::move(in_st), output, std::move(out_st), filter.impl_->packing);
    });
}

void Plan::run(const ConstTensorView &input, const ConstTensorView &filter, const TensorView &output) const {
    if (impl_->acc_plan) return run(input, filter, output, RunArgs{});
    out_of_memory_as_error(*impl_, [&] {
        const Impl &p = *impl_;
        std::vector<int64_t> in_st = check_view("data", input.data, input.dtype, input.shape, input.strides, p.dtype,
                                                p.input_shape, false);
        std::vector<int64_t> w_st = check_view("filter", filter.data, filter.dtype, filter.shape, filter.strides,
                                               p.dtype, p.filter_shape, false);
        std::vector<int64_t> out_st = check_view("output", output.data, output.dtype, output.shape, output.strides,
                                                 p.dtype, p.info.output_shape, true);
        check_host_memory(p, "data", input.memory);
        check_host_memory(p, "filter", filter.memory);
        check_host_memory(p, "output", output.memory);
    #if defined(DECONV_HAVE_CUDA)
        if (p.device == Device::CUDA) {
            check_fits_int32(in_st, "data stride");
            check_fits_int32(w_st, "filter stride");
            check_fits_int32(out_st, "output stride");
            detail::run_cuda(p, input, filter, output, in_st, w_st, out_st);
            return;
        }
    #endif
        if (p.via_wider) {
            // Everything is validated: convert exactly to the wider dtype, run its plan, round once.
            const WiderFilter w = wider_filter(p, filter, w_st);
            const std::shared_ptr<const Impl> &wp = w.fast ? p.fast_via_wider : p.via_wider;
            run_via_wider(p, *wp, input, in_st, output, out_st,
                          [&](const void *x, void *y) { Plan(wp).run(x, w.data.data(), y); });
            return;
        }
        check_fits_int32(in_st, "data stride");
        check_fits_int32(w_st, "filter stride");
        check_fits_int32(out_st, "output stride");
        detail::FilterPacking packed =
            detail::pack_filter(filter.data, w_st, kernel_plan(p), dtype_size(p.dtype), &p.packing_buffers);
        run_cpu_plan(p, input, std::move(in_st), output, std::move(out_st), packed);
        detail::recycle_packing(packed, p.packing_buffers);
    });
}

}  // namespace deconv
