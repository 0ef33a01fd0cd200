// The GPU executor: one launch per combination of stride phases through a backend's device
// interface (see gpu_executor.h).
#include "gpu/gpu_executor.h"

#include "layer/checked_math.h"
#include "kernels/halide_glue.h"
#include "kernels/kernel_call.h"
#include "kernels/kernel_epilogue.h"
#include "kernels/tensor_copy.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <string>
#include <vector>

namespace deconv {
namespace detail {

namespace {

[[noreturn]] void fail_gpu(const GpuBackend &backend, const std::string &what, int rc) {
    std::string msg = take_halide_error();
    throw Error(ErrorKind::Kernel, what + " failed on " + backend.name + " (Halide error " + std::to_string(rc) + ")" +
                                       (msg.empty() ? "" : ": " + msg));
}

// A view on `backend`'s device memory: `handle` is the device handle of its first element.
halide_buffer_t device_view(const GpuBackend &backend, uint64_t handle, halide_type_t type, halide_dimension_t *dims,
                            int n) {
    halide_buffer_t b{};
    b.device = handle;
    b.device_interface = backend.interface();
    b.type = type;
    b.dimensions = n;
    b.dim = dims;
    return b;
}

// The type the per-element-size kernels (zero fill, strided copy) move elements as: unsigned
// integers of the element's size, whatever its dtype.
halide_type_t element_bits(size_t elem) { return halide_type_t(halide_type_uint, static_cast<uint8_t>(8 * elem)); }

// The per-element-size kernels (GpuBackend::zero_fill, strided_copy) this build lacks.
[[noreturn]] void no_element_kernel(const GpuBackend &backend, const char *kernel, size_t elem) {
    throw Error(ErrorKind::Kernel, std::string("no ") + backend.name + " " + kernel + " for elements of " +
                                       std::to_string(elem) + " bytes in this build");
}

// A dense device copy of a host tensor (or a dense device buffer for the output), freed on scope
// exit, failures included.
struct DeviceBuffer {
    const GpuBackend &backend;
    halide_buffer_t buf{};
    halide_dimension_t dims[8]{};
    bool allocated = false;

    explicit DeviceBuffer(const GpuBackend &b) : backend(b) {}
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    ~DeviceBuffer() {
        if (allocated) halide_device_free(nullptr, &buf);
    }

