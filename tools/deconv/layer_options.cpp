#include "layer_options.h"

#include <cerrno>
#include <cstdlib>

#include "errors.h"
#include "ir_layer.h"
#include "problem_desc.h"

namespace deconv_cli {

namespace {

bool given(CLI::Option *opt) { return opt && opt->count() > 0; }

// --groups: a positive integer.
int64_t parse_groups(const std::string &text) {
    const size_t b = text.find_first_not_of(" \t"), e = text.find_last_not_of(" \t");
    const std::string t = b == std::string::npos ? std::string() : text.substr(b, e - b + 1);
    errno = 0;
    char *end = nullptr;
    const long long v = std::strtoll(t.c_str(), &end, 10);
    if (t.empty() || *end != '\0')
        throw UsageError("--groups: '" + text + "' is not an integer");
    if (errno == ERANGE) throw UsageError("--groups: '" + text + "' is out of range");
    if (v < 1) throw UsageError("--groups " + t + ": the number of groups must be at least 1");
    return static_cast<int64_t>(v);
}

}  // namespace

const CLI::Validator NonEmptyList(
    [](std::string &value) -> std::string {
        if (value.find_first_not_of(" \t") != std::string::npos) return {};
        return "the value is empty ('" + value +
               "'); give a comma-separated list, or leave the flag out for its default";
    },
    "", "NonEmptyList");  // no description: it would show in --help after the type name

std::vector<CLI::Option *> LayerOptions::layer_flags() const {
    return {o_layer, o_layer_name, o_desc, o_op, o_input_shape, o_filter_shape, o_output_shape,
            o_strides, o_pads_begin, o_pads_end, o_dilations, o_output_padding, o_auto_pad,
            o_weights_format, o_groups, o_dst_shape};
}

void add_layer_options(CLI::App &app, LayerOptions &o) {
    o.o_layer = app.add_option("--layer", o.layer_file,
        "OpenVINO IR: a file with one <layer type=\"GroupConvolutionBackpropData|"
        "ConvolutionBackpropData|GroupConvolution\"> element, or a whole IR .xml model (see "
        "--layer-name). Gives the op, the attributes and the shapes (ncx)")->type_name("FILE.xml")->group("Layer");
    o.o_layer_name = app.add_option("--layer-name", o.layer_name,
        "With a whole IR model: the name of the layer to use (optional when the model has one "
        "layer of those types)")->type_name("NAME")->group("Layer");
    o.o_desc = app.add_option("--desc", o.desc,
        "benchdnn-style descriptor, e.g. g4mb1ic20ih224oc8oh447kh3sh2ph1. Fields g mb ic id ih "
        "iw oc od oh ow kd kh kw sd sh sw dd dh dw pd ph pw n\"name\"; ic/oc are TOTAL channels "
        "(C_in per group = ic/g); defaults g=1 mb=2 s=1 d=0 p=0; missing o deduced as "
        "o=(i-1)s+(k-1)(d+1)-2p+1. NOTE: benchdnn counts dilation from 0 (d0 = none), so "
        "dh1 here is dilations=2 in OpenVINO terms. Without g the op is "
        "ConvolutionBackpropData")->type_name("DESC")->group("Layer");
    o.o_op = app.add_option("--op", o.op,
        "group_convolution_backprop_data (default; convolution_backprop_data when the filter's "
        "rank equals the data's), convolution_backprop_data, group_convolution (the forward "
        "GroupConvolution-1) or convolution_backward_data (oneDNN Graph)")->type_name("NAME")->group("Layer");
    o.o_input_shape = app.add_option("--input-shape", o.input_shape,
        "Data shape in the data format's order: N,C,X1,...,XD (ncx) or N,X1,...,XD,C (nxc); C is "
        "G*C_in (diff_dst's OC for convolution_backward_data)")->type_name("N,C,X..")->group("Layer");
    o.o_filter_shape = app.add_option("--filter-shape", o.filter_shape,
        "Filter shape: G,C_in,C_out,K1,...,KD (group_convolution_backprop_data), C_in,C_out,K1,...,KD "
        "(convolution_backprop_data), G,C_out,C_in,K1,...,KD (group_convolution), "
        "K1,...,KD,IC/G,OC (xio) or OC,IC/G,K1,...,KD (oix) (convolution_backward_data)")->type_name("DIMS")->group("Layer");
    o.o_output_shape = app.add_option("--output-shape", o.output_shape,
        "The op's optional shape input: the spatial output shape Y1,...,YD for the OpenVINO "
        "backprop ops (pads then derived, distributed by --auto-pad); the full diff_src shape "
        "(data format order) for convolution_backward_data, winning over --dst-shape; not for "
        "group_convolution")->type_name("DIMS")->group("Attributes");
    o.o_strides = app.add_option("--strides", o.strides, "s1,...,sD (default: ones)")->type_name("LIST")->group("Attributes");
    o.o_pads_begin = app.add_option("--pads-begin", o.pads_begin, "p1,...,pD (default: zeros)")->type_name("LIST")->group("Attributes");
    o.o_pads_end = app.add_option("--pads-end", o.pads_end, "p1,...,pD (default: zeros)")->type_name("LIST")->group("Attributes");
    o.o_dilations = app.add_option("--dilations", o.dilations,
        "d1,...,dD, counted from 1 as in OpenVINO (default: ones)")->type_name("LIST")->group("Attributes");
    o.o_auto_pad = app.add_option("--auto-pad", o.auto_pad,
        "explicit|same_upper|same_lower|valid (default explicit; notset and none are explicit)")->type_name("MODE")->group("Attributes");
    o.o_output_padding = app.add_option("--output-padding", o.output_padding,
        "o1,...,oD (default: zeros; not for group_convolution)")->type_name("LIST")->group("Attributes");
    o.o_data_format = app.add_option("--data-format,--layout", o.data_format,
        "ncx or nxc (channels last): the layout of the data and output (and .npy files); "
        "default ncx, nxc for convolution_backward_data")->type_name("ncx|nxc")->group("Attributes");
    o.o_groups = app.add_option("--groups", o.groups,
        "convolution_backward_data: the groups attribute (default 1)")->type_name("G")->group("Attributes");
    o.o_weights_format = app.add_option("--weights-format", o.weights_format,
        "convolution_backward_data: xio (default) or oix")->type_name("xio|oix")->group("Attributes");
    o.o_dst_shape = app.add_option("--dst-shape", o.dst_shape,
        "convolution_backward_data: the dst_shape attribute, the full diff_src shape in the data "
        "format's order (--output-shape, the op's input, wins over it)")->type_name("DIMS")->group("Attributes");
    for (CLI::Option *list : {o.o_input_shape, o.o_filter_shape, o.o_output_shape, o.o_strides,
                              o.o_pads_begin, o.o_pads_end, o.o_dilations, o.o_output_padding,
                              o.o_dst_shape})
        list->check(NonEmptyList);
}

void add_quant_options(CLI::App &app, LayerOptions &o, bool run) {
    const char *group = "Quantization and epilogue";
    o.bias_file_ok = run;
    o.o_cfg = app.add_option("--cfg", o.cfg,
        "The src, weights and dst dtypes in benchdnn's --cfg style: u8s8u8, s8s8s8, u8s8s32, u8s8f32, "
        "u8s8bf16 (s8 = i8; quantized: u8 or i8 data, i8 weights), or f32 (f16, bf16, f64) alone for a "
        "float layer with an epilogue")->type_name("CFG")->group(group);
    o.o_src_dtype = app.add_option("--src-dtype", o.src_dtype, "The data's dtype (u8, i8, or a float type)")
                        ->type_name("TYPE")->group(group);
    o.o_wei_dtype = app.add_option("--wei-dtype", o.wei_dtype, "The filter's dtype (i8 for quantized layers)")
                        ->type_name("TYPE")->group(group);
    o.o_dst_dtype = app.add_option("--dst-dtype", o.dst_dtype,
        "The output's dtype: u8, i8, i32, f32 or bf16 for quantized layers")->type_name("TYPE")->group(group);
    o.o_oscale = app.add_option("--oscale", o.oscale,
        "Output scales (benchdnn --attr-oscale style): per_tensor:V (alias common:V) one scale V; per_oc:V "
        "(alias per_channel:V) output channel c gets V*2^((c mod 5)-2), i.e. V/4, V/2, V, 2V, 4V, V/4, ...")
                     ->type_name("POLICY:V")->group(group);
    o.o_src_zp = app.add_option("--src-zp", o.src_zp, "Quantized layers: the data's zero point (default 0)")
                     ->type_name("N")->group(group);
    o.o_dst_zp = app.add_option("--dst-zp", o.dst_zp,
        "Quantized layers with an integer output: the output's zero point (default 0)")->type_name("N")->group(group);
    o.o_bias = app.add_option("--bias", o.bias,
        std::string("A bias per output channel, of this dtype: f32 or i32 (quantized layers), f32 or the layer's "
                    "dtype (float layers); random integers -32..32, seeded") +
            (run ? "; or B.npy, a file of G*C_out values (its dtype the bias's)" : ""))
                   ->type_name(run ? "DTYPE|B.npy" : "DTYPE")->group(group);
    o.o_post_ops = app.add_option("--post-ops", o.post_ops,
        "Post-ops after the scales, in order, separated by ';': an eltwise NAME[:alpha[:beta]] (relu, clip, "
        "linear, bounded_relu, tanh, logistic, abs, square, elu, swish, gelu_tanh, gelu_erf, hardswish) or "
        "sum[:scale[:zero_point]] (adds the output's earlier contents), e.g. \"relu;sum:0.5;clip:0:6\"")
                       ->type_name("LIST")->group(group);
}

bool type_flags_given(const LayerOptions &o) {
    for (CLI::Option *opt : {o.o_cfg, o.o_src_dtype, o.o_wei_dtype, o.o_dst_dtype})
        if (given(opt)) return true;
    return false;
}

bool quant_flags_given(const LayerOptions &o) {
    if (type_flags_given(o)) return true;
    for (CLI::Option *opt : {o.o_oscale, o.o_src_zp, o.o_dst_zp, o.o_bias, o.o_post_ops})
        if (given(opt)) return true;
    return false;
}

QuantFlags parse_quant_flags(const LayerOptions &o) {
    QuantFlags f;
    if (given(o.o_cfg)) f.cfg = parse_cfg_arg(o.cfg, "--cfg");
    if (given(o.o_src_dtype)) f.src = parse_quant_dtype_arg(o.src_dtype, "--src-dtype");
    if (given(o.o_wei_dtype)) f.wei = parse_quant_dtype_arg(o.wei_dtype, "--wei-dtype");
    if (given(o.o_dst_dtype)) f.dst = parse_quant_dtype_arg(o.dst_dtype, "--dst-dtype");
    if (given(o.o_oscale)) f.oscale = parse_oscale_arg(o.oscale, "--oscale");
    if (given(o.o_src_zp)) f.src_zp = parse_zero_point_arg(o.src_zp, "--src-zp");
    if (given(o.o_dst_zp)) f.dst_zp = parse_zero_point_arg(o.dst_zp, "--dst-zp");
    if (given(o.o_bias)) {
        const std::string &b = o.bias;
        if (b.size() > 4 && b.compare(b.size() - 4, 4, ".npy") == 0) {
            if (!o.bias_file_ok)
                throw UsageError("--bias '" + b + "': bench takes a bias dtype (f32, i32 or the layer's), "
                                 "not a file (its bias data is random)");
            f.bias_file = b;
        } else {
            f.bias = parse_quant_dtype_arg(b, "--bias");
        }
    }
    if (given(o.o_post_ops)) f.post_ops = parse_post_ops_arg(o.post_ops, "--post-ops");
    return f;
}

std::optional<deconv::DataFormat> data_format_flag(const LayerOptions &o) {
    if (!given(o.o_data_format)) return std::nullopt;
    return parse_data_format_arg(o.data_format, "--data-format");
}

LayerSpec resolve_layer(const LayerOptions &o, std::vector<std::string> &notes) {
    const bool has_layer = given(o.o_layer);
    const bool has_desc = given(o.o_desc);
    if (has_layer && has_desc) throw UsageError("--layer and --desc cannot be used together");
    if (given(o.o_layer_name) && !has_layer)
        throw UsageError("--layer-name '" + o.layer_name + "' needs --layer FILE.xml");

    // Flag values first: a bad name fails before any file is read.
    std::optional<deconv::Op> op;
    if (given(o.o_op)) op = parse_op_arg(o.op, "--op");
    const std::optional<deconv::DataFormat> format = data_format_flag(o);
    std::optional<deconv::WeightsFormat> weights_format;
    if (given(o.o_weights_format))
        weights_format = parse_weights_format_arg(o.weights_format, "--weights-format");
    std::optional<int64_t> groups;
    if (given(o.o_groups)) groups = parse_groups(o.groups);
    std::optional<Dims> dst_shape;
    if (given(o.o_dst_shape)) {
        dst_shape = parse_dims(o.dst_shape, "--dst-shape");
        if (dst_shape->empty()) throw UsageError("--dst-shape: '" + o.dst_shape + "' is empty");
    }
    const QuantFlags quant = parse_quant_flags(o);

    LayerSpec spec;
    if (has_layer) {
        IrLayer ir = load_ir_layer(o.layer_file, o.layer_name);
        notes.insert(notes.end(), ir.notes.begin(), ir.notes.end());
        spec = std::move(ir.spec);
        spec.op_fixed = true;
    } else if (has_desc) {
        spec = problem_desc_to_layer(parse_problem_desc(o.desc));
        spec.op_fixed = true;
    }
    if (has_layer || has_desc) spec.attrs.data_format = deconv::DataFormat::NCX;  // their shapes

    bool changed = false;
    if (op) {
        if (spec.op_fixed && spec.op != *op) changed = true;
        spec.op = *op;
        spec.op_fixed = true;
    }
    if (spec.op_fixed && spec.op == deconv::Op::GroupConvolution) {
        if (given(o.o_output_shape))
            throw UsageError("--output-shape " + o.output_shape +
                             ": group_convolution (the forward GroupConvolution-1) takes no output "
                             "shape; its output follows from strides, pads and dilations");
        if (given(o.o_output_padding))
            throw UsageError("--output-padding " + o.output_padding +
                             ": group_convolution (the forward GroupConvolution-1) has no "
                             "output_padding attribute");
    }
    // Shapes from a source are ncx; --data-format nxc reorders them. Shape flags are in the
    // data format's order already.
    if (format) {
        if (has_layer || has_desc) {
            set_data_format(spec, *format);  // the declared output too: it is still checked
        } else {
            spec.attrs.data_format = *format;
        }
    }

    if (given(o.o_input_shape)) {
        spec.input_shape = parse_dims(o.input_shape, "--input-shape");
        changed = true;
    }
    if (given(o.o_filter_shape)) {
        spec.filter_shape = parse_dims(o.filter_shape, "--filter-shape");
        changed = true;
    }
    if (given(o.o_output_shape)) {
        spec.output_shape = parse_dims(o.output_shape, "--output-shape");
        changed = true;
    }
    struct {
        CLI::Option *opt;
        const std::string *text;
        const char *flag;
        Dims *target;
    } lists[] = {
        {o.o_strides, &o.strides, "--strides", &spec.attrs.strides},
        {o.o_pads_begin, &o.pads_begin, "--pads-begin", &spec.attrs.pads_begin},
        {o.o_pads_end, &o.pads_end, "--pads-end", &spec.attrs.pads_end},
        {o.o_dilations, &o.dilations, "--dilations", &spec.attrs.dilations},
        {o.o_output_padding, &o.output_padding, "--output-padding", &spec.attrs.output_padding},
    };
    for (auto &l : lists)
        if (given(l.opt)) {
            *l.target = parse_dims(*l.text, l.flag);
            changed = true;
        }
    if (given(o.o_auto_pad)) {
        try {
            spec.attrs.auto_pad = deconv::parse_auto_pad(o.auto_pad);
        } catch (const deconv::Error &) {
            throw UsageError("--auto-pad: '" + o.auto_pad +
                             "' is not one of explicit, notset, none, same_upper, same_lower, valid");
        }
        changed = true;
    }
    if (weights_format) spec.attrs.weights_format = weights_format, changed = true;
    if (groups) spec.attrs.groups = groups, changed = true;
    if (dst_shape) spec.attrs.dst_shape = dst_shape, changed = true;
    apply_quant_flags(quant, spec);
    if (changed) {
        spec.declared_output.clear();  // the source's output no longer describes this layer
        if (!spec.origin.empty()) spec.origin += " (with flags)";
    }
    return spec;
}

}  // namespace deconv_cli
