#include "ir_layer.h"

#include <pugixml.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <map>

#include "errors.h"

namespace deconv_cli {

namespace {

// The layer types this command line runs.
bool is_deconv_type(const std::string &type) {
    return type == "GroupConvolutionBackpropData" || type == "ConvolutionBackpropData" ||
           type == "GroupConvolution";
}

const char *kTypes = "GroupConvolutionBackpropData, ConvolutionBackpropData or GroupConvolution";

struct Document {
    std::string path;
    pugi::xml_document doc;
    pugi::xml_node root;  // <layer> or <net>
};

void load_document(const std::string &path, Document &d) {
    d.path = path;
    std::ifstream probe(path);
    if (!probe) throw IoError(path + ": cannot open: " + std::strerror(errno));
    probe.close();
    const pugi::xml_parse_result r = d.doc.load_file(path.c_str());
    if (!r)
        throw IoError(path + ": not valid XML: " + r.description() + " at byte " +
                      std::to_string(r.offset));
    d.root = d.doc.document_element();
    const std::string root_name = d.root.name();
    if (root_name != "layer" && root_name != "net")
        throw UsageError(path + ": the root element is <" + root_name +
                         ">; expected an OpenVINO IR <net> or a single <layer>");
}

std::string layer_label(const Document &d, pugi::xml_node layer) {
    return d.path + ": layer '" + std::string(layer.attribute("name").as_string()) + "'";
}

// "2,2" -> {2, 2}; "" -> {} (the spec's default).
Dims parse_attr_list(const Document &d, pugi::xml_node layer, const char *name) {
    const pugi::xml_node data = layer.child("data");
    const pugi::xml_attribute a = data.attribute(name);
    if (!a) return {};
    const std::string text = a.as_string();
    try {
        return parse_dims(text, name);
    } catch (const UsageError &) {
        throw UsageError(layer_label(d, layer) + ": attribute " + name + "=\"" + text +
                         "\" is not a comma-separated list of integers");
    }
}

// The dims of a <port>; a "?" or "-1" dim is dynamic and kept as -1.
Dims port_dims(const Document &d, pugi::xml_node layer, pugi::xml_node port, const char *role) {
    Dims out;
    for (pugi::xml_node dim : port.children("dim")) {
        std::string t = dim.text().as_string();
        t.erase(std::remove_if(t.begin(), t.end(), [](unsigned char c) { return std::isspace(c); }),
                t.end());
        if (t == "?" || t == "-1") {
            out.push_back(-1);
            continue;
        }
        char *end = nullptr;
        errno = 0;
        const long long v = std::strtoll(t.c_str(), &end, 10);
        if (t.empty() || *end != '\0' || errno == ERANGE || v < 0)
            throw UsageError(layer_label(d, layer) + ": " + role + " port has <dim>" + t +
                             "</dim>, not a non-negative integer");
        out.push_back(v);
    }
    return out;
}

std::optional<deconv::DType> precision_dtype(const std::string &p) {
    std::string u;
    for (char c : p) u.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    if (u == "FP32" || u == "F32") return deconv::DType::f32;
    if (u == "FP16" || u == "F16") return deconv::DType::f16;
    if (u == "BF16") return deconv::DType::bf16;
    if (u == "FP64" || u == "F64") return deconv::DType::f64;
    if (u == "I8") return deconv::DType::i8;
    if (u == "U8") return deconv::DType::u8;
    if (u == "I32") return deconv::DType::i32;
    return std::nullopt;
}

pugi::xml_node find_layer_by_id(const Document &d, const std::string &id) {
    for (pugi::xml_node l : d.root.child("layers").children("layer"))
        if (id == l.attribute("id").as_string()) return l;
    return {};
}

// Tries to read the Const feeding (layer, port_id). Returns false with `why` set otherwise.
bool resolve_const_input(const Document &d, pugi::xml_node layer, const std::string &port_id,
                         Dims &values, std::string &why) {
    if (std::string(d.root.name()) != "net") {
        why = "the file holds a single <layer>, so nothing says what feeds input port " + port_id;
        return false;
    }
    const std::string layer_id = layer.attribute("id").as_string();
    pugi::xml_node edge;
    for (pugi::xml_node e : d.root.child("edges").children("edge"))
        if (layer_id == e.attribute("to-layer").as_string() &&
            port_id == e.attribute("to-port").as_string())
            edge = e;
    if (!edge) {
        why = "no <edge> leads to input port " + port_id;
        return false;
    }
    const pugi::xml_node src = find_layer_by_id(d, edge.attribute("from-layer").as_string());
    if (!src) {
        why = "the <edge> to input port " + port_id + " comes from a missing layer id " +
              edge.attribute("from-layer").as_string();
        return false;
    }
    const std::string src_type = src.attribute("type").as_string();
    if (src_type != "Const") {
        why = "input port " + port_id + " is computed by layer '" +
              std::string(src.attribute("name").as_string()) + "' of type " + src_type +
              ", not a Const";
        return false;
    }
    const pugi::xml_node data = src.child("data");
    if (pugi::xml_attribute v = data.attribute("value")) {
        try {
            values = parse_dims(v.as_string(), "value");
            return true;
        } catch (const UsageError &) {
            why = "Const '" + std::string(src.attribute("name").as_string()) + "' has value=\"" +
                  v.as_string() + "\", not a list of integers";
            return false;
        }
    }
    const std::string et = data.attribute("element_type").as_string();
    size_t esize = 0;
    bool is_signed = true;
    if (et == "i64") esize = 8;
    else if (et == "i32") esize = 4;
    else if (et == "u64") esize = 8, is_signed = false;
    else if (et == "u32") esize = 4, is_signed = false;
    else {
        why = "Const '" + std::string(src.attribute("name").as_string()) + "' has element_type '" +
              et + "', not an integer type";
        return false;
    }
    const long long offset = data.attribute("offset").as_llong(-1);
    const long long size = data.attribute("size").as_llong(-1);
    if (offset < 0 || size < 0 || size % static_cast<long long>(esize) != 0 || size > 64 * 8) {
        why = "Const '" + std::string(src.attribute("name").as_string()) +
              "' has no usable offset/size";
        return false;
    }
    std::string bin = d.path;
    if (is_xml_path(bin)) bin.resize(bin.size() - 4);
    bin += ".bin";
    std::ifstream in(bin, std::ios::binary);
    if (!in) {
        why = "its value lives in " + bin + ", which cannot be opened";
        return false;
    }
    in.seekg(0, std::ios::end);
    const long long bin_size = static_cast<long long>(in.tellg());
    if (offset > bin_size - size) {  // (offset + size would overflow for offsets near 2^63)
        why = bin + " is too short for Const '" + std::string(src.attribute("name").as_string()) +
              "' (offset " + std::to_string(offset) + ", size " + std::to_string(size) + ")";
        return false;
    }
    std::vector<unsigned char> buf(static_cast<size_t>(size));
    in.seekg(offset);
    in.read(reinterpret_cast<char *>(buf.data()), size);
    values.clear();
    for (size_t i = 0; i < buf.size(); i += esize) {
        uint64_t u = 0;
        for (size_t b = 0; b < esize; ++b) u |= static_cast<uint64_t>(buf[i + b]) << (8 * b);
        int64_t v;
        if (esize == 4) v = is_signed ? static_cast<int32_t>(u) : static_cast<int64_t>(u);
        else v = static_cast<int64_t>(u);
        values.push_back(v);
    }
    return true;
}

IrLayer read_layer(const Document &d, pugi::xml_node layer) {
    IrLayer out;
    LayerSpec &s = out.spec;
    const std::string type = layer.attribute("type").as_string();
    s.name = layer.attribute("name").as_string();
    s.origin = "IR " + d.path + " layer '" + s.name + "'";
    if (!is_deconv_type(type))
        throw UsageError(layer_label(d, layer) + " has type '" + type + "'; expected " + kTypes);
    s.op = deconv::parse_op(type);
    s.op_fixed = true;
    const bool forward = s.op == deconv::Op::GroupConvolution;

    s.attrs.strides = parse_attr_list(d, layer, "strides");
    s.attrs.pads_begin = parse_attr_list(d, layer, "pads_begin");
    s.attrs.pads_end = parse_attr_list(d, layer, "pads_end");
    s.attrs.dilations = parse_attr_list(d, layer, "dilations");
    s.attrs.output_padding = parse_attr_list(d, layer, "output_padding");
    if (pugi::xml_attribute ap = layer.child("data").attribute("auto_pad")) {
        try {
            s.attrs.auto_pad = deconv::parse_auto_pad(ap.as_string());
        } catch (const deconv::Error &) {
            throw UsageError(layer_label(d, layer) + ": attribute auto_pad=\"" +
                             std::string(ap.as_string()) +
                             "\" is not one of explicit, notset, same_upper, same_lower, valid");
        }
    }

    std::vector<pugi::xml_node> inputs;
    for (pugi::xml_node p : layer.child("input").children("port")) inputs.push_back(p);
    if (inputs.size() < 2 || inputs.size() > (forward ? 2u : 3u))
        throw UsageError(layer_label(d, layer) + " has " + std::to_string(inputs.size()) +
                         " input ports; expected 2 (data, filter)" +
                         (forward ? std::string(": GroupConvolution takes no output_shape input")
                                  : std::string(" or 3 (data, filter, output_shape)")));
    s.input_shape = port_dims(d, layer, inputs[0], "input (data)");
    s.filter_shape = port_dims(d, layer, inputs[1], "filter");
    const pugi::xml_node out_port = layer.child("output").child("port");
    if (out_port) s.declared_output = port_dims(d, layer, out_port, "output");

    std::string precision = inputs[0].attribute("precision").as_string();
    if (precision.empty() && out_port) precision = out_port.attribute("precision").as_string();
    if (!precision.empty()) s.dtype = precision_dtype(precision);

    if (inputs.size() == 3) {
        Dims values;
        std::string why;
        const std::string port_id = inputs[2].attribute("id").as_string("2");
        if (resolve_const_input(d, layer, port_id, values, why)) {
            s.output_shape = values;
        } else {
            const size_t rank = s.declared_output.size();
            const bool usable = rank >= 3 &&
                std::none_of(s.declared_output.begin() + 2, s.declared_output.end(),
                             [](int64_t v) { return v < 0; });
            if (!usable)
                throw UsageError(layer_label(d, layer) +
                                 ": cannot resolve output_shape (input port " + port_id + "): " +
                                 why + ", and the output port has no static dims; pass "
                                 "--output-shape");
            s.output_shape = Dims(s.declared_output.begin() + 2, s.declared_output.end());
            out.notes.push_back(layer_label(d, layer) + ": output_shape (input port " + port_id +
                                ") is not resolvable (" + why + "); using the output port's "
                                "spatial dims " + join_dims(*s.output_shape));
        }
    }
    return out;
}

}  // namespace

bool is_xml_path(const std::string &path) {
    if (path.size() < 4) return false;
    std::string ext = path.substr(path.size() - 4);
    for (char &c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext == ".xml";
}

IrLayer load_ir_layer(const std::string &path, const std::string &layer_name) {
    Document d;
    load_document(path, d);
    if (std::string(d.root.name()) == "layer") {
        if (!layer_name.empty() && layer_name != d.root.attribute("name").as_string())
            throw UsageError(path + ": holds a single layer named '" +
                             std::string(d.root.attribute("name").as_string()) +
                             "', not '" + layer_name + "'");
        return read_layer(d, d.root);
    }
    std::vector<pugi::xml_node> deconvs;
    for (pugi::xml_node l : d.root.child("layers").children("layer")) {
        if (!layer_name.empty()) {
            if (layer_name == l.attribute("name").as_string()) return read_layer(d, l);
        } else if (is_deconv_type(l.attribute("type").as_string())) {
            deconvs.push_back(l);
        }
    }
    if (!layer_name.empty())
        throw UsageError(path + ": no layer named '" + layer_name + "'");
    if (deconvs.empty())
        throw UsageError(path + ": the model has no " + std::string(kTypes) + " layer");
    if (deconvs.size() > 1) {
        std::string names;
        for (size_t i = 0; i < deconvs.size() && i < 8; ++i)
            names += (i ? ", '" : "'") + std::string(deconvs[i].attribute("name").as_string()) + "'";
        if (deconvs.size() > 8) names += ", ...";
        throw UsageError(path + ": the model has " + std::to_string(deconvs.size()) + " " + kTypes +
                         " layers (" + names + "); pick one with --layer-name");
    }
    return read_layer(d, deconvs[0]);
}

std::vector<IrLayer> load_ir_deconv_layers(const std::string &path) {
    Document d;
    load_document(path, d);
    std::vector<IrLayer> out;
    if (std::string(d.root.name()) == "layer") {
        out.push_back(read_layer(d, d.root));
        return out;
    }
    for (pugi::xml_node l : d.root.child("layers").children("layer"))
        if (is_deconv_type(l.attribute("type").as_string())) out.push_back(read_layer(d, l));
    if (out.empty()) throw UsageError(path + ": the model has no " + std::string(kTypes) + " layer");
    return out;
}

}  // namespace deconv_cli
