#include "atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "errors.h"

namespace deconv_cli {

AtomicFile::AtomicFile(const std::string &path) : path_(path) {
    if (path.empty()) throw UsageError("the output file name is empty");
    struct stat st;
    const bool exists = ::stat(path.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) throw IoError(path + ": is a directory");
    if (exists && !S_ISREG(st.st_mode)) {
        // A device or a pipe (/dev/null, /dev/stdout, a FIFO): written in place. Renaming a
        // temporary file over it would replace the device node itself (as root, /dev/null
        // would become a regular file), and there is no partial file to avoid.
        fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd_ < 0) throw IoError(path + ": cannot open for writing: " + std::strerror(errno));
        return;
    }
    const size_t slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    tmp_ = dir + "." + base + ".tmp-XXXXXX";
    std::vector<char> buf(tmp_.begin(), tmp_.end());
    buf.push_back('\0');
    fd_ = ::mkstemp(buf.data());
    if (fd_ < 0) throw IoError(path + ": cannot create the file: " + std::strerror(errno));
    tmp_ = buf.data();
    // mkstemp makes 0600; give the result the usual 0666 & ~umask.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd_, 0666 & ~mask);
}

AtomicFile::~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicFile::write(const void *data, size_t size) {
    const char *p = static_cast<const char *>(data);
    while (size > 0) {
        const size_t chunk = size < (size_t(1) << 30) ? size : (size_t(1) << 30);
        const ssize_t n = ::write(fd_, p, chunk);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw IoError(path_ + ": cannot write: " + std::strerror(errno));
        }
        p += n;
        size -= static_cast<size_t>(n);
    }
}

void AtomicFile::commit() {
    if (::close(fd_) != 0) {
        fd_ = -1;
        throw IoError(path_ + ": cannot write: " + std::strerror(errno));
    }
    fd_ = -1;
    if (tmp_.empty()) return;  // written in place: nothing to rename
    if (::rename(tmp_.c_str(), path_.c_str()) != 0)
        throw IoError(path_ + ": cannot rename the temporary file onto it: " + std::strerror(errno));
    committed_ = true;
}

}  // namespace deconv_cli
