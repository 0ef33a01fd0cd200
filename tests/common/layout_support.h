// Test-side layout conversions between NCX ([N, C, X..]) and NXC ([N, X.., C]) shapes and
// dense values, written independently of the library (which must not check itself).
#pragma once

#include "reference.h"

#include <deconv/deconv.h>

#include <cstdint>
#include <vector>

namespace deconv_test {

// [N, C, X1..XD] -> [N, X1..XD, C]
inline std::vector<int64_t> nxc_shape(const std::vector<int64_t> &ncx) {
    std::vector<int64_t> s{ncx[0]};
    s.insert(s.end(), ncx.begin() + 2, ncx.end());
    s.push_back(ncx[1]);
    return s;
}

inline std::vector<int64_t> shape_in(deconv::DataFormat f, const std::vector<int64_t> &ncx) {
    return f == deconv::DataFormat::NXC ? nxc_shape(ncx) : ncx;
}

// Dense NCX values of shape `ncx` -> dense NXC.
template <class T>
std::vector<T> ncx_to_nxc(const std::vector<T> &v, const std::vector<int64_t> &ncx) {
    const int64_t n = ncx[0], c = ncx[1];
    const int64_t x = deconv_ref::product(ncx) / (n * c);
    std::vector<T> out(v.size());
    for (int64_t i = 0; i < n; i++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t p = 0; p < x; p++) out[(i * x + p) * c + ch] = v[(i * c + ch) * x + p];
    return out;
}

// Dense NXC values whose NCX shape is `ncx` -> dense NCX.
template <class T>
std::vector<T> nxc_to_ncx(const std::vector<T> &v, const std::vector<int64_t> &ncx) {
    const int64_t n = ncx[0], c = ncx[1];
    const int64_t x = deconv_ref::product(ncx) / (n * c);
    std::vector<T> out(v.size());
    for (int64_t i = 0; i < n; i++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t p = 0; p < x; p++) out[(i * c + ch) * x + p] = v[(i * x + p) * c + ch];
    return out;
}

// The reference result in the given data format (values, abs sums and term counts permuted).
inline deconv_ref::Result result_in(deconv::DataFormat f, const deconv_ref::Result &r) {
    if (f == deconv::DataFormat::NCX) return r;
    deconv_ref::Result o = r;
    const auto &s = r.shape.output_shape;
    o.output = ncx_to_nxc(r.output, s);
    o.abs_sum = ncx_to_nxc(r.abs_sum, s);
    o.terms = ncx_to_nxc(r.terms, s);
    o.shape.output_shape = nxc_shape(s);
    return o;
}

}  // namespace deconv_test
