// Helpers shared by the test suites (header only): mapping between the library's types and the
// reference's, JSON loading, raw typed buffers, names, message checks.
#pragma once

#include "reference.h"

#include <deconv/deconv.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace deconv_test {

using json = nlohmann::json;

// ---------------------------------------------------------------- type mapping

inline deconv_ref::DT to_ref(deconv::DType t) {
    switch (t) {
    case deconv::DType::f32: return deconv_ref::DT::f32;
    case deconv::DType::f16: return deconv_ref::DT::f16;
    case deconv::DType::bf16: return deconv_ref::DT::bf16;
    case deconv::DType::f64: return deconv_ref::DT::f64;
    case deconv::DType::i8: return deconv_ref::DT::i8;
    case deconv::DType::u8: return deconv_ref::DT::u8;
    case deconv::DType::i32: return deconv_ref::DT::i32;
    }
    return deconv_ref::DT::f32;
}

inline const std::vector<deconv::DType> &all_dtypes() {
    static const std::vector<deconv::DType> v = {
        deconv::DType::f32, deconv::DType::f16, deconv::DType::bf16, deconv::DType::f64,
        deconv::DType::i8,  deconv::DType::u8,  deconv::DType::i32};
    return v;
}

// Our own spelling of the dtype names (independent of deconv::dtype_name).
inline const char *dt_str(deconv::DType t) { return deconv_ref::dt_name(to_ref(t)); }

inline std::optional<deconv::DType> dtype_from_str(const std::string &s) {
    for (auto t : all_dtypes())
        if (s == dt_str(t)) return t;
    return std::nullopt;
}

inline deconv::AutoPad to_lib(deconv_ref::AutoPad a) {
    switch (a) {
    case deconv_ref::AutoPad::Explicit: return deconv::AutoPad::Explicit;
    case deconv_ref::AutoPad::SameUpper: return deconv::AutoPad::SameUpper;
    case deconv_ref::AutoPad::SameLower: return deconv::AutoPad::SameLower;
    case deconv_ref::AutoPad::Valid: return deconv::AutoPad::Valid;
    }
    return deconv::AutoPad::Explicit;
}

inline std::optional<deconv_ref::AutoPad> ref_auto_pad_from_str(const std::string &s) {
    if (s == "explicit" || s == "notset" || s == "none" || s.empty())
        return deconv_ref::AutoPad::Explicit;
    if (s == "same_upper") return deconv_ref::AutoPad::SameUpper;
    if (s == "same_lower") return deconv_ref::AutoPad::SameLower;
    if (s == "valid") return deconv_ref::AutoPad::Valid;
    return std::nullopt;
}

inline deconv::Attributes to_lib_attrs(const deconv_ref::Problem &p) {
    deconv::Attributes a;
    a.strides = p.strides;
    a.pads_begin = p.pads_begin;
    a.pads_end = p.pads_end;
    a.dilations = p.dilations;
    a.output_padding = p.output_padding;
    a.auto_pad = to_lib(p.auto_pad);
    return a;
}

// The library attributes of a forward (GroupConvolution) reference problem, in `format`.
inline deconv::Attributes to_lib_attrs(const deconv_ref::ForwardProblem &p,
                                       deconv::DataFormat format = deconv::DataFormat::NCX) {
    deconv::Attributes a;
    a.strides = p.strides;
    a.pads_begin = p.pads_begin;
    a.pads_end = p.pads_end;
    a.dilations = p.dilations;
    a.auto_pad = to_lib(p.auto_pad);
    a.data_format = format;
    return a;
}

// The reference problem of a library call (the inverse of to_lib_attrs); auto_pad and
// output_shape are left to the caller.
inline deconv_ref::Problem ref_problem(bool grouped, const std::vector<int64_t> &in_shape,
                                       const std::vector<int64_t> &w_shape, const deconv::Attributes &a) {
    deconv_ref::Problem p;
    p.grouped = grouped;
    p.input_shape = in_shape;
    p.filter_shape = w_shape;
    p.strides = a.strides;
    p.pads_begin = a.pads_begin;
    p.pads_end = a.pads_end;
    p.dilations = a.dilations;
    p.output_padding = a.output_padding;
    return p;
}

inline deconv::Op lib_op(const deconv_ref::Problem &p) {
    return p.grouped ? deconv::Op::GroupConvolutionBackpropData
                     : deconv::Op::ConvolutionBackpropData;
}

inline bool dtype_built(deconv::DType t) {
    const auto v = deconv::built_dtypes();
    return std::find(v.begin(), v.end(), t) != v.end();
}

inline bool rank_built(int d) {
    const auto v = deconv::built_ranks();
    return std::find(v.begin(), v.end(), d) != v.end();
}

// ---------------------------------------------------------------- strings

inline std::string lower(std::string s) {
    for (auto &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

inline std::string vec_str(const std::vector<int64_t> &v) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < v.size(); i++) os << (i ? "," : "") << v[i];
    os << "]";
    return os.str();
}

