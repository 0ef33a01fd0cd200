#include "suite_layer.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <stdexcept>

namespace deconv_asb {

std::vector<int64_t> SuiteLayer::input_shape() const {
    std::vector<int64_t> s = {n, g * c_in};
    s.insert(s.end(), x.begin(), x.end());
    return s;
}

std::vector<int64_t> SuiteLayer::filter_shape() const {
    std::vector<int64_t> s = {g, c_in, c_out};
    s.insert(s.end(), k.begin(), k.end());
    return s;
}

std::vector<SuiteLayer> read_suite_layers(const std::string &path, const std::vector<std::string> &names) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open suite " + path);
    const nlohmann::json suite = nlohmann::json::parse(in);
    std::vector<SuiteLayer> out;
    for (const std::string &want : names) {
        const nlohmann::json *found = nullptr;
        for (const auto &l : suite.at("layers"))
            if (l.at("name").get<std::string>() == want) found = &l;
        if (!found) throw std::runtime_error("no layer '" + want + "' in " + path);
        const nlohmann::json &l = *found;
        SuiteLayer s;
        s.name = want;
        s.n = l.at("N");
        s.g = l.at("G");
        s.c_in = l.at("C_in");
        s.c_out = l.at("C_out");
        s.x = l.at("X").get<std::vector<int64_t>>();
        s.k = l.at("K").get<std::vector<int64_t>>();
        s.strides = l.at("strides").get<std::vector<int64_t>>();
        s.pads_begin = l.at("pads_begin").get<std::vector<int64_t>>();
        s.pads_end = l.at("pads_end").get<std::vector<int64_t>>();
        s.dilations = l.at("dilations").get<std::vector<int64_t>>();
        s.output_padding = l.at("output_padding").get<std::vector<int64_t>>();
        s.dtype = l.value("dtype", "f32");
        s.layout = l.value("layout", "ncx");
        if (s.dtype != "f32" || s.layout != "ncx")
            throw std::runtime_error("layer '" + want + "' is " + s.dtype + " " + s.layout +
                                     ": this tool measures f32 ncx layers only");
        out.push_back(s);
    }
    return out;
}

}  // namespace deconv_asb
