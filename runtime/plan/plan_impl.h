// A plan's state (Plan::Impl): the layer resolved once by Plan::create (api/plan.cpp), the
// implementation that runs it with its conf, and the scratch buffers its runs keep. Read by the
// executors.
#pragma once

#include "kernels/buffer_pool.h"
#include "kernels/cpu_tiles.h"
#include "deconv/deconv.h"
#include "kernels/kernel_registry.h"
#include "layer/op_geometry.h"
#include "layer/phase_decomposition.h"
#include "plan/policy.h"
#include "facts/winograd_transforms.h"

#include <memory>
#include <string>
#include <vector>

namespace deconv {

using detail::AxisPhase;

namespace detail {

struct Implementation;

// A layer as Plan::create resolves it once: what the caller asked for, shape inference's answer,
// the geometry every kernel call derives from, and the phases of a backprop layer.
struct ResolvedLayer {
    Op op;
    DType dtype;  // the data's
    // The three tensors' dtypes ({dtype, dtype, dtype} but for quantized layers) and the
    // epilogue (empty but for plans made with one).
    DataTypes types;
    Epilogue epilogue;
    std::vector<int64_t> input_shape, filter_shape;  // as the caller gives them
    ShapeInfo info;
    OpGeometry geo;
    std::vector<int64_t> out_spatial;            // spec order
    std::vector<std::vector<AxisPhase>> phases;  // backprop: per spatial axis (spec order)
    int64_t macs = 0;
};

// How a CPU plan runs: the conf its implementation (dispatch/implementations.h) computes once,
// in one place, and that its executor reads and describe() prints.
struct CpuConf {
    // The CPU variant whose entry points the plan's kernels run (the policy's cpu_variant, by
    // default cpu_variant()), its registers, and the register tiles of the chosen kernels on it.
    std::string variant;
    CpuRegisters regs;
    KernelTiles tiles;
    // Output channels per block of the packed filter (filter_packing.h); 0: one packing.
    int64_t channel_block = 0;
    // Runs on the calling thread alone.
    bool serial = false;
    // The phase executor zeroes the output (each slice's or slab's part) in one dense pass and then
    // skips the phases without taps, instead of zeroing each of those phases' strided outputs.
    bool zero_first = false;
    const KernelEntry *kernel = nullptr;           // backprop: bounded, any phase
    const KernelEntry *interior_kernel = nullptr;  // phases whose taps all read inside the input
    // The kernels vectorize output channels (and read the filter packed channel-major).
    bool channel_major = false;
    // bf16 channels-last kernels that reduce input channel pairs with vdpbf16ps: the packed
    // filter holds each pair's two weights of an output channel adjacent (pack_filter).
    bool ci_pairs = false;
    // Channels-last depthwise layers on the group-vectorized kernels (KernelKey::groups).
    bool groups = false;
    // Channels-last layers of 1-3 output channels per group on the kernels that vectorize input
    // channels (KernelKey::dots).
    bool dots = false;
    // Channels-last grouped layers on the group-block kernels (KernelKey::group_block): so many
    // groups per vector, over a block-interleaved input copy (bordered_buffer); 0 otherwise.
    int group_block = 0;
    // Backprop layers that read a zero-bordered copy of the input (cpu/bordered_input.h), which
    // every phase then reads on the interior kernel: margins per spatial axis, spec order; empty
    // when the layer reads the caller's input directly.
    std::vector<int64_t> border_lo, border_hi;
    bool border_copy = false;  // some margin is non-zero: each run copies the input into one
    // 1D channels-last layers that read the caller's input in place (in_place_1d_channels_last in
    // layer_classes.h): a phase that reaches past the input runs its outputs whose taps all read
    // inside on `interior_kernel`, the few at either end on `kernel` (call_phase_kernel_edges).
    bool in_place_edges = false;
    // Stride-1 channels-first layers on the position kernels whose rows are narrow (flat_rows in
    // layer_classes.h): each plane of the bordered copy is read as one row of its rows end to end,
    // and its output computed the same way into a buffer of the copy's row pitch, then copied out.
    bool flat_rows = false;
    // The phases run as the tasks of one parallel loop, each phase's kernel calls on one thread
    // (phase_tasks.h).
    bool phase_tasks = false;
    // Bordered layers whose innermost axis has stride 2 or 8 (dilation 1) run all of its phases
    // together, stored as dense rows (deconv_phase_conv_interleaved); null otherwise.
    const KernelEntry *interleaved_kernel = nullptr;
    // With the blocked interleaved kernel: the plain one, for the groups of a row past its last
    // whole multiple of kBlockedRowTile (null when the rows are such multiples).
    const KernelEntry *interleaved_tail_kernel = nullptr;
    // Depthwise rows (one input channel) of the plain interleaved kernel that are no multiple of
    // kExactRowTile groups: run as their first whole multiple, which takes the kernel's exact-tile
    // branch, then the rest in a second call.
    bool interleaved_exact_rows = false;
    // 1D layers on the interleaved kernel read the caller's input in place, not a bordered copy
    // of it: the row's groups [left, left + middle) read inside the input, those before and after
    // read zero-bordered copies of their input windows, on `kernel` (choose_edge_windows).
    // middle = 0: the layer reads a whole bordered copy.
    struct EdgeWindows {
        int64_t left = 0, middle = 0;
        InterleavedReach reach{0, 0};  // group q reads input [q + reach.lo, q + reach.hi]
        const KernelEntry *kernel = nullptr;
    } edges;
    // 3D layers on the blocked interleaved kernel: the input copy lays the channel axis out
    // between the innermost axis and the outer ones (bordered_buffer), and every run makes one,
    // margins or not (see choose_bordered_input).
    bool channels_in_rows = false;
    // Channels-last grouped layers of tiles::kDenseGroupChannels input channels per group whose
    // output channels take the kernels' dense-group tiles (tiles::dense_group_tile): the input
    // copy is laid out group-major (bordered_buffer), each group's positions that many elements
    // apart, so that those tiles read it (choose_bordered_input).
    bool group_major_input = false;
    // Channels-last layers of narrow phase rows and a wide batch run with the images as the
    // innermost row, on this kernel of the next rank (choose_batch_rows), one call per tap window
    // of each axis's phases (tap_windows[axis][phase]); null otherwise.
    const KernelEntry *batch_rows_kernel = nullptr;
    std::vector<std::vector<std::vector<TapWindow>>> tap_windows;
    // Layers on the Winograd path (cpu/winograd_executor.h): its transforms and the kernel of its
    // matrix products; `f` null otherwise. Set on the plan that runs the kernels (a channels-
    // first layer's channels-last twin, an f16 or bf16 layer's f32 plan).
    struct Winograd {
        const winograd::Algorithm *f = nullptr;
        const KernelEntry *input = nullptr, *output = nullptr, *products = nullptr;
    } winograd;
};

}  // namespace detail

// A plan's state: its resolved layer, the implementation that runs it and that implementation's
// conf, where it runs, the plans it runs through, and the scratch buffers its runs keep.
struct Plan::Impl : detail::ResolvedLayer, detail::CpuConf {
    // The pinned knobs (the implementations decide the Auto ones) and where they came from, for
    // describe(): "heuristics", "options", "environment", or the database entry.
    detail::Policy policy;
    std::string policy_source = "heuristics";
    // The CPU implementation that runs the plan (dispatch/implementations.h); null on CUDA.
    const detail::Implementation *implementation = nullptr;
    // Where `kernel` runs. CUDA kernels read the caller's filter unpacked, through its strides.
    Device device = Device::CPU;
    // Why a Device::CUDA request runs on the CPU (ExecOptions::allow_cpu_fallback); else empty.
    std::string fallback_reason;
    mutable detail::BufferPool bordered_pool;  // the copies' buffers, kept between runs
    mutable detail::BufferPool output_pool;    // dense outputs of channels-last kernels (see run_phase_kernels)
    mutable detail::RecycledVectors packing_buffers;  // filters packed per run (Plan::run, unpacked)
    mutable detail::BufferPool slab_pool;      // their row slabs' buffers, one per task (see run_phase_kernels),
                                               // and other scratch each run overwrites whole
    // Narrow layers where this variant has no better kernels: the plan of the same layer in the
    // wider dtype (kernel_registry.h, wider_dtype): f16 and bf16 as f32 (half_conversion.h), i8
    // and u8 as f64; and for those the f32 plan, which runs filters that keep every sum an f32
    // integer (api/plan.cpp, wider_filter).
    std::shared_ptr<const Impl> via_wider, fast_via_wider;
    // Quantized layers and layers with an epilogue (api/epilogue_plan.cpp): the plain plan of the
    // same layer that accumulates, whose result the epilogue pass (cpu/epilogue_pass.h) turns
    // into the output. Quantized layers accumulate exactly: on `acc_plan` (i32, else f64), or on
    // `fast_acc_plan` (f32) for filters whose largest output channel weight sum times the largest
    // input magnitude stays below 2^24, where every partial sum is an f32 integer.
    std::shared_ptr<const Impl> acc_plan, fast_acc_plan;
    // Quantized backprop layers on CPUs with AVX512-VNNI: the dot-product kernel that accumulates
    // instead (cpu/quantized_dots_executor.h), null otherwise; `quant_dots_fused`: it stores the
    // dst with the whole epilogue, else f32 values that the epilogue pass finishes.
    const detail::KernelEntry *quant_dots_kernel = nullptr;
    bool quant_dots_fused = false;
    // Float layers with an epilogue the kernels' store runs (cpu/fused_epilogue.h): a bias and a
    // relu, clip or bounded_relu list, no scales, no sum, on a plan whose executor stores it.
    // Then `acc_plan` is the plain plan of the layer's own dtype, and no pass runs.
    bool store_fused = false;
    int quant_dots_group = 0;  // input channels per dot product: 4 (quads) or 2 (i16 pairs)
    bool quant_dots_signed = false;  // quads of i8 data (sdot) rather than u8 (vpdpbusd)
    // Channels-first backprop layers with many output channels: the same layer on channels-last
    // data, whose kernels store whole channel vectors (see choose_via_channels_last). Runs
    // transpose the input into it and its result back.
    std::shared_ptr<const Impl> via_nxc;
    // Channels-last backprop layers with few output channels per group: the same layer on
    // channels-first data (see choose_via_channels_first), likewise.
    std::shared_ptr<const Impl> via_ncx;
};

namespace detail {
// A new plan's layer after shape inference (op, dtype, shapes, geometry, the inferred attributes
// and output, the output's spatial extents); throws what shape inference throws. Plan::create
// and the OpenCL tests' plans (tests/opencl/opencl_plan.cpp) start from it.
std::shared_ptr<Plan::Impl> resolve_layer(Op op, DType dtype, const std::vector<int64_t> &input_shape,
                                          const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                                          const std::optional<std::vector<int64_t>> &output_shape);
}  // namespace detail

}  // namespace deconv
