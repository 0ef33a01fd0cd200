#include "npy.h"

#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "errors.h"

namespace deconv_cli {

using deconv::DType;

namespace {

// A tiny parser for the Python dict literal of a .npy header, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (1, 20, 224), }
class HeaderParser {
public:
    HeaderParser(const std::string &path, const std::string &text) : path_(path), s_(text) {}

    void parse(std::string &descr, bool &fortran, Dims &shape) {
        bool have_descr = false, have_fortran = false, have_shape = false;
        skip_ws();
        expect('{');
        for (;;) {
            skip_ws();
            if (peek() == '}') {
                ++i_;
                break;
            }
            const std::string key = parse_string();
            skip_ws();
            expect(':');
            skip_ws();
            if (key == "descr") {
                if (peek() == '[')
                    fail("descr is a structured dtype (a list of fields); only plain numeric "
                         "dtypes are supported");
                descr = parse_string();
                have_descr = true;
            } else if (key == "fortran_order") {
                fortran = parse_bool();
                have_fortran = true;
            } else if (key == "shape") {
                shape = parse_tuple();
                have_shape = true;
            } else {
                fail("unknown key '" + key + "' in the header");
            }
            skip_ws();
            if (peek() == ',') {
                ++i_;
                continue;
            }
            skip_ws();
            expect('}');
            break;
        }
        skip_ws();
        if (i_ != s_.size()) fail("unexpected text after the header dict");
        if (!have_descr) fail("the header has no 'descr'");
        if (!have_fortran) fail("the header has no 'fortran_order'");
        if (!have_shape) fail("the header has no 'shape'");
    }

private:
    [[noreturn]] void fail(const std::string &what) const {
        throw IoError(path_ + ": not a valid .npy header: " + what + " (header: " + shown() + ")");
    }
    std::string shown() const {
        std::string t;
        for (char c : s_) {
            if (t.size() >= 120) {
                t += "...";
                break;
            }
            t.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : '?');
        }
        while (!t.empty() && t.back() == ' ') t.pop_back();
        return t;
    }
    char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
    void skip_ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
    }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "' at offset " + std::to_string(i_));
        ++i_;
    }
    std::string parse_string() {
        const char q = peek();
        if (q != '\'' && q != '"') fail("expected a quoted string at offset " + std::to_string(i_));
        ++i_;
        std::string out;
        while (i_ < s_.size() && s_[i_] != q) out.push_back(s_[i_++]);
        if (i_ >= s_.size()) fail("unterminated string");
        ++i_;
        return out;
    }
    bool parse_bool() {
        if (s_.compare(i_, 4, "True") == 0) {
            i_ += 4;
            return true;
        }
        if (s_.compare(i_, 5, "False") == 0) {
            i_ += 5;
            return false;
        }
        fail("fortran_order is neither True nor False");
    }
    Dims parse_tuple() {
        expect('(');
        Dims out;
        for (;;) {
            skip_ws();
            if (peek() == ')') {
                ++i_;
                return out;
            }
            if (!std::isdigit(static_cast<unsigned char>(peek())))
                fail("shape holds something other than non-negative integers at offset " +
                     std::to_string(i_));
            uint64_t v = 0;
            while (std::isdigit(static_cast<unsigned char>(peek()))) {
                if (v > (uint64_t(INT64_MAX) - 9) / 10) fail("a shape value is too large");
                v = v * 10 + static_cast<uint64_t>(s_[i_++] - '0');
            }
            if (peek() == 'L') ++i_;  // Python 2 long suffix
            out.push_back(static_cast<int64_t>(v));
            skip_ws();
            if (peek() == ',') {
                ++i_;
                continue;
            }
            skip_ws();
            expect(')');
            return out;
        }
    }

    std::string path_;
    std::string s_;
    size_t i_ = 0;
};

DType dtype_from_descr(const std::string &path, const std::string &descr) {
    if (descr.size() < 2)
        throw IoError(path + ": unsupported .npy dtype '" + descr + "'");
    const char order = descr[0];
    const std::string kind = descr.substr(1);
    if (kind == "O" || kind.rfind("O", 0) == 0)
        throw IoError(path + ": .npy dtype '" + descr + "' is an object (pickled) array; only "
                      "numeric arrays are supported");
    const bool one_byte = kind == "i1" || kind == "u1" || kind == "b1";
    if (!one_byte && order == '>')
        throw IoError(path + ": .npy dtype '" + descr + "' is big-endian; save it little-endian "
                      "(numpy: a.astype(a.dtype.newbyteorder('<')))");
    if (!one_byte && order != '<' && order != '=')
        throw IoError(path + ": unsupported .npy dtype '" + descr + "'");
    if (kind == "f4") return DType::f32;
    if (kind == "f2") return DType::f16;
    if (kind == "f8") return DType::f64;
    if (kind == "i1") return DType::i8;
    if (kind == "u1") return DType::u8;
    if (kind == "i4") return DType::i32;
    throw IoError(path + ": unsupported .npy dtype '" + descr + "'; supported: <f4 (f32), "
                  "<f2 (f16), <f8 (f64), |i1 (i8), |u1 (u8), <i4 (i32)");
}

