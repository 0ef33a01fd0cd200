// Helpers for the library's error messages: every message names the offending value.
#pragma once

#include "deconv/deconv.h"

#include <cstdint>
#include <string>
#include <vector>

namespace deconv {
namespace detail {

// "[1, 20, 224, 224]"
inline std::string shape_str(const std::vector<int64_t> &v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); i++) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

[[noreturn]] inline void invalid(const std::string &msg) { throw Error(ErrorKind::InvalidArgument, msg); }

}  // namespace detail
}  // namespace deconv
