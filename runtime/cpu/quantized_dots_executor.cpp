#include "cpu/quantized_dots_executor.h"

#include "cpu/slicing.h"
#include "facts/tile_facts.h"
#include "kernels/cpu_tiles.h"
#include "kernels/kernel_call.h"
#include "kernels/tensor_copy.h"
#include "layer/phase_decomposition.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>

namespace deconv {
namespace detail {

namespace {

// deconv_phase_conv_quant's signature (generators/phase_conv_quant_generator.cpp).
using QuantDotsFn = int (*)(int32_t, int32_t, int32_t, float, float, float, float, float, float, float, float, float,
                            float, float, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,
                            halide_buffer_t *, halide_buffer_t *);

// What the quads' copy holds: the data as the kernel's operand type, u8 (vpdpbusd: i8 data moved
// by 128) or i8 (sdot: u8 data moved by 128), and so its zero point moved alike; `flip`: the
// bytes' sign bit to toggle on the way.
int32_t copy_zero_point(const Plan::Impl &p) {
    const bool signed_src = p.types.src == DType::i8;
    if (p.quant_dots_signed) return p.epilogue.src_zero_point - (signed_src ? 0 : 128);
    return p.epilogue.src_zero_point + (signed_src ? 128 : 0);
}
uint8_t copy_flip(const Plan::Impl &p) { return (p.types.src == DType::i8) != p.quant_dots_signed ? 0x80 : 0; }

// Input margins per spatial axis (spec order) that every phase's taps need.
void dots_margins(const Plan::Impl &p, std::vector<int64_t> &lo, std::vector<int64_t> &hi) {
    const int rank = p.geo.rank;
    lo.assign(rank, 0);
    hi.assign(rank, 0);
    for (int a = 0; a < rank; a++) {
        for (const AxisPhase &ph : p.phases[a]) {
            if (ph.tap_count == 0) continue;
            lo[a] = std::max(lo[a], (ph.tap_count - 1) * ph.in_step - ph.in_offset);
            hi[a] = std::max(hi[a], ph.out_count - 1 + ph.in_offset - (p.geo.in_spatial[a] - 1));
        }
    }
}

std::vector<size_t> dots_phase_counts(const Plan::Impl &p) {
    std::vector<size_t> counts;
    for (const auto &axis : p.phases) counts.push_back(axis.size());
    return counts;
}

halide_buffer_t dots_view(halide_type_t type, const void *host, int dims, halide_dimension_t *dim) {
    halide_buffer_t b{};
    b.host = (uint8_t *)host;
    b.type = type;
    b.dimensions = dims;
    b.dim = dim;
    return b;
}

// Bytes per task of the passes over a whole copy below.
constexpr int64_t kPassChunk = int64_t(256) << 10;
int64_t pass_tasks(size_t count) { return std::max<int64_t>(1, ((int64_t)count + kPassChunk - 1) / kPassChunk); }

// Calls in tap windows (layer/phase_decomposition.h) instead of each phase whole on the bordered
// copy, where the copy's margins would hold more than kWindowsMinBorderShare of the layer's
// products. Each window's taps all read the input; its compensation is the sum over those taps.
// Batches of 1-2, 256-1024 channels (Zen 4): 2x2 inputs at kernel 4 stride 1 (84% of the
// products in the margins) 2.1-3.9x. Windows of one or two outputs lose the position tiles where
// fewer products are saved: 4x4 at kernel 4 stride 2 (windows of 1, 2 and 1 outputs, 23%)
// 0.60-0.80x, dcgan_l2 (the same at batch 64) 0.64x; 8x8 at kernel 4 stride 2 (12%) 0.90-0.98x.
constexpr double kWindowsMinBorderShare = 0.5;

bool dots_windows(const Plan::Impl &p) {
    double useful = 1, all = 1;
    for (int a = 0; a < p.geo.rank; a++) {
        double u = 0, n = 0;
        for (const AxisPhase &ph : p.phases[a]) {
            n += (double)ph.out_count * (double)std::max<int64_t>(ph.tap_count, 1);
            for (const TapWindow &w : tap_windows(ph, p.geo.in_spatial[a])) u += (double)w.q_count * (double)w.j_count;
        }
        useful *= u;
        all *= n;
    }
    return all > 0 && 1 - useful / all > kWindowsMinBorderShare;
}

// The kernel calls of a run, in order: every combination of phases (the odometer's order, last
// axis fastest), each whole (`win` null) or, with `windows` (dots_windows, decided at packing),
// in each combination of its axes' tap windows (`win`: one per axis). Packing computes each
// call's compensation in this order, the run makes the calls in it.
template <typename Fn>
void for_each_dots_call(const Plan::Impl &p, bool windows, const Fn &fn) {
    const int rank = p.geo.rank;
    for_each_combination(dots_phase_counts(p), [&](const std::vector<size_t> &at) {
        if (!windows) return fn(at, static_cast<const TapWindow *>(nullptr));
        std::vector<std::vector<TapWindow>> axis_windows(rank);
        std::vector<size_t> counts(rank);
        for (int a = 0; a < rank; a++) {
            axis_windows[a] = tap_windows(p.phases[a][at[a]], p.geo.in_spatial[a]);
            counts[a] = axis_windows[a].size();
        }
        for_each_combination(counts, [&](const std::vector<size_t> &wi) {
            TapWindow win[3];
            for (int a = 0; a < rank; a++) win[a] = axis_windows[a][wi[a]];
            fn(at, static_cast<const TapWindow *>(win));
        });
    });
}

// Positions the kernel computes for a row of `count` outputs on its narrower branches
// (tiles::kQuantDotsShortTiles below `q_tile`): the widest that fits, its last tile shifted inwards.
int64_t short_tiles_cover(int64_t count, int q_tile) {
    for (int q : tiles::kQuantDotsShortTiles)
        if (q < q_tile && q <= count) return (count + q - 1) / q * q;
    return count;
}

// Outputs [first, first + count) of a row as one call, or as two where the kernel's tiles then
// compute fewer positions: the whole tiles of `q_tile`, and the rest on the narrower branches
// (never where `q_tile` is 0). As one call, a row's last tile shifted inwards over outputs
// computed already: rows of 14 computed 18 positions, 12 + 2 in two calls (as u8 on Zen 4:
// maskrcnn_mask_up 1.20x, flownets_deconv5 1.29x, rows of 8). Rows narrower than a tile stay one
// call: cut into pieces of 4, 2 and 1, the windows of 2x2 inputs at kernel 4 ran 0.71-0.75x, a
// call costing more than the positions it saved.
std::vector<std::pair<int64_t, int64_t>> exact_row_pieces(int64_t first, int64_t count, int q_tile) {
    if (count <= 0) return {};
    if (q_tile == 0 || count < q_tile) return {{first, count}};
    const int64_t whole = count / q_tile * q_tile, rest = count - whole;
    if (rest == 0 || short_tiles_cover(rest, q_tile) >= q_tile) return {{first, count}};
    return {{first, whole}, {first + whole, rest}};
}

// x ^= 0x80 over `bytes` bytes (i8 values as the u8 that vpdpbusd takes, u8 as sdot's i8).
void flip_sign_bits(uint8_t *x, size_t bytes) {
    run_slices(pass_tasks(bytes), (int64_t)bytes, [&](int64_t begin, int64_t n) {
        for (int64_t i = begin; i < begin + n; i++) x[i] ^= 0x80;
    });
}

// d[i] = s[i] - zp as i16 (s u8, or i8 where `signed_src`): the pair kernels' copy from its
// staging bytes.
void widen_less_zero_point(const uint8_t *s, int16_t *d, size_t count, bool signed_src, int32_t zp) {
    run_slices(pass_tasks(count), (int64_t)count, [&](int64_t begin, int64_t n) {
        if (signed_src) {
            for (int64_t i = begin; i < begin + n; i++) d[i] = (int16_t)((int8_t)s[i] - zp);
        } else {
            for (int64_t i = begin; i < begin + n; i++) d[i] = (int16_t)(s[i] - zp);
        }
    });
}

}  // namespace

bool quant_dots_take(const Plan::Impl &p) { return !p.geo.forward; }

int64_t quant_dots_merge(const Plan::Impl &p) {
    const OpGeometry &g = p.geo;
    if (g.c_out >= kQuantDotsMinChannels) return 1;
    for (int64_t m = 2; m <= g.groups; m++)
        if (g.groups % m == 0 && m * g.c_out >= kQuantDotsMinChannels) return m;
    return 1;
}

int64_t quant_dots_channels(const Plan::Impl &p) {
    return quant_dots_merge(p) > 1 ? p.geo.c_out : std::max<int64_t>(p.geo.c_out, kQuantDotsMinChannels);
}

namespace {

// Input channels per dot product of the plan's kernel (quant_dots_group; 4 before a kernel is found).
int64_t dots_group(const Plan::Impl &p) { return p.quant_dots_group > 0 ? p.quant_dots_group : 4; }

// The kernel group's input channels: merge * C_IN rounded up to a whole group of `n`.
int64_t kernel_group_inputs(const Plan::Impl &p, int64_t merge, int64_t n) {
    return (merge * p.geo.c_in + n - 1) / n * n;
}

// Below these shares of the layer's own products among the kernel's, the plain f32 plan (where
// exact) runs the layer. Merged groups write the layer's channels where they lie; padded ones go
// through a scratch output and its copy, so they need more. The pairs sum half the channels per
// instruction the quads do, so they need more again, and merged groups never paid on them.
// Zen 4, u8, 28 layers of 1-12 output channels per group, 3 alternating rounds, against the f32
// plan. Quads: merged, 64 groups of 2 -> 2 (1/8) 1.00x NCX, 2.1x NXC, the others 0.99-3.3x;
// padded 96 -> 12 (3/4) 3.0-3.9x, 128 -> 8 (1/2) 1.7-2.0x, 16 -> 4 (1/4) 0.85-1.32x, 64 -> 3
// (3/16) 0.65-0.83x, 32 -> 2 (1/8) 0.50x. Pairs (AVX2): merged 0.48-0.91x NCX, 0.89-1.42x NXC;
// padded 96 -> 12 1.6-2.0x, 128 -> 8 1.1-1.4x, 16 -> 4 (1/4) 0.47-0.71x.
constexpr double kQuadsMinShareMerged = 0.125;
constexpr double kQuadsMinSharePadded = 0.25;
constexpr double kPairsMinSharePadded = 0.5;

}  // namespace

bool quant_dots_prefer(const Plan::Impl &p) {
    // A pinned quant_dots (quads or pairs) runs the kernels it names.
    const Policy::QuantDots pin = p.acc_plan ? p.acc_plan->policy.quant_dots : p.policy.quant_dots;
    if (pin == Policy::QuantDots::Quads || pin == Policy::QuantDots::Pairs) return true;
    const int64_t m = quant_dots_merge(p), n = dots_group(p);
    if (m * p.geo.c_in < 4) return false;
    const double own = (double)m * (double)p.geo.c_in * (double)p.geo.c_out;  // per kernel group
    const double kernel = (double)kernel_group_inputs(p, m, n) * (double)(m * quant_dots_channels(p));
    if (m > 1) return n == 4 && own >= kQuadsMinShareMerged * kernel;
    return own >= (n == 4 ? kQuadsMinSharePadded : kPairsMinSharePadded) * kernel;
}

bool quant_dots_slots(const std::vector<PostOp> &ops, QuantDotsStore &store) {
    if (ops.size() > 2) return false;
    for (size_t i = 0; i < ops.size(); i++) {
        const PostOp &op = ops[i];
        QuantDotsStore::Slot &s = store.slot[i];
        if (op.kind != PostOp::Kind::eltwise) return false;
        switch (op.alg) {
        case Eltwise::relu: s.neg = op.alpha; break;
        case Eltwise::clip: s.lo = op.alpha; s.hi = op.beta; break;
        case Eltwise::bounded_relu: s.neg = 0; s.hi = op.alpha; break;
        case Eltwise::linear: s.pos = s.neg = op.alpha; s.add = op.beta; break;
        default: return false;
        }
    }
    return true;
}

QuantDotsFilter pack_quant_dots_filter(const Plan::Impl &p, const int8_t *w, int group) {
    const OpGeometry &g = p.geo;
    const int rank = g.rank;
    QuantDotsFilter f;
    f.group = group;
    const int64_t n = group;
    f.merge = quant_dots_merge(p);
    const int64_t m = f.merge;
    f.c_in_g = kernel_group_inputs(p, m, n);
    f.c_out_k = quant_dots_channels(p);
    const int64_t ck = f.c_out_k, kck = m * ck;  // per layer group, per kernel group
    int64_t taps = 1;
    for (int64_t k : g.kernel) taps *= k;
    const int64_t block = f.c_in_g * kck;  // one tap's groups
    const size_t elem = group == 4 ? 1 : 2;
    f.data.assign((size_t)(g.groups / m * taps * block) * elem, 0);
    int8_t *quads = (int8_t *)f.data.data();
    int16_t *pairs = (int16_t *)f.data.data();
    // Source [G][C_IN][C_OUT][taps]; each output channel's sum per tap for the compensation.
    // Layer group gi is kernel group gi / m, its channels the (gi % m)-th C_IN and C_OUT there.
    std::vector<int64_t> tap_sums((size_t)(g.groups * taps * g.c_out), 0);
    for (int64_t gi = 0; gi < g.groups; gi++)
        for (int64_t ci = 0; ci < g.c_in; ci++)
            for (int64_t co = 0; co < g.c_out; co++) {
                const int8_t *src = w + ((gi * g.c_in + ci) * g.c_out + co) * taps;
                const int64_t kg = gi / m, kci = gi % m * g.c_in + ci, kco = gi % m * ck + co;
                for (int64_t t = 0; t < taps; t++) {
                    const size_t at = (size_t)((kg * taps + t) * block + (kci / n) * n * kck + kco * n + kci % n);
                    if (group == 4) quads[at] = src[t];
                    else pairs[at] = src[t];
                    tap_sums[(size_t)((gi * taps + t) * g.c_out + co)] += src[t];
                }
            }
    const int64_t zp = group == 4 ? copy_zero_point(p) : 0;
    // Tap strides of the flattened [K_1..K_D] index.
    std::vector<int64_t> kst(rank, 1);
    for (int a = rank - 2; a >= 0; a--) kst[a] = kst[a + 1] * g.kernel[a + 1];
    // Each call's compensation: the zero point times the weight sums of the taps it runs.
    f.windows = dots_windows(p);
    for_each_dots_call(p, f.windows, [&](const std::vector<size_t> &at, const TapWindow *win) {
        std::vector<int32_t> comp((size_t)(g.groups * ck), 0);
        std::vector<size_t> tap_counts;
        for (int a = 0; a < rank; a++)
            tap_counts.push_back((size_t)(win ? win[a].j_count : p.phases[a][at[a]].tap_count));
        for_each_combination(tap_counts, [&](const std::vector<size_t> &j) {
            int64_t t = 0;
            for (int a = 0; a < rank; a++) {
                const AxisPhase &ph = p.phases[a][at[a]];
                t += (ph.tap_first + ((win ? win[a].j_first : 0) + (int64_t)j[a]) * ph.tap_step) * kst[a];
            }
            for (int64_t gi = 0; gi < g.groups; gi++)
                for (int64_t co = 0; co < g.c_out; co++)
                    comp[(size_t)(gi * ck + co)] += (int32_t)(zp * tap_sums[(size_t)((gi * taps + t) * g.c_out + co)]);
        });
        f.comp.push_back(std::move(comp));
    });
    return f;
}

void run_quant_dots(const Plan::Impl &p, const KernelEntry *kernel, const QuantDotsFilter &f, const QuantDotsStore &store,
                    const void *input, const std::vector<int64_t> &in_st, void *out, DType out_type,
                    const std::vector<int64_t> &out_st) {
    const OpGeometry &g = p.geo;
    const int rank = g.rank;
    std::vector<int64_t> lo, hi;
    dots_margins(p, lo, hi);
    // The bordered channels-last copy [N, X'_1..X'_D, G*C_IN_G]: u8 filled with the zero point
    // (quads), or i16 values less the zero point filled with zeros (pairs).
    const bool quads = f.group == 4;
    const size_t x_elem = quads ? 1 : 2;
    std::vector<int64_t> ext(rank), cst(rank);
    // The kernel's groups: f.merge layer groups each (quant_dots_merge).
    const int64_t k_groups = g.groups / f.merge, k_c_in = f.merge * g.c_in;
    const int64_t c_tot = k_groups * f.c_in_g;
    int64_t positions = 1;
    for (int a = 0; a < rank; a++) {
        ext[a] = g.in_spatial[a] + lo[a] + hi[a];
        positions *= ext[a];
    }
    for (int64_t a = rank - 1, s = 1; a >= 0; a--) {
        cst[a] = s * c_tot;
        s *= ext[a];
    }
    const int64_t image = positions * c_tot;
    BufferPool::Lease copy = p.bordered_pool.take((size_t)(g.n * image) * x_elem);
    uint8_t *x = copy.data();
    // The caller's input, by its data format: channel stride and spatial strides.
    const bool nxc = g.data_format == DataFormat::NXC;
    const int64_t in_c = nxc ? in_st[rank + 1] : in_st[1];
    const uint8_t flip = copy_flip(p);
    // The bytes as they are, through the tensor copy's transposes, into a copy bordered with the
    // zero point. Quads: i8 data then moves by 128 (or u8 data, for sdot) in one pass over the
    // whole copy, whose border was filled with the value that the pass turns into the zero
    // point. Pairs: the bytes go to a staging copy, widened to i16 less the zero point in one
    // pass. (Element by element from the caller's strides, with the output's way back likewise:
    // hifigan_up3 on the pair kernels, 128 channels at 25600, 7.5 ms; this way 3.6.)
    const size_t bytes = (size_t)(g.n * image);
    // (Without margins or padded channels the copy writes every byte: a fill first cost
    // unet_up4, 128 channels at 196x196, a tenth of its run.)
    bool covered = f.c_in_g == k_c_in;
    for (int a = 0; a < rank; a++) covered = covered && lo[a] == 0 && hi[a] == 0;
    std::optional<BufferPool::Lease> staging;
    if (!quads) staging.emplace(p.bordered_pool.take(bytes));
    uint8_t *b = quads ? x : staging->data();
    const uint8_t fill = quads ? (uint8_t)copy_zero_point(p) ^ flip : (uint8_t)p.epilogue.src_zero_point;
    if (!covered) std::memset(b, fill, bytes);
    std::vector<int64_t> shape = {g.n, k_groups, k_c_in}, s_st = {in_st[0], k_c_in * in_c, in_c},
                         d_st = {image, f.c_in_g, 1};
    int64_t d_off = 0;
    for (int a = 0; a < rank; a++) {
        shape.push_back(g.in_spatial[a]);
        s_st.push_back(in_st[(nxc ? 1 : 2) + a]);
        d_st.push_back(cst[a]);
        d_off += lo[a] * cst[a];
    }
    copy_tensor((const uint8_t *)input, s_st, b + d_off, d_st, shape, 1);
    if (quads && flip) flip_sign_bits(x, bytes);
    if (!quads) widen_less_zero_point(b, (int16_t *)x, bytes, p.types.src == DType::i8, p.epilogue.src_zero_point);
    // The output [N, Y_1..Y_D, G*C_OUT] (out_st). Outputs that no tap reaches hold the
    // epilogue of a zero sum: each such phase runs on the kernel with its taps' extent zero.
    const size_t out_elem = dtype_size(out_type);

    int64_t taps = 1;
    std::vector<int64_t> kst(rank, 1);
    for (int a = rank - 1; a >= 0; a--) {
        kst[a] = taps;
        taps *= g.kernel[a];
    }
    const int64_t ck = f.merge * f.c_out_k;  // per kernel group
    const int64_t block = f.c_in_g * ck;
    const QuantDotsFn fn = kernel->as<QuantDotsFn>();
    // One call: the phases `at` of every axis, over the windows `win` (one per axis: a whole
    // phase's, a tap window's, or a piece of either's row), with compensation `comp`.
    auto call = [&](const std::vector<size_t> &at, const TapWindow *win, const std::vector<int32_t> &comp) {
        halide_dimension_t in_d[6], w_d[6], c_d[2], o_d[6];
        int32_t steps[3] = {1, 1, 1};
        set_dim(in_d[0], 0, f.c_in_g, 1);
        set_dim(in_d[1], 0, k_groups, f.c_in_g);
        set_dim(w_d[0], 0, f.group * ck, 1);
        set_dim(w_d[1], 0, f.c_in_g, ck);
        set_dim(w_d[2], 0, k_groups, taps * block);
        set_dim(c_d[0], 0, ck, 1);
        set_dim(c_d[1], 0, k_groups, ck);
        set_dim(o_d[0], 0, ck, 1);
        set_dim(o_d[1], 0, k_groups, ck);
        bool tapped = true;
        int64_t w_off = 0, o_off = 0;
        for (int a = 0; a < rank; a++) {
            const AxisPhase &ph = p.phases[a][at[a]];
            const TapWindow &w = win[a];
            const int h = rank - 1 - a;  // Halide's spatial axis of spec axis a
            // Output q of the window reads input q + origin - j*in_step at its tap j.
            const int64_t origin = w.q_first + ph.in_offset - w.j_first * ph.in_step;
            set_dim(in_d[2 + h], -(origin + lo[a]), ext[a], cst[a]);
            // (No taps: one tap of weight zero, the same sum.)
            tapped = tapped && w.j_count > 0;
            set_dim(w_d[3 + h], 0, std::max<int64_t>(w.j_count, 1), ph.tap_step * kst[a] * block);
            set_dim(o_d[2 + h], 0, w.q_count, (int64_t)p.info.strides[a] * out_st[1 + a]);
            w_off += std::min(ph.tap_first + w.j_first * ph.tap_step, g.kernel[a] - 1) * kst[a] * block;
            o_off += (ph.out_first + w.q_first * (int64_t)p.info.strides[a]) * out_st[1 + a];
            steps[h] = (int32_t)ph.in_step;
        }
        set_dim(in_d[2 + rank], 0, g.n, image);
        set_dim(o_d[2 + rank], 0, g.n, out_st[0]);
        if (!tapped) w_d[1].extent = 0;  // no input channels: the sum is zero
        halide_buffer_t in_b = dots_view(!quads ? halide_type_t(halide_type_int, 16)
                                         : halide_type_t(p.quant_dots_signed ? halide_type_int : halide_type_uint, 8), x,
                                    rank + 3, in_d);
        halide_buffer_t w_b = dots_view(halide_type_t(halide_type_int, quads ? 8 : 16), f.data.data() + w_off * x_elem,
                                   rank + 3, w_d);
        halide_buffer_t c_b = dots_view(halide_type_t(halide_type_int, 32), comp.data(), 2, c_d);
        halide_buffer_t b_b = dots_view(halide_type_t(halide_type_float, 32), store.bias.data(), 2, c_d);
        halide_buffer_t s_b = dots_view(halide_type_t(halide_type_float, 32), store.scale.data(), 2, c_d);
        halide_buffer_t o_b = dots_view(halide_type(out_type), (uint8_t *)out + o_off * (int64_t)out_elem, rank + 3, o_d);
        const QuantDotsStore::Slot &s0 = store.slot[0], &s1 = store.slot[1];
        const int rc = fn(steps[0], steps[1], steps[2], s0.pos, s0.neg, s0.add, s0.lo, s0.hi, s1.pos, s1.neg, s1.add,
                          s1.lo, s1.hi, store.dst_zero_point, &in_b, &w_b, &c_b, &b_b, &s_b, &o_b);
        if (rc != 0) fail_kernel(kernel, rc);
    };
    // Each call's innermost axis in pieces that the kernel's position tiles cover exactly
    // (exact_row_pieces), the same compensation for every piece, where the layer has the full
    // tile's channels that the narrower tiles need (else its rows' tails would run one position
    // and one vector at a time).
    const CpuRegisters regs = cpu_registers(p.variant);
    const int64_t full_channels = tiles::channels_last_vectors(regs.many) * tiles::lanes(regs.vector_bits, 32);
    const int q_tile = ck >= full_channels ? tiles::quant_dots_q_tile(regs.many, f.group) : 0;
    size_t i = 0;
    for_each_dots_call(p, f.windows, [&](const std::vector<size_t> &at, const TapWindow *win) {
        const std::vector<int32_t> &comp = f.comp[i++];
        TapWindow pieces[3];
        for (int a = 0; a < rank; a++) {
            const AxisPhase &ph = p.phases[a][at[a]];
            pieces[a] = win ? win[a] : TapWindow{0, ph.out_count, 0, ph.tap_count};
        }
        TapWindow &row = pieces[rank - 1];
        for (const auto &[first, count] : exact_row_pieces(row.q_first, row.q_count, q_tile)) {
            row.q_first = first;
            row.q_count = count;
            call(at, pieces, comp);
        }
    });
}

}  // namespace detail
}  // namespace deconv
