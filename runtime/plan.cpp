// Plan: validates and resolves a layer once, then runs its stride phases on the AOT kernels.
#include "checked_math.h"
#include "deconv/deconv.h"
#include "f16_conversion.h"
#include "halide_glue.h"
#include "kernel_registry.h"
#include "messages.h"
#include "phase_decomposition.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace deconv {

using detail::AxisPhase;
using detail::checked_mul;

struct Plan::Impl {
    Op op;
    DType dtype;
    std::vector<int64_t> input_shape, filter_shape;
    ShapeInfo info;
    int rank = 0;  // spatial axes
    int64_t n = 0, groups = 0, c_in = 0, c_out = 0;
    std::vector<std::vector<AxisPhase>> phases;  // per spatial axis (spec order)
    const detail::KernelEntry *kernel = nullptr;           // bounded: any phase
    const detail::KernelEntry *interior_kernel = nullptr;  // phases whose taps all read inside the input
    int64_t macs = 0;
    // f16 layers on x86 with F16C: the f32 plan of the same layer (see f16_conversion.h).
    std::shared_ptr<const Impl> via_f32;
};

namespace {

using detail::invalid;
using detail::shape_str;

std::vector<int64_t> dense_strides(const std::vector<int64_t> &shape) {
    std::vector<int64_t> st(shape.size());
    int64_t s = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        st[i] = s;
        s *= shape[i];
    }
    return st;
}

// Checks a view against the plan: dtype, shape, pointer and strides. Returns the strides to
// use (dense when the view gives none).
std::vector<int64_t> check_view(const char *what, const void *data, DType dtype, const std::vector<int64_t> &shape,
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
    if (strides.empty()) return dense_strides(shape);
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

void set_dim(halide_dimension_t &d, int64_t min, int64_t extent, int64_t stride) {
    d.min = (int32_t)min;
    d.extent = (int32_t)extent;
    d.stride = (int32_t)stride;
    d.flags = 0;
}

halide_type_t halide_type(DType t) {
    switch (t) {
    case DType::f32: return halide_type_t(halide_type_float, 32);
    case DType::f16: return halide_type_t(halide_type_float, 16);
    case DType::bf16: return halide_type_t(halide_type_bfloat, 16);
    case DType::f64: return halide_type_t(halide_type_float, 64);
    case DType::i8: return halide_type_t(halide_type_int, 8);
    case DType::u8: return halide_type_t(halide_type_uint, 8);
    case DType::i32: return halide_type_t(halide_type_int, 32);
    }
    return halide_type_t();
}

// Writes zeros at the strided positions of one phase that receives no tap.
void zero_fill(uint8_t *base, size_t elem, const std::vector<int64_t> &extent, const std::vector<int64_t> &stride,
               size_t axis = 0) {
    if (axis == extent.size()) {
        std::memset(base, 0, elem);
        return;
    }
    for (int64_t i = 0; i < extent[axis]; i++) {
        zero_fill(base + i * stride[axis] * (int64_t)elem, elem, extent, stride, axis + 1);
    }
}

// Halide's buffer fields are 32-bit: every extent, stride and coordinate of a call must fit.
void check_fits_int32(const std::vector<int64_t> &values, const char *what) {
    for (int64_t v : values) {
        if (v > INT32_MAX || v < INT32_MIN) {
            throw Error(ErrorKind::TooLarge, std::string(what) + " value " + std::to_string(v) +
                                                 " does not fit the kernels' 32-bit buffer fields");
        }
    }
}

}  // namespace

