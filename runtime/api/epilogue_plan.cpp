// Quantized plans and plans with an epilogue (Plan::create with DataTypes and an Epilogue): the
// plain plan of the same layer accumulates, and the epilogue pass (cpu/epilogue_pass.h) turns
// its result into the output.
//
// Quantized layers accumulate exactly. Their data less its zero point and their weights are
// converted to the accumulating plan's dtype, so that pads and stride holes, which the plain
// kernels never read, contribute nothing with or without a zero point. That plan is the f32 one
// (the build's fastest kernels) where the packed filter proves every partial sum an f32 integer
// (its largest output channel weight sum times the largest |x - zero point| below 2^24), else
// the i32 one (i64 accumulation), else the f64 one.
#include "api/plan_internals.h"
#include "cpu/epilogue_pass.h"
#include "cpu/fused_epilogue.h"
#include "dispatch/implementations.h"
#include "kernels/half_conversion.h"
#include "kernels/halide_glue.h"
#include "cpu/quantized_dots_executor.h"
#include "kernels/cpu_tiles.h"
#include "kernels/kernel_call.h"
#include "kernels/tensor_copy.h"
#include "layer/checked_math.h"
#include "layer/epilogue_rules.h"
#include "plan/policy.h"
#include "tuning/schedule_database.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace deconv {

namespace {

using detail::check_host_memory;
using detail::check_view;
using detail::invalid;

int64_t output_channels(const Plan::Impl &p) { return p.geo.groups * p.geo.c_out; }

using detail::element_count;
using detail::output_channel_axis;

// The largest |x - zero point| of the plan's data.
int64_t max_input_magnitude(const Plan::Impl &p) {
    const int64_t zp = p.epilogue.src_zero_point;
    return p.types.src == DType::u8 ? std::max(zp, 255 - zp) : std::max(zp + 128, 127 - zp);
}

using detail::grouped_filter;
using detail::output_channel_filter_axis;

// A quantized filter as the accumulating plan reads it: its weights in that plan's dtype.
struct ConvertedWeights {
    std::vector<uint8_t> data;
    std::shared_ptr<const Plan::Impl> plan;
    bool fast = false;
};

std::vector<int8_t> dense_weights(const Plan::Impl &p, const ConstTensorView &filter, const std::vector<int64_t> &w_st) {
    std::vector<int8_t> w((size_t)element_count(p.filter_shape));
    detail::copy_tensor((const uint8_t *)filter.data, w_st, (uint8_t *)w.data(), detail::dense_strides(p.filter_shape),
                        p.filter_shape, 1);
    return w;
}

// A quantized filter as the plan accumulates it: packed for the dot-product kernel, or
// converted for a plain plan: the f32 one where its largest output channel weight sum times the
// largest input magnitude stays below 2^24 (every partial sum an f32 integer), else the exact
// one. Layers of few channels per group take the plain plans' kernels where those are exact
// (quant_dots_prefer), the dot-product kernel otherwise.
struct QuantizedWeights {
    std::shared_ptr<const detail::QuantDotsFilter> dots;
    ConvertedWeights converted;
};

QuantizedWeights quantized_weights(const Plan::Impl &p, const ConstTensorView &filter, const std::vector<int64_t> &w_st) {
    const std::vector<int64_t> dense = detail::dense_strides(p.filter_shape);
    const int64_t count = element_count(p.filter_shape);
    const std::vector<int8_t> w = dense_weights(p, filter, w_st);
    QuantizedWeights out;
    if (p.quant_dots_kernel && detail::quant_dots_prefer(p)) {
        out.dots = std::make_shared<const detail::QuantDotsFilter>(
            detail::pack_quant_dots_filter(p, w.data(), p.quant_dots_group));
        return out;
    }
    const bool exact_plan = p.acc_plan->dtype != DType::f32;
    const std::shared_ptr<const Plan::Impl> f32_plan = exact_plan ? p.fast_acc_plan : p.acc_plan;
    bool fast = false;
    if (f32_plan) {
        const int64_t sum = detail::max_output_channel_weight_sum(DType::i8, w.data(), p.filter_shape, grouped_filter(p.op),
                                                                  output_channel_filter_axis(p.op));
        fast = sum * max_input_magnitude(p) < (int64_t(1) << 24);
    }
    if (!fast && !exact_plan) {  // no exact plain plan in this build: create() made sure of a kernel
        out.dots = std::make_shared<const detail::QuantDotsFilter>(
            detail::pack_quant_dots_filter(p, w.data(), p.quant_dots_group));
        return out;
    }
    ConvertedWeights &c = out.converted;
    c.fast = fast;
    c.plan = fast ? f32_plan : p.acc_plan;
    c.data.resize((size_t)count * dtype_size(c.plan->dtype));
    detail::quantized_to_dense(DType::i8, 0, w.data(), dense, p.filter_shape, c.plan->dtype, c.data.data());
    return out;
}

detail::EpilogueValues epilogue_values(const Plan::Impl &p, const RunArgs &args) {
    detail::EpilogueValues v;
    v.epilogue = &p.epilogue;
    v.types = p.types;
    const Epilogue &e = p.epilogue;
    if (e.scale_mode != ScaleMode::none) {
        v.scales = e.scales.empty() ? args.scales : e.scales.data();
        v.scale_count = e.scale_mode == ScaleMode::per_tensor ? 1 : output_channels(p);
    }
    v.bias = args.bias;
    v.vector_bits = detail::cpu_registers(detail::default_cpu_variant()).vector_bits;
    return v;
}

bool has_sum(const Epilogue &e) {
    for (const PostOp &op : e.post_ops)
        if (op.kind == PostOp::Kind::sum) return true;
    return false;
}

// The accumulating plan's weights for one run: a converted copy (or the caller's view), or a
// packing of them.
struct AccWeights {
    std::shared_ptr<const Plan::Impl> plan;
    ConstTensorView raw;
    const PackedFilter *packed = nullptr;
    std::vector<uint8_t> converted;  // keeps `raw`'s data alive when converted
    // Quantized layers on the dot-product kernel: its packing (then `plan` is unused).
    std::shared_ptr<const detail::QuantDotsFilter> dots;
};

}  // namespace

