#include "kernels/tensor_copy.h"

#include "kernels/x86_features.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace deconv {
namespace detail {
namespace {

// The copy after its shape is simplified: `inner` is the destination's fastest axis, `cross` the
// source's when that differs (n_cross == 1: the same axis), `outer` every other axis.
struct CopyPlan {
    const uint8_t *src;
    uint8_t *dst;
    size_t elem;
    int64_t n_inner, s_inner, d_inner;  // extent, source stride, destination stride of `inner`
    int64_t n_cross = 1, s_cross = 0, d_cross = 0;
    std::vector<int64_t> n_outer, s_outer, d_outer;
    int64_t outer_count = 1;
    int64_t items = 1;  // outer_count x chunks of the cross axis
};

// Tile edge of the transposing copy: 16 elements of 4 bytes is one cache line per tile row.
constexpr int64_t kTile = 16;

#if defined(__x86_64__)
// 8x8 tiles of 4-byte elements with AVX2 shuffles: eight row loads, 24 shuffles, eight row
// stores per 64 elements (the scalar tile loop moves one element per load and store).
// transpose8x8_regs: the shuffles, rows r[0..7] in, columns t[0..7] out.
__attribute__((target("avx2"))) inline void transpose8x8_regs(__m256 r[8], __m256 t[8]) {
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; i++) {
        r[4 * i + 0] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 1] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 4; i++) {
        t[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
        t[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
    }
}

__attribute__((target("avx2"))) void transpose8x8_avx2(const uint32_t *s, int64_t s_row, uint32_t *d,
                                                       int64_t d_row) {
    __m256 r[8], t[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(reinterpret_cast<const float *>(s + i * s_row));
    transpose8x8_regs(r, t);
    for (int i = 0; i < 8; i++) _mm256_storeu_ps(reinterpret_cast<float *>(d + i * d_row), t[i]);
}

// The ragged edges of the same transpose: `rows` (<= 8) source rows of `cols` (<= 8) elements,
// read with masked loads (nothing past them: they may end the tensor; the lanes beyond are
// zero), and `cols` destination rows of `rows` elements written with masked stores. Where the
// edges went element by element, a layer of 20 channels per position spent a fifth of its run
// in the last 4 channels' loop (ov_spec_2d_nxc's input transpose).
__attribute__((target("avx2"))) void transpose_edge_avx2(const uint32_t *s, int64_t s_row, uint32_t *d,
                                                         int64_t d_row, int rows, int cols) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i load_mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), lane);
    const __m256i store_mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(rows), lane);
    __m256 r[8], t[8];
    for (int i = 0; i < 8; i++) {
        r[i] = i < rows ? _mm256_maskload_ps(reinterpret_cast<const float *>(s + i * s_row), load_mask)
                        : _mm256_setzero_ps();
    }
    transpose8x8_regs(r, t);
    for (int j = 0; j < cols; j++) _mm256_maskstore_ps(reinterpret_cast<float *>(d + j * d_row), store_mask, t[j]);
}

// 8x8 tiles of 2-byte elements (f16, bf16, i16) with SSE2 (every x86-64): eight row loads,
// 24 unpacks, eight row stores per 64 elements.
void transpose8x8_u16_sse2(const uint16_t *s, int64_t s_row, uint16_t *d, int64_t d_row) {
    __m128i r[8], t[8];
    for (int i = 0; i < 8; i++) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i * s_row));
    for (int i = 0; i < 4; i++) {  // pairs of rows: 16-bit interleave
        t[2 * i] = _mm_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; i++) {  // quads of rows: 32-bit interleave
        r[4 * i + 0] = _mm_unpacklo_epi32(t[4 * i + 0], t[4 * i + 2]);
        r[4 * i + 1] = _mm_unpackhi_epi32(t[4 * i + 0], t[4 * i + 2]);
        r[4 * i + 2] = _mm_unpacklo_epi32(t[4 * i + 1], t[4 * i + 3]);
        r[4 * i + 3] = _mm_unpackhi_epi32(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int i = 0; i < 4; i++) {  // all eight rows: 64-bit interleave
        t[2 * i] = _mm_unpacklo_epi64(r[i], r[i + 4]);
        t[2 * i + 1] = _mm_unpackhi_epi64(r[i], r[i + 4]);
    }
    for (int i = 0; i < 8; i++) _mm_storeu_si128(reinterpret_cast<__m128i *>(d + i * d_row), t[i]);
}

