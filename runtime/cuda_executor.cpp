// The CUDA executor: a validated plan run on the CUDA kernels, one launch per combination of
// stride phases (zero fills for phases without taps), on the caller's device memory or on device
// copies of host views.
#include "cuda_executor.h"

#include "../generators/schedules/tile_facts.h"
#include "checked_math.h"
#include "halide_glue.h"
#include "kernel_call.h"
#include "tensor_copy.h"

#include <climits>
#include <string>

#if defined(DECONV_HAVE_CUDA)
#include "HalideRuntimeCuda.h"
#include "deconv_cuda_zero_fill_u16.h"
#include "deconv_cuda_zero_fill_u32.h"
#include "deconv_cuda_zero_fill_u64.h"
#include "deconv_cuda_zero_fill_u8.h"
#endif

namespace deconv {
namespace detail {

KernelKey cuda_kernel_key(const OpGeometry &g, DType dtype) {
    KernelKey k;
    k.family = g.forward ? KernelFamily::GroupConv : KernelFamily::Phase;
    k.rank = g.rank;
    k.dtype = dtype;
    k.device = Device::CUDA;
    k.layout = g.data_format;
    k.channels = g.data_format == DataFormat::NXC;
    return k;
}

std::string cuda_grid_problem(const OpGeometry &g, const std::vector<int64_t> &out_spatial) {
    const bool nxc = g.data_format == DataFormat::NXC;
    const size_t d = out_spatial.size();
    const int64_t width = out_spatial.back();
    const int64_t a = nxc ? g.c_out : width, b = nxc ? width : g.c_out;
    const int64_t q1 = d >= 2 ? out_spatial[d - 2] : 1, q2 = d >= 3 ? out_spatial[d - 3] : 1;
    const auto blocks = [](int64_t n, int64_t per) { return (n + per - 1) / per; };
    const int64_t per_x = tiles::gpu_threads_x(), per_y = tiles::gpu_threads_y() * tiles::gpu_tile();
    const auto axis_name = [&](bool thread_axis) {
        return std::string(nxc == thread_axis ? "output channels per group " : "innermost output extent ");
    };
    if (blocks(a, per_x) * q1 > INT32_MAX) {
        return axis_name(true) + std::to_string(a) + (d >= 2 ? " times the next output extent " + std::to_string(q1) : "") +
               " exceeds the CUDA kernels' grid x (at most 2147483647 blocks of " + std::to_string(per_x) + ")";
    }
    if (blocks(b, per_y) * q2 > 65535) {
        return axis_name(false) + std::to_string(b) + (d >= 3 ? " times the outermost output extent " + std::to_string(q2) : "") +
               " exceeds the CUDA kernels' grid y (at most 65535 blocks of " + std::to_string(per_y) + ")";
    }
    if (g.groups * g.n > 65535) {
        return "groups " + std::to_string(g.groups) + " times batch " + std::to_string(g.n) +
               " exceeds the CUDA kernels' grid z (at most 65535)";
    }
    return "";
}

#if defined(DECONV_HAVE_CUDA)
namespace {


using ZeroFillFn = int (*)(halide_buffer_t *);

ZeroFillFn zero_fill_kernel(size_t elem) {
    switch (elem) {
    case 1: return &deconv_cuda_zero_fill_u8;
    case 2: return &deconv_cuda_zero_fill_u16;
    case 4: return &deconv_cuda_zero_fill_u32;
    default: return &deconv_cuda_zero_fill_u64;
    }
}

[[noreturn]] void fail_cuda(const std::string &what, int rc) {
    std::string msg = take_halide_error();
    throw Error(ErrorKind::Kernel, what + " failed on CUDA (Halide error " + std::to_string(rc) + ")" +
                                       (msg.empty() ? "" : ": " + msg));
}

// A dense device copy of a host tensor (or a dense device buffer for the output), freed on scope
// exit, failures included.
struct DeviceBuffer {
    halide_buffer_t buf{};
    halide_dimension_t dims[8]{};
    bool allocated = false;