DataTypes Plan::types() const { return impl_->types; }
const Epilogue &Plan::epilogue() const { return impl_->epilogue; }

Plan Plan::create(Op op, const DataTypes &types, const std::vector<int64_t> &input_shape,
                  const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                  const std::optional<std::vector<int64_t>> &output_shape, const ExecOptions &exec,
                  const Epilogue &epilogue) {
    if (epilogue.empty() && types.src == types.weights && types.weights == types.dst) {
        return create(op, types.src, input_shape, filter_shape, attrs, output_shape, exec);
    }
    // The layer's own errors first, then the epilogue's.
    std::shared_ptr<Impl> impl = detail::resolve_layer(op, types.src, input_shape, filter_shape, attrs, output_shape);
    detail::check_epilogue(op, types, epilogue, output_channels(*impl));
    impl->types = types;
    impl->epilogue = epilogue;
    if (exec.device == Device::CUDA) {
        const std::string why = std::string("quantized layers and epilogues run on the CPU only (") +
                                data_types_name(types) + ", " + detail::describe_epilogue(*impl) + ")";
        if (!exec.allow_cpu_fallback) throw Error(ErrorKind::Unsupported, why);
        impl->fallback_reason = why;
    }
    ExecOptions inner = exec;
    inner.device = Device::CPU;
    inner.allow_cpu_fallback = false;
    // An entry tuned for these types (deconv tune --cfg, tune_layer with DataTypes) pins the
    // accumulating plans, in place of the entries of their own dtype: the tuner timed the layer
    // with those off.
    std::optional<detail::TunedEntry> tuned;
    if (exec.use_schedule_database && exec.device == Device::CPU) {
        const detail::Policy options = detail::options_policy(exec);
        detail::ScheduleKey key = detail::schedule_key(op, types.src, impl->input_shape, impl->filter_shape, impl->info, attrs);
        key.types = data_types_name(types);
        tuned = detail::tuned_entry(key, options);
        if (tuned) {
            inner.use_schedule_database = false;
            inner.schedule = detail::format_policy(detail::overlay(tuned->policy, options));
        }
    }
    auto plain = [&](DType t) { return create(op, t, input_shape, filter_shape, attrs, output_shape, inner).impl_; };
    if (detail::is_quantized(types)) {
        inner.algorithm = Algorithm::Direct;  // exact sums only
        std::string why;
        for (DType t : {DType::i32, DType::f64}) {
            try {
                impl->acc_plan = plain(t);
                break;
            } catch (const Error &err) {
                if (err.kind() != ErrorKind::Unsupported) throw;
                why += std::string(why.empty() ? "" : "; ") + err.what();
            }
        }
        std::shared_ptr<const Impl> f32_plan;
        try {
            f32_plan = plain(DType::f32);
        } catch (const Error &err) {
            if (err.kind() != ErrorKind::Unsupported) throw;
            why += std::string(why.empty() ? "" : "; ") + err.what();
        }
        // Without an exact plan the f32 one serves the dot-product kernels' layers alone (it
        // then only gives the plan its geometry and policy).
        const bool exact = impl->acc_plan != nullptr;
        if (exact) impl->fast_acc_plan = f32_plan;
        else impl->acc_plan = f32_plan;
        if (!impl->acc_plan) {
            throw Error(ErrorKind::Unsupported, "this build runs no kernel the quantized layer accumulates on: " + why);
        }
        impl->phases = impl->acc_plan->phases;
        const std::string &variant = impl->acc_plan->variant;
        using QuantDots = detail::Policy::QuantDots;
        const QuantDots pin = impl->acc_plan->policy.quant_dots;
        if (detail::quant_dots_take(*impl) && pin != QuantDots::Off) {
            // u8 x i8 quads on vpdpbusd where the CPU has VNNI, else i16 pairs on vpmaddwd.
            detail::KernelKey key;
            key.family = detail::KernelFamily::Generic;
            key.generator = "deconv_phase_conv_quant";
            key.rank = impl->geo.rank;
            key.dtype = DType::u8;
            key.layout = DataFormat::NXC;
            key.channels = true;
            key.bounded = false;
            detail::QuantDotsStore probe;
            impl->quant_dots_fused = detail::quant_dots_slots(epilogue.post_ops, probe) && types.dst != DType::bf16;
            const std::string dst = std::string("dst=") + dtype_name(impl->quant_dots_fused ? types.dst : DType::f32);
            const detail::Int8Quads quads = detail::cpu_int8_quads(variant);
            for (int group : {4, 2}) {
                if (group == 4 && (quads == detail::Int8Quads::none || pin == QuantDots::Pairs)) continue;
                if (group == 2 && pin == QuantDots::Quads) continue;
                const bool signed_data = group == 4 && quads == detail::Int8Quads::i8_i8;
                key.extra = dst + (group == 2 ? " group=2" : "") + (signed_data ? " signed_data=true" : "");
                impl->quant_dots_kernel = detail::find_kernel(key, variant);
                impl->quant_dots_group = group;
                impl->quant_dots_signed = signed_data;
                if (impl->quant_dots_kernel) break;
            }
        }
        if (!exact && !impl->quant_dots_kernel) {
            throw Error(ErrorKind::Unsupported,
                        std::string("quantized layers off the dot-product kernels accumulate exactly on the i32 or "
                                    "f64 kernels, and this build runs neither for the layer: ") + why);
        }
    } else {
        // A bias and a relu, clip or bounded_relu list: in the kernels, on the plan of the
        // layer's own dtype (16-bit layers round once there), where its executor stores it.
        float alpha, hi;
        if (epilogue.scale_mode == ScaleMode::none && detail::fold_store_post_ops(epilogue.post_ops, alpha, hi)) {
            std::shared_ptr<const Impl> own = plain(types.src);
            const detail::Implementation *runs = detail::innermost_implementation(*own);
            if (runs && runs->stores_epilogue) {
                impl->acc_plan = own;
                impl->store_fused = true;
            }
        }
        if (!impl->acc_plan) impl->acc_plan = plain(types.src == DType::f64 ? DType::f64 : DType::f32);
    }
    const Impl &acc = *impl->acc_plan;
    impl->macs = acc.macs;
    impl->variant = acc.variant;
    impl->policy = acc.policy;
    impl->policy_source = acc.policy_source;
    if (tuned) impl->policy_source = tuned->source + (exec.schedule.empty() ? "" : " + options");
    impl->implementation = &detail::kEpilogue;
    Plan plan(std::move(impl));
    if (detail::verbose_plans()) std::fprintf(stderr, "deconv: %s\n", plan.describe().c_str());
    return plan;
}

