#include "kernels/kernel_call.h"

#include "kernels/halide_glue.h"
#include "kernels/tensor_copy.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace deconv {
namespace detail {

std::vector<int64_t> dense_strides(const std::vector<int64_t> &shape) {
    std::vector<int64_t> st(shape.size());
    int64_t s = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        st[i] = s;
        s *= shape[i];
    }
    return st;
}

std::vector<int64_t> ncx_to_nxc_order(const std::vector<int64_t> &v) {
    std::vector<int64_t> r = {v[0]};
    r.insert(r.end(), v.begin() + 2, v.end());
    r.push_back(v[1]);
    return r;
}

std::vector<int64_t> nxc_to_ncx_order(const std::vector<int64_t> &v) {
    std::vector<int64_t> r = {v[0], v.back()};
    r.insert(r.end(), v.begin() + 1, v.end() - 1);
    return r;
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

namespace {

// Zeros along axis 0 (the innermost) from `p`: one memset when the axis is dense, else a typed
// store per element.
void zero_row(uint8_t *p, size_t elem, int64_t n, int64_t stride) {
    if (stride == 1) {
        std::memset(p, 0, (size_t)n * elem);
        return;
    }
    const int64_t step = stride * (int64_t)elem;
    for (int64_t i = 0; i < n; i++, p += step) {
        switch (elem) {
        case 1: *p = 0; break;
        case 2: std::memset(p, 0, 2); break;
        case 4: std::memset(p, 0, 4); break;
        default: std::memset(p, 0, elem); break;
        }
    }
}

// Every axis from `axis` down to 0, outermost first, so that the writes walk memory forwards.
void zero_axes(uint8_t *p, size_t elem, const std::vector<int64_t> &extent, const std::vector<int64_t> &stride,
               size_t axis) {
    if (axis == 0) return zero_row(p, elem, extent[0], stride[0]);
    for (int64_t i = 0; i < extent[axis]; i++) zero_axes(p + i * stride[axis] * (int64_t)elem, elem, extent, stride, axis - 1);
}

struct ZeroFill {
    uint8_t *base;
    size_t elem;
    const std::vector<int64_t> *extent, *stride;
    size_t axis;          // the axis split into tasks
    int64_t per_task;     // its indices per task
};

int zero_fill_task(void *, int task, uint8_t *closure) {
    const ZeroFill &z = *reinterpret_cast<const ZeroFill *>(closure);
    const int64_t begin = task * z.per_task, end = std::min((*z.extent)[z.axis], begin + z.per_task);
    const int64_t step = (*z.stride)[z.axis] * (int64_t)z.elem;
    if (z.axis == 0) {
        zero_row(z.base + begin * step, z.elem, end - begin, (*z.stride)[0]);
    } else {
        for (int64_t i = begin; i < end; i++) zero_axes(z.base + i * step, z.elem, *z.extent, *z.stride, z.axis - 1);
    }
    return 0;
}

// Fills of this many bytes and more are split over the thread pool.
constexpr int64_t kParallelZeroBytes = int64_t(256) << 10;
constexpr int64_t kZeroTasks = 32;

}  // namespace

void zero_fill(uint8_t *base, size_t elem, const std::vector<int64_t> &extent_in,
               const std::vector<int64_t> &stride_in) {
    int64_t count = 1;
    for (int64_t e : extent_in) {
        if (e <= 0) return;
        count *= e;
    }
    // An interleaved call's phases (stride 1) and groups of s outputs (stride s) are one dense run.
    const WalkAxes w = merged_axes(extent_in, {&stride_in});
    const std::vector<int64_t> &extent = w.extent, &stride = w.stride[0];
    if (extent.empty()) {
        std::memset(base, 0, elem);
        return;
    }
    const size_t outer = extent.size() - 1;  // every merged axis has more than one index
    if (count * (int64_t)elem < kParallelZeroBytes) {
        zero_axes(base, elem, extent, stride, outer);
        return;
    }
    // The tasks split the outermost axis.
    ZeroFill z{base, elem, &extent, &stride, outer, (extent[outer] + kZeroTasks - 1) / kZeroTasks};
    const int tasks = (int)((extent[outer] + z.per_task - 1) / z.per_task);
    halide_do_par_for(nullptr, zero_fill_task, 0, tasks, reinterpret_cast<uint8_t *>(&z));
}

void zero_fill_view(uint8_t *base, size_t elem, const halide_dimension_t *dims, int n, int64_t copies, int64_t step) {
    std::vector<int64_t> ext, st;
    for (int h = 0; h < n; h++) {
        ext.push_back(dims[h].extent);
        st.push_back(dims[h].stride);
    }
    ext.push_back(copies);
    st.push_back(step);
    zero_fill(base, elem, ext, st);
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

// Halide dimension of a data tensor's logical axis (0..D-1: spatial, Halide order; D: channel;
// D+1: group; D+2: batch), per data format. Mirrors generators/data_layout.h.
int data_dim(DataFormat f, int rank, int logical) {
    if (f == DataFormat::NCX) return logical;
    if (logical < rank) return 2 + logical;
    if (logical == rank) return 0;
    if (logical == rank + 1) return 1;
    return rank + 2;
}

// Halide dimension of a filter's logical axis (0..D-1: taps; D: co; D+1: ci; D+2: g).
int filter_dim(bool channel_major, int rank, int logical) {
    if (!channel_major) return logical;
    if (logical < rank) return 3 + logical;
    return logical - rank;
}

void set_channel_dims(const OpGeometry &geo, bool channel_major, const std::vector<int64_t> &in_nc,
                      const std::vector<int64_t> &out_nc, ChannelStrides w, halide_dimension_t *in_dims,
                      halide_dimension_t *w_dims, halide_dimension_t *out_dims) {
    const int rank = geo.rank;
    auto dd = [&](int logical) { return data_dim(geo.data_format, rank, logical); };
    auto fd = [&](int logical) { return filter_dim(channel_major, rank, logical); };
    set_dim(in_dims[dd(rank)], 0, geo.c_in, in_nc[1]);
    set_dim(in_dims[dd(rank + 1)], 0, geo.groups, geo.c_in * in_nc[1]);
    set_dim(in_dims[dd(rank + 2)], 0, geo.n, in_nc[0]);
    set_dim(w_dims[fd(rank)], 0, geo.c_out, w.co);
    set_dim(w_dims[fd(rank + 1)], 0, geo.c_in, w.ci);
    set_dim(w_dims[fd(rank + 2)], 0, geo.groups, w.g);
    set_dim(out_dims[dd(rank)], 0, geo.c_out, out_nc[1]);
    set_dim(out_dims[dd(rank + 1)], 0, geo.groups, geo.c_out * out_nc[1]);
    set_dim(out_dims[dd(rank + 2)], 0, geo.n, out_nc[0]);
}

// The filter of the interleaved kernel, from the position kernels' packing: logical

void fail_kernel(const KernelEntry *kernel, int rc) {
    std::string msg = take_halide_error();
    throw Error(ErrorKind::Kernel, std::string("kernel ") + kernel->name + " failed (Halide error " +
                                       std::to_string(rc) + ")" + (msg.empty() ? "" : ": " + msg));
}

}  // namespace detail
}  // namespace deconv
