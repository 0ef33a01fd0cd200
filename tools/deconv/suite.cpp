#include "suite.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "errors.h"
#include "ir_layer.h"

namespace deconv_cli {

namespace {

using nlohmann::json;

struct EntryReader {
    const std::string &path;
    const json &entry;
    std::string label;

    [[noreturn]] void bad(const std::string &field, const std::string &why) const {
        throw UsageError(path + ": " + label + ": field '" + field + "' " + why);
    }

    bool has(const char *field) const { return entry.contains(field) && !entry.at(field).is_null(); }

    int64_t integer(const char *field) const {
        if (!has(field)) bad(field, "is missing");
        const json &v = entry.at(field);
        if (!v.is_number_integer()) bad(field, "must be an integer, not " + v.dump());
        return v.get<int64_t>();
    }

    Dims list(const char *field, bool required) const {
        if (!has(field)) {
            if (required) bad(field, "is missing");
            return {};
        }
        const json &v = entry.at(field);
        if (!v.is_array()) bad(field, "must be an array of integers, not " + v.dump());
        Dims out;
        for (const json &x : v) {
            if (!x.is_number_integer()) bad(field, "must be an array of integers, not " + v.dump());
            out.push_back(x.get<int64_t>());
        }
        return out;
    }

    std::string string(const char *field, const std::string &dflt) const {
        if (!has(field)) return dflt;
        const json &v = entry.at(field);
        if (!v.is_string()) bad(field, "must be a string, not " + v.dump());
        return v.get<std::string>();
    }