// 8x8 tiles of bytes (u8 and i8 tensors: the quantized layers' layout changes) with SSE2: eight
// 8-byte row loads, 12 unpacks, eight 8-byte row stores per 64 elements. Element by element, the
// channels-last copy of a u8 layer's input and the way back took as long as its kernels
// (dilated_s1, 64 channels at 56x56: 29% of the run against 37% in the kernels).
void transpose8x8_u8_sse2(const uint8_t *s, int64_t s_row, uint8_t *d, int64_t d_row) {
    __m128i r[8], t[4], u[4];
    for (int i = 0; i < 8; i++) r[i] = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(s + i * s_row));
    for (int i = 0; i < 4; i++) t[i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]);  // rows 2i, 2i+1 by column
    for (int i = 0; i < 2; i++) {                                                    // four rows by column
        u[2 * i] = _mm_unpacklo_epi16(t[2 * i], t[2 * i + 1]);
        u[2 * i + 1] = _mm_unpackhi_epi16(t[2 * i], t[2 * i + 1]);
    }
    for (int i = 0; i < 2; i++) {  // eight rows by column: columns 4i..4i+3, two per register
        const __m128i lo = _mm_unpacklo_epi32(u[i], u[i + 2]), hi = _mm_unpackhi_epi32(u[i], u[i + 2]);
        _mm_storel_epi64(reinterpret_cast<__m128i *>(d + (4 * i + 0) * d_row), lo);
        _mm_storel_epi64(reinterpret_cast<__m128i *>(d + (4 * i + 1) * d_row), _mm_unpackhi_epi64(lo, lo));
        _mm_storel_epi64(reinterpret_cast<__m128i *>(d + (4 * i + 2) * d_row), hi);
        _mm_storel_epi64(reinterpret_cast<__m128i *>(d + (4 * i + 3) * d_row), _mm_unpackhi_epi64(hi, hi));
    }
}

// 16x16 tiles of bytes with SSE2: sixteen 16-byte row loads, four rounds of 16 unpacks (each
// round interleaves row k with row k + 8: four rounds transpose 2^4 rows), sixteen 16-byte row
// stores, per 256 elements: 0.375 instructions a byte where the 8x8 tiles take 0.5, and whole
// 16-byte pieces of each line.
void transpose16x16_u8_sse2(const uint8_t *s, int64_t s_row, uint8_t *d, int64_t d_row) {
    __m128i a[16], b[16];
    for (int i = 0; i < 16; i++) a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i * s_row));
    for (int round = 0; round < 4; round++) {
        for (int k = 0; k < 8; k++) {
            b[2 * k] = _mm_unpacklo_epi8(a[k], a[k + 8]);
            b[2 * k + 1] = _mm_unpackhi_epi8(a[k], a[k + 8]);
        }
        for (int i = 0; i < 16; i++) a[i] = b[i];
    }
    for (int i = 0; i < 16; i++) _mm_storeu_si128(reinterpret_cast<__m128i *>(d + i * d_row), a[i]);
}
#endif

