#include "cpu/filter_packing.h"

#include "cpu/winograd_executor.h"

#include <algorithm>
#include <cstring>

namespace deconv {
namespace detail {

namespace {

// dst[i] = src[i * stride] for i < count, elements of `elem` bytes (typed copies: this loop
// runs once per weight on every run).
template <typename T>
void gather_typed(uint8_t *dst, const uint8_t *src, int64_t count, int64_t stride) {
    // Fixed-size memcpy: one move each, and no alignment assumed about the caller's buffer.
    for (int64_t i = 0; i < count; i++) std::memcpy(dst + i * sizeof(T), src + i * stride * sizeof(T), sizeof(T));
}

void gather_row(uint8_t *dst, const uint8_t *src, int64_t count, int64_t stride, size_t elem) {
    switch (elem) {
    case 1: return gather_typed<uint8_t>(dst, src, count, stride);
    case 2: return gather_typed<uint16_t>(dst, src, count, stride);
    case 4: return gather_typed<uint32_t>(dst, src, count, stride);
    default: return gather_typed<uint64_t>(dst, src, count, stride);
    }
}

}  // namespace

InterleavedFilter pack_interleaved(const FilterPacking &f, const std::vector<AxisPhase> &inner,
                                   const OpGeometry &geo, size_t elem, bool groups_innermost,
                                   RecycledVectors *recycled);

FilterPacking pack_filter(const void *src, const std::vector<int64_t> &st, const Plan::Impl &p, size_t elem,
                          RecycledVectors *recycled) {
    if (p.winograd.f) return pack_winograd_filter(src, st, p);
    const OpGeometry &geo = p.geo;
    const int rank = geo.rank;
    FilterPacking f;
    int64_t taps = 1;
    for (int64_t k : geo.kernel) taps *= k;
    const int64_t block_width = p.channel_block;
    const bool blocked = block_width > 0;
    const int64_t width = blocked ? std::min(block_width, geo.c_out) : geo.c_out;  // channels per block
    const int64_t blocks = (geo.c_out + width - 1) / width;
    f.ci = width;
    f.k.assign(rank, 0);
    int64_t inner = geo.c_in * width;  // elements inside the innermost tap axis
    if (p.channel_major) {
        f.g = inner;
        inner *= geo.groups;
    }
    for (int i = rank; i-- > 0;) {
        f.k[i] = inner;
        inner *= geo.kernel[i];
    }
    if (!p.channel_major) f.g = inner;
    if (blocked) {
        f.block = inner;
        f.block_channels = width;
    }
    const size_t bytes = (size_t)(blocks * geo.groups * taps * geo.c_in * width) * elem;
    f.data = recycled ? recycled->take(bytes) : std::vector<uint8_t>(bytes, 0);

    const detail::FilterAxes &fa = geo.filter;
    const int64_t src_g = fa.g_stride(st), src_ci = st[fa.ci_axis], src_co = st[fa.co_axis];
    const uint8_t *in = (const uint8_t *)src;
    for (int64_t g = 0; g < geo.groups; g++) {
        for (int64_t t = 0; t < taps; t++) {
            // Decompose the flat tap index t into per-axis taps (C order).
            int64_t rem = t, src_off = g * src_g, dst_off = g * f.g;
            for (int i = rank; i-- > 0;) {
                const int64_t kd = geo.kernel[i], k = rem % kd;
                src_off += k * st[fa.k_axes[i]];
                dst_off += k * f.k[i];
                rem /= kd;
            }
            for (int64_t ci = 0; ci < geo.c_in; ci++) {
                const uint8_t *row = in + (src_off + ci * src_ci) * (int64_t)elem;
                if (p.ci_pairs) {
                    // Block co / width, [ci/2, co % width, ci % 2] inside it.
                    for (int64_t co = 0; co < geo.c_out; co++) {
                        const int64_t at = (co / width) * f.block + dst_off + (ci / 2) * 2 * width + 2 * (co % width) + ci % 2;
                        std::memcpy(f.data.data() + at * (int64_t)elem, row + co * src_co * (int64_t)elem, elem);
                    }
                } else {
                    for (int64_t c0 = 0; c0 < geo.c_out; c0 += width) {
                        uint8_t *dst = f.data.data() + ((c0 / width) * f.block + dst_off + ci * width) * (int64_t)elem;
                        const uint8_t *from = row + c0 * src_co * (int64_t)elem;
                        const int64_t count = std::min(width, geo.c_out - c0);
                        if (src_co == 1) {
                            std::memcpy(dst, from, (size_t)(count * (int64_t)elem));
                        } else {
                            gather_row(dst, from, count, src_co, elem);
                        }
                    }
                }
            }
        }
    }
    if (p.interleaved_kernel) {
        f.interleaved = pack_interleaved(f, p.phases[rank - 1], geo, elem, p.groups, recycled);
    }
    return f;
}

void recycle_packing(FilterPacking &f, RecycledVectors &recycled) {
    recycled.give_back(std::move(f.data));
    recycled.give_back(std::move(f.interleaved.data));
}


// [g, k_1 .. k_{D-1}, ph, j, ci, co] (outermost first), or with `groups_innermost` (the
// group-vectorized kernel's vector loads) [k_1 .. k_{D-1}, ph, j, g, ci, co].
InterleavedFilter pack_interleaved(const FilterPacking &f, const std::vector<AxisPhase> &inner,
                                   const OpGeometry &geo, size_t elem, bool groups_innermost,
                                   RecycledVectors *recycled) {
    const int rank = geo.rank;
    InterleavedFilter w;
    w.taps = most_taps(inner);
    const int64_t block = geo.c_in * geo.c_out;  // [ci, co] in both packings
    w.j = groups_innermost ? geo.groups * block : block;
    w.ph = w.taps * w.j;
    int64_t outer_taps = 1, stride = (int64_t)inner.size() * w.ph;
    w.k.assign(rank - 1, 0);
    for (int i = rank - 1; i-- > 0;) {
        w.k[i] = stride;
        stride *= geo.kernel[i];
        outer_taps *= geo.kernel[i];
    }
    w.g = groups_innermost ? block : stride;
    const size_t bytes = (size_t)(groups_innermost ? stride : geo.groups * stride) * elem;
    w.data = recycled ? recycled->take(bytes) : std::vector<uint8_t>(bytes, 0);
    for (int64_t g = 0; g < geo.groups; g++) {
        for (int64_t t = 0; t < outer_taps; t++) {
            int64_t rem = t, src = g * f.g, dst = g * w.g;
            for (int i = rank - 1; i-- > 0;) {
                const int64_t k = rem % geo.kernel[i];
                src += k * f.k[i];
                dst += k * w.k[i];
                rem /= geo.kernel[i];
            }
            for (size_t ph = 0; ph < inner.size(); ph++) {
                const AxisPhase &a = inner[ph];
                for (int64_t j = 0; j < a.tap_count; j++) {
                    const int64_t k = a.tap_first + j * a.tap_step;
                    std::memcpy(w.data.data() + (dst + (int64_t)ph * w.ph + j * w.j) * (int64_t)elem,
                                f.data.data() + (src + k * f.k[rank - 1]) * (int64_t)elem, (size_t)(block * (int64_t)elem));
                }
            }
        }
    }
    return w;
}

}  // namespace detail
}  // namespace deconv