    // Describes `host` as a dense tensor of `shape` (C order).
    void describe(void *host, DType t, const std::vector<int64_t> &shape) {
        buf.host = (uint8_t *)host;
        buf.type = halide_type(t);
        buf.dimensions = (int)shape.size();
        buf.dim = dims;
        int64_t stride = 1;
        for (size_t i = 0; i < shape.size(); i++) {
            const size_t axis = shape.size() - 1 - i;  // Halide order: innermost first
            set_dim(dims[i], 0, shape[axis], stride);
            stride *= shape[axis];
        }
    }
    void upload(const char *what) {
        buf.set_host_dirty(true);
        const int rc = halide_copy_to_device(nullptr, &buf, backend.interface());
        allocated = buf.device != 0;
        if (rc != 0) fail_gpu(backend, std::string("copying the ") + what + " to the GPU", rc);
    }
    void allocate(const char *what) {
        const int rc = halide_device_malloc(nullptr, &buf, backend.interface());
        allocated = buf.device != 0;
        if (rc != 0) fail_gpu(backend, std::string("allocating the ") + what + " on the GPU", rc);
    }
    void download(const char *what) {
        buf.set_device_dirty(true);
        const int rc = halide_copy_to_host(nullptr, &buf);
        if (rc != 0) fail_gpu(backend, std::string("copying the ") + what + " from the GPU", rc);
    }
};

bool is_dense(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides) {
    return strides == dense_strides(shape);
}

// A tensor as the GPU kernels see it: a device handle and element strides (spec order).
struct DeviceTensor {
    uint64_t base = 0;
    std::vector<int64_t> strides;
};

// The caller's tensor on the device: its own memory when it is device memory, else a dense copy
// (host views that are not dense are packed on the host first).
DeviceTensor to_device(const void *data, Memory memory, const std::vector<int64_t> &shape,
                       const std::vector<int64_t> &strides, DType t, DeviceBuffer &holder,
                       std::vector<uint8_t> &staging, const char *what) {
    if (memory == Memory::CudaDevice) return {(uint64_t)(uintptr_t)data, strides};
    const size_t elem = dtype_size(t);
    check_fits_int32(dense_strides(shape), what);
    const void *host = data;
    if (!is_dense(shape, strides)) {
        int64_t count = 1;
        for (int64_t v : shape) count = checked_mul(count, v, "element count");
        staging.resize((size_t)count * elem);
        copy_tensor((const uint8_t *)data, strides, staging.data(), dense_strides(shape), shape, elem);
        host = staging.data();
    }
    holder.describe(const_cast<void *>(host), t, shape);
    holder.upload(what);
    return {holder.buf.device, dense_strides(shape)};
}

// The filter's canonical axes (g, ci, k.., co: spec order, co last) and their element strides.
struct CanonicalFilter {
    std::vector<int64_t> shape, strides;
};

CanonicalFilter canonical_filter(const OpGeometry &geo, const std::vector<int64_t> &strides) {
    const FilterAxes &fa = geo.filter;
    CanonicalFilter c;
    c.shape = {geo.groups, geo.c_in};
    c.strides = {fa.g_stride(strides), strides[fa.ci_axis]};
    for (int i = 0; i < geo.rank; i++) {
        c.shape.push_back(geo.kernel[i]);
        c.strides.push_back(strides[fa.k_axes[i]]);
    }
    c.shape.push_back(geo.c_out);
    c.strides.push_back(strides[fa.co_axis]);
    return c;
}

// The filter on the device, packed channel-contiguous: [g][ci][k..][co]. Threads along
// output channels (channel-major mappings, gpu_schedule.h) then load consecutive weights, where
// the spec's layouts put them prod(K) or more apart; threads along positions broadcast one weight
// either way. A host filter is packed on the host on its way up; a device filter by the strided
// copy kernel into a buffer of the executor's.
DeviceTensor packed_filter(const GpuBackend &backend, const OpGeometry &geo, const ConstTensorView &filter,
                           const std::vector<int64_t> &strides, DType t, DeviceBuffer &holder,
                           std::vector<uint8_t> &staging) {
    const size_t elem = dtype_size(t);
    const CanonicalFilter from = canonical_filter(geo, strides);
    // Output channels dense (the kernels take their stride as 1), each run of them padded to the
    // backend's view alignment, so that every phase's view (an offset in taps) starts aligned.
    const int64_t align = std::max<int64_t>(1, backend.view_alignment / static_cast<int64_t>(elem));
    std::vector<int64_t> packed(from.shape.size());
    packed.back() = 1;
    int64_t next = (from.shape.back() + align - 1) / align * align;
    for (size_t i = from.shape.size() - 1; i-- > 0;) {
        packed[i] = next;
        next *= from.shape[i];
    }
    const int64_t count = next;
    if (filter.memory != Memory::CudaDevice) {
        staging.resize(static_cast<size_t>(count) * elem);
        copy_tensor(static_cast<const uint8_t *>(filter.data), from.strides, staging.data(), packed, from.shape, elem);
        holder.describe(staging.data(), t, {count});
        holder.upload("filter");
        return {holder.buf.device, packed};
    }
    const GpuBackend::StridedCopyFn copy = backend.strided_copy_for(elem);
    if (!copy) no_element_kernel(backend, "strided copy", elem);
    holder.describe(nullptr, t, {count});
    holder.allocate("packed filter");
    // Six axes, innermost first (co, k_D .. k_1, ci, g), padded with unit axes.
    halide_dimension_t src_dims[6], dst_dims[6];
    const int axes = static_cast<int>(from.shape.size());
    for (int h = 0; h < 6; h++) {
        const int axis = axes - 1 - h;
        if (axis >= 0) {
            set_dim(src_dims[h], 0, from.shape[axis], from.strides[axis]);
            set_dim(dst_dims[h], 0, from.shape[axis], packed[axis]);
        } else {
            set_dim(src_dims[h], 0, 1, 0);
            set_dim(dst_dims[h], 0, 1, 0);
        }
    }
    const halide_type_t bits = element_bits(elem);
    halide_buffer_t src = device_view(backend, (uint64_t)(uintptr_t)filter.data, bits, src_dims, 6);
    halide_buffer_t dst = device_view(backend, holder.buf.device, bits, dst_dims, 6);
    const int rc = copy(&src, &dst);
    if (rc != 0) fail_gpu(backend, "packing the filter", rc);
    return {holder.buf.device, packed};
}

// pack_filter_on_gpu's filter: the device buffer and its strides.
class OwnedPackedFilter final : public GpuPackedFilter {
public:
    explicit OwnedPackedFilter(const GpuBackend &backend) : buffer_(backend) {}
    uint64_t handle() const override { return tensor_.base; }
    const std::vector<int64_t> &strides() const override { return tensor_.strides; }
    size_t bytes() const override { return buffer_.buf.size_in_bytes(); }

