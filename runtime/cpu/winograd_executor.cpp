#include "cpu/winograd_executor.h"

#include "kernels/buffer_pool.h"
#include "layer/checked_math.h"
#include "kernels/kernel_call.h"
#include "kernels/kernel_epilogue.h"
#include "layer/messages.h"
#include "kernels/tensor_copy.h"
#include "plan/thresholds.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace deconv {
namespace detail {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Taps per phase along spec axis i (0 when no phase has taps); -1 when the phases differ.
int64_t axis_taps(const std::vector<AxisPhase> &axis) {
    int64_t r = 0;
    for (const AxisPhase &a : axis) {
        if (a.tap_count == 0) continue;
        if (r != 0 && a.tap_count != r) return -1;
        r = a.tap_count;
    }
    return r;
}

// Taps per phase axis of a layer that winograd_unsupported accepts (the same on every axis).
int layer_taps(const Plan::Impl &p) {
    int64_t r = 0;
    for (const auto &axis : p.phases) r = std::max(r, axis_taps(axis));
    return (int)r;
}

// Phases per spec axis: the odometer's counts (for_each_combination), in the executors' order.
std::vector<size_t> phase_counts(const Plan::Impl &p) {
    std::vector<size_t> counts;
    for (const auto &axis : p.phases) counts.push_back(axis.size());
    return counts;
}

KernelKey transform_key(KernelFamily family, int rank, int m, int r) {
    KernelKey k;
    k.family = family;
    k.rank = rank;
    k.dtype = DType::f32;
    k.layout = DataFormat::NXC;
    k.channels = true;
    k.tile = m;
    k.taps = r;
    return k;
}

// The matrix products: the 1D channels-last interior f32 kernel, whose row is every tile of the
// slice (the tile axes and the images are contiguous in the transformed tiles): full register
// tiles on rows of any length. (On the 2D kernel, rows of 16 tiles ran on its four-position
// tiles: centernet_up3 spent 19 ms of 28 there.)
KernelKey products_key() {
    KernelKey k;
    k.family = KernelFamily::Phase;
    k.rank = 1;
    k.dtype = DType::f32;
    k.layout = DataFormat::NXC;
    k.channels = true;
    k.bounded = false;
    return k;
}

// Tiles per spec axis: enough for the phase with the most outputs (its sub-phases have fewer).
std::vector<int64_t> most_tiles(const Plan::Impl &p, int m) {
    std::vector<int64_t> t;
    for (const auto &axis : p.phases) {
        int64_t most = 0;
        for (const AxisPhase &a : axis) most = std::max(most, ceil_div(a.out_count, m));
        t.push_back(most);
    }
    return t;
}

// One residue class of a phase's outputs along an axis whose taps read every in_step-th input
// (dilation not a multiple of the stride): outputs q = in_step * u + rho of the phase read inputs
// in_step * (u - j) + rho + in_offset, a dense correlation over u on the inputs of one residue
// modulo in_step. `phase` is that correlation (its out_first, out_count and in_offset in u),
// over the inputs in_first + in_step * x' (x' < in_extent). in_step 1: the phase itself.
struct SubPhase {
    AxisPhase phase;
    int64_t out_step = 1;  // output positions per u
    int64_t in_first = 0, in_step = 1, in_extent = 0;
};

SubPhase sub_phase(const AxisPhase &a, int64_t rho, int64_t stride, int64_t in_size) {
    SubPhase s;
    const int64_t d = std::max<int64_t>(1, a.in_step);
    s.phase = a;
    s.phase.in_step = 1;
    s.phase.out_first = a.out_first + rho * stride;
    s.phase.out_count = a.out_count > rho ? ceil_div(a.out_count - rho, d) : 0;
    s.out_step = stride * d;
    const int64_t e = rho + a.in_offset, e_r = floor_mod(e, d);
    s.phase.in_offset = floor_div(e, d);
    s.in_first = e_r;
    s.in_step = d;
    s.in_extent = in_size > e_r ? ceil_div(in_size - e_r, d) : 0;
    return s;
}

// Tiles of tile size m along one axis of a phase, summed over its sub-phases (0 without taps).
int64_t sub_phase_tiles(const AxisPhase &a, int m) {
    int64_t sum = 0;
    for (int64_t rho = 0; rho < std::max<int64_t>(1, a.in_step) && a.tap_count > 0; rho++)
        sum += ceil_div(sub_phase(a, rho, 1, 1).phase.out_count, m);
    return sum;
}

// Tiles per spec axis of a batch (run_batch: every sub-phase of one phase), the most of any
// phase with taps: its sub-phases' tiles summed over the axis's residues. The sub-phases of a
// phase are every combination of the axes' residues, so a batch holds at most the product of
// these. Without dilation, the phase's own tiles.
std::vector<int64_t> batch_tiles(const Plan::Impl &p, int m) {
    std::vector<int64_t> t;
    for (const auto &axis : p.phases) {
        int64_t most = 0;
        for (const AxisPhase &a : axis) most = std::max(most, sub_phase_tiles(a, m));
        t.push_back(most);
    }
    return t;
}

// The most residues of any phase along each spec axis: sub-phases per phase and axis.
std::vector<int64_t> axis_residues(const Plan::Impl &p) {
    std::vector<int64_t> r;
    for (const auto &axis : p.phases) {
        int64_t most = 1;
        for (const AxisPhase &a : axis) most = std::max(most, a.in_step);
        r.push_back(most);
    }
    return r;
}

// The dense [c, xi_0 .. xi_{D-1}, g, T_0 .. T_{D-1}, n] buffer of transformed tiles (c: input
// channels) or products (c: output channels) of `images` images, `tiles[h]` tiles per axis.
void transformed_dims(halide_dimension_t *d, int64_t channels, int alpha, int64_t groups,
                      const std::vector<int64_t> &tiles, int64_t images) {
    const int rank = (int)tiles.size();
    int64_t stride = channels;
    set_dim(d[0], 0, channels, 1);
    for (int h = 0; h < rank; h++, stride *= alpha) set_dim(d[1 + h], 0, alpha, stride);
    set_dim(d[1 + rank], 0, groups, stride);
    stride *= groups;
    for (int h = 0; h < rank; h++) {
        set_dim(d[2 + rank + h], 0, tiles[h], stride);
        stride *= tiles[h];
    }
    set_dim(d[2 + 2 * rank], 0, images, stride);
}

int64_t power(int64_t b, int e) {
    int64_t v = 1;
    for (int i = 0; i < e; i++) v *= b;
    return v;
}

}  // namespace