#if defined(__x86_64__)
// A transpose (source rows along the cross axis, destination rows along the inner one) of x in
// [x0, x1) and i in [i0, i1) by 8x8 tiles of `tile`, the ragged edges element by element.
// `edge` (may be null): a partial tile of so many rows and columns, for the edges too.
// A chunk of the inner axis (kInnerChunk) keeps the source rows that a cross step reads half of
// in L2 for the next step, which reads their other half: a whole transpose per cross step read
// a 3D twin's 28 MB output (64 channels x 48^3 positions, one image) eight times from memory.
// Stepping the inner axis outside the cross axis instead writes every destination row at once
// (64 streams of lines 128 KiB apart), which measured 1.5-1.8x slower.
template <typename T>
void copy_8x8_tiles(const CopyPlan &c, const uint8_t *src, uint8_t *dst, int64_t x0, int64_t x1, int64_t i0,
                    int64_t i1, void (*tile)(const T *, int64_t, T *, int64_t),
                    void (*edge)(const T *, int64_t, T *, int64_t, int, int) = nullptr) {
    const T *s = reinterpret_cast<const T *>(src);
    T *d = reinterpret_cast<T *>(dst);
    const int64_t x8 = x0 + (x1 - x0) / 8 * 8, i8 = i0 + (i1 - i0) / 8 * 8;
    for (int64_t x = x0; x < x8; x += 8)
        for (int64_t i = i0; i < i8; i += 8) tile(s + i * c.s_inner + x, c.s_inner, d + x * c.d_cross + i, c.d_cross);
    if (edge) {
        for (int64_t x = x0; x < x1; x += 8) {
            const int cols = (int)std::min<int64_t>(8, x1 - x);
            for (int64_t i = x < x8 ? i8 : i0; i < i1; i += 8) {
                edge(s + i * c.s_inner + x, c.s_inner, d + x * c.d_cross + i, c.d_cross,
                     (int)std::min<int64_t>(8, i1 - i), cols);
            }
        }
        return;
    }
    for (int64_t x = x0; x < x1; x++) {
        const int64_t from = x < x8 ? i8 : i0;
        for (int64_t i = from; i < i1; i++) d[x * c.d_cross + i] = s[i * c.s_inner + x];
    }
}
#endif

#if defined(__x86_64__)
// Whether 16 rows `row_bytes` apart fall in L1 sets (64-byte lines, 4 KiB of sets) at most 8 to a
// set. Rows a multiple of 4 KiB apart all share one set, more than its ways: a 3D layer's planes
// of 64^3 bytes on 16x16 tiles took its transposes from 20% to 26% of its run.
bool rows_spread(int64_t row_bytes) {
    int count[64] = {};
    for (int64_t k = 0; k < 16; k++) {
        if (++count[((k * row_bytes) >> 6) & 63] > 8) return false;
    }
    return true;
}

// Where one side's rows do not spread (planes a multiple of 4 KiB apart: 64x64 or 32x32x32 bytes,
// 32x32 floats), that side moves through a block of 16 rows of 64 bytes in L1: each of its lines
// read or written whole in one burst, the tiles' transposes (`Tile` elements square) between the
// block and the other side, whose rows spread. On tiles alone, lines of one set evicted each
// other between their pieces. Zen 4, 2 threads, to channels last: 128 channels of 32^3 bytes
// 0.78 -> 0.18 ms, of 64^3 bytes 11.8 -> 6.7 ms, of 64x64 floats 0.29 -> 0.09 ms, of 128x128
// floats 0.61 -> 0.35 ms; back to channels first, 64 channels of 128^2 bytes 0.16 -> 0.08 ms, of
// 32^3 bytes 0.29 -> 0.15.
// Destinations past kStagedDestinationBytes keep the tiles: there, 16 rows written at once rather
// than 8 cost more than the bursts save (64 channels of 64^3 bytes, 16 MiB, 1.6 -> 1.8 ms; of
// 128^3, 3.5 -> 4.1).
constexpr int64_t kStagedDestinationBytes = int64_t(8) << 20;

