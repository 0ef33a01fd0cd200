#include "cpu/epilogue_pass.h"

#include "kernels/half_conversion.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace deconv {
namespace detail {

namespace {

constexpr int64_t kEpilogueChunk = 256;
// Below this many elements a pass runs on the calling thread (a task's hand-off costs more).
constexpr int64_t kParallelElements = 1 << 15;

// Rows of a walk: every axis but the innermost, whose elements a row holds.
struct Rows {
    std::vector<int64_t> shape;
    std::vector<const std::vector<int64_t> *> strides;  // per tensor
    int64_t count = 1, length = 1;
};

Rows rows_of(const std::vector<int64_t> &shape, std::vector<const std::vector<int64_t> *> strides) {
    Rows r;
    r.shape = shape;
    r.strides = std::move(strides);
    r.length = shape.empty() ? 1 : shape.back();
    for (size_t i = 0; i + 1 < shape.size(); i++) r.count *= shape[i];
    return r;
}

// Offsets (elements) of row `row` in each tensor, and its index on axis `axis` (-1: none).
void row_offsets(const Rows &r, int64_t row, int64_t *off, int axis, int64_t *axis_index) {
    for (size_t t = 0; t < r.strides.size(); t++) off[t] = 0;
    if (axis_index) *axis_index = 0;
    for (int a = (int)r.shape.size() - 2; a >= 0; a--) {
        const int64_t i = row % r.shape[a];
        row /= r.shape[a];
        for (size_t t = 0; t < r.strides.size(); t++) off[t] += i * (*r.strides[t])[a];
        if (a == axis && axis_index) *axis_index = i;
    }
}

template <typename Fn>
void parallel_rows(const Rows &r, Fn fn) {
    struct Closure {
        const Rows *r;
        Fn *fn;
        int64_t per_task;
    };
    const int64_t total = r.count * r.length;
    if (total < kParallelElements || r.count < 2) {
        fn(int64_t(0), r.count);
        return;
    }
    const int64_t tasks = std::min<int64_t>(r.count, 64);
    Closure c{&r, &fn, (r.count + tasks - 1) / tasks};
    auto task = [](void *, int t, uint8_t *closure) -> int {
        const Closure &c = *reinterpret_cast<const Closure *>(closure);
        const int64_t begin = t * c.per_task, end = std::min(c.r->count, begin + c.per_task);
        if (begin < end) (*c.fn)(begin, end);
        return 0;
    };
    halide_do_par_for(nullptr, task, 0, (int)((r.count + c.per_task - 1) / c.per_task), reinterpret_cast<uint8_t *>(&c));
}

template <typename T>
T eltwise(Eltwise alg, T v, T a, T b) {
    switch (alg) {
    case Eltwise::relu: return v > 0 ? v : a * v;
    case Eltwise::clip: return std::min(std::max(v, a), b);
    case Eltwise::linear: return a * v + b;
    case Eltwise::bounded_relu: return std::min(std::max(v, T(0)), a);
    case Eltwise::tanh: return std::tanh(v);
    case Eltwise::logistic: return T(1) / (T(1) + std::exp(-v));
    case Eltwise::abs: return std::abs(v);
    case Eltwise::square: return v * v;
    case Eltwise::elu: return v > 0 ? v : a * std::expm1(v);
    case Eltwise::swish: return v / (T(1) + std::exp(-a * v));
    case Eltwise::gelu_tanh: {
        const T k = T(0.7978845608028654);  // sqrt(2 / pi)
        return T(0.5) * v * (T(1) + std::tanh(k * (v + T(0.044715) * v * v * v)));
    }
    case Eltwise::gelu_erf: return T(0.5) * v * (T(1) + std::erf(v * T(0.7071067811865476)));
    case Eltwise::hardswish: return v * std::min(std::max(v + T(3), T(0)), T(6)) / T(6);
    }
    return v;
}

// One chunk's stage loops, kept separate so each vectorizes.
template <typename T>
void apply_eltwise(Eltwise alg, T *v, int64_t n, T a, T b) {
    switch (alg) {
    case Eltwise::relu:
        for (int64_t i = 0; i < n; i++) v[i] = v[i] > 0 ? v[i] : a * v[i];
        return;
    case Eltwise::clip:
        for (int64_t i = 0; i < n; i++) v[i] = std::min(std::max(v[i], a), b);
        return;
    case Eltwise::linear:
        for (int64_t i = 0; i < n; i++) v[i] = a * v[i] + b;
        return;
    case Eltwise::bounded_relu:
        for (int64_t i = 0; i < n; i++) v[i] = std::min(std::max(v[i], T(0)), a);
        return;
    default:
        for (int64_t i = 0; i < n; i++) v[i] = eltwise(alg, v[i], a, b);
    }
}

template <typename T>
void load(DType t, const uint8_t *base, int64_t stride, int64_t n, T *v) {
    switch (t) {
    case DType::f32:
        for (int64_t i = 0; i < n; i++) v[i] = (T)((const float *)base)[i * stride];
        return;
    case DType::f64:
        for (int64_t i = 0; i < n; i++) v[i] = (T)((const double *)base)[i * stride];
        return;
    case DType::i32:
        // Converted to the compute type (f32: exact below 2^24 in magnitude, rounded to nearest
        // even above, as oneDNN's f32 arithmetic does).
        for (int64_t i = 0; i < n; i++) v[i] = (T)((const int32_t *)base)[i * stride];
        return;
    case DType::u8:
        for (int64_t i = 0; i < n; i++) v[i] = (T)base[i * stride];
        return;
    case DType::i8:
        for (int64_t i = 0; i < n; i++) v[i] = (T)((const int8_t *)base)[i * stride];
        return;
    case DType::f16:
    case DType::bf16: {
        float f[kEpilogueChunk];
        half_row_to_f32(t, (const uint16_t *)base, stride, f, n);
        for (int64_t i = 0; i < n; i++) v[i] = (T)f[i];
        return;
    }
    }
}

template <typename I, typename T>
void store_integer(T *v, int64_t n, int32_t zero_point, uint8_t *base, int64_t stride) {
    const double lo = (double)std::numeric_limits<I>::min(), hi = (double)std::numeric_limits<I>::max();
    I *d = (I *)base;
    for (int64_t i = 0; i < n; i++) {
        // Round half to even (the default rounding mode), then saturate; a NaN stores 0.
        const double r = (double)std::nearbyint(v[i] + (T)zero_point);
        d[i * stride] = r != r ? I(0) : (I)std::min(std::max(r, lo), hi);
    }
}

template <typename T>
void store(DType t, T *v, int64_t n, int32_t zero_point, uint8_t *base, int64_t stride) {
    switch (t) {
    case DType::u8: store_integer<uint8_t>(v, n, zero_point, base, stride); return;
    case DType::i8: store_integer<int8_t>(v, n, zero_point, base, stride); return;
    case DType::i32: store_integer<int32_t>(v, n, zero_point, base, stride); return;
    case DType::f32:
        for (int64_t i = 0; i < n; i++) ((float *)base)[i * stride] = (float)v[i];
        return;
    case DType::f64:
        for (int64_t i = 0; i < n; i++) ((double *)base)[i * stride] = (double)v[i];
        return;
    case DType::f16:
    case DType::bf16: {
        float f[kEpilogueChunk];
        for (int64_t i = 0; i < n; i++) f[i] = (float)v[i];
        f32_row_to_half(t, f, (uint16_t *)base, stride, n);
        return;
    }
    }
}

// The epilogue in compute type T (double for f64 layers, float otherwise).
template <typename T>
void run_epilogue(const EpilogueValues &ev, DType acc_t, const uint8_t *acc, const std::vector<int64_t> &acc_st,
                  uint8_t *dst, const std::vector<int64_t> &dst_st, const std::vector<int64_t> &shape, int c_axis) {
    const Epilogue &e = *ev.epilogue;
    const Rows r = rows_of(shape, {&acc_st, &dst_st});
    const int inner = (int)shape.size() - 1;
    const bool channel_inner = c_axis == inner;
    const size_t acc_elem = dtype_size(acc_t), dst_elem = dtype_size(ev.types.dst);
    const int64_t acc_step = acc_st[inner], dst_step = dst_st[inner];
    // Per-channel values, converted once per run.
    const int64_t channels = shape[c_axis];
    std::vector<T> bias, scale;
    if (ev.bias) {
        bias.resize(channels);
        for (int64_t c = 0; c < channels; c += kEpilogueChunk) {
            load<T>(*e.bias, (const uint8_t *)ev.bias + c * dtype_size(*e.bias), 1,
                    std::min<int64_t>(kEpilogueChunk, channels - c), bias.data() + c);
        }
    }
    if (ev.scales) {
        scale.resize(channels);
        for (int64_t c = 0; c < channels; c++) scale[c] = (T)ev.scales[ev.scale_count == 1 ? 0 : c];
    }
    parallel_rows(r, [&](int64_t begin, int64_t end) {
        T v[kEpilogueChunk], old[kEpilogueChunk];
        for (int64_t row = begin; row < end; row++) {
            int64_t off[2], c_row = 0;
            row_offsets(r, row, off, channel_inner ? -1 : c_axis, &c_row);
            for (int64_t x0 = 0; x0 < r.length; x0 += kEpilogueChunk) {
                const int64_t n = std::min<int64_t>(kEpilogueChunk, r.length - x0);
                const uint8_t *a = acc + (off[0] + x0 * acc_step) * (int64_t)acc_elem;
                uint8_t *d = dst + (off[1] + x0 * dst_step) * (int64_t)dst_elem;
                load<T>(acc_t, a, acc_step, n, v);
                if (channel_inner) {
                    if (!bias.empty()) {
                        for (int64_t i = 0; i < n; i++) v[i] += bias[x0 + i];
                    }
                    if (!scale.empty()) {
                        for (int64_t i = 0; i < n; i++) v[i] *= scale[x0 + i];
                    }
                } else {
                    if (!bias.empty()) {
                        const T b = bias[c_row];
                        for (int64_t i = 0; i < n; i++) v[i] += b;
                    }
                    if (!scale.empty()) {
                        const T s = scale[c_row];
                        for (int64_t i = 0; i < n; i++) v[i] *= s;
                    }
                }
                for (const PostOp &op : e.post_ops) {
                    if (op.kind == PostOp::Kind::sum) {
                        load<T>(ev.types.dst, d, dst_step, n, old);
                        const T s = (T)op.scale, z = (T)op.zero_point;
                        for (int64_t i = 0; i < n; i++) v[i] += s * (old[i] - z);
                    } else {
                        apply_eltwise<T>(op.alg, v, n, (T)op.alpha, (T)op.beta);
                    }
                }
                store<T>(ev.types.dst, v, n, e.dst_zero_point, d, dst_step);
            }
        }
    });
}

}  // namespace

void apply_epilogue(const EpilogueValues &v, DType acc_t, const void *acc, const std::vector<int64_t> &acc_st,
                    void *dst, const std::vector<int64_t> &dst_st, const std::vector<int64_t> &shape, int c_axis) {
    if (acc_t == DType::f64 || v.types.dst == DType::f64) {
        run_epilogue<double>(v, acc_t, (const uint8_t *)acc, acc_st, (uint8_t *)dst, dst_st, shape, c_axis);
    } else {
        run_epilogue<float>(v, acc_t, (const uint8_t *)acc, acc_st, (uint8_t *)dst, dst_st, shape, c_axis);
    }
}

void quantized_to_dense(DType from, int32_t zero_point, const void *src, const std::vector<int64_t> &src_st,
                        const std::vector<int64_t> &shape, DType to, void *dst) {
    std::vector<int64_t> dense(shape.size(), 1);
    for (int a = (int)shape.size() - 2; a >= 0; a--) dense[a] = dense[a + 1] * shape[a + 1];
    const Rows r = rows_of(shape, {&src_st, &dense});
    const int inner = (int)shape.size() - 1;
    const int64_t step = src_st[inner];
    parallel_rows(r, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; row++) {
            int64_t off[2];
            row_offsets(r, row, off, -1, nullptr);
            const int64_t n = r.length;
            int32_t vals[kEpilogueChunk];
            for (int64_t x0 = 0; x0 < n; x0 += kEpilogueChunk) {
                const int64_t m = std::min<int64_t>(kEpilogueChunk, n - x0);
                if (from == DType::u8) {
                    const uint8_t *s = (const uint8_t *)src + off[0] + x0 * step;
                    for (int64_t i = 0; i < m; i++) vals[i] = (int32_t)s[i * step] - zero_point;
                } else {
                    const int8_t *s = (const int8_t *)src + off[0] + x0 * step;
                    for (int64_t i = 0; i < m; i++) vals[i] = (int32_t)s[i * step] - zero_point;
                }
                if (to == DType::f32) {
                    float *d = (float *)dst + off[1] + x0;
                    for (int64_t i = 0; i < m; i++) d[i] = (float)vals[i];
                } else if (to == DType::f64) {
                    double *d = (double *)dst + off[1] + x0;
                    for (int64_t i = 0; i < m; i++) d[i] = (double)vals[i];
                } else {
                    std::memcpy((int32_t *)dst + off[1] + x0, vals, (size_t)m * 4);
                }
            }
        }
    });
}

int64_t max_output_channel_weight_sum(const int8_t *w, const std::vector<int64_t> &shape, bool grouped, int co_axis) {
    const int64_t groups = grouped ? shape[0] : 1;
    const int first = grouped ? 1 : 0;  // the two channel axes are shape[first], shape[first + 1]
    const int64_t a = shape[first], b = shape[first + 1];
    int64_t taps = 1;
    for (size_t i = first + 2; i < shape.size(); i++) taps *= shape[i];
    const bool co_first = co_axis == first;
    const int64_t c_out = co_first ? a : b;
    std::vector<int64_t> sums((size_t)(groups * c_out), 0);
    for (int64_t g = 0; g < groups; g++)
        for (int64_t i = 0; i < a; i++)
            for (int64_t j = 0; j < b; j++) {
                const int8_t *p = w + ((g * a + i) * b + j) * taps;
                int64_t s = 0;
                for (int64_t k = 0; k < taps; k++) s += std::abs((int)p[k]);
                sums[(size_t)(g * c_out + (co_first ? i : j))] += s;
            }
    int64_t best = 0;
    for (int64_t s : sums) best = std::max(best, s);
    return best;
}

}  // namespace detail
}  // namespace deconv