// [g, ci, co, k...] with any strides -> dense [g, k..., ci, co].
static std::vector<uint8_t> pack_filter(const void *src, const std::vector<int64_t> &st, const Plan::Impl &p, size_t elem) {
    const bool grouped = p.op == Op::GroupConvolutionBackpropData;
    const size_t f0 = grouped ? 1 : 0;
    int64_t taps = 1;
    for (int i = 0; i < p.rank; i++) taps *= p.filter_shape[f0 + 2 + i];
    std::vector<uint8_t> out((size_t)(p.groups * taps * p.c_in * p.c_out) * elem);
    const uint8_t *in = (const uint8_t *)src;
    std::vector<int64_t> k(p.rank, 0);
    for (int64_t g = 0; g < p.groups; g++) {
        for (int64_t t = 0; t < taps; t++) {
            // Decompose the flat tap index t into per-axis taps (C order).
            int64_t rem = t, k_off = 0;
            for (int i = p.rank; i-- > 0;) {
                const int64_t kd = p.filter_shape[f0 + 2 + i];
                k_off += (rem % kd) * st[f0 + 2 + i];
                rem /= kd;
            }
            const int64_t g_off = grouped ? g * st[0] : 0;
            uint8_t *dst = out.data() + (size_t)((g * taps + t) * p.c_in * p.c_out) * elem;
            for (int64_t ci = 0; ci < p.c_in; ci++) {
                const uint8_t *row = in + (g_off + ci * st[f0] + k_off) * (int64_t)elem;
                const int64_t co_st = st[f0 + 1];
                if (co_st == 1) {
                    std::memcpy(dst, row, (size_t)p.c_out * elem);
                } else {
                    for (int64_t co = 0; co < p.c_out; co++) {
                        std::memcpy(dst + co * elem, row + co * co_st * (int64_t)elem, elem);
                    }
                }
                dst += p.c_out * elem;
            }
        }
    }
    return out;
}

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

Plan Plan::create(Op op, DType dtype, const std::vector<int64_t> &input_shape, const std::vector<int64_t> &filter_shape,
                  const Attributes &attrs, const std::optional<std::vector<int64_t>> &output_shape) {
    auto impl = std::make_shared<Impl>();
    impl->op = op;
    impl->dtype = dtype;
    impl->input_shape = input_shape;
    impl->filter_shape = filter_shape;
    impl->info = infer_shape(op, input_shape, filter_shape, attrs, output_shape);
    impl->rank = (int)input_shape.size() - 2;
    impl->n = input_shape[0];
    impl->groups = impl->info.groups;
    const size_t f0 = op == Op::GroupConvolutionBackpropData ? 1 : 0;
    impl->c_in = filter_shape[f0];
    impl->c_out = filter_shape[f0 + 1];

    impl->kernel = detail::find_kernel("phase_conv", impl->rank, dtype);
    impl->interior_kernel = detail::find_kernel("phase_conv_interior", impl->rank, dtype);
    if (!impl->kernel || !impl->interior_kernel) {
        throw Error(ErrorKind::Unsupported, std::string("no kernel for ") + std::to_string(impl->rank) + "D " +
                                                dtype_name(dtype) +
                                                " in this build (see DECONV_RANKS / DECONV_DTYPES)");
    }
    // Every extent and stride handed to a kernel must fit Halide's 32-bit buffer fields.
    check_fits_int32(input_shape, "data shape");
    check_fits_int32(filter_shape, "filter shape");
    check_fits_int32(impl->info.output_shape, "output shape");

    int64_t macs = checked_mul(checked_mul(impl->n, impl->groups, "MACs"),
                               checked_mul(impl->c_in, impl->c_out, "MACs"), "MACs");
    for (int i = 0; i < impl->rank; i++) {
        const int64_t k = filter_shape[f0 + 2 + i];
        impl->phases.push_back(detail::decompose_axis(impl->info.strides[i], impl->info.dilations[i], k,
                                                      input_shape[2 + i], impl->info.output_shape[2 + i],
                                                      impl->info.pads_begin[i]));
        int64_t pairs = 0;
        for (const AxisPhase &p : impl->phases.back()) pairs += p.pairs;
        macs = checked_mul(macs, pairs, "MACs");
        for (const AxisPhase &p : impl->phases.back()) {
            check_fits_int32({p.in_offset, p.tap_step * filter_shape[f0 + 2 + i]}, "phase");
        }
    }
    impl->macs = macs;
    detail::install_halide_hooks();
    if (dtype == DType::f16 && detail::use_f16c_conversion() &&
        detail::find_kernel("phase_conv", impl->rank, DType::f32)) {
        impl->via_f32 = create(op, DType::f32, input_shape, filter_shape, attrs, output_shape).impl_;
    }
    return Plan(std::move(impl));
}