// A gtest-legal parameter name: [A-Za-z0-9_], made unique within `used`.
inline std::string sanitize_name(const std::string &raw, std::set<std::string> &used) {
    std::string s;
    for (char c : raw) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    // collapse repeated underscores and trim them at the ends
    std::string t;
    for (char c : s)
        if (!(c == '_' && !t.empty() && t.back() == '_')) t += c;
    while (!t.empty() && t.back() == '_') t.pop_back();
    while (!t.empty() && t.front() == '_') t.erase(t.begin());
    if (t.empty()) t = "case";
    std::string u = t;
    for (int i = 2; used.count(u); i++) u = t + "_" + std::to_string(i);
    used.insert(u);
    return u;
}

// Checks that an error message is non-empty and contains (case-insensitively) at least one of
// the keywords.
inline ::testing::AssertionResult message_names(const std::string &msg,
                                                const std::vector<std::string> &any_of) {
    if (msg.empty()) return ::testing::AssertionFailure() << "empty error message";
    const std::string m = lower(msg);
    for (const auto &k : any_of)
        if (m.find(lower(k)) != std::string::npos) return ::testing::AssertionSuccess();
    auto f = ::testing::AssertionFailure();
    f << "message \"" << msg << "\" names none of:";
    for (const auto &k : any_of) f << " \"" << k << "\"";
    return f;
}

// ---------------------------------------------------------------- JSON

// Loads a JSON file; on failure returns a json null and sets `error`.
inline json load_json(const std::string &path, std::string *error) {
    std::ifstream f(path);
    if (!f) {
        if (error) *error = "cannot open " + path;
        return json();
    }
    try {
        return json::parse(f);
    } catch (const std::exception &e) {
        if (error) *error = "cannot parse " + path + ": " + e.what();
        return json();
    }
}

inline std::vector<int64_t> ivec(const json &j) {
    std::vector<int64_t> v;
    if (j.is_null()) return v;
    for (const auto &x : j) v.push_back(x.get<int64_t>());
    return v;
}

inline std::vector<double> dvec(const json &j) {
    std::vector<double> v;
    if (j.is_null()) return v;
    for (const auto &x : j) v.push_back(x.get<double>());
    return v;
}

// ---------------------------------------------------------------- raw buffers

// A dense typed buffer with guard zones before and after it (filled with a byte pattern) to
// detect out-of-bounds writes.
struct Buffer {
    static constexpr size_t kGuard = 64;  // bytes each side
    static constexpr unsigned char kGuardByte = 0xA5;

    deconv::DType dtype = deconv::DType::f32;
    std::vector<int64_t> shape;
    int64_t count = 0;
    std::vector<unsigned char> bytes;

    Buffer() = default;
    Buffer(deconv::DType t, std::vector<int64_t> s, int64_t elements = -1)
        : dtype(t), shape(std::move(s)) {
        count = elements >= 0 ? elements : deconv_ref::product(shape);
        bytes.assign(kGuard * 2 + static_cast<size_t>(count) * elem(), kGuardByte);
    }
    size_t elem() const { return deconv_ref::dt_size(to_ref(dtype)); }
    void *data() { return bytes.data() + kGuard; }
    const void *data() const { return bytes.data() + kGuard; }
    double get(int64_t i) const { return deconv_ref::load(to_ref(dtype), data(), i); }
    void set(int64_t i, double v) { deconv_ref::store(to_ref(dtype), data(), i, v); }
    void fill_bytes(unsigned char b) {
        std::memset(data(), b, static_cast<size_t>(count) * elem());
    }
    bool guards_intact() const {
        for (size_t i = 0; i < kGuard; i++)
            if (bytes[i] != kGuardByte || bytes[bytes.size() - 1 - i] != kGuardByte) return false;
        return true;
    }
    std::vector<unsigned char> payload() const {
        return std::vector<unsigned char>(bytes.begin() + kGuard, bytes.end() - kGuard);
    }
    deconv::TensorView view() { return deconv::TensorView{data(), dtype, shape, {}}; }
    deconv::ConstTensorView cview() const { return deconv::ConstTensorView(data(), dtype, shape); }
};

// Stores the values (rounded/saturated to the dtype) and returns what was actually stored.
inline std::vector<double> fill(Buffer &b, const std::vector<double> &values) {
    std::vector<double> stored(values.size());
    for (size_t i = 0; i < values.size(); i++) {
        b.set(static_cast<int64_t>(i), values[i]);
        stored[i] = b.get(static_cast<int64_t>(i));
    }
    return stored;
}

// Whether the running CPU variant has the speed families (cmake/DeconvKernels.cmake, kernel
// tiers): every variant but the fallback of a build of several x86-64 variants, whose layers run
// on the core families. Route checks that name a speed family's kernel apply where it holds.
inline bool speed_families_here() {
#if defined(__x86_64__)
    const std::vector<std::string> built = deconv::built_cpu_variants();
    return !(built.size() > 1 && deconv::cpu_variant() == built.back());
#else
    return true;
#endif
}

// Runs the library's free function for the problem.
inline void run_free(const deconv_ref::Problem &p, const deconv::ConstTensorView &in,
                     const deconv::ConstTensorView &w, const deconv::TensorView &out) {
    const auto attrs = to_lib_attrs(p);
    if (p.grouped)
        deconv::group_convolution_backprop_data(in, w, out, attrs, p.output_shape);
    else
        deconv::convolution_backprop_data(in, w, out, attrs, p.output_shape);
}

}  // namespace deconv_test