    DeviceBuffer() = default;
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
        const int rc = halide_copy_to_device(nullptr, &buf, halide_cuda_device_interface());
        allocated = buf.device != 0;
        if (rc != 0) fail_cuda(std::string("copying the ") + what + " to the GPU", rc);
    }
    void allocate(const char *what) {
        const int rc = halide_device_malloc(nullptr, &buf, halide_cuda_device_interface());
        allocated = buf.device != 0;
        if (rc != 0) fail_cuda(std::string("allocating the ") + what + " on the GPU", rc);
    }
    void download(const char *what) {
        buf.set_device_dirty(true);
        const int rc = halide_copy_to_host(nullptr, &buf);
        if (rc != 0) fail_cuda(std::string("copying the ") + what + " from the GPU", rc);
    }
};

bool is_dense(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides) {
    return strides == dense_strides(shape);
}

// A tensor as the CUDA kernels see it: a device address and element strides (spec order).
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

}  // namespace

void run_cuda(const Plan::Impl &p, const ConstTensorView &input, const ConstTensorView &filter,
              const TensorView &output, const std::vector<int64_t> &in_st0, const std::vector<int64_t> &w_st0,
              const std::vector<int64_t> &out_st0) {
    const size_t elem = dtype_size(p.dtype);
    const OpGeometry &geo = p.geo;
    const int rank = geo.rank;
    const DataFormat fmt = geo.data_format;
    const halide_device_interface_t *iface = halide_cuda_device_interface();

    // Device copies (host views) or the caller's device memory; freed on every exit.
    DeviceBuffer in_dev, w_dev, out_dev;
    std::vector<uint8_t> in_stage, w_stage, out_stage;
    const DeviceTensor in = to_device(input.data, input.memory, p.input_shape, in_st0, p.dtype, in_dev, in_stage, "data");
    const DeviceTensor w =
        to_device(filter.data, filter.memory, p.filter_shape, w_st0, p.dtype, w_dev, w_stage, "filter");
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

    // The filter through the caller's strides (no packing): canonical axes from FilterAxes.
    const FilterAxes &fa = geo.filter;
    const int64_t w_g = fa.g_stride(w.strides), w_ci = w.strides[fa.ci_axis], w_co = w.strides[fa.co_axis];
    std::vector<int64_t> w_k(rank);
    for (int i = 0; i < rank; i++) w_k[i] = w.strides[fa.k_axes[i]];

    const int dims = rank + 3;
    halide_dimension_t in_dims[6], w_dims[6], out_dims[6];
    auto dd = [&](int logical) { return data_dim(fmt, rank, logical); };
    auto fd = [&](int logical) { return filter_dim(p.channel_major, rank, logical); };
    set_channel_dims(geo, p.channel_major, in_nc, out_nc, {w_co, w_ci, w_g}, in_dims, w_dims, out_dims);

    // Views on device memory: `device` is the address of the view's first element.
    auto device_view = [&](halide_buffer_t &b, uint64_t address, halide_dimension_t *d, int n) {
        b = halide_buffer_t{};
        b.device = address;
        b.device_interface = iface;
        b.type = halide_type(p.dtype);
        b.dimensions = n;
        b.dim = d;
    };

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
        halide_buffer_t in_buf, w_buf, out_buf;
        device_view(in_buf, in.base, in_dims, dims);
        device_view(w_buf, w.base, w_dims, dims);
        device_view(out_buf, out.base, out_dims, dims);
        const int rc = p.kernel->as<GroupConvKernelFn>()(strides[0], strides[1], strides[2], dilations[0],
                                                                 dilations[1], dilations[2], &in_buf, &w_buf, &out_buf);
        if (rc != 0) fail_cuda(std::string("kernel ") + p.kernel->name, rc);
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
            const uint64_t out_base = out.base + (uint64_t)(out_off * (int64_t)elem);
            if (empty) {
                // No output position in this phase combination.
            } else if (!has_taps) {
                // Zeros on the device: the phase's view, padded to the zero-fill kernel's six axes.
                halide_dimension_t z_dims[6];
                for (int h = 0; h < 6; h++) {
                    if (h < dims) z_dims[h] = out_dims[h];
                    else set_dim(z_dims[h], 0, 1, 0);
                }
                halide_buffer_t z;
                device_view(z, out_base, z_dims, 6);
                z.type = halide_type_t(halide_type_uint, (uint8_t)(8 * elem));
                const int rc = zero_fill_kernel(elem)(&z);
                if (rc != 0) fail_cuda("the zero fill of a phase without taps", rc);
            } else {
                halide_buffer_t in_buf, w_buf, out_buf;
                device_view(in_buf, in.base, in_dims, dims);
                device_view(w_buf, w.base + (uint64_t)(w_off * (int64_t)elem), w_dims, dims);
                device_view(out_buf, out_base, out_dims, dims);
                const int rc = p.kernel->as<PhaseKernelFn>()(steps[0], steps[1], steps[2], &in_buf, &w_buf,
                                                                     &out_buf);
                if (rc != 0) fail_cuda(std::string("kernel ") + p.kernel->name, rc);
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
        if (rc != 0) fail_cuda("waiting for the kernels", rc);
    }
}

#endif  // DECONV_HAVE_CUDA

}  // namespace detail
}  // namespace deconv
