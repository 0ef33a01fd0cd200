#include "bordered_input.h"

#include "checked_math.h"
#include "tensor_copy.h"

#include <algorithm>
#include <climits>

namespace deconv {
namespace detail {

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
            lo[i] = std::max(lo[i], most_taps - 1 - floor_div(inner_pad_begin, s));
            hi[i] = std::max(hi[i], inner_out / s - 1 + floor_div(s - 1 + inner_pad_begin, s) - (geo.in_spatial[i] - 1));
        }
        const int64_t extent = geo.in_spatial[i] + lo[i] + hi[i];
        if (extent > INT32_MAX || bytes > kMaxBorderedInputBytes) return false;
        bytes *= extent;
    }
    return bytes <= kMaxBorderedInputBytes;
}

BorderedInput bordered_copy(BufferPool &pool, const uint8_t *src, const std::vector<int64_t> &src_st,
                            const std::vector<int64_t> &shape, const std::vector<int64_t> &lo,
                            const std::vector<int64_t> &hi, size_t first_spatial, size_t elem) {
    const size_t axes = shape.size();
    std::vector<int64_t> padded = shape;
    for (size_t i = 0; i < lo.size(); i++) padded[first_spatial + i] += lo[i] + hi[i];
    std::vector<int64_t> st(axes);
    int64_t count = 1;
    for (size_t a = axes; a-- > 0;) {
        st[a] = count;
        count *= padded[a];
    }
    BorderedInput out{pool.take((size_t)count * elem), st};
    int64_t origin = 0;  // the interior's first element
    for (size_t i = 0; i < lo.size(); i++) origin += lo[i] * st[first_spatial + i];
    copy_tensor(src, src_st, out.buffer.data() + origin * (int64_t)elem, st, shape, elem);
    return out;
}

}  // namespace detail
}  // namespace deconv