std::string winograd_unsupported(const Plan::Impl &p, int m) {
    const OpGeometry &g = p.geo;
    if (g.forward) return "the forward op (GroupConvolution) has no Winograd path";
    if (p.device != Device::CPU) return "the Winograd path runs on the CPU only";
    if (p.dtype != DType::f32 && p.dtype != DType::f16 && p.dtype != DType::bf16) {
        return std::string("dtype ") + dtype_name(p.dtype) + " (the Winograd path computes in f32: f32, f16 and bf16)";
    }
    if (g.rank > 2) return std::to_string(g.rank) + "D layers (the Winograd kernels are 1D and 2D)";
    int64_t r = 0;
    for (int i = 0; i < g.rank; i++) {
        const std::string axis = "axis " + std::to_string(i);
        const int64_t t = axis_taps(p.phases[i]);
        if (t < 0) {
            return axis + ": kernel " + std::to_string(g.kernel[i]) + " at stride " + std::to_string(p.info.strides[i]) +
                   " gives phases of different tap counts (the kernel a multiple of the stride gives equal ones)";
        }
        if (t == 0) continue;
        if (r != 0 && t != r) {
            return "phases of " + std::to_string(r) + " and " + std::to_string(t) +
                   " taps on different axes (F(m, r) with one r on every axis)";
        }
        r = t;
    }
    if (r == 0) return "no phase has taps";
    if (r == 1) return "phases of one tap (kernel = stride): plain matrix products, which Winograd cannot shorten";
    if (!winograd::find_algorithm(m, (int)r)) {
        return "phases of " + std::to_string(r) + " taps with tiles of " + std::to_string(m) +
               " (built: F(2, 2), F(4, 2), F(2, 3), F(4, 3))";
    }
    if (!find_kernel(transform_key(KernelFamily::WinogradInput, g.rank, m, (int)r), p.variant) ||
        !find_kernel(transform_key(KernelFamily::WinogradOutput, g.rank, m, (int)r), p.variant) ||
        !find_kernel(products_key(), p.variant)) {
        return "this build has no Winograd kernels F(" + std::to_string(m) + ", " + std::to_string(r) + ") of rank " +
               std::to_string(g.rank) + " (they need f32 in DECONV_DTYPES and rank 1 in DECONV_RANKS, on the CPU)";
    }
    // One image's tiles must be addressable by the kernels' 32-bit strides.
    const int64_t alpha = m + r - 1;
    int64_t per_image = checked_mul(checked_mul(g.groups, power(alpha, g.rank), "Winograd tiles"),
                                    std::max(g.c_in, g.c_out), "Winograd tiles");
    for (int64_t t : batch_tiles(p, m)) per_image = checked_mul(per_image, t, "Winograd tiles");
    if (per_image > INT32_MAX) {
        return "one image's transformed tiles (" + std::to_string(per_image) + " elements) exceed the kernels' 32-bit strides";
    }
    return "";
}

