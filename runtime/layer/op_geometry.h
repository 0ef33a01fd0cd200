// What every op reduces to inside the library: a grouped correlation with `groups` groups,
// `c_in` channels per group on the op's input and `c_out` per group on its output, a kernel of
// spatial extents `kernel`, and a map from the canonical filter axes (g, ci, co, k..) to the
// axes of the caller's filter tensor, whatever its layout (OpenVINO GCBD/CBD/GC, oneDNN
// OIX/XIO). Shape inference and the plan both read filters through it, so layouts are handled
// in exactly one place.
#pragma once

#include "deconv/deconv.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace deconv {
namespace detail {

struct FilterAxes {
    // Canonical axis -> caller's filter axis. The group index g and the input channel ci may
    // share one caller axis (oneDNN's OC = g*(OC/groups) + ci): `g_scale` is then the number of
    // ci per group; otherwise 1. g_axis is -1 when there is no group axis (groups == 1).
    int g_axis = -1;
    int64_t g_scale = 1;
    int ci_axis = 0, co_axis = 1;
    std::vector<int> k_axes;  // spec order (K1..KD)

    // Element strides of the canonical axes, given the caller's strides.
    int64_t g_stride(const std::vector<int64_t> &st) const { return g_axis < 0 ? 0 : g_scale * st[g_axis]; }
};

struct OpGeometry {
    bool forward = false;   // GroupConvolution; else a transposed convolution
    DataFormat data_format = DataFormat::NCX;
    int rank = 0;           // spatial axes D
    int64_t n = 0, groups = 1, c_in = 0, c_out = 0;  // per group
    std::vector<int64_t> in_spatial, kernel;          // spec order
    FilterAxes filter;
};

// The op's data format (attrs.data_format or the op's default).
DataFormat data_format_of(Op op, const Attributes &attrs);

// Validates the data and filter shapes of `op` (ranks, positive sizes, channel counts, groups)
// and the attributes that only some ops take. Throws Error naming the offending value.
OpGeometry op_geometry(Op op, const std::vector<int64_t> &input_shape, const std::vector<int64_t> &filter_shape,
                       const Attributes &attrs);

// deconv::infer_shape on a geometry already validated by op_geometry() (the plan needs both).
ShapeInfo infer_shape(Op op, const OpGeometry &g, const std::vector<int64_t> &input_shape,
                      const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                      const std::optional<std::vector<int64_t>> &output_shape);

// [N, C, X..] <-> the data format's order.
std::vector<int64_t> to_ncx(const std::vector<int64_t> &shape, DataFormat f);
std::vector<int64_t> from_ncx(const std::vector<int64_t> &shape, DataFormat f);

}  // namespace detail
}  // namespace deconv
