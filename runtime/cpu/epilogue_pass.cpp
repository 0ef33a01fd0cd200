#include "cpu/epilogue_pass.h"

#include "cpu/fused_epilogue.h"
#include "cpu/quantize_rows.h"
#include "cpu/vector_math.h"

#include "kernels/half_conversion.h"
#include "kernels/kernel_call.h"
#include "kernels/tensor_copy.h"
#include "kernels/x86_features.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>

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

#define DECONV_INLINE inline __attribute__((always_inline))

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

// The eltwise ops through exp and tanh on f32 chunks, on the vectorizable exp_small and tanh_f32
// (cpu/vector_math.h); false for the others (erf's gelu keeps the C library's erf), which run
// on the C library's functions.
DECONV_INLINE bool apply_exp_eltwise(Eltwise alg, float *v, int64_t n, float a) {
    switch (alg) {
    case Eltwise::tanh:
        for (int64_t i = 0; i < n; i++) v[i] = tanh_f32(v[i]);
        return true;
    case Eltwise::gelu_tanh: {
        const float k = 0.7978845608028654f;  // sqrt(2 / pi)
        for (int64_t i = 0; i < n; i++) {
            const float x = v[i];
            v[i] = 0.5f * x * (1.f + tanh_f32(k * (x + 0.044715f * x * x * x)));
        }
        return true;
    }
    case Eltwise::elu:
        // (e^x - 1 is exact where e^x is within a factor of 2 of 1; below -80, -a.)
        for (int64_t i = 0; i < n; i++) {
            const float x = v[i], m = a * (exp_small(x) - 1.f);
            v[i] = x > 0 ? x : (x != x ? x : m);
        }
        return true;
    case Eltwise::logistic:
    case Eltwise::swish: {
        // logistic(x) = 1 / (1 + e^t), swish(x) = x / (1 + e^t), t = -x or -a x. Past t = 80,
        // where 1 + e^-t is 1 in f32, the value is top * e^-t, computed as (top * e^(70 - t)) *
        // e^-70 so that it rounds once where it is subnormal; past 150 it is 0 (a chunk of such
        // values ran on the C library's exp: 1000 channels' sums are that large, and their
        // layers gained nothing).
        const float k = alg == Eltwise::swish ? -a : -1.f;
        const float e70 = 3.975449735908647e-31f;  // e^-70
        const bool swish = alg == Eltwise::swish;
        for (int64_t i = 0; i < n; i++) {
            const float x = v[i], t = k * x, top = swish ? x : 1.f;
            const float in = top / (1.f + exp_small(t));
            const float out = t > 150.f ? top * 0.f : (top * exp_small(70.f - t)) * e70;
            const float r = t > 80.f ? out : in;
            v[i] = t != t ? t : r;
        }
        return true;
    }
    default: return false;
    }
}

// One chunk's stage loops, kept separate so each vectorizes.
template <typename T>
DECONV_INLINE void apply_eltwise(Eltwise alg, T *v, int64_t n, T a, T b) {
    switch (alg) {
    // (Each select computes both sides first: GCC keeps a multiply behind a condition scalar,
    // as it might trap, and the pass then ran at a third of memory speed.)
    case Eltwise::relu:
        for (int64_t i = 0; i < n; i++) {
            const T m = a * v[i];
            v[i] = v[i] > 0 ? v[i] : m;
        }
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
        if constexpr (std::is_same<T, float>::value) {
            if (apply_exp_eltwise(alg, v, n, a)) return;
        }
        for (int64_t i = 0; i < n; i++) v[i] = eltwise(alg, v[i], a, b);
    }
}

