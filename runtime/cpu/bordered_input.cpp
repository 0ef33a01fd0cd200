#include "cpu/bordered_input.h"

#include "layer/checked_math.h"
#include "kernels/tensor_copy.h"
#include "plan/thresholds.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace deconv {
namespace detail {

const int64_t kMaxBorderedInputBytes = uniform_threshold(Threshold::MaxBorderedInputBytes);

bool border_margins(const std::vector<std::vector<AxisPhase>> &phases, const OpGeometry &geo, size_t elem,
                    int64_t interleave, int64_t inner_pad_begin, int64_t inner_out, std::vector<int64_t> &lo,
                    std::vector<int64_t> &hi) {
    lo.assign(geo.rank, 0);
    hi.assign(geo.rank, 0);
    int64_t bytes = (int64_t)elem * geo.n * geo.groups * geo.c_in;
    for (int i = 0; i < geo.rank; i++) {
        int64_t most_taps = 0;
        for (const AxisPhase &a : phases[i]) {
            most_taps = std::max(most_taps, a.tap_count);
            if (a.tap_count == 0) continue;
            lo[i] = std::max(lo[i], (a.tap_count - 1) * a.in_step - a.in_offset);
            hi[i] = std::max(hi[i], a.out_count - 1 + a.in_offset - (geo.in_spatial[i] - 1));
        }
        if (interleave && i == geo.rank - 1) {
            const int64_t s = interleave;
            const InterleavedReach reach = interleaved_reach(s, inner_pad_begin, most_taps);
            lo[i] = std::max(lo[i], -reach.lo);
            hi[i] = std::max(hi[i], inner_out / s - 1 + reach.hi - (geo.in_spatial[i] - 1));
        }
        const int64_t extent = geo.in_spatial[i] + lo[i] + hi[i];
        if (extent > INT32_MAX || bytes > kMaxBorderedInputBytes) return false;
        bytes *= extent;
    }
    return bytes <= kMaxBorderedInputBytes;
}

BorderedInput bordered_buffer(BufferPool &pool, const std::vector<int64_t> &shape, const std::vector<int64_t> &lo,
                              const std::vector<int64_t> &hi, size_t first_spatial, size_t elem,
                              bool channels_in_rows, int64_t group_channels, int64_t group_block) {
    const size_t axes = shape.size();
    std::vector<int64_t> padded = shape;
    for (size_t i = 0; i < lo.size(); i++) padded[first_spatial + i] += lo[i] + hi[i];
    if (group_channels > 0 && first_spatial == 1 && axes >= 3 && shape[axes - 1] % group_channels == 0) {
        // [N, spatial.., C] with C split into (groups, group_channels): group_channels, then the
        // spatial axes but the outermost, then the groups, then the outermost spatial axis and
        // the images, innermost first. The kernels share a phase's outermost rows out among the
        // threads, and so does the copy (its outermost axis): each thread copies the rows it
        // reads. (Groups outside every spatial axis, the copy handed each thread half of the
        // groups instead, which the other thread then read from its core's cache: 32 groups of 8
        // -> 8 channels, kernel 3 stride 2, 2 threads, Zen 4: 1.07x faster at 28x28, 1.19x at 7x7.)
        std::vector<int64_t> st(axes);
        st[axes - 1] = 1;
        int64_t count = group_channels;
        const size_t outermost = axes >= 4 ? 1 : 0;  // the spatial axis outside the groups, if any
        for (size_t a = axes - 1; a-- > outermost + 1;) {
            st[a] = count;
            count *= padded[a];
        }
        const int64_t group_stride = count;
        count *= shape[axes - 1] / group_channels;
        for (size_t a = outermost + 1; a-- > 0;) {
            st[a] = count;
            count *= padded[a];
        }
        BorderedInput out{pool.take((size_t)count * elem), st, 0, group_channels, group_stride,
                          group_block > 1 && group_channels % group_block == 0 ? group_block : 0};
        for (size_t i = 0; i < lo.size(); i++) out.origin += lo[i] * st[first_spatial + i];
        return out;
    }
    // Axes from the innermost out: shape order, or with the channel axis (1) moved just outside
    // the innermost one.
    std::vector<size_t> order(axes);
    for (size_t a = 0; a < axes; a++) order[a] = axes - 1 - a;
    if (channels_in_rows && first_spatial == 2 && axes >= 4) {
        order.erase(order.end() - 2);
        order.insert(order.begin() + 1, 1);
    }
    std::vector<int64_t> st(axes);
    int64_t count = 1;
    for (size_t a : order) {
        st[a] = count;
        count *= padded[a];
    }
    BorderedInput out{pool.take((size_t)count * elem), st, 0};
    for (size_t i = 0; i < lo.size(); i++) out.origin += lo[i] * st[first_spatial + i];
    return out;
}

void copy_bordered(BorderedInput &dst, const uint8_t *src, const std::vector<int64_t> &src_st_in,
                   const std::vector<int64_t> &shape_in, size_t first_spatial, size_t elem, int64_t begin,
                   int64_t count) {
    // Group-major: the channel axis (the last) split into groups and their channels.
    std::vector<int64_t> shape = shape_in, src_st = src_st_in, dst_st = dst.strides;
    if (dst.group_channels > 0) {
        const int64_t cs = src_st.back();
        shape.back() /= dst.group_channels;
        shape.push_back(dst.group_channels);
        src_st.back() = cs * dst.group_channels;
        src_st.push_back(cs);
        dst_st.back() = dst.group_stride;
        dst_st.push_back(1);
        if (dst.group_block > 1) {
            // Block-interleaved: the block's channels split into (groups, their channels), the
            // groups innermost in dst.
            const int64_t b = dst.group_block, per_group = dst.group_channels / b;
            shape.back() = b;
            shape.push_back(per_group);
            src_st.back() = cs * per_group;
            src_st.push_back(cs);
            dst_st.back() = 1;
            dst_st.push_back(b);
        }
    }
    // The leading axes flattened: index = ((i_0 * shape_1 + i_1) ...); runs along the last one.
    const size_t last = first_spatial - 1;
    if (count < 0) {
        count = 1;
        for (size_t a = 0; a < first_spatial; a++) count *= shape[a];
    }
    std::vector<int64_t> part = shape;
    for (size_t a = 0; a < last; a++) part[a] = 1;
    while (count > 0) {
        int64_t rem = begin, src_off = 0, dst_off = dst.origin;
        for (size_t a = first_spatial; a-- > 0;) {
            const int64_t i = rem % shape[a];
            rem /= shape[a];
            src_off += i * src_st[a];
            dst_off += i * dst_st[a];
        }
        const int64_t run = std::min(count, shape[last] - begin % shape[last]);
        part[last] = run;
        copy_tensor(src + src_off * (int64_t)elem, src_st, dst.buffer.data() + dst_off * (int64_t)elem, dst_st,
                    part, elem);
        begin += run;
        count -= run;
    }
}

BorderedInput bordered_copy(BufferPool &pool, const uint8_t *src, const std::vector<int64_t> &src_st,
                            const std::vector<int64_t> &shape, const std::vector<int64_t> &lo,
                            const std::vector<int64_t> &hi, size_t first_spatial, size_t elem) {
    BorderedInput out = bordered_buffer(pool, shape, lo, hi, first_spatial, elem);
    copy_tensor(src, src_st, out.buffer.data() + out.origin * (int64_t)elem, out.strides, shape, elem);
    return out;
}

void copy_row_window(uint8_t *dst, const uint8_t *src, int64_t images, int64_t image_stride, int64_t channels,
                     int64_t row_stride, int64_t extent, int64_t first, int64_t width, size_t elem) {
    // The window's part inside the row: window indices [lo, hi).
    const int64_t lo = std::min(std::max(-first, int64_t(0)), width);
    const int64_t hi = std::min(std::max(extent - first, lo), width);
    const size_t before = (size_t)lo * elem, inside = (size_t)(hi - lo) * elem;
    const size_t row_bytes = (size_t)width * elem;
    for (int64_t n = 0; n < images; n++) {
        for (int64_t c = 0; c < channels; c++) {
            uint8_t *d = dst + (size_t)(n * channels + c) * row_bytes;
            std::memset(d, 0, before);
            if (inside) {
                std::memcpy(d + before, src + (n * image_stride + c * row_stride + first + lo) * (int64_t)elem, inside);
            }
            std::memset(d + before + inside, 0, row_bytes - before - inside);
        }
    }
}

}  // namespace detail
}  // namespace deconv