int64_t winograd_macs(const Plan::Impl &p, int m) {
    const OpGeometry &g = p.geo;
    const int64_t alpha = m + layer_taps(p) - 1;
    int64_t macs = g.n * g.groups * g.c_in * g.c_out;
    int64_t tiles = 0;
    for_each_combination(phase_counts(p), [&](const std::vector<size_t> &ph) {
        int64_t t = 1;
        for (size_t i = 0; i < ph.size(); i++) {
            const AxisPhase &a = p.phases[i][ph[i]];
            t *= sub_phase_tiles(a, m) * alpha;
        }
        tiles += t;
    });
    return macs * tiles;
}

int64_t winograd_phase_tiles(const Plan::Impl &p, int m) {
    int64_t tiles = p.geo.n;
    for (int64_t t : most_tiles(p, m)) tiles *= t;
    return tiles;
}

void set_winograd(Plan::Impl &p, int m) {
    const int r = layer_taps(p);
    p.winograd.f = winograd::find_algorithm(m, r);
    p.winograd.input = find_kernel(transform_key(KernelFamily::WinogradInput, p.geo.rank, m, r), p.variant);
    p.winograd.output = find_kernel(transform_key(KernelFamily::WinogradOutput, p.geo.rank, m, r), p.variant);
    p.winograd.products = find_kernel(products_key(), p.variant);
}