template <typename T, int Tile>
void copy_staged_blocks(const CopyPlan &c, const uint8_t *src, uint8_t *dst, int64_t x0, int64_t x1, int64_t i0,
                        int64_t i1, bool dst_side, void (*tile)(const T *, int64_t, T *, int64_t),
                        void (*tile8)(const T *, int64_t, T *, int64_t),
                        void (*edge)(const T *, int64_t, T *, int64_t, int, int)) {
    constexpr int64_t kRows = 16, kLine = 64 / sizeof(T);  // the block: 16 rows of one line
    alignas(64) T block[kRows * kLine];
    const T *s = reinterpret_cast<const T *>(src);
    T *d = reinterpret_cast<T *>(dst);
    // The block's rows run along the staged side's rows: the cross axis's for the destination
    // (rows d_cross apart, a line of the inner axis each), the inner axis's for the source.
    const int64_t x_step = dst_side ? kRows : kLine, i_step = dst_side ? kLine : kRows;
    const int64_t xb = x0 + (x1 - x0) / x_step * x_step, ib = i0 + (i1 - i0) / i_step * i_step;
    for (int64_t x = x0; x < xb; x += x_step)
        for (int64_t i = i0; i < ib; i += i_step) {
            if (dst_side) {
                for (int64_t xr = 0; xr < kRows; xr += Tile)
                    for (int64_t ie = 0; ie < kLine; ie += Tile)
                        tile(s + (i + ie) * c.s_inner + x + xr, c.s_inner, block + xr * kLine + ie, kLine);
                for (int64_t r = 0; r < kRows; r++) std::memcpy(d + (x + r) * c.d_cross + i, block + r * kLine, 64);
            } else {
                for (int64_t r = 0; r < kRows; r++) std::memcpy(block + r * kLine, s + (i + r) * c.s_inner + x, 64);
                for (int64_t ir = 0; ir < kRows; ir += Tile)
                    for (int64_t xe = 0; xe < kLine; xe += Tile)
                        tile(block + ir * kLine + xe, kLine, d + (x + xe) * c.d_cross + i + ir, c.d_cross);
            }
        }
    copy_8x8_tiles<T>(c, src, dst, xb, x1, i0, i1, tile8, edge);
    copy_8x8_tiles<T>(c, src, dst, x0, xb, ib, i1, tile8, edge);
}

// Whether each side's rows spread over L1's sets (rows_spread).
struct RowsSpread {
    bool src, dst;
};
RowsSpread rows_spread(const CopyPlan &c) {
    return {rows_spread(c.s_inner * (int64_t)c.elem), rows_spread(c.d_cross * (int64_t)c.elem)};
}

// Whether to stage a side (copy_staged_blocks): 0 none, 1 the source, 2 the destination (where
// `destination` allows: bytes; floats' 8x8 tiles write half lines, 8 rows of them, which one set's
// ways hold, and staging them cost 1.1-2x).
int staged_side(const CopyPlan &c, RowsSpread spread, bool destination) {
    if (!spread.src && spread.dst) return 1;
    if (destination && spread.src && !spread.dst && c.n_cross * c.n_inner * (int64_t)c.elem <= kStagedDestinationBytes)
        return 2;
    return 0;
}

// Bytes by 16x16 tiles where both sides' rows spread over L1's sets, through a staged block
// where one side's do not (copy_staged_blocks), the ragged columns and rows (or all of it, where
// neither side's rows spread) by 8x8 tiles and elements (copy_8x8_tiles). On 8x8 tiles alone the
// transposes took 30% of unet_up4's run as u8 (64 and 128 channels at 392x392 and 196x196), on
// these 22%; two 16x16 tiles a step on AVX2 registers took 24%.
void copy_byte_tiles(const CopyPlan &c, const uint8_t *src, uint8_t *dst, int64_t x0, int64_t x1, int64_t i0,
                     int64_t i1) {
    const RowsSpread spread = rows_spread(c);
    if (const int side = staged_side(c, spread, true))
        return copy_staged_blocks<uint8_t, 16>(c, src, dst, x0, x1, i0, i1, side == 2, transpose16x16_u8_sse2,
                                               transpose8x8_u8_sse2, nullptr);
    if (!spread.src || !spread.dst)
        return copy_8x8_tiles<uint8_t>(c, src, dst, x0, x1, i0, i1, transpose8x8_u8_sse2);
    const int64_t x16 = x0 + (x1 - x0) / 16 * 16, i16 = i0 + (i1 - i0) / 16 * 16;
    for (int64_t x = x0; x < x16; x += 16)
        for (int64_t i = i0; i < i16; i += 16)
            transpose16x16_u8_sse2(src + i * c.s_inner + x, c.s_inner, dst + x * c.d_cross + i, c.d_cross);
    copy_8x8_tiles<uint8_t>(c, src, dst, x16, x1, i0, i1, transpose8x8_u8_sse2);
    copy_8x8_tiles<uint8_t>(c, src, dst, x0, x16, i16, i1, transpose8x8_u8_sse2);
}
#endif