PackedFilter Plan::pack_epilogue_filter(const ConstTensorView &filter) const {
    const Impl &p = *impl_;
    const std::vector<int64_t> w_st = check_view("filter", filter.data, filter.dtype, filter.shape, filter.strides,
                                                 p.types.weights, p.filter_shape, false);
    check_host_memory(p, "filter", filter.memory);
    auto packed = std::make_shared<PackedFilter::Impl>();
    packed->owner = impl_;
    if (detail::is_quantized(p.types)) {
        QuantizedWeights q = quantized_weights(p, filter, w_st);
        packed->quant_dots = q.dots;
        if (!q.dots) {
            const ConvertedWeights &w = q.converted;
            packed->acc_fast = w.fast;
            packed->acc = Plan(w.plan).pack_filter(ConstTensorView(w.data.data(), w.plan->dtype, p.filter_shape));
        }
    } else if (p.acc_plan->dtype != p.dtype) {
        std::vector<float> w = detail::half_to_dense_f32(p.dtype, (const uint16_t *)filter.data, p.filter_shape, w_st);
        packed->acc = Plan(p.acc_plan).pack_filter(ConstTensorView(w.data(), DType::f32, p.filter_shape));
    } else {
        packed->acc = Plan(p.acc_plan).pack_filter(filter);
    }
    return PackedFilter(std::move(packed));
}