FilterPacking pack_winograd_filter(const void *src, const std::vector<int64_t> &st, const Plan::Impl &p) {
    const OpGeometry &geo = p.geo;
    const winograd::Algorithm &f = *p.winograd.f;
    const int rank = geo.rank, alpha = f.alpha(), r = f.r;
    const int64_t xis = power(alpha, rank), taps = power(r, rank);
    const int64_t ci_n = geo.c_in, co_n = geo.c_out;
    const std::vector<size_t> counts = phase_counts(p);
    int64_t phases = 1;
    for (size_t c : counts) phases *= (int64_t)c;
    FilterPacking w;
    w.co = 1;
    w.ci = co_n;
    w.g = ci_n * co_n;  // per transformed group (xi.., g)
    w.data.assign((size_t)(phases * geo.groups * xis * ci_n * co_n) * sizeof(float), 0);
    float *out = (float *)w.data.data();

    const FilterAxes &fa = geo.filter;
    const int64_t src_g = fa.g_stride(st), src_ci = st[fa.ci_axis], src_co = st[fa.co_axis];
    const float *in = (const float *)src;
    // The coefficient of tap t (digits j_i, spec order, last fastest) in transformed group
    // xi_flat = sum_h xi_h alpha^h (h: Halide axis, spec axis rank - 1 - h): the product over the
    // axes of G[xi_h][r - 1 - j], the correlation's g[j'] being tap j = r - 1 - j'. The same for
    // every phase.
    std::vector<float> coef((size_t)(xis * taps));
    for (int64_t x = 0; x < xis; x++) {
        for (int64_t t = 0; t < taps; t++) {
            double c = 1;
            int64_t trem = t;
            for (int i = rank; i-- > 0;) {
                const int64_t j = trem % r;
                trem /= r;
                c *= f.g[(x / power(alpha, rank - 1 - i)) % alpha][r - 1 - j];
            }
            coef[(size_t)(x * taps + t)] = (float)c;
        }
    }
    std::vector<float> block((size_t)(taps * co_n));
    std::vector<int64_t> tap_off((size_t)taps);
    int64_t phase = 0;
    for_each_combination(counts, [&](const std::vector<size_t> &ph) {
        bool empty = false;
        for (int i = 0; i < rank; i++) empty = empty || p.phases[i][ph[i]].tap_count == 0;
        if (empty) {  // only zeros: the executor fills its outputs
            phase++;
            return;
        }
        // Tap t of this phase is kernel tap tap_first + j * tap_step of each axis.
        for (int64_t t = 0; t < taps; t++) {
            int64_t rem = t, off = 0;
            for (int i = rank; i-- > 0;) {
                const int64_t j = rem % r;
                rem /= r;
                const AxisPhase &a = p.phases[i][ph[i]];
                off += (a.tap_first + j * a.tap_step) * st[fa.k_axes[i]];
            }
            tap_off[(size_t)t] = off;
        }
        for (int64_t g = 0; g < geo.groups; g++) {
            for (int64_t ci = 0; ci < ci_n; ci++) {
                const float *base = in + g * src_g + ci * src_ci;
                for (int64_t t = 0; t < taps; t++)
                    for (int64_t co = 0; co < co_n; co++)
                        block[(size_t)(t * co_n + co)] = base[tap_off[(size_t)t] + co * src_co];
                for (int64_t x = 0; x < xis; x++) {
                    float *dst = out + (((phase * geo.groups + g) * xis + x) * ci_n + ci) * co_n;
                    for (int64_t t = 0; t < taps; t++) {
                        const float c = coef[(size_t)(x * taps + t)];
                        if (c == 0) continue;
                        const float *row = block.data() + t * co_n;
                        for (int64_t co = 0; co < co_n; co++) dst[co] += c * row[co];
                    }
                }
            }
        }
        phase++;
    });
    return w;
}

