// libFuzzer target: the .npy reader (tools/deconv/npy.cpp) on arbitrary file contents. A file
// it accepts must hold exactly the bytes its header promises; a file it rejects must be
// rejected with the command line's IoError or UsageError (anything else escapes and is a crash).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "errors.h"
#include "npy.h"
#include "scratch_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string path = deconv_fuzz::ScratchFiles::get().write("input.npy", data, size);
    try {
        const deconv_cli::NpyHeader h = deconv_cli::read_npy_header(path);
        const deconv_cli::HostTensor t = deconv_cli::read_npy(path);
        if (t.dtype != h.dtype || t.shape != h.shape) std::abort();
        if (h.data_offset + t.bytes.size() != size) std::abort();
    } catch (const deconv_cli::IoError &) {
    } catch (const deconv_cli::UsageError &) {
    }
    return 0;
}