namespace {

// The dot-product kernel's epilogue inputs for one run, for `ck` output channels per group:
// per-channel bias and scales, and (fused plans) the post-op slots and zero point.
detail::QuantDotsStore dots_store(const Plan::Impl &p, const detail::EpilogueValues &ev, int64_t ck) {
    const int64_t groups = p.geo.groups, c_out = p.geo.c_out;
    detail::QuantDotsStore s;
    s.bias.assign((size_t)(groups * ck), 0.f);
    s.scale.assign((size_t)(groups * ck), 1.f);
    for (int64_t g = 0; g < groups; g++) {
        for (int64_t co = 0; co < c_out; co++) {
            const int64_t c = g * c_out + co, k = g * ck + co;
            if (ev.bias) {
                s.bias[k] = *p.epilogue.bias == DType::i32 ? (float)((const int32_t *)ev.bias)[c] : ((const float *)ev.bias)[c];
            }
            if (ev.scales) s.scale[k] = ev.scales[ev.scale_count == 1 ? 0 : c];
        }
    }
    if (p.quant_dots_fused) {
        detail::quant_dots_slots(p.epilogue.post_ops, s);
        s.dst_zero_point = (float)p.epilogue.dst_zero_point;
    }
    return s;
}

// The store epilogue of one run of a float plan: the bias in the accumulator's type (f64 for
// f64 layers, f32 otherwise; every allowed bias dtype converts exactly) and the folded slot.
detail::KernelEpilogue kernel_epilogue(const Plan::Impl &p, const detail::EpilogueValues &ev) {
    detail::KernelEpilogue e;
    const int64_t count = output_channels(p);
    e.acc = p.dtype == DType::f64 ? DType::f64 : DType::f32;
    e.c_out = p.geo.c_out;
    e.bias.assign((size_t)count * dtype_size(e.acc), 0);
    detail::fold_store_post_ops(p.epilogue.post_ops, e.alpha, e.hi);
    if (ev.bias) detail::channel_values(*p.epilogue.bias, ev.bias, count, e.acc, e.bias.data());
    return e;
}

// A channels-last tensor of `ck` channels per group ([N, Y.., G*ck], dense) seen in the output's
// axis order with its channel axis split into (G, C_OUT), for copies of its first C_OUT
// channels per group: the shape, its strides, and those of `out_st` split the same way.
struct SplitChannels {
    std::vector<int64_t> shape, k_st, out_st;
};
SplitChannels split_channels(const Plan::Impl &p, int64_t ck, const std::vector<int64_t> &out_st) {
    const std::vector<int64_t> &shape = p.info.output_shape;
    const int c_axis = output_channel_axis(p), rank = p.geo.rank;
    std::vector<int64_t> k_shape = {p.geo.n};
    for (int a = 0; a < rank; a++) k_shape.push_back(p.out_spatial[a]);
    k_shape.push_back(p.geo.groups * ck);
    const std::vector<int64_t> k_dense = detail::dense_strides(k_shape);  // [N, Y.., C]
    SplitChannels s;
    for (int i = 0; i < (int)shape.size(); i++) {
        if (i == c_axis) {
            s.shape.insert(s.shape.end(), {p.geo.groups, p.geo.c_out});
            s.k_st.insert(s.k_st.end(), {ck, 1});
            s.out_st.insert(s.out_st.end(), {out_st[i] * p.geo.c_out, out_st[i]});
            continue;
        }
        // the output's axis i: batch, or spatial axis a (NCX: i - 2; NXC: i - 1)
        const int k_axis = i == 0 ? 0 : 1 + (p.geo.data_format == DataFormat::NXC ? i - 1 : i - 2);
        s.shape.push_back(shape[i]);
        s.k_st.push_back(k_dense[k_axis]);
        s.out_st.push_back(out_st[i]);
    }
    return s;
}

// Runs the accumulating plan (`run_plan(x, y)`, on `w`) and the epilogue into `output` (every
// view checked).
template <typename RunPlan>
void run_with_epilogue(const Plan::Impl &p, const ConstTensorView &input, const std::vector<int64_t> &in_st,
                       const TensorView &output, const std::vector<int64_t> &out_st, const AccWeights &w,
                       const detail::EpilogueValues &ev, RunPlan run_plan) {
    const std::vector<int64_t> &out_shape = p.info.output_shape;
    const int c_axis = output_channel_axis(p);
    const bool quantized = detail::is_quantized(p.types);
    const Plan::Impl &acc = w.dots ? *p.acc_plan : *w.plan;
    const bool same_type = !quantized && acc.dtype == p.dtype;
    if (w.dots) {
        const int64_t ck = w.dots->c_out_k;
        const detail::QuantDotsStore store = dots_store(p, ev, ck);
        const bool nxc = p.geo.data_format == DataFormat::NXC;
        if (p.quant_dots_fused && nxc && out_st.back() == 1 && ck == p.geo.c_out) {
            detail::run_quant_dots(p, p.quant_dots_kernel, *w.dots, store, input.data, in_st, output.data, p.types.dst,
                                   out_st);
            return;
        }
        // Channels-first outputs, a strided channel axis or padded channels through a
        // channels-last scratch; post-op lists the kernel cannot run through its f32 values and
        // the epilogue pass.
        const DType kt = p.quant_dots_fused ? p.types.dst : DType::f32;
        const std::vector<int64_t> no_strides(out_shape.size(), 0);
        const SplitChannels k = split_channels(p, ck, no_strides);
        int64_t k_count = p.geo.n * p.geo.groups * ck;
        for (int64_t y : p.out_spatial) k_count *= y;
        std::vector<int64_t> k_nxc = {p.geo.n};
        for (int64_t y : p.out_spatial) k_nxc.push_back(y);
        k_nxc.push_back(p.geo.groups * ck);
        detail::BufferPool::Lease y = p.output_pool.take((size_t)k_count * dtype_size(kt));
        detail::run_quant_dots(p, p.quant_dots_kernel, *w.dots, store, input.data, in_st, y.data(), kt,
                               detail::dense_strides(k_nxc));
        if (p.quant_dots_fused) {
            const SplitChannels to = split_channels(p, ck, out_st);
            detail::copy_tensor(y.data(), k.k_st, (uint8_t *)output.data, to.out_st, k.shape, dtype_size(kt));
            return;
        }
        // The f32 values of the layer's own channels, dense in the output's order, for the pass.
        std::optional<detail::BufferPool::Lease> v;
        const void *values = y.data();
        std::vector<int64_t> v_st;
        if (ck == p.geo.c_out) {
            v_st = detail::dense_strides(k_nxc);
            if (!nxc) v_st = detail::nxc_to_ncx_order(v_st);
        } else {
            v.emplace(p.bordered_pool.take((size_t)element_count(out_shape) * sizeof(float)));
            v_st = detail::dense_strides(out_shape);
            const SplitChannels to = split_channels(p, ck, v_st);
            detail::copy_tensor(y.data(), k.k_st, v->data(), to.out_st, k.shape, sizeof(float));
            values = v->data();
        }
        Epilogue rest = p.epilogue;  // bias and scales are the kernel's
        rest.bias.reset();
        rest.scale_mode = ScaleMode::none;
        rest.scales.clear();
        detail::EpilogueValues after = ev;
        after.epilogue = &rest;
        after.scales = nullptr;
        after.scale_count = 0;
        after.bias = nullptr;
        detail::apply_epilogue(after, DType::f32, values, v_st, output.data, out_st, out_shape, c_axis);
        return;
    }
    if (p.store_fused) {
        // The kernels store the epilogue as they write the output.
        const detail::KernelEpilogue ke = kernel_epilogue(p, ev);
        detail::FusedEpilogueScope scope(&ke);
        run_plan(ConstTensorView(input.data, p.dtype, p.input_shape, in_st),
                 TensorView{output.data, p.dtype, out_shape, out_st});
        if (scope.taken()) return;
        // create() chose a plan whose executor stores it: a 16-bit output is rounded already.
        if (acc.dtype != DType::f32 && acc.dtype != DType::f64) {
            throw Error(ErrorKind::Kernel, "the plan's executor did not store its epilogue: " +
                                               detail::implementation_chain(acc));
        }
        detail::apply_epilogue(ev, acc.dtype, output.data, out_st, output.data, out_st, out_shape, c_axis);
        return;
    }
    // f32 and f64 layers without a sum accumulate into the output itself, and the pass runs on
    // each of the run's slices as it is computed, or in place after the run.
    if (same_type && !has_sum(p.epilogue)) {
        const detail::OutputStage stage{&ev, acc.dtype, output.data, out_st, (uint8_t *)output.data, out_st, c_axis};
        detail::FusedEpilogueScope scope(nullptr, &stage);
        run_plan(ConstTensorView(input.data, p.dtype, p.input_shape, in_st),
                 TensorView{output.data, p.dtype, out_shape, out_st});
        if (scope.taken()) return;
        detail::apply_epilogue(ev, acc.dtype, output.data, out_st, output.data, out_st, out_shape, c_axis);
        return;
    }
    std::optional<detail::BufferPool::Lease> x;
    ConstTensorView x_view(input.data, p.dtype, p.input_shape, in_st);
    if (quantized) {
        x.emplace(p.bordered_pool.take((size_t)element_count(p.input_shape) * dtype_size(acc.dtype)));
        detail::quantized_to_dense(p.types.src, p.epilogue.src_zero_point, input.data, in_st, p.input_shape,
                                   acc.dtype, x->data());
        x_view = ConstTensorView(x->data(), acc.dtype, p.input_shape);
    } else if (!same_type) {
        x.emplace(p.bordered_pool.take((size_t)element_count(p.input_shape) * sizeof(float)));
        detail::half_to_dense_f32(p.dtype, (const uint16_t *)input.data, p.input_shape, in_st, (float *)x->data());
        x_view = ConstTensorView(x->data(), DType::f32, p.input_shape);
    }
    detail::BufferPool::Lease y = p.output_pool.take((size_t)element_count(out_shape) * dtype_size(acc.dtype));
    // The pass as the plain run's output stage where its executor computes in slices; over the
    // whole accumulator after it otherwise.
    const detail::OutputStage stage{&ev, acc.dtype, y.data(), detail::dense_strides(out_shape), (uint8_t *)output.data,
                                    out_st, c_axis};
    detail::FusedEpilogueScope scope(nullptr, &stage);
    run_plan(x_view, TensorView{y.data(), acc.dtype, out_shape, {}});
    if (scope.taken()) return;
    detail::apply_epilogue(ev, acc.dtype, y.data(), detail::dense_strides(out_shape), output.data, out_st, out_shape,
                           c_axis);
}

// The views of a run of a plan with an epilogue, checked against its types and shapes in the
// plain runs' order (data, filter, output; then where their memory is; then the run's
// arguments). `filter` null: a packed filter, checked by the caller. Returns the data's and the
// output's strides, and the filter's (with a filter).
struct EpilogueRunStrides {
    std::vector<int64_t> in_st, w_st, out_st;
};
EpilogueRunStrides check_epilogue_run(const Plan::Impl &p, const ConstTensorView &input, const ConstTensorView *filter,
                                      const TensorView &output, const RunArgs &args) {
    EpilogueRunStrides st;
    st.in_st = check_view("data", input.data, input.dtype, input.shape, input.strides, p.types.src, p.input_shape, false);
    if (filter) {
        st.w_st = check_view("filter", filter->data, filter->dtype, filter->shape, filter->strides, p.types.weights,
                             p.filter_shape, false);
    }
    st.out_st = check_view("output", output.data, output.dtype, output.shape, output.strides, p.types.dst,
                           p.info.output_shape, true);
    check_host_memory(p, "data", input.memory);
    if (filter) check_host_memory(p, "filter", filter->memory);
    check_host_memory(p, "output", output.memory);
    detail::check_run_args(p.epilogue, args, output_channels(p));
    return st;
}

// A plan without an epilogue takes no run arguments: its runs are the plain ones.
void check_no_run_args(const RunArgs &args) {
    if (args.bias || args.scales) {
        invalid("the run gives a bias or output scales but the plan has no epilogue (make it with "
                "Plan::create(op, DataTypes, ..., Epilogue))");
    }
}

}  // namespace

