#include "layer_options.h"

#include "errors.h"
#include "ir_layer.h"
#include "problem_desc.h"

namespace deconv_cli {

void add_layer_options(CLI::App &app, LayerOptions &o) {
    o.o_layer = app.add_option("--layer", o.layer_file,
        "OpenVINO IR: a file with one <layer type=\"GroupConvolutionBackpropData|"
        "ConvolutionBackpropData\"> element, or a whole IR .xml model (see --layer-name). "
        "Gives the op, the attributes and the shapes")->type_name("FILE.xml")->group("Layer");
    o.o_layer_name = app.add_option("--layer-name", o.layer_name,
        "With a whole IR model: the name of the layer to use (optional when the model has one "
        "deconvolution layer)")->type_name("NAME")->group("Layer");
    o.o_desc = app.add_option("--desc", o.desc,
        "benchdnn-style descriptor, e.g. g4mb1ic20ih224oc8oh447kh3sh2ph1. Fields g mb ic id ih "
        "iw oc od oh ow kd kh kw sd sh sw dd dh dw pd ph pw n\"name\"; ic/oc are TOTAL channels "
        "(C_in per group = ic/g); defaults g=1 mb=2 s=1 d=0 p=0; missing o deduced as "
        "o=(i-1)s+(k-1)(d+1)-2p+1. NOTE: benchdnn counts dilation from 0 (d0 = none), so "
        "dh1 here is dilations=2 in OpenVINO terms. Without g the op is "
        "ConvolutionBackpropData")->type_name("DESC")->group("Layer");
    o.o_input_shape = app.add_option("--input-shape", o.input_shape,
        "Data shape N,G*C_in,X1,...,XD (ncx)")->type_name("N,C,X..")->group("Layer");
    o.o_filter_shape = app.add_option("--filter-shape", o.filter_shape,
        "Filter shape G,C_in,C_out,K1,...,KD (GroupConvolutionBackpropData) or C_in,C_out,K1,...,KD "
        "(ConvolutionBackpropData: when its rank equals the data's)")->type_name("G,Ci,Co,K..")->group("Layer");
    o.o_output_shape = app.add_option("--output-shape", o.output_shape,
        "Spatial output shape Y1,...,YD (the spec's optional input 3): pads are then derived, "
        "distributed by --auto-pad")->type_name("Y..")->group("Attributes");
    o.o_strides = app.add_option("--strides", o.strides, "s1,...,sD (default: ones)")->type_name("LIST")->group("Attributes");
    o.o_pads_begin = app.add_option("--pads-begin", o.pads_begin, "p1,...,pD (default: zeros)")->type_name("LIST")->group("Attributes");
    o.o_pads_end = app.add_option("--pads-end", o.pads_end, "p1,...,pD (default: zeros)")->type_name("LIST")->group("Attributes");
    o.o_dilations = app.add_option("--dilations", o.dilations,
        "d1,...,dD, counted from 1 as in OpenVINO (default: ones)")->type_name("LIST")->group("Attributes");
    o.o_auto_pad = app.add_option("--auto-pad", o.auto_pad,
        "explicit|same_upper|same_lower|valid (default explicit; notset is explicit)")->type_name("MODE")->group("Attributes");
    o.o_output_padding = app.add_option("--output-padding", o.output_padding,
        "o1,...,oD (default: zeros)")->type_name("LIST")->group("Attributes");
}

LayerSpec resolve_layer(const LayerOptions &o, std::vector<std::string> &notes) {
    const bool has_layer = o.o_layer && o.o_layer->count() > 0;
    const bool has_desc = o.o_desc && o.o_desc->count() > 0;
    if (has_layer && has_desc) throw UsageError("--layer and --desc cannot be used together");
    if (o.o_layer_name && o.o_layer_name->count() > 0 && !has_layer)
        throw UsageError("--layer-name '" + o.layer_name + "' needs --layer FILE.xml");

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

    bool changed = false;
    auto given = [](CLI::Option *opt) { return opt && opt->count() > 0; };
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
                             "' is not one of explicit, notset, same_upper, same_lower, valid");
        }
        changed = true;
    }
    if (changed) {
        spec.declared_output.clear();  // the source's output no longer describes this layer
        if (!spec.origin.empty()) spec.origin += " (with flags)";
    }
    return spec;
}

}  // namespace deconv_cli
