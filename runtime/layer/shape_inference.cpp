// Shape inference of every op.
//
// Backprop ops (OpenVINO opset-1 text; oneDNN Graph's text for ConvolutionBackwardData). Where
// the texts are silent or disagree (docs/semantics.md):
//  - auto_pad valid/same_upper/same_lower without an output shape: pads are zero.
//  - OpenVINO's output_shape: pads_begin/pads_end are ignored (even under explicit), and the
//    total padding is split by the spec's formula: same_upper puts the larger half at the
//    beginning, every other mode at the end.
//  - oneDNN's dst_shape under auto_pad none keeps pads_begin as given: the end is cropped or
//    zero-extended to reach dst_shape; valid starts at pad 0.
//  - a negative leading pad clamps to zero; the output has exactly the requested shape and
//    positions past the natural output are zero.
// GroupConvolution-1: the forward convolution's explicit/valid/same_* rules (same_upper puts the
// extra pad at the end).
#include "layer/checked_math.h"
#include "deconv/deconv.h"
#include "layer/messages.h"
#include "layer/op_geometry.h"

namespace deconv {

namespace {

using detail::checked_add;
using detail::checked_mul;
using detail::floor_div;
using detail::invalid;
using detail::shape_str;

// Fills an attribute with its default or checks its length and range.
std::vector<int64_t> resolve_attr(const std::vector<int64_t> &given, const char *name, size_t rank,
                                  int64_t default_value, int64_t min_value) {
    if (given.empty()) return std::vector<int64_t>(rank, default_value);
    if (given.size() != rank) {
        invalid(std::string(name) + " has " + std::to_string(given.size()) + " values " + shape_str(given) +
                " but the data has " + std::to_string(rank) + " spatial axes");
    }
    for (size_t i = 0; i < rank; i++) {
        if (given[i] < min_value) {
            invalid(std::string(name) + "[" + std::to_string(i) + "] is " + std::to_string(given[i]) +
                    " but must be at least " + std::to_string(min_value));
        }
        if (given[i] > (int64_t(1) << 40)) {
            throw Error(ErrorKind::TooLarge, std::string(name) + "[" + std::to_string(i) + "] is " +
                                                 std::to_string(given[i]) + ", beyond any addressable tensor");
        }
    }
    return given;
}

// "stride 2 * (X 5 - 1) + ..." pieces for messages.
std::string term(const char *name, int64_t v) { return std::string(name) + " " + std::to_string(v); }

// The requested output shape of a backprop op, spatial only, from OpenVINO's output_shape or
// oneDNN's dst_shape (full shape in the data format's order, checked against N and C).
std::optional<std::vector<int64_t>> requested_spatial(Op op, const detail::OpGeometry &g, const Attributes &attrs,
                                                      const std::optional<std::vector<int64_t>> &output_shape) {
    const size_t d = g.rank;
    if (op == Op::ConvolutionBackwardData) {
        const std::optional<std::vector<int64_t>> &dst = output_shape ? output_shape : attrs.dst_shape;
        if (!dst) return std::nullopt;
        const char *what = output_shape ? "dst_shape input" : "dst_shape attribute";
        const std::string layout = g.data_format == DataFormat::NXC ? "[N, Y1..YD, C]" : "[N, C, Y1..YD]";
        if (dst->size() != d + 2) {
            invalid(std::string(what) + " " + shape_str(*dst) + " has " + std::to_string(dst->size()) +
                    " values but diff_src is " + layout + " (" + std::to_string(d + 2) + " values)");
        }
        for (size_t i = 0; i < dst->size(); i++) {
            if ((*dst)[i] < 1) {
                invalid(std::string(what) + " " + shape_str(*dst) + ": value " + std::to_string(i) + " is " +
                        std::to_string((*dst)[i]) + " but must be at least 1");
            }
        }
        const std::vector<int64_t> ncx = detail::to_ncx(*dst, g.data_format);
        if (ncx[0] != g.n) {
            invalid(std::string(what) + " " + shape_str(*dst) + " has N = " + std::to_string(ncx[0]) +
                    " but diff_dst has N = " + std::to_string(g.n));
        }
        const int64_t ic = checked_mul(g.groups, g.c_out, "groups x IC/groups");
        if (ncx[1] != ic) {
            invalid(std::string(what) + " " + shape_str(*dst) + " has " + std::to_string(ncx[1]) +
                    " channels but the weights give IC = groups x IC/groups = " + std::to_string(g.groups) + " x " +
                    std::to_string(g.c_out) + " = " + std::to_string(ic));
        }
        return std::vector<int64_t>(ncx.begin() + 2, ncx.end());
    }
    if (!output_shape) return std::nullopt;
    if (op == Op::GroupConvolution) {
        invalid("GroupConvolution takes no output_shape input (got " + shape_str(*output_shape) + ")");
    }
    if (output_shape->size() != d) {
        invalid("output_shape " + shape_str(*output_shape) + " has " + std::to_string(output_shape->size()) +
                " values but must give the " + std::to_string(d) +
                " spatial axes only (no batch or channel dimension)");
    }
    for (size_t i = 0; i < d; i++) {
        if ((*output_shape)[i] < 1) {
            invalid("output_shape[" + std::to_string(i) + "] is " + std::to_string((*output_shape)[i]) +
                    " but must be at least 1");
        }
    }
    return output_shape;
}

// Forward convolution (GroupConvolution-1), one spatial axis: fills the pads, returns Y.
int64_t forward_axis(int64_t x, int64_t k, int64_t s, int64_t d, AutoPad mode, int64_t &pb, int64_t &pe, size_t i) {
    const std::string axis = "spatial axis " + std::to_string(i);
    const int64_t span = checked_add(checked_mul(k - 1, d, axis), 1, axis);  // dilated kernel extent
    if (mode == AutoPad::SameUpper || mode == AutoPad::SameLower) {
        const int64_t y = checked_add(x, s - 1, axis) / s;
        int64_t total = checked_add(checked_mul(y - 1, s, axis), span, axis) - x;
        if (total < 0) total = 0;
        const int64_t small = total / 2;
        pb = mode == AutoPad::SameUpper ? small : total - small;
        pe = total - pb;
        return y;
    }
    if (mode == AutoPad::Valid) pb = pe = 0;
    const int64_t padded = checked_add(x, checked_add(pb, pe, axis), axis);
    if (padded < span) {
        invalid("output spatial axis " + std::to_string(i) + " would be empty: the padded input " + term("X", x) +
                " + " + term("pads_begin", pb) + " + " + term("pads_end", pe) + " = " + std::to_string(padded) +
                " is shorter than the dilated kernel (" + term("K", k) + " - 1) * " + term("dilation", d) +
                " + 1 = " + std::to_string(span));
    }
    return (padded - span) / s + 1;
}

}  // namespace

ShapeInfo infer_shape(Op op, const std::vector<int64_t> &input_shape, const std::vector<int64_t> &filter_shape,
                      const Attributes &attrs, const std::optional<std::vector<int64_t>> &output_shape) {
    return detail::infer_shape(op, detail::op_geometry(op, input_shape, filter_shape, attrs), input_shape,
                               filter_shape, attrs, output_shape);
}

ShapeInfo detail::infer_shape(Op op, const OpGeometry &g, const std::vector<int64_t> &input_shape,
                              const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                              const std::optional<std::vector<int64_t>> &output_shape) {
    const size_t d = g.rank;

    ShapeInfo info;
    info.groups = g.groups;
    info.data_format = g.data_format;
    info.strides = resolve_attr(attrs.strides, "strides", d, 1, 1);
    info.dilations = resolve_attr(attrs.dilations, "dilations", d, 1, 1);
    info.output_padding = resolve_attr(attrs.output_padding, "output_padding", d, 0, 0);
    std::vector<int64_t> pb = resolve_attr(attrs.pads_begin, "pads_begin", d, 0, 0);
    std::vector<int64_t> pe = resolve_attr(attrs.pads_end, "pads_end", d, 0, 0);
    if (g.forward) {
        for (size_t i = 0; i < d; i++) {
            if (info.output_padding[i] != 0) {
                invalid("output_padding " + shape_str(attrs.output_padding) +
                        " belongs to the backprop ops; GroupConvolution has none");
            }
        }
    }
    const std::optional<std::vector<int64_t>> requested = requested_spatial(op, g, attrs, output_shape);

    std::vector<int64_t> out = {g.n, checked_mul(g.groups, g.c_out, "groups x C_OUT")};
    info.pads_begin.assign(d, 0);
    info.pads_end.assign(d, 0);
    for (size_t i = 0; i < d; i++) {
        const int64_t x = g.in_spatial[i], k = g.kernel[i];
        const int64_t s = info.strides[i], dil = info.dilations[i], op_i = info.output_padding[i];
        const std::string axis = "spatial axis " + std::to_string(i);
        if (g.forward) {
            info.pads_begin[i] = pb[i];
            info.pads_end[i] = pe[i];
            out.push_back(forward_axis(x, k, s, dil, attrs.auto_pad, info.pads_begin[i], info.pads_end[i], i));
            continue;
        }
        // Extent of the full (unpadded) transposed convolution: s*(X-1) + (K-1)*d + 1.
        const int64_t natural = checked_add(checked_mul(s, x - 1, axis),
                                            checked_add(checked_mul(k - 1, dil, axis), 1, axis), axis);
        if (requested) {
            const int64_t y = (*requested)[i];
            const int64_t total = checked_add(checked_sub(natural, y, axis), op_i, axis);
            int64_t b;
            if (op == Op::ConvolutionBackwardData && attrs.auto_pad == AutoPad::Explicit) {
                b = pb[i];
            } else if (attrs.auto_pad == AutoPad::SameUpper) {
                b = total - floor_div(total, 2);
            } else if (op == Op::ConvolutionBackwardData && attrs.auto_pad == AutoPad::Valid) {
                b = 0;
            } else {
                b = floor_div(total, 2);
            }
            info.pads_begin[i] = b < 0 ? 0 : b;
            const int64_t e = checked_sub(checked_sub(checked_add(natural, op_i, axis), info.pads_begin[i], axis), y, axis);
            info.pads_end[i] = e < 0 ? 0 : e;
            out.push_back(y);
        } else {
            if (attrs.auto_pad == AutoPad::Explicit) {
                info.pads_begin[i] = pb[i];
                info.pads_end[i] = pe[i];
            }
            // (Pads may be negative, and as large as an int64 (fuzz_plan): checked.)
            const int64_t y = checked_add(
                checked_sub(checked_sub(natural, info.pads_begin[i], axis), info.pads_end[i], axis), op_i, axis);
            if (y < 1) {
                invalid("output spatial axis " + std::to_string(i) + " would have size " + std::to_string(y) + " = " +
                        term("stride", s) + " * (" + term("X", x) + " - 1) + (" + term("K", k) + " - 1) * " +
                        term("dilation", dil) + " + 1 - " + term("pads_begin", info.pads_begin[i]) + " - " +
                        term("pads_end", info.pads_end[i]) + " + " + term("output_padding", op_i) +
                        "; it must be at least 1");
            }
            out.push_back(y);
        }
    }
    info.output_shape = detail::from_ncx(out, g.data_format);
    // The element count of every tensor must be representable.
    int64_t n_out = 1, n_in = 1, n_w = 1;
    for (int64_t v : info.output_shape) n_out = checked_mul(n_out, v, "output element count");
    for (int64_t v : input_shape) n_in = checked_mul(n_in, v, "data element count");
    for (int64_t v : filter_shape) n_w = checked_mul(n_w, v, "filter element count");
    checked_mul(n_out, 8, "output byte size");
    checked_mul(n_in, 8, "data byte size");
    checked_mul(n_w, 8, "filter byte size");
    return info;
}

}  // namespace deconv
