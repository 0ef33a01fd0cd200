// Files for the fuzz targets whose parsers read paths (.npy, IR .xml and its .bin, suite .json):
// the input bytes go to a file in a private directory made once per process (under $TMPDIR),
// overwritten on every input and removed at exit.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

namespace deconv_fuzz {

class ScratchFiles {
public:
    static ScratchFiles &get() {
        static ScratchFiles files;
        return files;
    }

    // Writes `size` bytes to <dir>/<name> and returns that path. Aborts when it cannot: a fuzz
    // run that silently parsed nothing would report coverage it never had.
    std::string write(const std::string &name, const void *data, size_t size) {
        const std::string path = dir_ + "/" + name;
        FILE *f = std::fopen(path.c_str(), "wb");
        if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
            std::perror(path.c_str());
            std::abort();
        }
        written_.insert(path);
        return path;
    }

    void remove(const std::string &name) { ::unlink((dir_ + "/" + name).c_str()); }

private:
    ScratchFiles() {
        const char *tmp = std::getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/deconv_fuzz_XXXXXX";
        if (!::mkdtemp(tmpl.data())) {
            std::perror(tmpl.c_str());
            std::abort();
        }
        dir_ = tmpl;
    }
    ~ScratchFiles() {
        for (const std::string &p : written_) ::unlink(p.c_str());
        ::rmdir(dir_.c_str());
    }

    std::string dir_;
    std::set<std::string> written_;
};

}  // namespace deconv_fuzz
