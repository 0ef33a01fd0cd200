// libFuzzer target: the layers.json suite reader (tools/deconv/suite.cpp), bench --suite. Only
// the command line's IoError (not JSON) and UsageError (a field with a bad value) may escape.
#include <cstddef>
#include <cstdint>

#include "errors.h"
#include "scratch_files.h"
#include "suite.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string path = deconv_fuzz::ScratchFiles::get().write("layers.json", data, size);
    try {
        deconv_cli::load_suite(path);
    } catch (const deconv_cli::IoError &) {
    } catch (const deconv_cli::UsageError &) {
    }
    return 0;
}