    bool boolean(const char *field) const {
        if (!has(field)) return false;
        const json &v = entry.at(field);
        if (!v.is_boolean()) bad(field, "must be true or false, not " + v.dump());
        return v.get<bool>();
    }
};

LayerSpec read_entry(const std::string &path, const json &entry, size_t index) {
    if (!entry.is_object())
        throw UsageError(path + ": layers[" + std::to_string(index) + "] is not an object");
    EntryReader r{path, entry, "layers[" + std::to_string(index) + "]"};
    LayerSpec l;
    l.name = r.string("name", "");
    if (l.name.empty()) r.bad("name", "is missing or empty");
    r.label += " ('" + l.name + "')";
    l.origin = path + " layer '" + l.name + "'";

    const std::string op = r.string("op", "GroupConvolutionBackpropData");
    try {
        l.op = deconv::parse_op(op);
    } catch (const deconv::Error &) {
        r.bad("op", "is '" + op + "'; expected GroupConvolutionBackpropData, ConvolutionBackpropData, "
                    "GroupConvolution or ConvolutionBackwardData");
    }
    l.op_fixed = true;

    const int64_t n = r.integer("N"), g = r.integer("G"), cin = r.integer("C_in"),
                  cout = r.integer("C_out");
    for (auto [field, v] : {std::pair<const char *, int64_t>{"N", n}, {"G", g}, {"C_in", cin}, {"C_out", cout}})
        if (v < 0 || v > (int64_t(1) << 40)) r.bad(field, "is " + std::to_string(v) + ", out of range");
    if (g < 1) r.bad("G", "is " + std::to_string(g) + "; it must be at least 1");
    const Dims x = r.list("X", true), k = r.list("K", true);
    if (l.op == deconv::Op::ConvolutionBackpropData && g != 1)
        r.bad("G", "is " + std::to_string(g) + " but op ConvolutionBackpropData has no groups");
    int64_t channels;
    if (__builtin_mul_overflow(g, cin, &channels)) r.bad("C_in", "times G overflows");
    l.input_shape = {n, channels};
    l.input_shape.insert(l.input_shape.end(), x.begin(), x.end());
    const std::string weights_format = r.string("weights_format", "");
    if (!weights_format.empty() && l.op != deconv::Op::ConvolutionBackwardData)
        r.bad("weights_format", "belongs to op ConvolutionBackwardData only");
    auto with_k = [&](Dims lead) {
        lead.insert(lead.end(), k.begin(), k.end());
        return lead;
    };
    switch (l.op) {
    case deconv::Op::GroupConvolutionBackpropData: l.filter_shape = with_k({g, cin, cout}); break;
    case deconv::Op::ConvolutionBackpropData: l.filter_shape = with_k({cin, cout}); break;
    case deconv::Op::GroupConvolution: l.filter_shape = with_k({g, cout, cin}); break;
    case deconv::Op::ConvolutionBackwardData: {
        // C_in per group of diff_dst (OC = G*C_in), C_out per group of diff_src (IC/G).
        deconv::WeightsFormat wf = deconv::WeightsFormat::XIO;
        if (!weights_format.empty()) {
            try {
                wf = deconv::parse_weights_format(weights_format);
            } catch (const deconv::Error &) {
                r.bad("weights_format", "is '" + weights_format + "'; expected xio or oix");
            }
        }
        l.attrs.weights_format = wf;
        l.attrs.groups = g;
        if (wf == deconv::WeightsFormat::OIX) {
            l.filter_shape = with_k({channels, cout});
        } else {
            l.filter_shape = k;
            l.filter_shape.push_back(cout);
            l.filter_shape.push_back(channels);
        }
        break;
    }
    }

    l.attrs.strides = r.list("strides", false);
    l.attrs.pads_begin = r.list("pads_begin", false);
    l.attrs.pads_end = r.list("pads_end", false);
    l.attrs.dilations = r.list("dilations", false);
    l.attrs.output_padding = r.list("output_padding", false);
    const std::string auto_pad = r.string("auto_pad", "explicit");
    try {
        l.attrs.auto_pad = deconv::parse_auto_pad(auto_pad);
    } catch (const deconv::Error &) {
        r.bad("auto_pad", "is '" + auto_pad + "'; expected explicit, same_upper, same_lower or valid");
    }
    if (r.has("output_shape")) l.output_shape = r.list("output_shape", true);

    const std::string dtype = r.string("dtype", "f32");
    try {
        l.dtype = deconv::parse_dtype(dtype);
    } catch (const deconv::Error &) {
        r.bad("dtype", "is '" + dtype + "'; expected f32, f16, bf16, f64, i8, u8 or i32");
    }
    // The fields give ncx shapes; "layout": "nxc" runs the layer channels-last (data_format NXC).
    l.attrs.data_format = deconv::DataFormat::NCX;
    const std::string layout = r.string("layout", "ncx");
    if (layout != "ncx" && layout != "nxc") r.bad("layout", "is '" + layout + "'; expected ncx or nxc");
    set_data_format(l, layout == "nxc" ? deconv::DataFormat::NXC : deconv::DataFormat::NCX);
    l.scale = r.boolean("scale");

    // Quantization and epilogue: the flags' syntax (layer_options.h), flags override them.
    auto what = [&](const char *field) { return path + ": " + r.label + ": field '" + field + "'"; };
    QuantFlags q;
    if (r.has("cfg")) q.cfg = parse_cfg_arg(r.string("cfg", ""), what("cfg"));
    if (r.has("src_dtype")) q.src = parse_quant_dtype_arg(r.string("src_dtype", ""), what("src_dtype"));
    if (r.has("wei_dtype")) q.wei = parse_quant_dtype_arg(r.string("wei_dtype", ""), what("wei_dtype"));
    if (r.has("dst_dtype")) q.dst = parse_quant_dtype_arg(r.string("dst_dtype", ""), what("dst_dtype"));
    if (r.has("oscale")) q.oscale = parse_oscale_arg(r.string("oscale", ""), what("oscale"));
    for (auto [field, target] : {std::pair<const char *, std::optional<int32_t> *>{"src_zp", &q.src_zp},
                                 {"dst_zp", &q.dst_zp}}) {
        if (!r.has(field)) continue;
        const int64_t v = r.integer(field);
        if (v < INT32_MIN || v > INT32_MAX) r.bad(field, "is " + std::to_string(v) + ", out of the 32-bit range");
        *target = static_cast<int32_t>(v);
    }
    if (r.has("bias")) q.bias = parse_quant_dtype_arg(r.string("bias", ""), what("bias"));
    if (r.has("post_ops")) {
        const json &v = entry.at("post_ops");
        std::string text;
        if (v.is_string()) {
            text = v.get<std::string>();
        } else if (v.is_array()) {  // ["relu", "sum:0.5"]
            for (const json &item : v) {
                if (!item.is_string()) r.bad("post_ops", "must be a string or an array of strings, not " + v.dump());
                text += (text.empty() ? "" : ";") + item.get<std::string>();
            }
        } else {
            r.bad("post_ops", "must be a string or an array of strings, not " + v.dump());
        }
        q.post_ops = parse_post_ops_arg(text, what("post_ops"));
    }
    apply_quant_flags(q, l);
    return l;
}

}  // namespace

Suite load_suite(const std::string &path) {
    Suite suite;
    suite.path = path;
    if (is_xml_path(path)) {
        for (IrLayer &l : load_ir_deconv_layers(path)) {
            suite.notes.insert(suite.notes.end(), l.notes.begin(), l.notes.end());
            suite.layers.push_back(std::move(l.spec));
        }
        return suite;
    }
    std::ifstream in(path);
    if (!in) throw IoError(path + ": cannot open: " + std::strerror(errno));
    json doc;
    try {
        doc = json::parse(in);
    } catch (const json::exception &e) {  // parse_error, or out_of_range: a number past double
        throw IoError(path + ": not valid JSON: " + e.what());
    }
    const json *layers = nullptr;
    if (doc.is_object() && doc.contains("layers")) layers = &doc.at("layers");
    else if (doc.is_array()) layers = &doc;
    if (!layers || !layers->is_array())
        throw UsageError(path + ": expected an object with a \"layers\" array (as in "
                         "bench/layers.json)");
    for (size_t i = 0; i < layers->size(); ++i) suite.layers.push_back(read_entry(path, (*layers)[i], i));
    if (suite.layers.empty()) throw UsageError(path + ": the suite has no layers");
    return suite;
}

}  // namespace deconv_cli