void Plan::run(const ConstTensorView &input, const ConstTensorView &filter, const TensorView &output,
               const RunArgs &args) const {
    const Impl &p = *impl_;
    if (!p.acc_plan) {
        check_no_run_args(args);
        return run(input, filter, output);
    }
    detail::out_of_memory_as_error(p, [&] {
        const EpilogueRunStrides checked = check_epilogue_run(p, input, &filter, output, args);
        const std::vector<int64_t> &in_st = checked.in_st, &w_st = checked.w_st, &out_st = checked.out_st;
        AccWeights w;
        if (detail::is_quantized(p.types)) {
            QuantizedWeights q = quantized_weights(p, filter, w_st);
            w.dots = q.dots;
            if (!q.dots) {
                w.plan = q.converted.plan;
                w.converted = std::move(q.converted.data);
                w.raw = ConstTensorView(w.converted.data(), w.plan->dtype, p.filter_shape);
            }
        } else if (p.acc_plan->dtype != p.dtype) {
            std::vector<float> f = detail::half_to_dense_f32(p.dtype, (const uint16_t *)filter.data, p.filter_shape, w_st);
            w.plan = p.acc_plan;
            w.converted.resize(f.size() * sizeof(float));
            std::memcpy(w.converted.data(), f.data(), w.converted.size());
            w.raw = ConstTensorView(w.converted.data(), DType::f32, p.filter_shape);
        } else {
            w.plan = p.acc_plan;
            w.raw = ConstTensorView(filter.data, p.dtype, p.filter_shape, w_st);
        }
        run_with_epilogue(p, input, in_st, output, out_st, w, epilogue_values(p, args),
                          [&](const ConstTensorView &x, const TensorView &y) {
                              if (w.packed) Plan(w.plan).run(x, *w.packed, y);
                              else Plan(w.plan).run(x, w.raw, y);
                          });
    });
}

