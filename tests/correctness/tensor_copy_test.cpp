// The dispatcher's strided copies (runtime/kernels/tensor_copy.cpp) against element-by-element copies:
// transposes of every size around the 8x8 (and bytes' 16x16) tiles and their masked edges (the layout twins'
// channel-position transposes), the cross and inner axes' chunks, and the element sizes of every dtype.
#include "kernels/tensor_copy.h"  // runtime/

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

using deconv::detail::copy_tensor;

// Row-major strides of `shape` in the axis order `order` (order[0] outermost).
std::vector<int64_t> strides_in_order(const std::vector<int64_t> &shape, const std::vector<size_t> &order,
                                      int64_t pad = 0) {
    std::vector<int64_t> st(shape.size());
    int64_t s = 1;
    for (size_t k = order.size(); k-- > 0;) {
        st[order[k]] = s;
        s *= shape[order[k]] + (k + 1 == order.size() ? pad : 0);  // `pad`: spare elements per row
    }
    return st;
}

template <typename T>
::testing::AssertionResult copies_exactly(const std::vector<int64_t> &shape, const std::vector<size_t> &src_order,
                                          const std::vector<size_t> &dst_order, int64_t src_pad) {
    const std::vector<int64_t> ss = strides_in_order(shape, src_order, src_pad), ds = strides_in_order(shape, dst_order);
    int64_t count = 1, src_span = 1, dst_span = 1;
    for (size_t a = 0; a < shape.size(); a++) {
        count *= shape[a];
        src_span += (shape[a] - 1) * ss[a];
        dst_span += (shape[a] - 1) * ds[a];
    }
    // The source exactly as large as its last element: a read past it would leave the buffer
    // (AddressSanitizer builds see it).
    std::vector<T> src(src_span), dst(dst_span, T(0)), want(dst_span, T(0));
    for (int64_t i = 0; i < src_span; i++) src[i] = T(i * 7 + 3);
    std::vector<int64_t> idx(shape.size(), 0);
    for (int64_t e = 0; e < count; e++) {
        int64_t so = 0, d = 0;
        for (size_t a = 0; a < shape.size(); a++) {
            so += idx[a] * ss[a];
            d += idx[a] * ds[a];
        }
        want[d] = src[so];
        for (size_t a = shape.size(); a-- > 0;) {
            if (++idx[a] < shape[a]) break;
            idx[a] = 0;
        }
    }
    copy_tensor(reinterpret_cast<const uint8_t *>(src.data()), ss, reinterpret_cast<uint8_t *>(dst.data()), ds, shape,
                sizeof(T));
    for (int64_t i = 0; i < dst_span; i++) {
        if (std::memcmp(&dst[i], &want[i], sizeof(T)) != 0) {
            return ::testing::AssertionFailure() << "destination element " << i << " differs";
        }
    }
    return ::testing::AssertionSuccess();
}

// [rows, cols] <-> [cols, rows] for every size from 1 to 19 each way (the 8x8 tiles, their
// ragged edges and corners), and across the cross axis's 64-element chunks.
TEST(TensorCopy, TransposesOfEverySizeAroundTheTiles) {
    std::vector<int64_t> sizes(19);
    std::iota(sizes.begin(), sizes.end(), 1);
    for (int64_t extra : {63, 64, 65, 130}) sizes.push_back(extra);
    for (int64_t r : sizes) {
        for (int64_t c : sizes) {
            const std::vector<int64_t> shape = {r, c};
            EXPECT_TRUE(copies_exactly<uint32_t>(shape, {0, 1}, {1, 0}, 0)) << r << " x " << c << ", 4 bytes";
            EXPECT_TRUE(copies_exactly<uint16_t>(shape, {0, 1}, {1, 0}, 0)) << r << " x " << c << ", 2 bytes";
            EXPECT_TRUE(copies_exactly<uint8_t>(shape, {0, 1}, {1, 0}, 0)) << r << " x " << c << ", 1 byte";
        }
    }
}

// Transposes whose inner axis (the destination's rows) spans several of the copy's inner chunks
// (1024 elements): a 3D twin's output of one image, [X, C] to [C, X], and the way back, with
// ragged chunk ends, channel counts under and over a tile, outer axes and padded source rows,
// past the parallel threshold; and rows 4 KiB apart, which the byte transposes take on their
// 8x8 tiles (16 such rows share one L1 set).
TEST(TensorCopy, TransposesAcrossInnerChunks) {
    for (const std::vector<int64_t> &shape :
         std::vector<std::vector<int64_t>>{{2500, 70}, {3001, 5}, {2, 2049, 64}, {1, 4100, 13}, {40, 4096}}) {
        std::vector<size_t> order(shape.size()), swapped;
        std::iota(order.begin(), order.end(), 0);
        swapped = order;
        std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
        for (int64_t pad : {0, 3}) {
            const std::string what = std::to_string(shape[shape.size() - 2]) + " x " +
                                      std::to_string(shape.back()) + ", pad " + std::to_string(pad);
            EXPECT_TRUE(copies_exactly<uint32_t>(shape, order, swapped, pad)) << what;
            EXPECT_TRUE(copies_exactly<uint32_t>(shape, swapped, order, pad)) << what << ", back";
            EXPECT_TRUE(copies_exactly<uint16_t>(shape, order, swapped, pad)) << what << ", 2 bytes";
            EXPECT_TRUE(copies_exactly<uint8_t>(shape, order, swapped, pad)) << what << ", 1 byte";
        }
    }
}

