// The register tiles of the kernels a CPU plan runs, on the CPU variant that runs them: the
// kernels' build parameters (kernel_registry.h) over facts/tile_facts.h. Resolved
// once per plan, so the executors split rows exactly where the kernels tile them.
#pragma once

#include "deconv/deconv.h"
#include "kernels/kernel_registry.h"
#include "facts/channels_last_tiles.h"

#include <cstdint>
#include <string>

namespace deconv {
namespace detail {

// The vector register file of a CPU variant (cpu_variant()'s names).
struct CpuRegisters {
    bool many = true;      // 32 vector registers (AVX-512, ARM64); else 16
    int vector_bits = 512;
};
CpuRegisters cpu_registers(const std::string &variant);

// Bits of the accumulators a dtype's kernels keep (deconv.h: f32 for the 16-bit floats, i32 for
// the 8-bit integers, i64 for i32).
int accumulator_bits(DType t);

struct KernelTiles {
    // Channel-vectorized kernels: output positions per tile of a row, and the channels their
    // four-position branch needs (a full channel tile).
    int64_t row_positions = 0;
    // Positions per tile of that branch; on the position-vectorized kernels, of their narrowest
    // vectorized branch (narrower rows run scalar).
    int64_t short_positions = 0;
    int64_t four_position_channels = 0;
    // Channel-vectorized kernels: positions per tile of their fit branch (0: none).
    int64_t fit_positions = 0;
    // Interleaved kernels: groups of s outputs per tile of a row, plain and blocked.
    int64_t interleaved_groups = 0;
    int64_t blocked_groups = 0;
    // One vector of accumulators.
    int64_t lanes = 0;
    // Channel-vectorized kernels: their tiles, in the order their branches try them.
    tiles::ChannelTiles channel_tiles;
};

// `channels_kernel`: the plan's channel-vectorized kernel (null if none); `interleaved`: its plain
// interleaved kernel (null if none).
KernelTiles kernel_tiles(const CpuRegisters &regs, DType dtype, const KernelEntry *channels_kernel,
                         const KernelEntry *interleaved);

// Blocked 1D: the groups of a parallel task (a block of tiles: tiles::blocked_block_tiles) of a
// layer of `c_in` input channels per group, f32 accumulators (the kernel's dtypes are f32, f16,
// bf16).
int64_t blocked_task_groups(const KernelTiles &t, int64_t c_in);

}  // namespace detail
}  // namespace deconv
