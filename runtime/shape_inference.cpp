// Shape inference of (Group)ConvolutionBackpropData-1, per the OpenVINO opset-1 text.
//
// Where the texts are silent or disagree (README, "Semantic choices"):
//  - auto_pad valid/same_upper/same_lower without output_shape: pads are zero.
//  - with output_shape, pads_begin/pads_end are ignored (even under explicit), and the total
//    padding is split by the spec's formula: same_upper puts the larger half at the beginning,
//    every other mode at the end.
//  - a negative total padding (output_shape larger than the natural output) clamps both pads to
//    zero; the output has exactly output_shape and positions past the natural output are zero.
#include "checked_math.h"
#include "deconv/deconv.h"
#include "messages.h"

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

}  // namespace

ShapeInfo infer_shape(Op op, const std::vector<int64_t> &input_shape, const std::vector<int64_t> &filter_shape,
                      const Attributes &attrs, const std::optional<std::vector<int64_t>> &output_shape) {
    const bool grouped = op == Op::GroupConvolutionBackpropData;
    const size_t in_rank = input_shape.size();
    if (in_rank < 3 || in_rank > 5) {
        if (in_rank > 5) {
            throw Error(ErrorKind::Unsupported, "data shape " + shape_str(input_shape) + " has rank " +
                                                    std::to_string(in_rank) +
                                                    "; this library supports 1D, 2D and 3D data (rank 3, 4 or 5)");
        }
        invalid("data shape " + shape_str(input_shape) + " has rank " + std::to_string(in_rank) +
                " but must be [N, C, X1..XD] with D = 1, 2 or 3 (rank 3, 4 or 5)");
    }
    const size_t d = in_rank - 2;
    const size_t expect_filter_rank = grouped ? in_rank + 1 : in_rank;
    if (filter_shape.size() != expect_filter_rank) {
        invalid(std::string(op_name(op)) + ": filter shape " + shape_str(filter_shape) + " has rank " +
                std::to_string(filter_shape.size()) + " but data " + shape_str(input_shape) + " needs rank " +
                std::to_string(expect_filter_rank) +
                (grouped ? " ([G, C_IN, C_OUT, K1..KD])" : " ([C_IN, C_OUT, K1..KD])"));
    }
    for (size_t i = 0; i < in_rank; i++) {
        if (input_shape[i] < 1) {
            invalid("data shape " + shape_str(input_shape) + ": dimension " + std::to_string(i) + " is " +
                    std::to_string(input_shape[i]) + " but must be at least 1");
        }
    }
    for (size_t i = 0; i < filter_shape.size(); i++) {
        if (filter_shape[i] < 1) {
            invalid("filter shape " + shape_str(filter_shape) + ": dimension " + std::to_string(i) + " is " +
                    std::to_string(filter_shape[i]) + " but must be at least 1");
        }
    }

    ShapeInfo info;
    info.groups = grouped ? filter_shape[0] : 1;
    const size_t f0 = grouped ? 1 : 0;
    const int64_t c_in = filter_shape[f0], c_out = filter_shape[f0 + 1];
    const int64_t channels = checked_mul(info.groups, c_in, "groups x C_IN");
    if (input_shape[1] != channels) {
        if (grouped) {
            invalid("data channels " + std::to_string(input_shape[1]) + " (data shape " + shape_str(input_shape) +
                    ") do not match groups x C_IN = " + std::to_string(info.groups) + " x " + std::to_string(c_in) +
                    " = " + std::to_string(channels) + " (filter shape " + shape_str(filter_shape) + ")");
        }
        invalid("data channels " + std::to_string(input_shape[1]) + " (data shape " + shape_str(input_shape) +
                ") do not match filter C_IN " + std::to_string(c_in) + " (filter shape " + shape_str(filter_shape) +
                ")");
    }

    info.strides = resolve_attr(attrs.strides, "strides", d, 1, 1);
    info.dilations = resolve_attr(attrs.dilations, "dilations", d, 1, 1);
    info.output_padding = resolve_attr(attrs.output_padding, "output_padding", d, 0, 0);
    std::vector<int64_t> pb = resolve_attr(attrs.pads_begin, "pads_begin", d, 0, 0);
    std::vector<int64_t> pe = resolve_attr(attrs.pads_end, "pads_end", d, 0, 0);

    if (output_shape) {
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
    }

    info.output_shape = {input_shape[0], checked_mul(info.groups, c_out, "groups x C_OUT")};
    info.pads_begin.assign(d, 0);
    info.pads_end.assign(d, 0);
    for (size_t i = 0; i < d; i++) {
        const int64_t x = input_shape[2 + i], k = filter_shape[f0 + 2 + i];
        const std::string axis = "spatial axis " + std::to_string(i);
        // Extent of the full (unpadded) transposed convolution: s*(X-1) + (K-1)*d + 1.
        const int64_t natural = checked_add(checked_mul(info.strides[i], x - 1, axis),
                                            checked_add(checked_mul(k - 1, info.dilations[i], axis), 1, axis), axis);
        if (output_shape) {
            const int64_t out = (*output_shape)[i];
            const int64_t total = natural - out + info.output_padding[i];
            int64_t b, e;
            if (attrs.auto_pad == AutoPad::SameUpper) {
                e = floor_div(total, 2);
                b = total - e;
            } else {
                b = floor_div(total, 2);
                e = total - b;
            }
            info.pads_begin[i] = b < 0 ? 0 : b;
            info.pads_end[i] = e < 0 ? 0 : e;
            info.output_shape.push_back(out);
        } else {
            if (attrs.auto_pad == AutoPad::Explicit) {
                info.pads_begin[i] = pb[i];
                info.pads_end[i] = pe[i];
            }
            const int64_t y = natural - info.pads_begin[i] - info.pads_end[i] + info.output_padding[i];
            if (y < 1) {
                invalid("output spatial axis " + std::to_string(i) + " would have size " + std::to_string(y) +
                        " = stride " + std::to_string(info.strides[i]) + " * (X " + std::to_string(x) +
                        " - 1) + (K " + std::to_string(k) + " - 1) * dilation " +
                        std::to_string(info.dilations[i]) + " + 1 - pads_begin " +
                        std::to_string(info.pads_begin[i]) + " - pads_end " + std::to_string(info.pads_end[i]) +
                        " + output_padding " + std::to_string(info.output_padding[i]) + "; it must be at least 1");
            }
            info.output_shape.push_back(y);
        }
    }
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
