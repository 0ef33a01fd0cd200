#include "layer/op_geometry.h"

#include "layer/checked_math.h"
#include "layer/messages.h"

namespace deconv {
namespace detail {

DataFormat data_format_of(Op op, const Attributes &attrs) {
    if (attrs.data_format) return *attrs.data_format;
    return op == Op::ConvolutionBackwardData ? DataFormat::NXC : DataFormat::NCX;
}

std::vector<int64_t> to_ncx(const std::vector<int64_t> &shape, DataFormat f) {
    if (f == DataFormat::NCX || shape.size() < 2) return shape;
    std::vector<int64_t> r = {shape[0], shape.back()};
    r.insert(r.end(), shape.begin() + 1, shape.end() - 1);
    return r;
}

std::vector<int64_t> from_ncx(const std::vector<int64_t> &shape, DataFormat f) {
    if (f == DataFormat::NCX || shape.size() < 2) return shape;
    std::vector<int64_t> r = {shape[0]};
    r.insert(r.end(), shape.begin() + 2, shape.end());
    r.push_back(shape[1]);
    return r;
}

namespace {

// The layout text of each filter, for messages.
const char *filter_layout_text(Op op, WeightsFormat wf) {
    switch (op) {
    case Op::GroupConvolutionBackpropData: return "[G, C_IN, C_OUT, K1..KD]";
    case Op::ConvolutionBackpropData: return "[C_IN, C_OUT, K1..KD]";
    case Op::GroupConvolution: return "[G, C_OUT, C_IN, K1..KD]";
    case Op::ConvolutionBackwardData:
        return wf == WeightsFormat::OIX ? "OIX [OC, IC/groups, K1..KD]" : "XIO [K1..KD, IC/groups, OC]";
    }
    return "?";
}

void check_positive(const std::vector<int64_t> &shape, const char *what) {
    for (size_t i = 0; i < shape.size(); i++) {
        if (shape[i] < 1) {
            invalid(std::string(what) + " shape " + shape_str(shape) + ": dimension " + std::to_string(i) + " is " +
                    std::to_string(shape[i]) + " but must be at least 1");
        }
    }
}

}  // namespace

OpGeometry op_geometry(Op op, const std::vector<int64_t> &input_shape, const std::vector<int64_t> &filter_shape,
                       const Attributes &attrs) {
    const bool onednn = op == Op::ConvolutionBackwardData;
    if (!onednn) {
        if (attrs.groups) {
            invalid(std::string("the groups attribute belongs to ConvolutionBackwardData; ") + op_name(op) +
                    " takes its groups from the filter shape (groups = " + std::to_string(*attrs.groups) + ")");
        }
        if (attrs.weights_format) {
            invalid(std::string("weights_format ") + weights_format_name(*attrs.weights_format) +
                    " belongs to ConvolutionBackwardData; " + op_name(op) + " has a fixed filter layout " +
                    filter_layout_text(op, WeightsFormat::XIO));
        }
        if (attrs.dst_shape) {
            invalid(std::string("the dst_shape attribute ") + shape_str(*attrs.dst_shape) +
                    " belongs to ConvolutionBackwardData; " + op_name(op) +
                    (op == Op::GroupConvolution ? " takes no output shape" : " takes output_shape as its input"));
        }
    }
    OpGeometry g;
    g.forward = op == Op::GroupConvolution;
    g.data_format = data_format_of(op, attrs);
    const WeightsFormat wf = attrs.weights_format.value_or(WeightsFormat::XIO);

    const size_t in_rank = input_shape.size();
    const char *data_name = onednn ? "diff_dst" : "data";
    if (in_rank < 3 || in_rank > 5) {
        const std::string layout = g.data_format == DataFormat::NXC ? "[N, X1..XD, C]" : "[N, C, X1..XD]";
        if (in_rank > 5) {
            throw Error(ErrorKind::Unsupported, std::string(data_name) + " shape " + shape_str(input_shape) +
                                                    " has rank " + std::to_string(in_rank) +
                                                    "; this library supports 1D, 2D and 3D data (rank 3, 4 or 5)");
        }
        invalid(std::string(data_name) + " shape " + shape_str(input_shape) + " has rank " + std::to_string(in_rank) +
                " but must be " + layout + " with D = 1, 2 or 3 (rank 3, 4 or 5)");
    }
    check_positive(input_shape, data_name);
    g.rank = (int)in_rank - 2;
    const int d = g.rank;
    const std::vector<int64_t> in = to_ncx(input_shape, g.data_format);
    g.n = in[0];
    g.in_spatial.assign(in.begin() + 2, in.end());

    const bool has_g_axis = op == Op::GroupConvolutionBackpropData || op == Op::GroupConvolution;
    const size_t expect = has_g_axis ? in_rank + 1 : in_rank;
    const char *filter_name = onednn ? "weights" : "filter";
    if (filter_shape.size() != expect) {
        invalid(std::string(op_name(op)) + ": " + filter_name + " shape " + shape_str(filter_shape) + " has rank " +
                std::to_string(filter_shape.size()) + " but " + data_name + " " + shape_str(input_shape) +
                " needs rank " + std::to_string(expect) + " (" + filter_layout_text(op, wf) + ")");
    }
    check_positive(filter_shape, filter_name);

    FilterAxes &fa = g.filter;
    const int64_t channels = in[1];
    switch (op) {
    case Op::GroupConvolutionBackpropData:
    case Op::GroupConvolution: {
        fa.g_axis = 0;
        fa.ci_axis = op == Op::GroupConvolution ? 2 : 1;
        fa.co_axis = op == Op::GroupConvolution ? 1 : 2;
        for (int i = 0; i < d; i++) fa.k_axes.push_back(3 + i);
        g.groups = filter_shape[0];
        g.c_in = filter_shape[fa.ci_axis];
        g.c_out = filter_shape[fa.co_axis];
        const int64_t want = checked_mul(g.groups, g.c_in, "groups x C_IN");
        if (channels != want) {
            invalid(std::string(data_name) + " channels " + std::to_string(channels) + " (" + data_name + " shape " +
                    shape_str(input_shape) + ") do not match groups x C_IN = " + std::to_string(g.groups) + " x " +
                    std::to_string(g.c_in) + " = " + std::to_string(want) + " (filter shape " +
                    shape_str(filter_shape) + ", " + filter_layout_text(op, wf) + ")");
        }
        break;
    }
    case Op::ConvolutionBackpropData:
        fa.ci_axis = 0;
        fa.co_axis = 1;
        for (int i = 0; i < d; i++) fa.k_axes.push_back(2 + i);
        g.c_in = filter_shape[0];
        g.c_out = filter_shape[1];
        if (channels != g.c_in) {
            invalid(std::string(data_name) + " channels " + std::to_string(channels) + " (" + data_name + " shape " +
                    shape_str(input_shape) + ") do not match filter C_IN " + std::to_string(g.c_in) +
                    " (filter shape " + shape_str(filter_shape) + ")");
        }
        break;
    case Op::ConvolutionBackwardData: {
        g.groups = attrs.groups.value_or(1);
        if (g.groups < 1) invalid("groups is " + std::to_string(g.groups) + " but must be at least 1");
        // OC: diff_dst's channels (the op's input), IC/groups: diff_src's channels per group.
        const int o_axis = wf == WeightsFormat::OIX ? 0 : d + 1;
        const int i_axis = wf == WeightsFormat::OIX ? 1 : d;
        for (int i = 0; i < d; i++) fa.k_axes.push_back(wf == WeightsFormat::OIX ? 2 + i : i);
        const int64_t oc = filter_shape[o_axis];
        if (oc != channels) {
            invalid("weights " + std::string(weights_format_name(wf)) + " " + shape_str(filter_shape) +
                    " have OC = " + std::to_string(oc) + " but diff_dst " + shape_str(input_shape) + " has " +
                    std::to_string(channels) + " channels (" + filter_layout_text(op, wf) + ")");
        }
        if (oc % g.groups != 0) {
            invalid("OC = " + std::to_string(oc) + " (diff_dst channels) is not divisible by groups = " +
                    std::to_string(g.groups));
        }
        g.c_in = oc / g.groups;
        g.c_out = filter_shape[i_axis];
        fa.g_axis = g.groups > 1 ? o_axis : -1;
        fa.g_scale = g.c_in;
        fa.ci_axis = o_axis;
        fa.co_axis = i_axis;
        break;
    }
    }
    for (int i = 0; i < d; i++) g.kernel.push_back(filter_shape[fa.k_axes[i]]);
    return g;
}

}  // namespace detail
}  // namespace deconv