// Rows a multiple of 4 KiB apart on one side, which moves through a staged block of 16 rows of a
// line (bytes both ways; floats where the source's rows are the planes): planes of 4096 and 8192
// bytes, of 1024 and 2048 floats, channel counts under, at and over a block and ragged, an outer
// axis, and source planes 4 KiB apart holding 4000 bytes or 1000 floats (ragged block ends).
TEST(TensorCopy, TransposesOfPlanesFourKibApart) {
    for (int64_t channels : {5, 16, 37, 64, 70, 130}) {
        for (int64_t plane : {4096, 8192}) {
            const std::vector<int64_t> shape = {channels, plane}, outer = {2, channels, plane};
            const std::string what = std::to_string(channels) + " x " + std::to_string(plane);
            EXPECT_TRUE(copies_exactly<uint8_t>(shape, {0, 1}, {1, 0}, 0)) << what << " bytes, to channels last";
            EXPECT_TRUE(copies_exactly<uint8_t>(shape, {1, 0}, {0, 1}, 0)) << what << " bytes, to channels first";
            EXPECT_TRUE(copies_exactly<uint8_t>(outer, {0, 1, 2}, {0, 2, 1}, 0)) << what << " bytes, 2 images";
            EXPECT_TRUE(copies_exactly<uint8_t>(outer, {0, 2, 1}, {0, 1, 2}, 0)) << what << " bytes, 2 images back";
            const std::vector<int64_t> floats = {channels, plane / 4};
            EXPECT_TRUE(copies_exactly<uint32_t>(floats, {0, 1}, {1, 0}, 0)) << what << " / 4 floats, to channels last";
            EXPECT_TRUE(copies_exactly<uint32_t>(floats, {1, 0}, {0, 1}, 0)) << what << " / 4 floats, to channels first";
        }
        const std::string what = std::to_string(channels) + " channels";
        EXPECT_TRUE(copies_exactly<uint8_t>({channels, 4000}, {0, 1}, {1, 0}, 96)) << what << ", 4000 of 4096 bytes";
        EXPECT_TRUE(copies_exactly<uint32_t>({channels, 1000}, {0, 1}, {1, 0}, 24)) << what << ", 1000 of 1024 floats";
    }
}

// Every element size, with outer axes and source rows longer than their elements (a view).
TEST(TensorCopy, EveryElementSizeWithOuterAxes) {
    for (const std::vector<int64_t> &shape : std::vector<std::vector<int64_t>>{{2, 20, 37}, {3, 5, 9, 8}, {1, 447, 8}}) {
        std::vector<size_t> order(shape.size()), swapped;
        std::iota(order.begin(), order.end(), 0);
        swapped = order;
        std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
        for (int64_t pad : {0, 3}) {
            const std::string what = std::to_string(shape.size()) + "D, pad " + std::to_string(pad);
            EXPECT_TRUE(copies_exactly<uint8_t>(shape, order, swapped, pad)) << what;
            EXPECT_TRUE(copies_exactly<uint16_t>(shape, order, swapped, pad)) << what;
            EXPECT_TRUE(copies_exactly<uint32_t>(shape, order, swapped, pad)) << what;
            EXPECT_TRUE(copies_exactly<uint64_t>(shape, order, swapped, pad)) << what;
            EXPECT_TRUE(copies_exactly<uint32_t>(shape, swapped, order, pad)) << what << ", back";
            EXPECT_TRUE(copies_exactly<uint32_t>(shape, order, order, pad)) << what << ", same order";
        }
    }
}

// Axes contiguous in both tensors are copied as one (the positions and channels of a channels-last
// row), where the destination has margins between rows (a zero-bordered input copy), small and
// past the parallel threshold; the margins stay untouched.
TEST(TensorCopy, ContiguousAxesAcrossBorderedRows) {
    for (const std::vector<int64_t> &shape : std::vector<std::vector<int64_t>>{{2, 40, 16}, {3, 4000, 16}, {2, 3, 5, 7}}) {
        const size_t rank = shape.size();
        std::vector<int64_t> ss(rank), ds(rank);
        int64_t s = 1, d = 1;
        for (size_t a = rank; a-- > 0;) {
            ss[a] = s;
            ds[a] = d;
            s *= shape[a];
            d *= shape[a] + (a == 1 ? 4 : 0);  // a margin of 2 on either side of axis 1
        }
        int64_t count = 1, dst_span = 1;
        for (size_t a = 0; a < rank; a++) {
            count *= shape[a];
            dst_span += (shape[a] - 1) * ds[a];
        }
        const int64_t origin = 2 * ds[1];
        std::vector<uint32_t> src(count), dst(origin + dst_span + 2 * ds[1], 0xdeadbeef), want = dst;
        std::iota(src.begin(), src.end(), 1u);
        std::vector<int64_t> idx(rank, 0);
        for (int64_t e = 0; e < count; e++) {
            int64_t o = origin;
            for (size_t a = 0; a < rank; a++) o += idx[a] * ds[a];
            want[o] = src[e];
            for (size_t a = rank; a-- > 0;) {
                if (++idx[a] < shape[a]) break;
                idx[a] = 0;
            }
        }
        copy_tensor(reinterpret_cast<const uint8_t *>(src.data()), ss, reinterpret_cast<uint8_t *>(dst.data() + origin),
                    ds, shape, sizeof(uint32_t));
        EXPECT_EQ(dst, want) << shape.size() << "D, " << count << " elements";
    }
}

}  // namespace