void Plan::run(const ConstTensorView &input, const PackedFilter &filter, const TensorView &output,
               const RunArgs &args) const {
    const Impl &p = *impl_;
    if (!p.acc_plan) {
        check_no_run_args(args);
        return run(input, filter, output);
    }
    detail::out_of_memory_as_error(p, [&] {
        if (filter.empty()) invalid("packed filter is empty (make it with Plan::pack_filter)");
        if (filter.impl_->owner.lock().get() != &p) {
            invalid("packed filter was made by another plan (a packing serves the plan that made it and its copies)");
        }
        const EpilogueRunStrides checked = check_epilogue_run(p, input, nullptr, output, args);
        const std::vector<int64_t> &in_st = checked.in_st, &out_st = checked.out_st;
        AccWeights w;
        // (Without an exact plan the f32 one is acc_plan itself.)
        w.plan = filter.impl_->acc_fast && p.fast_acc_plan ? p.fast_acc_plan : p.acc_plan;
        w.packed = &filter.impl_->acc;
        w.dots = filter.impl_->quant_dots;
        run_with_epilogue(p, input, in_st, output, out_st, w, epilogue_values(p, args),
                          [&](const ConstTensorView &x, const TensorView &y) {
                              if (w.packed) Plan(w.plan).run(x, *w.packed, y);
                              else Plan(w.plan).run(x, w.raw, y);
                          });
    });
}


}  // namespace deconv