// Copies x in [x0, x1) of the cross axis and i in [i0, i1) of the inner one by tiles over
// (cross, inner): each tile row writes consecutive destination elements and reads one element
// from each of kTile source rows that stay in cache across the tile.
template <typename T>
void copy_rows(const CopyPlan &c, const uint8_t *src, uint8_t *dst, int64_t x0, int64_t x1, int64_t i0, int64_t i1) {
    const T *s = reinterpret_cast<const T *>(src);
    T *d = reinterpret_cast<T *>(dst);
    if (c.n_cross == 1) {
        if (c.s_inner == 1 && c.d_inner == 1) {
            std::memcpy(d + i0, s + i0, (size_t)(i1 - i0) * sizeof(T));
            return;
        }
        for (int64_t i = i0; i < i1; i++) d[i * c.d_inner] = s[i * c.s_inner];
        return;
    }
#if defined(__x86_64__)
    if (c.s_cross == 1 && c.d_inner == 1) {
        if constexpr (sizeof(T) == 4) {
            if (cpu_has_avx2()) {
                if (const int side = staged_side(c, rows_spread(c), false))
                    return copy_staged_blocks<uint32_t, 8>(c, src, dst, x0, x1, i0, i1, side == 2, transpose8x8_avx2,
                                                           transpose8x8_avx2, transpose_edge_avx2);
                return copy_8x8_tiles<uint32_t>(c, src, dst, x0, x1, i0, i1, transpose8x8_avx2, transpose_edge_avx2);
            }
        } else if constexpr (sizeof(T) == 2) {
            return copy_8x8_tiles<uint16_t>(c, src, dst, x0, x1, i0, i1, transpose8x8_u16_sse2);
        } else if constexpr (sizeof(T) == 1) {
            return copy_byte_tiles(c, src, dst, x0, x1, i0, i1);
        }
    }
#endif
    for (int64_t xt = x0; xt < x1; xt += kTile) {
        const int64_t xe = std::min(x1, xt + kTile);
        for (int64_t it = i0; it < i1; it += kTile) {
            const int64_t ie = std::min(i1, it + kTile);
            for (int64_t x = xt; x < xe; x++) {
                const T *sr = s + x * c.s_cross;
                T *dr = d + x * c.d_cross;
                for (int64_t i = it; i < ie; i++) dr[i * c.d_inner] = sr[i * c.s_inner];
            }
        }
    }
}

// `rows` rows of `row_bytes` each, `d_step` / `s_step` bytes apart. Rows of 16, 32 or 64 bytes (a
// group of a group-major copy: 8 f32 channels) as fixed-size copies the compiler inlines: through
// the library's memcpy, the 32-byte rows of a 32-group layer's copy took longer than its kernels.
template <size_t Bytes>
void copy_fixed_rows(uint8_t *d, const uint8_t *s, int64_t rows, int64_t d_step, int64_t s_step) {
    for (int64_t r = 0; r < rows; r++, s += s_step, d += d_step) std::memcpy(d, s, Bytes);
}

