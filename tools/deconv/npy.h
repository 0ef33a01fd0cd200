// NumPy .npy files (format versions 1.0, 2.0 and 3.0): little-endian, C order, dtypes
// '<f4' f32, '<f2' f16, '<f8' f64, '|i1' i8, '|u1' u8, '<i4' i32. bf16 has no .npy type.
//
// Reading checks the header (magic, version, dict syntax, dtype, fortran_order, shape) and
// the data size against the file size before it allocates anything; every problem is an
// IoError naming the file and what is wrong with it.
#pragma once

#include <string>

#include "host_tensor.h"

namespace deconv_cli {

struct NpyHeader {
    deconv::DType dtype = deconv::DType::f32;
    Dims shape;
    size_t data_offset = 0;  // bytes from the start of the file
};

// Parses a file's header only (also checks that the data size matches the file size).
NpyHeader read_npy_header(const std::string &path);

// Reads the whole array. Throws IoError (the file) or UsageError (too large for memory).
HostTensor read_npy(const std::string &path);

// The .npy bytes of a tensor (header and data), format 1.0. bf16 is not allowed here.
std::string npy_header_bytes(deconv::DType dtype, const Dims &shape);

// The '<f4'-style descr of a dtype; throws UsageError for bf16.
const char *npy_descr(deconv::DType dtype);

}  // namespace deconv_cli
