#include "dims.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "errors.h"

namespace deconv_cli {

Dims parse_dims(const std::string &text, const std::string &what) {
    Dims out;
    std::string token;
    auto flush = [&](bool final_token) {
        // Trim spaces.
        size_t b = token.find_first_not_of(" \t");
        size_t e = token.find_last_not_of(" \t");
        std::string t = b == std::string::npos ? std::string() : token.substr(b, e - b + 1);
        if (t.empty()) {
            // "" alone is an empty list (the spec default); an empty item inside a list is not.
            if (final_token && out.empty()) return;
            throw UsageError(what + ": '" + text + "' has an empty item");
        }
        errno = 0;
        char *end = nullptr;
        long long v = std::strtoll(t.c_str(), &end, 10);
        if (end == t.c_str() || *end != '\0')
            throw UsageError(what + ": '" + t + "' in '" + text + "' is not an integer");
        if (errno == ERANGE)
            throw UsageError(what + ": '" + t + "' in '" + text + "' is out of range");
        out.push_back(static_cast<int64_t>(v));
        token.clear();
    };
    for (char c : text) {
        if (c == ',') {
            flush(false);
        } else {
            token.push_back(c);
        }
    }
    flush(true);
    return out;
}

std::string join_dims(const Dims &dims, char sep) {
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i) s.push_back(sep);
        s += std::to_string(dims[i]);
    }
    return s;
}

uint64_t checked_elements(const Dims &dims, const std::string &what) {
    uint64_t n = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] < 0)
            throw UsageError(what + ": dimension " + std::to_string(i) + " is " +
                             std::to_string(dims[i]) + " (shape " + join_dims(dims) + ")");
        uint64_t r;
        if (__builtin_mul_overflow(n, static_cast<uint64_t>(dims[i]), &r))
            throw UsageError(what + ": shape " + join_dims(dims) + " has too many elements");
        n = r;
    }
    return n;
}

uint64_t checked_bytes(const Dims &dims, size_t element_size, const std::string &what) {
    uint64_t n = checked_elements(dims, what), r;
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(element_size), &r))
        throw UsageError(what + ": shape " + join_dims(dims) + " needs more bytes than 2^64");
    return r;
}

uint64_t checked_add(uint64_t a, uint64_t b, const std::string &what) {
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r)) throw UsageError(what + ": size overflows");
    return r;
}

uint64_t memory_limit_bytes() {
    const uint64_t hard = uint64_t(64) << 30;
    uint64_t avail = hard;
    std::ifstream in("/proc/meminfo");
    std::string key;
    uint64_t kib;
    std::string unit;
    while (in >> key >> kib) {
        std::getline(in, unit);
        if (key == "MemAvailable:") {
            avail = kib * 1024;
            break;
        }
    }
    return std::min(hard, avail);
}

void check_memory(uint64_t bytes, const std::string &what) {
    const uint64_t limit = memory_limit_bytes();
    if (bytes > limit)
        throw UsageError(what + " needs " + human_bytes(bytes) + ", more than the " +
                         human_bytes(limit) + " this machine can give (limit: 64 GiB or the "
                         "available memory)");
}

std::string human_bytes(uint64_t bytes) {
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        ++u;
    }
    char buf[64];
    if (u == 0)
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    else
        std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return buf;
}

}  // namespace deconv_cli