void copy_dense_rows(uint8_t *d, const uint8_t *s, int64_t rows, size_t row_bytes, int64_t d_step, int64_t s_step) {
    switch (row_bytes) {
    case 16: return copy_fixed_rows<16>(d, s, rows, d_step, s_step);
    case 32: return copy_fixed_rows<32>(d, s, rows, d_step, s_step);
    case 64: return copy_fixed_rows<64>(d, s, rows, d_step, s_step);
    default:
        for (int64_t r = 0; r < rows; r++, s += s_step, d += d_step) std::memcpy(d, s, row_bytes);
    }
}

// `blocks` transposes of b x c 4-byte elements, each dense at both ends: d[ci * b + gi] =
// s[gi * c + ci], blocks `d_step` / `s_step` elements apart (the group-block kernels' input copy:
// b groups of c channels at each position, groups innermost; bordered_input.h). The shapes of 4
// and 8 lanes' blocks (2 x 4, 2 x 8, 4 x 4) as SSE shuffles: through the 8x8 transposes' masked
// edges, the copy of 64 groups of 4 channels at 56x56 took a third of the kernels' time.
void transpose_blocks(uint32_t *d, const uint32_t *s, int64_t blocks, int64_t b, int64_t c, int64_t d_step,
                      int64_t s_step) {
#if defined(__x86_64__)
    const auto load = [](const uint32_t *at) { return _mm_loadu_ps(reinterpret_cast<const float *>(at)); };
    const auto store = [](uint32_t *at, __m128 v) { _mm_storeu_ps(reinterpret_cast<float *>(at), v); };
    if (b == 2 && (c == 4 || c == 8)) {
        // The two groups' channels interleaved, four at a time: unpacklo/hi.
        for (int64_t k = 0; k < blocks; k++, s += s_step, d += d_step)
            for (int64_t h = 0; h < c; h += 4) {
                const __m128 r0 = load(s + h), r1 = load(s + c + h);
                store(d + 2 * h, _mm_unpacklo_ps(r0, r1));
                store(d + 2 * h + 4, _mm_unpackhi_ps(r0, r1));
            }
        return;
    }
    if (b == 4 && c == 4) {
        for (int64_t k = 0; k < blocks; k++, s += s_step, d += d_step) {
            __m128 r0 = load(s), r1 = load(s + 4), r2 = load(s + 8), r3 = load(s + 12);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            store(d, r0);
            store(d + 4, r1);
            store(d + 8, r2);
            store(d + 12, r3);
        }
        return;
    }
#endif
    for (int64_t k = 0; k < blocks; k++, s += s_step, d += d_step)
        for (int64_t gi = 0; gi < b; gi++)
            for (int64_t ci = 0; ci < c; ci++) d[ci * b + gi] = s[gi * c + ci];
}

// Work items: every outer index times chunks of the cross axis times, in transposes, chunks of
// the inner axis (so that a transpose of one large 2D slice still spreads over the threads: a 1D
// layer's [C, X] to [X, C] along its positions, the way back along them too, a 3D twin's output
// of one image, [X, C] to [C, X] with 64 channels, was one item on one thread).
constexpr int64_t kCrossChunk = 64;
constexpr int64_t kInnerChunk = 1024;  // a multiple of the tiles' 16

int64_t cross_chunks(const CopyPlan &c) { return (c.n_cross + kCrossChunk - 1) / kCrossChunk; }
// Elements of the inner axis per item: kInnerChunk in transposes, the whole axis otherwise.
int64_t inner_chunk(const CopyPlan &c) { return c.n_cross > 1 ? kInnerChunk : c.n_inner; }
int64_t inner_chunks(const CopyPlan &c) { return (c.n_inner + inner_chunk(c) - 1) / inner_chunk(c); }

