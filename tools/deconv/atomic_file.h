// Output files that appear whole or not at all: the bytes go to a temporary file in the target's
// directory (created when the AtomicFile is constructed, so that an unwritable destination fails
// before any computation), and commit() renames it over the target. A file never committed is
// removed by the destructor. An existing target that is not a regular file (a device such as
// /dev/null or /dev/full, a pipe) is written in place instead.
#pragma once

#include <string>

namespace deconv_cli {

class AtomicFile {
public:
    // Creates "<dir>/.<name>.tmp-XXXXXX". Throws IoError naming `path`.
    explicit AtomicFile(const std::string &path);
    ~AtomicFile();
    AtomicFile(const AtomicFile &) = delete;
    AtomicFile &operator=(const AtomicFile &) = delete;

    void write(const void *data, size_t size);
    // Flushes, closes and renames onto the target. Throws IoError.
    void commit();

    const std::string &path() const { return path_; }

private:
    std::string path_, tmp_;
    int fd_ = -1;
    bool committed_ = false;
};

}  // namespace deconv_cli