struct FileCloser {
    void operator()(std::FILE *f) const {
        if (f) std::fclose(f);
    }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File open_for_read(const std::string &path, uint64_t &size) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        throw IoError(path + ": cannot open: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw IoError(path + ": is a directory, not a .npy file");
    File f(std::fopen(path.c_str(), "rb"));
    if (!f) throw IoError(path + ": cannot open: " + std::strerror(errno));
    size = static_cast<uint64_t>(st.st_size);
    return f;
}

NpyHeader parse_header(const std::string &path, std::FILE *f, uint64_t file_size) {
    unsigned char pre[10];
    const size_t got = std::fread(pre, 1, sizeof pre, f);
    if (got < 8 || std::memcmp(pre, "\x93NUMPY", 6) != 0)
        throw IoError(path + ": not a .npy file (no \\x93NUMPY magic at the start)");
    const int major = pre[6];
    uint64_t header_len, prefix;
    if (major == 1) {
        if (got < 10) throw IoError(path + ": truncated .npy header");
        header_len = pre[8] | (uint64_t(pre[9]) << 8);
        prefix = 10;
    } else if (major == 2 || major == 3) {
        unsigned char four[4];
        if (got < 10) throw IoError(path + ": truncated .npy header");
        four[0] = pre[8];
        four[1] = pre[9];
        if (std::fread(four + 2, 1, 2, f) != 2) throw IoError(path + ": truncated .npy header");
        header_len = four[0] | (uint64_t(four[1]) << 8) | (uint64_t(four[2]) << 16) |
                     (uint64_t(four[3]) << 24);
        prefix = 12;
    } else {
        throw IoError(path + ": unsupported .npy format version " + std::to_string(major) + "." +
                      std::to_string(pre[7]));
    }
    if (prefix + header_len > file_size)
        throw IoError(path + ": truncated: the header says it is " + std::to_string(header_len) +
                      " bytes long but the file has " + std::to_string(file_size) + " bytes");
    std::string text(static_cast<size_t>(header_len), '\0');
    if (header_len && std::fread(&text[0], 1, text.size(), f) != text.size())
        throw IoError(path + ": cannot read the .npy header");

    std::string descr;
    bool fortran = false;
    NpyHeader h;
    HeaderParser(path, text).parse(descr, fortran, h.shape);
    h.dtype = dtype_from_descr(path, descr);
    if (fortran) {
        // A Fortran-order array with at most one dim larger than 1 has the same bytes as C order,
        // but numpy would still read it transposed: refuse all of them, clearly.
        throw IoError(path + ": is stored in Fortran order (fortran_order: True); save it in C "
                      "order (numpy: np.save(f, np.ascontiguousarray(a)))");
    }
    h.data_offset = static_cast<size_t>(prefix + header_len);

    uint64_t n = 1;
    for (int64_t d : h.shape) {
        if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
            throw IoError(path + ": shape (" + join_dims(h.shape) + ") has too many elements");
    }
    uint64_t data_bytes;
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(deconv::dtype_size(h.dtype)), &data_bytes))
        throw IoError(path + ": shape (" + join_dims(h.shape) + ") has too many bytes");
    const uint64_t have = file_size - h.data_offset;
    if (have < data_bytes)
        throw IoError(path + ": truncated: shape (" + join_dims(h.shape) + ") of " +
                      deconv::dtype_name(h.dtype) + " needs " + std::to_string(data_bytes) +
                      " bytes of data but the file has " + std::to_string(have));
    if (have > data_bytes)
        throw IoError(path + ": has " + std::to_string(have - data_bytes) +
                      " bytes after the data of shape (" + join_dims(h.shape) + ") of " +
                      deconv::dtype_name(h.dtype) + "; not a plain .npy file");
    return h;
}

}  // namespace

NpyHeader read_npy_header(const std::string &path) {
    uint64_t size;
    File f = open_for_read(path, size);
    return parse_header(path, f.get(), size);
}

HostTensor read_npy(const std::string &path) {
    uint64_t size;
    File f = open_for_read(path, size);
    const NpyHeader h = parse_header(path, f.get(), size);
    const uint64_t bytes = checked_bytes(h.shape, deconv::dtype_size(h.dtype), path);
    check_memory(bytes, path + " (" + join_dims(h.shape) + " of " + deconv::dtype_name(h.dtype) + ")");
    HostTensor t;
    t.dtype = h.dtype;
    t.shape = h.shape;
    t.bytes.resize(static_cast<size_t>(bytes));
    if (std::fseek(f.get(), static_cast<long>(h.data_offset), SEEK_SET) != 0)
        throw IoError(path + ": cannot seek to the data");
    if (bytes && std::fread(t.bytes.data(), 1, t.bytes.size(), f.get()) != t.bytes.size())
        throw IoError(path + ": truncated: could not read " + std::to_string(bytes) + " bytes of data");
    return t;
}

const char *npy_descr(DType dtype) {
    switch (dtype) {
    case DType::f32: return "<f4";
    case DType::f16: return "<f2";
    case DType::f64: return "<f8";
    case DType::i8: return "|i1";
    case DType::u8: return "|u1";
    case DType::i32: return "<i4";
    case DType::bf16: break;
    }
    throw UsageError("bf16 has no .npy dtype (bf16 tensors are written as float32)");
}

std::string npy_header_bytes(DType dtype, const Dims &shape) {
    std::string dict = std::string("{'descr': '") + npy_descr(dtype) +
                       "', 'fortran_order': False, 'shape': (";
    for (size_t i = 0; i < shape.size(); ++i) {
        dict += std::to_string(shape[i]);
        if (shape.size() == 1 || i + 1 < shape.size()) dict += ", ";
    }
    dict += "), }";
    // Pad with spaces so that magic + len + dict + '\n' is a multiple of 64 bytes.
    size_t total = 10 + dict.size() + 1;
    dict.append((64 - total % 64) % 64, ' ');
    dict.push_back('\n');
    std::string out("\x93NUMPY\x01\x00", 8);
    if (dict.size() > 0xffff) throw UsageError("shape has too many dimensions for a .npy header");
    out.push_back(static_cast<char>(dict.size() & 0xff));
    out.push_back(static_cast<char>(dict.size() >> 8));
    out += dict;
    return out;
}

}  // namespace deconv_cli