namespace {

// One run's data as the kernels see it: channels-last, channels dense, strides in NCX order
// (batch, channel, spatial), and the slice's scratch.
struct WinogradRun {
    const Plan::Impl &p;
    const FilterPacking &packed;
    const uint8_t *in_data;
    uint8_t *out_data;
    std::vector<int64_t> in_nc, out_nc;
    uint8_t *tiles, *products;
};

// One sub-phase of a batch (`a`, Halide axis order, already cut to the slice's rows) of images
// [n0, n0 + nn): its outputs as the kernels see them ([co, g, q.., n]), its tiles per axis, and
// its first tile in the slice's buffers of transformed tiles and products.
struct SubPhaseCall {
    std::vector<SubPhase> a;
    halide_dimension_t out_dims[5];
    uint8_t *out_base;
    std::vector<int64_t> tiles;
    int64_t first_tile = 0, tile_count = 0;
    bool empty = false;  // no taps, or no input read: zeros
};

SubPhaseCall sub_phase_call(const WinogradRun &run, std::vector<SubPhase> a, int64_t n0, int64_t nn) {
    const Plan::Impl &p = run.p;
    const int rank = p.geo.rank;
    const int64_t elem = sizeof(float), G = p.geo.groups, Co = p.geo.c_out;
    const std::vector<int64_t> &out_nc = run.out_nc;
    SubPhaseCall c;
    c.out_base = run.out_data + n0 * out_nc[0] * elem;
    halide_dimension_t *od = c.out_dims;
    set_dim(od[0], 0, Co, out_nc[1]);
    set_dim(od[1], 0, G, Co * out_nc[1]);
    c.tile_count = nn;
    for (int h = 0; h < rank; h++) {
        const int i = rank - 1 - h;
        c.out_base += a[h].phase.out_first * out_nc[2 + i] * elem;
        set_dim(od[2 + h], 0, a[h].phase.out_count, a[h].out_step * out_nc[2 + i]);
        c.empty = c.empty || a[h].phase.tap_count == 0 || a[h].in_extent <= 0;
        c.tiles.push_back(ceil_div(a[h].phase.out_count, p.winograd.f->m));
        c.tile_count *= c.tiles.back();
    }
    set_dim(od[2 + rank], 0, nn, out_nc[0]);
    c.a = std::move(a);
    return c;
}

// Input [ci, g, x.., n] (the sub-phase's inputs, origin moved by in_offset) -> its tiles
// [ci, xi.., g, T.., n] in the slice's buffer.
void transform_input(const WinogradRun &run, const SubPhaseCall &c, int64_t n0, int64_t nn) {
    const Plan::Impl &p = run.p;
    const int rank = p.geo.rank, alpha = p.winograd.f->alpha();
    const int64_t elem = sizeof(float), G = p.geo.groups, Ci = p.geo.c_in;
    const std::vector<int64_t> &in_nc = run.in_nc;
    halide_dimension_t id[5], td[7];
    const uint8_t *in_base = run.in_data + n0 * in_nc[0] * elem;
    set_dim(id[0], 0, Ci, 1);
    set_dim(id[1], 0, G, Ci);
    for (int h = 0; h < rank; h++) {
        const int i = rank - 1 - h;
        in_base += c.a[h].in_first * in_nc[2 + i] * elem;
        set_dim(id[2 + h], -c.a[h].phase.in_offset, c.a[h].in_extent, c.a[h].in_step * in_nc[2 + i]);
    }
    set_dim(id[2 + rank], 0, nn, in_nc[0]);
    transformed_dims(td, Ci, alpha, G, c.tiles, nn);
    halide_buffer_t in_b{}, tiles_b{};
    uint8_t *tiles = run.tiles + c.first_tile * power(alpha, rank) * G * Ci * elem;
    KernelBuffers::view(in_b, DType::f32, rank + 3, (uint8_t *)in_base, id);
    KernelBuffers::view(tiles_b, DType::f32, 2 * rank + 3, tiles, td);
    const int rc = p.winograd.input->as<WinogradKernelFn>()(&in_b, &tiles_b);
    if (rc != 0) fail_kernel(p.winograd.input, rc);
}

// Products [co, xi.., g, T.., n] of the sub-phase -> its outputs.
void transform_output(const WinogradRun &run, const SubPhaseCall &c, int64_t nn) {
    const Plan::Impl &p = run.p;
    const int rank = p.geo.rank, alpha = p.winograd.f->alpha();
    const int64_t elem = sizeof(float), G = p.geo.groups, Co = p.geo.c_out;
    halide_dimension_t md[7], od[5];
    transformed_dims(md, Co, alpha, G, c.tiles, nn);
    std::copy(c.out_dims, c.out_dims + rank + 3, od);
    halide_buffer_t prod_b{}, out_b{};
    uint8_t *products = run.products + c.first_tile * power(alpha, rank) * G * Co * elem;
    KernelBuffers::view(prod_b, DType::f32, 2 * rank + 3, products, md);
    KernelBuffers::view(out_b, DType::f32, rank + 3, c.out_base, od);
    const int rc = p.winograd.output->as<WinogradKernelFn>()(&prod_b, &out_b);
    if (rc != 0) fail_kernel(p.winograd.output, rc);
}

// Tiles [ci, (xi.., g), (T.., n)] x filter [co, ci, (xi.., g), 1] -> products
// [co, (xi.., g), (T.., n)] of stride phase `phase` on the 1D interior phase kernel (one tap),
// every tile of the batch one row: the sub-phases of a phase share its weights.
void multiply_tiles(const WinogradRun &run, int64_t phase, int64_t positions) {
    const Plan::Impl &p = run.p;
    const int rank = p.geo.rank;
    const int64_t elem = sizeof(float), Ci = p.geo.c_in, Co = p.geo.c_out;
    halide_dimension_t pi[4], pw[4], po[4];
    const int64_t groups = power(p.winograd.f->alpha(), rank) * p.geo.groups;
    set_dim(pi[0], 0, Ci, 1);
    set_dim(pi[1], 0, groups, Ci);
    set_dim(pi[2], 0, positions, groups * Ci);
    set_dim(pi[3], 0, 1, positions * groups * Ci);
    set_dim(pw[0], 0, Co, 1);
    set_dim(pw[1], 0, Ci, Co);
    set_dim(pw[2], 0, groups, Ci * Co);
    set_dim(pw[3], 0, 1, groups * Ci * Co);
    set_dim(po[0], 0, Co, 1);
    set_dim(po[1], 0, groups, Co);
    set_dim(po[2], 0, positions, groups * Co);
    set_dim(po[3], 0, 1, positions * groups * Co);
    const uint8_t *w = run.packed.data.data() + phase * groups * Ci * Co * elem;
    KernelBuffers b(DType::f32, 4, run.tiles, w, run.products, pi, pw, po);
    // The products are transformed sums: no epilogue (this implementation leaves it to the pass).
    KernelEpilogueArgs e(nullptr, DType::f32, po[0], po[1], 0, 0);
    const int rc = p.winograd.products->as<PhaseKernelFn>()(1, 1, 1, &b.in, &b.w, &e.bias, e.alpha, e.hi, &b.out);
    if (rc != 0) fail_kernel(p.winograd.products, rc);
}

// The sub-phases of one stride phase, as one batch: their input transforms, one products call
// over all their tiles (they share the phase's weights), their output transforms. A dilated
// layer's products were a call per sub-phase, each a quarter of the tiles at dilation 2 (64 ->
// 64 channels, 56x56, kernel 3, F(4, 3), 2 threads: 49 tiles a call): batched, 1.03-1.24x on
// eight dilated layers. The transforms keep their own parallel loops: as tasks of one sub-phase
// each, the products read tiles that the other core had written (0.75-1.12x).
void run_batch(const WinogradRun &run, const std::vector<SubPhaseCall> &batch, int64_t phase, int64_t n0, int64_t nn) {
    int64_t positions = 0;
    for (const SubPhaseCall &c : batch) {
        if (c.empty) {
            zero_fill_view(c.out_base, sizeof(float), c.out_dims, run.p.geo.rank + 3);
        } else {
            transform_input(run, c, n0, nn);
            positions += c.tile_count;
        }
    }
    if (positions == 0) return;
    multiply_tiles(run, phase, positions);
    for (const SubPhaseCall &c : batch)
        if (!c.empty) transform_output(run, c, nn);
}

}  // namespace