template <typename T>
DECONV_INLINE void load(DType t, const uint8_t *base, int64_t stride, int64_t n, T *v) {
    if (stride == 1 && t == DType::f32) {  // the common case, kept apart so that it vectorizes
        const float *f = (const float *)base;
        for (int64_t i = 0; i < n; i++) v[i] = (T)f[i];
        return;
    }
    if (stride == 1 && t == DType::i32) {
        const int32_t *q = (const int32_t *)base;
        for (int64_t i = 0; i < n; i++) v[i] = (T)q[i];
        return;
    }
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

// Round half to even: adding and subtracting 2^23 (2^52 for double) with the value's sign rounds
// in the default mode; larger magnitudes are integers already. (std::nearbyint is a library call
// per element: 7% of a quantized run.)
template <typename T>
DECONV_INLINE T round_half_even(T v) {
    const T big = sizeof(T) == 4 ? T(8388608.0) : T(4503599627370496.0);
    const T c = std::copysign(big, v);
    const T r = (v + c) - c;
    return std::abs(v) < big ? r : v;
}

template <typename I, typename T>
DECONV_INLINE void store_integer(T *v, int64_t n, int32_t zero_point, uint8_t *base, int64_t stride) {
    // Saturate in the compute type where its range holds I's (u8, i8), else in double; a NaN
    // stores 0.
    using C = typename std::conditional<(sizeof(I) < 4), T, double>::type;
    const C lo = (C)std::numeric_limits<I>::min(), hi = (C)std::numeric_limits<I>::max();
    I *d = (I *)base;
    for (int64_t i = 0; i < n; i++) {
        const C r = (C)round_half_even<T>(v[i] + (T)zero_point);
        const C clamped = std::min(std::max(r, lo), hi);
        d[i * stride] = r != r ? I(0) : (I)clamped;
    }
}

template <typename T>
DECONV_INLINE void store(DType t, T *v, int64_t n, int32_t zero_point, uint8_t *base, int64_t stride) {
    if (stride == 1 && t == DType::f32) {
        float *f = (float *)base;
        for (int64_t i = 0; i < n; i++) f[i] = (float)v[i];
        return;
    }
    if (stride == 1 && t == DType::u8) return store_integer<uint8_t>(v, n, zero_point, base, 1);
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

// One run's epilogue in compute type T (double for f64 layers, float otherwise).
template <typename T>
struct EpilogueRun {
    const Epilogue *e;
    DataTypes types;
    DType acc_t;
    const uint8_t *acc;
    uint8_t *dst;
    Rows rows;
    bool channel_inner;
    int c_axis;
    size_t acc_elem, dst_elem;
    int64_t acc_step, dst_step;
    std::vector<T> bias, scale;  // per channel, converted once per run
    // Quantized rows (quantize_rows): the post-op slot, and whether the run takes them.
    bool quantize = false;
    float alpha = 1, hi = 0;
    int64_t period = 0;  // channels-last rows: values per repetition of `bias` and `scale`
    int vector_bits = 256;
};

// Quantized rows (cpu/quantize_rows.h): the channels-last ones in periods of their repeated
// per-channel values.
void quantize_rows(const EpilogueRun<float> &r, int64_t begin, int64_t end) {
    QuantizeRow q;
    q.per_value = r.channel_inner;
    q.alpha = r.alpha;
    q.hi = r.hi;
    q.zero_point = (float)r.e->dst_zero_point;
    const size_t acc_size = dtype_size(r.acc_t), dst_size = dtype_size(r.types.dst);
    for (int64_t row = begin; row < end; row++) {
        int64_t off[2], c_row = 0;
        row_offsets(r.rows, row, off, r.channel_inner ? -1 : r.c_axis, &c_row);
        const uint8_t *a = r.acc + off[0] * (int64_t)acc_size;
        uint8_t *d = r.dst + off[1] * (int64_t)dst_size;
        if (!r.channel_inner) {
            q.bias = &r.bias[c_row];
            q.scale = &r.scale[c_row];
            quantize_row(r.acc_t, a, r.types.dst, d, r.rows.length, q, r.vector_bits);
            continue;
        }
        q.bias = r.bias.data();
        q.scale = r.scale.data();
        for (int64_t x = 0; x < r.rows.length; x += r.period) {
            quantize_row(r.acc_t, a + x * (int64_t)acc_size, r.types.dst, d + x * (int64_t)dst_size,
                         std::min(r.period, r.rows.length - x), q, r.vector_bits);
        }
    }
}

template <typename T>
DECONV_INLINE void epilogue_rows(const EpilogueRun<T> &r, int64_t begin, int64_t end) {
    if constexpr (std::is_same<T, float>::value) {
        if (r.quantize) return quantize_rows(r, begin, end);
    }
    const Epilogue &e = *r.e;
    T v[kEpilogueChunk], old[kEpilogueChunk];
    for (int64_t row = begin; row < end; row++) {
        int64_t off[2], c_row = 0;
        row_offsets(r.rows, row, off, r.channel_inner ? -1 : r.c_axis, &c_row);
        for (int64_t x0 = 0; x0 < r.rows.length; x0 += kEpilogueChunk) {
            const int64_t n = std::min<int64_t>(kEpilogueChunk, r.rows.length - x0);
            const uint8_t *a = r.acc + (off[0] + x0 * r.acc_step) * (int64_t)r.acc_elem;
            uint8_t *d = r.dst + (off[1] + x0 * r.dst_step) * (int64_t)r.dst_elem;
            load<T>(r.acc_t, a, r.acc_step, n, v);
            if (r.channel_inner) {
                if (!r.bias.empty()) {
                    for (int64_t i = 0; i < n; i++) v[i] += r.bias[x0 + i];
                }
                if (!r.scale.empty()) {
                    for (int64_t i = 0; i < n; i++) v[i] *= r.scale[x0 + i];
                }
            } else {
                if (!r.bias.empty()) {
                    const T b = r.bias[c_row];
                    for (int64_t i = 0; i < n; i++) v[i] += b;
                }
                if (!r.scale.empty()) {
                    const T sc = r.scale[c_row];
                    for (int64_t i = 0; i < n; i++) v[i] *= sc;
                }
            }
            for (const PostOp &op : e.post_ops) {
                if (op.kind == PostOp::Kind::sum) {
                    load<T>(r.types.dst, d, r.dst_step, n, old);
                    const T sc = (T)op.scale, z = (T)op.zero_point;
                    for (int64_t i = 0; i < n; i++) v[i] += sc * (old[i] - z);
                } else {
                    apply_eltwise<T>(op.alg, v, n, (T)op.alpha, (T)op.beta);
                }
            }
            store<T>(r.types.dst, v, n, e.dst_zero_point, d, r.dst_step);
        }
    }
}

// The same loops compiled for AVX2 and FMA, where the CPU has them (the library's baseline is
// SSE2): the stages vectorize 8 wide.
#if defined(__x86_64__) && !defined(__clang__)
__attribute__((target("avx2,fma"))) void epilogue_rows_avx2(const EpilogueRun<float> &r, int64_t b, int64_t e) {
    epilogue_rows<float>(r, b, e);
}
__attribute__((target("avx2,fma"))) void epilogue_rows_avx2(const EpilogueRun<double> &r, int64_t b, int64_t e) {
    epilogue_rows<double>(r, b, e);
}
// And 16 wide where the run's CPU variant is avx512 (EpilogueValues::vector_bits).
#define DECONV_AVX512 target("avx512f,avx512bw,avx512dq,avx512vl,fma,prefer-vector-width=512")
__attribute__((DECONV_AVX512)) void epilogue_rows_avx512(const EpilogueRun<float> &r, int64_t b, int64_t e) {
    epilogue_rows<float>(r, b, e);
}
__attribute__((DECONV_AVX512)) void epilogue_rows_avx512(const EpilogueRun<double> &r, int64_t b, int64_t e) {
    epilogue_rows<double>(r, b, e);
}
#endif

template <typename T>
void epilogue_rows_best(const EpilogueRun<T> &r, int64_t begin, int64_t end) {
#if defined(__x86_64__) && !defined(__clang__)
    if (r.vector_bits >= 512 && cpu_has_avx512()) return epilogue_rows_avx512(r, begin, end);
    if (cpu_has_avx2_fma()) return epilogue_rows_avx2(r, begin, end);
#endif
    epilogue_rows<T>(r, begin, end);
}

// Rows of the walk: the output's axes with each pair of adjacent axes merged where both tensors
// lay them out as one (the spatial axes of a dense channels-first output: a row per plane), the
// channel axis kept apart (its index picks the bias and scale).
Rows merged_rows(const std::vector<int64_t> &shape, const std::vector<int64_t> &acc_st,
                 const std::vector<int64_t> &dst_st, int c_axis, int &merged_c_axis,
                 std::vector<int64_t> &m_shape, std::vector<int64_t> &m_acc, std::vector<int64_t> &m_dst) {
    m_shape = {shape[0]};
    m_acc = {acc_st[0]};
    m_dst = {dst_st[0]};
    merged_c_axis = c_axis == 0 ? 0 : -1;
    for (size_t a = 1; a < shape.size(); a++) {
        const bool channel = (int)a == c_axis, prev_channel = (int)m_shape.size() - 1 == merged_c_axis;
        if (!channel && !prev_channel && m_acc.back() == acc_st[a] * shape[a] && m_dst.back() == dst_st[a] * shape[a]) {
            m_shape.back() *= shape[a];
            m_acc.back() = acc_st[a];
            m_dst.back() = dst_st[a];
            continue;
        }
        if (channel) merged_c_axis = (int)m_shape.size();
        m_shape.push_back(shape[a]);
        m_acc.push_back(acc_st[a]);
        m_dst.push_back(dst_st[a]);
    }
    return rows_of(m_shape, {&m_acc, &m_dst});
}

template <typename T>
void run_epilogue(const EpilogueValues &ev, DType acc_t, const uint8_t *acc, const std::vector<int64_t> &acc_st,
                  uint8_t *dst, const std::vector<int64_t> &dst_st, const std::vector<int64_t> &shape, int c_axis,
                  bool parallel) {
    const Epilogue &e = *ev.epilogue;
    std::vector<int64_t> m_shape, m_acc, m_dst;
    int m_c = -1;
    EpilogueRun<T> r{&e, ev.types, acc_t, acc, dst, merged_rows(shape, acc_st, dst_st, c_axis, m_c, m_shape, m_acc, m_dst),
                     false, 0, dtype_size(acc_t), dtype_size(ev.types.dst), 0, 0, {}, {}};
    int inner = (int)m_shape.size() - 1;
    const int64_t channels = shape[c_axis];
    const bool dense_positions = m_c == inner && inner >= 1 && m_acc[inner] == 1 && m_dst[inner] == 1 &&
                                 m_acc[inner - 1] == m_shape[inner] && m_dst[inner - 1] == m_shape[inner];
    r.quantize = sizeof(T) == 4 && (ev.types.dst == DType::u8 || ev.types.dst == DType::i8) &&
                 (acc_t == DType::f32 || acc_t == DType::i32) && m_acc[inner] == 1 && m_dst[inner] == 1 &&
                 fold_store_post_ops(e.post_ops, r.alpha, r.hi);
    int64_t repeat = 1;
    if (r.quantize && dense_positions) {
        // Quantized channels-last values: the positions' channels as one row, walked in periods of
        // whole 64-byte vectors (lcm(C, 64) values) with the per-channel values repeated over one
        // period (rows of C values each left a scalar remainder: fcn8s_upscore8_nxc as u8, 21
        // channels, 3.4 -> 1.4 ms).
        // (And at least 1024 values a period: a call per period.)
        const int64_t c = m_shape[inner];
        repeat = 64 / std::gcd<int64_t>(c, 64);
        while (c * repeat < 1024) repeat *= 2;
        if (c * repeat > 16384) repeat = 1;
        m_shape[inner] *= m_shape[inner - 1];
        for (std::vector<int64_t> *v : {&m_shape, &m_acc, &m_dst}) v->erase(v->end() - 2);
        m_acc.back() = m_dst.back() = 1;
        inner--;
        m_c = inner;
        r.rows = rows_of(m_shape, {&m_acc, &m_dst});
    } else if (dense_positions && m_shape[inner] * 4 <= kEpilogueChunk) {
        // Channels-last rows of few channels, positions dense: a row of k positions' channels, the
        // per-channel values repeated k times (rows of 3 channels ran at a quarter of the speed).
        const int64_t c = m_shape[inner], positions = m_shape[inner - 1];
        for (int64_t k = kEpilogueChunk / c; k > 1; k--) {
            if (positions % k == 0) {
                repeat = k;
                break;
            }
        }
        if (repeat > 1) {
            m_shape[inner - 1] = positions / repeat;
            m_acc[inner - 1] *= repeat;
            m_dst[inner - 1] *= repeat;
            m_shape[inner] = c * repeat;
            r.rows = rows_of(m_shape, {&m_acc, &m_dst});
        }
    }
    r.channel_inner = m_c == inner;
    r.c_axis = m_c;
    r.acc_step = m_acc[inner];
    r.dst_step = m_dst[inner];
    r.period = r.channel_inner ? channels * repeat : r.rows.length;
    r.vector_bits = ev.vector_bits;
    if (ev.bias) {
        r.bias.resize(channels);
        channel_values(*e.bias, ev.bias, channels, sizeof(T) == 8 ? DType::f64 : DType::f32, r.bias.data());
    }
    if (ev.scales) {
        r.scale.resize(channels);
        for (int64_t c = 0; c < channels; c++) r.scale[c] = (T)ev.scales[ev.scale_count == 1 ? 0 : c];
    }
    if (r.quantize) {
        // Every channel's bias and scale, the identities where the layer has none (exact: x + 0
        // and x * 1 are x for the integers it stores).
        r.bias.resize(channels, T(0));
        r.scale.resize(channels, T(1));
    }
    for (std::vector<T> *values : {&r.bias, &r.scale}) {
        const size_t c = values->size();
        for (int64_t k = 1; k < repeat && c; k++) values->insert(values->end(), values->begin(), values->begin() + c);
    }
    if (!parallel) return epilogue_rows_best<T>(r, 0, r.rows.count);
    parallel_rows(r.rows, [&](int64_t begin, int64_t end) { epilogue_rows_best<T>(r, begin, end); });
}

template <typename T>
void channel_values_as(DType from, const void *src, int64_t count, T *dst) {
    for (int64_t c = 0; c < count; c += kEpilogueChunk) {
        load<T>(from, (const uint8_t *)src + c * dtype_size(from), 1, std::min<int64_t>(kEpilogueChunk, count - c),
                dst + c);
    }
}

}  // namespace

void channel_values(DType from, const void *src, int64_t count, DType to, void *dst) {
    if (to == DType::f64) channel_values_as(from, src, count, (double *)dst);
    else channel_values_as(from, src, count, (float *)dst);
}

void apply_epilogue(const EpilogueValues &v, DType acc_t, const void *acc, const std::vector<int64_t> &acc_st,
                    void *dst, const std::vector<int64_t> &dst_st, const std::vector<int64_t> &shape, int c_axis,
                    bool parallel) {
    // f64 layers in double; every other, quantized ones on the f64 plan included, in f32 (the
    // accumulator rounded to f32 once, as the semantics say).
    if (v.types.dst == DType::f64) {
        run_epilogue<double>(v, acc_t, (const uint8_t *)acc, acc_st, (uint8_t *)dst, dst_st, shape, c_axis, parallel);
    } else {
        run_epilogue<float>(v, acc_t, (const uint8_t *)acc, acc_st, (uint8_t *)dst, dst_st, shape, c_axis, parallel);
    }
}

void quantized_to_dense(DType from, int32_t zero_point, const void *src, const std::vector<int64_t> &src_st,
                        const std::vector<int64_t> &shape, DType to, void *dst) {
    const std::vector<int64_t> dense = dense_strides(shape);
    // Axes laid out alike in both merge (a dense input is one row), and a long row splits into
    // rows the threads share: row by row, each of an NXC layer's positions cost an index walk
    // for its few channels (ov_spec_2d_nxc as u8, 20 channels: 17% of the run).
    const WalkAxes w = merged_axes(shape, {&dense, &src_st});
    std::vector<int64_t> m_shape = {1}, m_src = {1}, m_dst = {1};
    if (!w.extent.empty()) {
        m_shape.clear();
        m_src.clear();
        m_dst.clear();
        for (size_t a = w.extent.size(); a-- > 0;) {
            m_shape.push_back(w.extent[a]);
            m_dst.push_back(w.stride[0][a]);
            m_src.push_back(w.stride[1][a]);
        }
    }
    if (m_shape.size() == 1) {
        const int64_t n = m_shape[0];
        for (int64_t c = std::min<int64_t>(n / 2, 16384); c >= 1024; c--) {
            if (n % c) continue;
            m_shape = {n / c, c};
            m_src = {m_src[0] * c, m_src[0]};
            m_dst = {c, 1};
            break;
        }
    }
    const Rows r = rows_of(m_shape, {&m_src, &m_dst});
    const int64_t step = m_src.back();
    parallel_rows(r, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; row++) {
            int64_t off[2];
            row_offsets(r, row, off, -1, nullptr);
            const int64_t n = r.length;
            // Dense rows to f32 in one vectorized loop (through the chunk buffer, the conversion
            // took a quarter of dcgan_l5's u8 run: 64 images of 64 x 32 x 32).
            if (step == 1 && to == DType::f32) {
                float *d = (float *)dst + off[1];
                if (from == DType::u8) {
                    const uint8_t *s = (const uint8_t *)src + off[0];
                    for (int64_t i = 0; i < n; i++) d[i] = (float)((int32_t)s[i] - zero_point);
                } else {
                    const int8_t *s = (const int8_t *)src + off[0];
                    for (int64_t i = 0; i < n; i++) d[i] = (float)((int32_t)s[i] - zero_point);
                }
                continue;
            }
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

namespace {

template <typename T>
int64_t max_channel_weight_sum(const T *w, const std::vector<int64_t> &shape, bool grouped, int co_axis) {
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
                const T *p = w + ((g * a + i) * b + j) * taps;
                int64_t s = 0;
                for (int64_t k = 0; k < taps; k++) s += std::abs((int)p[k]);
                sums[(size_t)(g * c_out + (co_first ? i : j))] += s;
            }
    int64_t best = 0;
    for (int64_t s : sums) best = std::max(best, s);
    return best;
}

}  // namespace

int64_t max_output_channel_weight_sum(DType t, const void *w, const std::vector<int64_t> &shape, bool grouped,
                                      int co_axis) {
    if (t == DType::u8) return max_channel_weight_sum((const uint8_t *)w, shape, grouped, co_axis);
    return max_channel_weight_sum((const int8_t *)w, shape, grouped, co_axis);
}

}  // namespace detail
}  // namespace deconv