    DeviceBuffer buffer_;
    DeviceTensor tensor_;
};

// The device handles of one launch's views that start inside a tensor (GpuBackend::view_at),
// released once the launch is queued, failures included.
class LaunchViews {
public:
    explicit LaunchViews(const GpuBackend &b) : backend_(b) {}
    LaunchViews(const LaunchViews &) = delete;
    LaunchViews &operator=(const LaunchViews &) = delete;
    ~LaunchViews() {
        if (!backend_.release_view) return;
        for (int i = 0; i < count_; i++) backend_.release_view(views_[i]);
    }
    uint64_t at(uint64_t base, int64_t bytes) {
        if (count_ == kMax) throw Error(ErrorKind::Kernel, "internal: more views in one launch than LaunchViews holds");
        uint64_t v = 0;
        const int rc = backend_.view_at(base, bytes, &v);
        if (rc != 0) fail_gpu(backend_, "making a view " + std::to_string(bytes) + " bytes into a device buffer", rc);
        views_[count_++] = v;
        return v;
    }

private:
    static constexpr int kMax = 2;  // a phase launch's filter and output views
    const GpuBackend &backend_;
    uint64_t views_[kMax] = {};
    int count_ = 0;
};

}  // namespace

std::shared_ptr<const GpuPackedFilter> pack_filter_on_gpu(const GpuBackend &backend, const Plan::Impl &p,
                                                          const ConstTensorView &filter,
                                                          const std::vector<int64_t> &w_st0) {
    auto owned = std::make_shared<OwnedPackedFilter>(backend);
    std::vector<uint8_t> staging;
    owned->tensor_ = packed_filter(backend, p.geo, filter, w_st0, p.dtype, owned->buffer_, staging);
    owned->buffer_.buf.host = nullptr;  // the staging copy ends here; the device copy stays
    return owned;
}

void run_gpu(const GpuBackend &backend, const Plan::Impl &p, const KernelEntry &kernel, const ConstTensorView &input,
             const ConstTensorView &filter, const TensorView &output, const std::vector<int64_t> &in_st0,
             const std::vector<int64_t> &w_st0, const std::vector<int64_t> &out_st0, const GpuPackedFilter *packed) {
    const size_t elem = dtype_size(p.dtype);
    const OpGeometry &geo = p.geo;
    const int rank = geo.rank;
    const DataFormat fmt = geo.data_format;
    const halide_device_interface_t *iface = backend.interface();

    // Device copies (host views) or the caller's device memory; freed on every exit.
    DeviceBuffer in_dev(backend), w_dev(backend), out_dev(backend);
    std::vector<uint8_t> in_stage, w_stage, out_stage;
    const DeviceTensor in = to_device(input.data, input.memory, p.input_shape, in_st0, p.dtype, in_dev, in_stage, "data");
    const DeviceTensor w = packed ? DeviceTensor{packed->handle(), packed->strides()}
                                  : packed_filter(backend, geo, filter, w_st0, p.dtype, w_dev, w_stage);
    DeviceTensor out;
    const bool out_on_host = output.memory == Memory::Host;
    if (out_on_host) {
        // The kernels write a dense device buffer; it comes back into the caller's memory when
        // that is dense, else into a staging buffer copied out at the end.
        void *host = output.data;
        check_fits_int32(dense_strides(p.info.output_shape), "output");
        if (!is_dense(p.info.output_shape, out_st0)) {
            int64_t count = 1;
            for (int64_t v : p.info.output_shape) count = checked_mul(count, v, "output element count");
            out_stage.resize((size_t)count * elem);
            host = out_stage.data();
        }
        out_dev.describe(host, p.dtype, p.info.output_shape);
        out_dev.allocate("output");
        out = {out_dev.buf.device, dense_strides(p.info.output_shape)};
    } else {
        out = {(uint64_t)(uintptr_t)output.data, out_st0};
    }
    const std::vector<int64_t> in_nc = to_ncx(in.strides, fmt), out_nc = to_ncx(out.strides, fmt);

    // The packed filter's strides, canonical order [g, ci, k.., co].
    const int64_t w_g = w.strides[0], w_ci = w.strides[1], w_co = w.strides[rank + 2];
    const std::vector<int64_t> w_k(w.strides.begin() + 2, w.strides.begin() + 2 + rank);

    const int dims = rank + 3;
    halide_dimension_t in_dims[6], w_dims[6], out_dims[6];
    auto dd = [&](int logical) { return data_dim(fmt, rank, logical); };
    auto fd = [&](int logical) { return filter_dim(p.channel_major, rank, logical); };
    set_channel_dims(geo, p.channel_major, in_nc, out_nc, {w_co, w_ci, w_g}, in_dims, w_dims, out_dims);

    const halide_type_t type = halide_type(p.dtype);

    if (geo.forward) {
        int32_t strides[3] = {1, 1, 1}, dilations[3] = {1, 1, 1};
        for (int i = 0; i < rank; i++) {
            const int h = rank - 1 - i;
            set_dim(in_dims[dd(h)], p.info.pads_begin[i], geo.in_spatial[i], in_nc[2 + i]);
            set_dim(w_dims[fd(h)], 0, geo.kernel[i], w_k[i]);
            set_dim(out_dims[dd(h)], 0, p.out_spatial[i], out_nc[2 + i]);
            strides[h] = (int32_t)p.info.strides[i];
            dilations[h] = (int32_t)p.info.dilations[i];
        }
        halide_buffer_t in_buf = device_view(backend, in.base, type, in_dims, dims);
        halide_buffer_t w_buf = device_view(backend, w.base, type, w_dims, dims);
        halide_buffer_t out_buf = device_view(backend, out.base, type, out_dims, dims);
        // GPU kernels store no epilogue (conv_stages.h): the identity's arguments.
        KernelEpilogueArgs e(nullptr, p.dtype, out_dims[dd(rank)], out_dims[dd(rank + 1)], 0, 0);
        const int rc = kernel.as<GroupConvKernelFn>()(strides[0], strides[1], strides[2], dilations[0], dilations[1],
                                                      dilations[2], &in_buf, &w_buf, &e.bias, e.alpha, e.hi,
                                                      &out_buf);
        if (rc != 0) fail_gpu(backend, std::string("kernel ") + kernel.name, rc);
    } else {
        std::vector<size_t> counts(rank);
        for (int i = 0; i < rank; i++) counts[i] = p.phases[i].size();
        for_each_combination(counts, [&](const std::vector<size_t> &ph) {
            int64_t out_off = 0, w_off = 0;
            int32_t steps[3] = {1, 1, 1};
            bool has_taps = true, empty = false;
            for (int i = 0; i < rank; i++) {
                const AxisPhase &a = p.phases[i][ph[i]];
                const int h = rank - 1 - i;
                const int64_t ys = out_nc[2 + i];
                out_off += a.out_first * ys;
                w_off += a.tap_first * w_k[i];
                set_dim(out_dims[dd(h)], 0, a.out_count, p.info.strides[i] * ys);
                set_dim(w_dims[fd(h)], 0, a.tap_count, a.tap_step * w_k[i]);
                set_dim(in_dims[dd(h)], -a.in_offset, geo.in_spatial[i], in_nc[2 + i]);
                steps[h] = (int32_t)a.in_step;
                has_taps = has_taps && a.tap_count > 0;
                empty = empty || a.out_count <= 0;
            }
            const int64_t out_bytes = out_off * (int64_t)elem;
            LaunchViews views(backend);
            if (empty) {
                // No output position in this phase combination.
            } else if (!has_taps) {
                // Zeros on the device: the phase's view, padded to the zero-fill kernel's six axes.
                halide_dimension_t z_dims[6];
                for (int h = 0; h < 6; h++) {
                    if (h < dims) z_dims[h] = out_dims[h];
                    else set_dim(z_dims[h], 0, 1, 0);
                }
                const GpuBackend::ZeroFillFn fill = backend.zero_fill_for(elem);
                if (!fill) no_element_kernel(backend, "zero fill", elem);
                halide_buffer_t z = device_view(backend, views.at(out.base, out_bytes),
                                                element_bits(elem), z_dims, 6);
                const int rc = fill(&z);
                if (rc != 0) fail_gpu(backend, "the zero fill of a phase without taps", rc);
            } else {
                halide_buffer_t in_buf = device_view(backend, in.base, type, in_dims, dims);
                halide_buffer_t w_buf = device_view(backend, views.at(w.base, w_off * (int64_t)elem), type, w_dims, dims);
                halide_buffer_t out_buf = device_view(backend, views.at(out.base, out_bytes), type, out_dims, dims);
                KernelEpilogueArgs e(nullptr, p.dtype, out_dims[dd(rank)], out_dims[dd(rank + 1)], 0, 0);
                const int rc = kernel.as<PhaseKernelFn>()(steps[0], steps[1], steps[2], &in_buf, &w_buf, &e.bias,
                                                          e.alpha, e.hi, &out_buf);
                if (rc != 0) fail_gpu(backend, std::string("kernel ") + kernel.name, rc);
            }
        });
    }

    if (out_on_host) {
        // Waits for the kernels (same stream) and copies the whole output back.
        out_dev.download("output");
        if (!out_stage.empty()) {
            copy_tensor(out_stage.data(), dense_strides(p.info.output_shape), (uint8_t *)output.data, out_st0,
                         p.info.output_shape, elem);
        }
    } else {
        // Device output: return when the GPU is done (and report its failures here).
        halide_buffer_t sync{};
        sync.device = out.base;
        sync.device_interface = iface;
        const int rc = halide_device_sync(nullptr, &sync);
        if (rc != 0) fail_gpu(backend, "waiting for the kernels", rc);
    }
}

}  // namespace detail
}  // namespace deconv