void run_winograd(const Plan::Impl &p, const ConstTensorView &input, const std::vector<int64_t> &in_st,
                  const TensorView &output, const std::vector<int64_t> &out_st, const FilterPacking &packed) {
    const OpGeometry &geo = p.geo;
    const int rank = geo.rank, m = p.winograd.f->m;
    const int64_t xis = power(p.winograd.f->alpha(), rank), elem = sizeof(float);
    const int64_t G = geo.groups, Ci = geo.c_in, Co = geo.c_out;

    // The transforms read and write channels at unit stride: other views go through dense copies.
    const uint8_t *in_data = (const uint8_t *)input.data;
    std::vector<int64_t> ist = in_st, ost = out_st;
    std::optional<BufferPool::Lease> in_copy, out_dense;
    auto count = [](const std::vector<int64_t> &shape) {
        int64_t c = 1;
        for (int64_t v : shape) c = checked_mul(c, v, "element count");
        return c;
    };
    if (ist.back() != 1) {
        in_copy.emplace(p.bordered_pool.take((size_t)(count(p.input_shape) * elem)));
        ist = dense_strides(p.input_shape);
        copy_tensor(in_data, in_st, in_copy->data(), ist, p.input_shape, elem);
        in_data = in_copy->data();
    }
    uint8_t *out_data = (uint8_t *)output.data;
    if (ost.back() != 1) {
        out_dense.emplace(p.output_pool.take((size_t)(count(p.info.output_shape) * elem)));
        ost = dense_strides(p.info.output_shape);
        out_data = out_dense->data();
    }

    // Slices: `slice` images at a time, or one image's rows of tiles `rows` at a time (rows of
    // each sub-phase: a batch of `residues[0]` sub-phases along the outermost axis holds as many
    // times more).
    const std::vector<int64_t> most = most_tiles(p, m), sums = batch_tiles(p, m), residues = axis_residues(p);
    int64_t row_tiles = 1;  // a batch's tiles per row of tiles of the outermost axis
    for (int i = 1; i < rank; i++) row_tiles *= sums[i];
    const int64_t row_bytes = G * xis * row_tiles * (Ci + Co) * elem;
    const int64_t image_bytes = row_bytes * sums[0];
    // Slices of images or of rows of tiles whose transformed tiles and products stay in cache
    // (Threshold::WinogradSliceKib, policy winograd_slice_kib): centernet_up3 24-26 ms at 4-8 MiB,
    // 40-65 at 0.5-2 MiB.
    const int64_t slice_bytes = (p.policy.winograd_slice_kib > 0 ? p.policy.winograd_slice_kib
                                                                  : threshold(p, Threshold::WinogradSliceKib))
                                << 10;
    int64_t slice = 1, rows = most[0];
    if (image_bytes <= slice_bytes) {
        slice = std::min<int64_t>(geo.n, slice_bytes / std::max<int64_t>(1, image_bytes));
    } else {
        rows = std::max<int64_t>(1, slice_bytes / (row_bytes * residues[0]));
    }
    const int64_t buffer_tiles = slice * std::min(rows * residues[0], sums[0]) * row_tiles;
    BufferPool::Lease tiles = p.slab_pool.take((size_t)(buffer_tiles * G * xis * Ci * elem));
    BufferPool::Lease products = p.slab_pool.take((size_t)(buffer_tiles * G * xis * Co * elem));
    const WinogradRun run{p,         packed, in_data, out_data, to_ncx(ist, DataFormat::NXC), to_ncx(ost, DataFormat::NXC),
                          tiles.data(), products.data()};

    const std::vector<size_t> counts = phase_counts(p);
    for (int64_t n0 = 0; n0 < geo.n; n0 += slice) {
        const int64_t nn = std::min(slice, geo.n - n0);
        for (int64_t r0 = 0; r0 < most[0]; r0 += rows) {
            int64_t phase = 0;
            for_each_combination(counts, [&](const std::vector<size_t> &ph) {
                const int64_t this_phase = phase++;
                // Halide order: axis h is spec axis rank - 1 - h. A phase whose taps read every
                // in_step-th input runs as in_step sub-phases per axis (SubPhase).
                std::vector<size_t> rhos(rank);
                for (int i = 0; i < rank; i++)
                    rhos[rank - 1 - i] = (size_t)std::max<int64_t>(1, p.phases[i][ph[i]].in_step);
                std::vector<SubPhaseCall> batch;
                int64_t next_tile = 0;
                for_each_combination(rhos, [&](const std::vector<size_t> &rho) {
                    std::vector<SubPhase> a(rank);
                    for (int h = 0; h < rank; h++) {
                        const int i = rank - 1 - h;
                        a[h] = sub_phase(p.phases[i][ph[i]], (int64_t)rho[h], p.info.strides[i], geo.in_spatial[i]);
                    }
                    // The slice's rows of tiles of the outermost axis: outputs [r0 * m, (r0 + rows) * m)
                    // of the sub-phase, read from the input moved by as many.
                    AxisPhase &outer = a[rank - 1].phase;
                    const int64_t first = r0 * m;
                    outer.out_count = std::min(outer.out_count - first, rows * m);
                    outer.out_first += first * a[rank - 1].out_step;
                    outer.in_offset += first;
                    for (const SubPhase &x : a)
                        if (x.phase.out_count <= 0) return;
                    SubPhaseCall c = sub_phase_call(run, std::move(a), n0, nn);
                    if (!c.empty) {
                        c.first_tile = next_tile;
                        next_tile += c.tile_count;
                    }
                    batch.push_back(std::move(c));
                });
                if (next_tile > buffer_tiles) {
                    throw Error(ErrorKind::Kernel, "internal: a Winograd batch of " + std::to_string(next_tile) +
                                                       " tiles past its buffer's " + std::to_string(buffer_tiles));
                }
                run_batch(run, batch, this_phase, n0, nn);
            });
        }
    }
    if (out_dense) copy_tensor(out_dense->data(), ost, (uint8_t *)output.data, out_st, p.info.output_shape, elem);
}

}  // namespace detail
}  // namespace deconv