void Plan::run(const void *input, const void *filter, void *output) const {
    run(ConstTensorView(input, impl_->dtype, impl_->input_shape), ConstTensorView(filter, impl_->dtype, impl_->filter_shape),
        TensorView{output, impl_->dtype, impl_->info.output_shape, {}});
}

void Plan::run(const ConstTensorView &input, const ConstTensorView &filter, const TensorView &output) const {
    const Impl &p = *impl_;
    std::vector<int64_t> in_st = check_view("data", input.data, input.dtype, input.shape, input.strides, p.dtype,
                                            p.input_shape, false);
    std::vector<int64_t> w_st = check_view("filter", filter.data, filter.dtype, filter.shape, filter.strides,
                                           p.dtype, p.filter_shape, false);
    std::vector<int64_t> out_st = check_view("output", output.data, output.dtype, output.shape, output.strides,
                                             p.dtype, p.info.output_shape, true);
    if (p.via_f32) {
        // Everything is validated: convert exactly to f32, run the f32 plan, round once to f16.
        std::vector<float> x = detail::f16_to_dense_f32((const uint16_t *)input.data, p.input_shape, in_st);
        std::vector<float> w = detail::f16_to_dense_f32((const uint16_t *)filter.data, p.filter_shape, w_st);
        int64_t count = 1;
        for (int64_t v : p.info.output_shape) count *= v;
        std::vector<float> y((size_t)count);
        Plan(p.via_f32).run(x.data(), w.data(), y.data());
        detail::dense_f32_to_f16(y.data(), (uint16_t *)output.data, p.info.output_shape, out_st);
        return;
    }
    check_fits_int32(in_st, "data stride");
    check_fits_int32(w_st, "filter stride");
    check_fits_int32(out_st, "output stride");
    const size_t elem = dtype_size(p.dtype);
    const int rank = p.rank;

    // The kernels read the innermost data axis densely: repack a view that is not.
    std::vector<uint8_t> dense_input;
    const void *in_data = input.data;
    if (in_st.back() != 1) {
        int64_t count = 1;
        for (int64_t v : p.input_shape) count = checked_mul(count, v, "data element count");
        dense_input.resize((size_t)count * elem);
        std::vector<int64_t> dst = dense_strides(p.input_shape);
        // Copy element by element in C order.
        std::vector<int64_t> idx(p.input_shape.size(), 0);
        for (int64_t e = 0; e < count; e++) {
            int64_t off = 0;
            for (size_t a = 0; a < idx.size(); a++) off += idx[a] * in_st[a];
            std::memcpy(dense_input.data() + e * elem, (const uint8_t *)input.data + off * elem, elem);
            for (size_t a = idx.size(); a-- > 0;) {
                if (++idx[a] < p.input_shape[a]) break;
                idx[a] = 0;
            }
        }
        in_data = dense_input.data();
        in_st = dst;
    }

    const bool grouped = p.op == Op::GroupConvolutionBackpropData;
    const size_t f0 = grouped ? 1 : 0;
    // Repack the filter as [g, k..., ci, co]: the kernels broadcast co_tile consecutive output
    // channels per (ci, tap), which then share a cache line, and walk ci with a short stride.
    // One pass over the weights, small beside the layer's MACs.
    std::vector<uint8_t> packed = pack_filter(filter.data, w_st, p, elem);
    std::vector<int64_t> k_st(rank);
    int64_t w_g = p.c_in * p.c_out;  // grows to the group stride: taps x ci x co
    for (int i = rank; i-- > 0;) {
        k_st[i] = w_g;
        w_g *= p.filter_shape[f0 + 2 + i];
    }
    const int64_t w_ci = p.c_out, w_co = 1;

    const int dims = rank + 3;
    halide_dimension_t in_dims[6], w_dims[6], out_dims[6];
    // Non-spatial axes (same for every phase). Halide axis rank+0 = channel, +1 = group, +2 = batch.
    set_dim(in_dims[rank], 0, p.c_in, in_st[1]);
    set_dim(in_dims[rank + 1], 0, p.groups, p.c_in * in_st[1]);
    set_dim(in_dims[rank + 2], 0, p.n, in_st[0]);
    set_dim(w_dims[rank], 0, p.c_out, w_co);
    set_dim(w_dims[rank + 1], 0, p.c_in, w_ci);
    set_dim(w_dims[rank + 2], 0, p.groups, w_g);
    set_dim(out_dims[rank], 0, p.c_out, out_st[1]);
    set_dim(out_dims[rank + 1], 0, p.groups, p.c_out * out_st[1]);
    set_dim(out_dims[rank + 2], 0, p.n, out_st[0]);

    // Iterate over every combination of per-axis phases (odometer over spatial axes).
    std::vector<size_t> ph(rank, 0);
    for (;;) {
        int64_t out_off = 0, w_off = 0;
        int32_t steps[3] = {1, 1, 1};
        bool has_taps = true;
        // Every output q of the phase reads input q + in_offset - j*in_step for j < T: when all
        // of those lie in [0, X) the interior kernel (no boundary tests) serves the phase.
        bool interior = true;
        for (int i = 0; i < rank; i++) {
            const AxisPhase &a = p.phases[i][ph[i]];
            const int h = rank - 1 - i;  // Halide axis of spec axis i (innermost first)
            const int64_t ys = out_st[2 + i], ks = k_st[i];
            out_off += a.out_first * ys;
            w_off += a.tap_first * ks;
            set_dim(out_dims[h], 0, a.out_count, p.info.strides[i] * ys);
            set_dim(w_dims[h], 0, a.tap_count, a.tap_step * ks);
            // The input's origin moves so that output q reads input q + in_offset at tap 0.
            set_dim(in_dims[h], -a.in_offset, p.input_shape[2 + i], in_st[2 + i]);
            steps[h] = (int32_t)a.in_step;
            has_taps = has_taps && a.tap_count > 0;
            interior = interior && a.in_offset - (a.tap_count - 1) * a.in_step >= 0 &&
                       a.out_count - 1 + a.in_offset < p.input_shape[2 + i];
        }
        const detail::KernelEntry *kernel = interior ? p.interior_kernel : p.kernel;
        uint8_t *out_base = (uint8_t *)output.data + out_off * (int64_t)elem;
        if (!has_taps) {
            std::vector<int64_t> ext, st;
            for (int h = 0; h < dims; h++) {
                ext.push_back(out_dims[h].extent);
                st.push_back(out_dims[h].stride);
            }
            zero_fill(out_base, elem, ext, st);
        } else {
            halide_buffer_t in_buf{}, w_buf{}, out_buf{};
            in_buf.host = (uint8_t *)in_data;
            in_buf.type = halide_type(p.dtype);
            in_buf.dimensions = dims;
            in_buf.dim = in_dims;
            w_buf.host = packed.data() + w_off * (int64_t)elem;
            w_buf.type = in_buf.type;
            w_buf.dimensions = dims;
            w_buf.dim = w_dims;
            out_buf.host = out_base;
            out_buf.type = in_buf.type;
            out_buf.dimensions = dims;
            out_buf.dim = out_dims;
            const int rc = kernel->fn(steps[0], steps[1], steps[2], &in_buf, &w_buf, &out_buf);
            if (rc != 0) {
                std::string msg = detail::take_halide_error();
                throw Error(ErrorKind::Kernel, std::string("kernel ") + kernel->name + " failed (Halide error " +
                                                   std::to_string(rc) + ")" + (msg.empty() ? "" : ": " + msg));
            }
        }
        int i = rank - 1;
        for (; i >= 0; i--) {
            if (++ph[i] < p.phases[i].size()) break;
            ph[i] = 0;
        }
        if (i < 0) break;
    }
}

}  // namespace deconv
