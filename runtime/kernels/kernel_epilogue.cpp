#include "kernels/kernel_epilogue.h"

#include "kernels/half_conversion.h"
#include "kernels/kernel_call.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>

namespace deconv {
namespace detail {

namespace {

constexpr float kNoBound = std::numeric_limits<float>::infinity();

// Zeros that outlive every run: the identity's bias, `bytes` of them. Most calls fit the static
// block (no lock per kernel call); beyond it, blocks only grow, and the old ones stay, as a run on
// another thread may still read them.
alignas(64) const uint8_t kZeroBlock[64 << 10] = {};
const uint8_t *identity_bias_zeros(size_t bytes) {
    if (bytes <= sizeof kZeroBlock) return kZeroBlock;
    static std::mutex m;
    static std::vector<std::unique_ptr<uint8_t[]>> blocks;
    static size_t largest = 0;
    std::lock_guard<std::mutex> lock(m);
    if (bytes > largest) {
        largest = bytes;
        blocks.emplace_back(new uint8_t[largest]());
    }
    return blocks.back().get();
}

bool accumulates_f64(DType layer) { return layer == DType::f64; }

// The kernels' slot (generators/conv_stages.h, epilogue_store), in their operations' order.
template <typename T>
T store_post_op_slot(T v, const KernelEpilogue &e) {
    const T scaled = v * (T)e.alpha;
    v = scaled > v ? scaled : v;
    return (T)e.hi < v ? (T)e.hi : v;
}

// The bytes of the value stored where no tap reaches output channel c: the slot of the sum's
// first term, the bias, alone.
void tapless_value(const KernelEpilogue &e, DType dtype, int64_t c, uint8_t *out) {
    if (e.acc == DType::f64) {
        const double v = store_post_op_slot(((const double *)e.bias.data())[c], e);
        std::memcpy(out, &v, sizeof v);
        return;
    }
    const float v = store_post_op_slot(((const float *)e.bias.data())[c], e);
    if (dtype == DType::f32) {
        std::memcpy(out, &v, sizeof v);
    } else {  // f16, bf16: rounded once (integer layers have no epilogue in their kernels)
        uint16_t h;
        f32_row_to_half(dtype, &v, &h, 1, 1);
        std::memcpy(out, &h, sizeof h);
    }
}

}  // namespace

KernelEpilogueArgs::KernelEpilogueArgs(const KernelEpilogue *e, DType layer_dtype, const halide_dimension_t &co,
                                       const halide_dimension_t &g, int64_t co0, int64_t g0) {
    const bool f64 = accumulates_f64(layer_dtype);
    const size_t elem = f64 ? 8 : 4;
    bias.type = f64 ? halide_type_t(halide_type_float, 64) : halide_type_t(halide_type_float, 32);
    bias.dimensions = 2;
    bias.dim = dims;
    if (e) {
        set_dim(dims[0], co.min, co.extent, 1);
        set_dim(dims[1], g.min, g.extent, e->c_out);
        bias.host = const_cast<uint8_t *>(e->bias.data()) + (g0 * e->c_out + co0) * (int64_t)elem;
        alpha = e->alpha;
        hi = e->hi;
        return;
    }
    // Zeros: one row of the call's channels, the same for every group (kernels that vectorize
    // groups have one channel each and read the groups densely).
    set_dim(dims[0], co.min, co.extent, 1);
    set_dim(dims[1], g.min, g.extent, co.extent == 1 ? 1 : 0);
    bias.host = const_cast<uint8_t *>(identity_bias_zeros((size_t)(co.extent + g.extent) * elem));
    hi = kNoBound;
}

void fill_tapless_view(const KernelEpilogue *e, DType dtype, uint8_t *base, const halide_dimension_t *dims, int n,
                       int co_dim, int g_dim, int64_t co0, int64_t g0, int64_t copies, int64_t step) {
    const size_t elem = dtype_size(dtype);
    if (!e) return zero_fill_view(base, elem, dims, n, copies, step);
    std::vector<halide_dimension_t> d(dims, dims + n);
    halide_dimension_t c{};
    set_dim(c, 0, copies, step);
    d.push_back(c);
    for (const halide_dimension_t &x : d)
        if (x.extent <= 0) return;
    // The value of each channel of the view, [g][co].
    const int64_t cos = d[co_dim].extent, gs = d[g_dim].extent;
    std::vector<uint8_t> values((size_t)(cos * gs) * elem);
    for (int64_t g = 0; g < gs; g++)
        for (int64_t co = 0; co < cos; co++)
            tapless_value(*e, dtype, (g0 + g) * e->c_out + co0 + co, values.data() + (g * cos + co) * elem);
    // Every axis, outermost first; the innermost one's run in a typed loop.
    struct Walk {
        const std::vector<halide_dimension_t> &d;
        const std::vector<uint8_t> &values;
        size_t elem;
        int co_dim, g_dim;
        int64_t cos;
        void run(uint8_t *p, int axis, int64_t co, int64_t g) const {
            const halide_dimension_t &x = d[axis];
            const int64_t step = x.stride * (int64_t)elem;
            if (axis > 0) {
                for (int64_t i = 0; i < x.extent; i++)
                    run(p + i * step, axis - 1, axis == co_dim ? i : co, axis == g_dim ? i : g);
                return;
            }
            for (int64_t i = 0; i < x.extent; i++) {
                const int64_t vc = co_dim == 0 ? i : co, vg = g_dim == 0 ? i : g;
                std::memcpy(p + i * step, values.data() + (vg * cos + vc) * elem, elem);
            }
        }
    } walk{d, values, elem, co_dim, g_dim, cos};
    walk.run(base, (int)d.size() - 1, 0, 0);
}

}  // namespace detail
}  // namespace deconv