void copy_items(const CopyPlan &c, int64_t begin, int64_t end) {
    const size_t dims = c.n_outer.size();
    const int64_t chunks = cross_chunks(c), pieces = inner_chunks(c);
    std::vector<int64_t> idx(dims, 0);
    int64_t rem = begin / (chunks * pieces);
    for (size_t a = dims; a-- > 0;) {
        idx[a] = rem % c.n_outer[a];
        rem /= c.n_outer[a];
    }
    int64_t chunk = begin / pieces % chunks, piece = begin % pieces;
    // Offsets of the current outer index, kept up to date by the odometer below (rows of a
    // bordered copy are a few hundred bytes: recomputing them per row cost a tenth of the copy).
    int64_t so = 0, dof = 0;
    for (size_t a = 0; a < dims; a++) {
        so += idx[a] * c.s_outer[a];
        dof += idx[a] * c.d_outer[a];
    }
    // Dense rows (the bordered input copy of a channels-first layer): whole runs along the
    // innermost outer axis as one memcpy per row and two pointer steps. Going through the general
    // item loop cost as much time as the memcpy calls themselves for rows of 64 floats
    // (centernet_dla_dw: 4096 rows per run).
    const bool dense_rows = c.n_cross == 1 && c.s_inner == 1 && c.d_inner == 1 && dims > 0;
    // Small dense blocks transposed (transpose_blocks): whole runs along the innermost outer axis too.
    const bool small_blocks = c.elem == 4 && c.n_cross > 1 && c.n_inner * c.n_cross <= 16 && c.s_cross == 1 &&
                              c.s_inner == c.n_cross && c.d_inner == 1 && c.d_cross == c.n_inner && chunks == 1 &&
                              pieces == 1 && dims > 0;
    // The next outer index, counting from axis `from - 1` outwards (an odometer).
    auto step_outer = [&](size_t from) {
        for (size_t a = from; a-- > 0;) {
            so += c.s_outer[a];
            dof += c.d_outer[a];
            if (++idx[a] < c.n_outer[a]) return;
            so -= c.s_outer[a] * c.n_outer[a];
            dof -= c.d_outer[a] * c.n_outer[a];
            idx[a] = 0;
        }
    };
    for (int64_t item = begin; item < end;) {
        if (dense_rows || small_blocks) {
            const size_t last = dims - 1;
            const int64_t run = std::min(end - item, c.n_outer[last] - idx[last]);
            const size_t row_bytes = (size_t)c.n_inner * c.elem;
            const int64_t s_step = c.s_outer[last] * (int64_t)c.elem, d_step = c.d_outer[last] * (int64_t)c.elem;
            const uint8_t *s = c.src + so * (int64_t)c.elem;
            uint8_t *d = c.dst + dof * (int64_t)c.elem;
            if (small_blocks) {
                transpose_blocks(reinterpret_cast<uint32_t *>(d), reinterpret_cast<const uint32_t *>(s), run, c.n_inner,
                                 c.n_cross, c.d_outer[last], c.s_outer[last]);
            } else {
                copy_dense_rows(d, s, run, row_bytes, d_step, s_step);
            }
            item += run;
            idx[last] += run;
            so += run * c.s_outer[last];
            dof += run * c.d_outer[last];
            if (idx[last] < c.n_outer[last]) continue;
            so -= c.s_outer[last] * c.n_outer[last];
            dof -= c.d_outer[last] * c.n_outer[last];
            idx[last] = 0;
            step_outer(last);
            continue;
        }
        const uint8_t *s = c.src + so * (int64_t)c.elem;
        uint8_t *d = c.dst + dof * (int64_t)c.elem;
        const int64_t x0 = chunk * kCrossChunk, x1 = std::min(c.n_cross, x0 + kCrossChunk);
        const int64_t i0 = piece * inner_chunk(c), i1 = std::min(c.n_inner, i0 + inner_chunk(c));
        switch (c.elem) {
        case 1: copy_rows<uint8_t>(c, s, d, x0, x1, i0, i1); break;
        case 2: copy_rows<uint16_t>(c, s, d, x0, x1, i0, i1); break;
        case 4: copy_rows<uint32_t>(c, s, d, x0, x1, i0, i1); break;
        default: copy_rows<uint64_t>(c, s, d, x0, x1, i0, i1); break;
        }
        item++;
        if (++piece < pieces) continue;
        piece = 0;
        if (++chunk < chunks) continue;
        chunk = 0;
        step_outer(dims);
    }
}

