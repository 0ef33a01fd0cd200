// libFuzzer target: the OpenVINO IR reader (tools/deconv/ir_layer.cpp), a single <layer> file
// and a whole model picked by --layer-name, with the model's .bin beside it (the Const values of
// output_shape inputs are read from there).
//
// Input: "<layer name>\n<xml>" optionally followed by "\n#bin\n<bin bytes>". An empty name
// loads the file's only layer (a single <layer> element or a model with one deconvolution);
// every input is also read as a suite of all the model's layers (bench --suite model.xml).
// Only the command line's IoError and UsageError may escape the reader.
#include <cstddef>
#include <cstdint>
#include <string>

#include "errors.h"
#include "ir_layer.h"
#include "scratch_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    const size_t eol = text.find('\n');
    const std::string name = eol == std::string::npos ? std::string() : text.substr(0, eol);
    std::string xml = eol == std::string::npos ? text : text.substr(eol + 1);
    static const std::string kBinMarker = "\n#bin\n";
    auto &files = deconv_fuzz::ScratchFiles::get();
    const size_t bin_at = xml.find(kBinMarker);
    if (bin_at != std::string::npos) {
        const std::string bin = xml.substr(bin_at + kBinMarker.size());
        files.write("model.bin", bin.data(), bin.size());
        xml.resize(bin_at);
    } else {
        files.remove("model.bin");
    }
    const std::string path = files.write("model.xml", xml.data(), xml.size());
    try {
        deconv_cli::load_ir_layer(path, name);
    } catch (const deconv_cli::IoError &) {
    } catch (const deconv_cli::UsageError &) {
    }
    try {
        deconv_cli::load_ir_deconv_layers(path);
    } catch (const deconv_cli::IoError &) {
    } catch (const deconv_cli::UsageError &) {
    }
    return 0;
}