// Parallel tasks per copy, and the size below which the copy stays on one thread.
constexpr int kTasks = 32;
constexpr int64_t kParallelBytes = int64_t(256) << 10;

struct TaskClosure {
    const CopyPlan *plan;
    int64_t per_task;
};

int copy_task(void *, int task, uint8_t *closure) {
    const TaskClosure &t = *reinterpret_cast<const TaskClosure *>(closure);
    const int64_t begin = task * t.per_task;
    copy_items(*t.plan, begin, std::min(t.plan->items, begin + t.per_task));
    return 0;
}

}  // namespace

WalkAxes merged_axes(const std::vector<int64_t> &extent, const std::vector<const std::vector<int64_t> *> &strides) {
    const std::vector<int64_t> &first = *strides[0];
    std::vector<size_t> order;
    for (size_t a = 0; a < extent.size(); a++)
        if (extent[a] > 1) order.push_back(a);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
    WalkAxes w;
    w.stride.resize(strides.size());
    for (size_t a : order) {
        bool continues = !w.extent.empty();
        for (size_t t = 0; t < strides.size() && continues; t++)
            continues = (*strides[t])[a] == w.extent.back() * w.stride[t].back();
        if (continues) {
            w.extent.back() *= extent[a];
            continue;
        }
        w.extent.push_back(extent[a]);
        for (size_t t = 0; t < strides.size(); t++) w.stride[t].push_back((*strides[t])[a]);
    }
    return w;
}

void copy_tensor(const uint8_t *src, const std::vector<int64_t> &src_st, uint8_t *dst,
                 const std::vector<int64_t> &dst_st, const std::vector<int64_t> &shape, size_t elem) {
    int64_t count = 1;
    for (int64_t v : shape) {
        if (v == 0) return;
        count *= v;
    }
    // Merged axes: copied axis by axis, a 1D channels-last layer's bordered copy of 16 channels
    // made 4000 copies of 64 bytes, a tenth of its run.
    const WalkAxes w = merged_axes(shape, {&dst_st, &src_st});
    const std::vector<int64_t> &n = w.extent, &d = w.stride[0], &s = w.stride[1];
    if (n.empty()) {
        std::memcpy(dst, src, elem);
        return;
    }
    // The destination's fastest axis is the first; the source's may be another (a transpose).
    size_t cross = n.size() - 1;
    for (size_t a = 0; a < n.size(); a++)
        if (s[a] < s[cross]) cross = a;
    CopyPlan c;
    c.src = src;
    c.dst = dst;
    c.elem = elem;
    c.n_inner = n[0];
    c.s_inner = s[0];
    c.d_inner = d[0];
    if (cross != 0 && s[cross] < s[0]) {
        c.n_cross = n[cross];
        c.s_cross = s[cross];
        c.d_cross = d[cross];
    }
    for (size_t a = n.size(); a-- > 1;) {  // outermost first
        if (c.n_cross > 1 && a == cross) continue;
        c.n_outer.push_back(n[a]);
        c.s_outer.push_back(s[a]);
        c.d_outer.push_back(d[a]);
        c.outer_count *= n[a];
    }
    c.items = c.outer_count * cross_chunks(c) * inner_chunks(c);
    if (count * (int64_t)elem < kParallelBytes || c.items < 2) {
        copy_items(c, 0, c.items);
        return;
    }
    TaskClosure t{&c, (c.items + kTasks - 1) / kTasks};
    const int tasks = (int)((c.items + t.per_task - 1) / t.per_task);
    halide_do_par_for(nullptr, copy_task, 0, tasks, reinterpret_cast<uint8_t *>(&t));
}

}  // namespace detail
}  // namespace deconv
