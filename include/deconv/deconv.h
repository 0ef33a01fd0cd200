// deconv: grouped transposed convolution from ahead-of-time compiled Halide kernels.
//
// Operations (texts in the project's spec folder), shapes in the NCX data format:
//   GroupConvolutionBackpropData-1  data [N, G*C_IN, X1..XD], filter [G, C_IN, C_OUT, K1..KD]
//   (OpenVINO)                      -> output [N, G*C_OUT, Y1..YD]
//   ConvolutionBackpropData-1       data [N, C_IN, X1..XD],   filter [C_IN, C_OUT, K1..KD]
//   (OpenVINO)                      -> output [N, C_OUT, Y1..YD]   (groups = 1)
//   GroupConvolution-1              data [N, G*C_IN, X1..XD], filter [G, C_OUT, C_IN, K1..KD]
//   (OpenVINO, the forward op)      -> output [N, G*C_OUT, Y1..YD]
//   ConvolutionBackwardData         diff_dst [N, OC, X1..XD], weights OIX [OC, IC/groups, K1..KD]
//   (oneDNN Graph)                  or XIO [K1..KD, IC/groups, OC] -> diff_src [N, IC, Y1..YD]
//                                   (groups attribute; OC and IC divisible by it)
// D (the rank of the spatial part) is 1, 2 or 3. Kernel spatial axes are in the data's order
// (K1 pairs with X1), so a 2D filter is [.., KY, KX]. With the NXC data format every data and
// output shape is [N, X1..XD, C] instead (filters keep their layout); NXC runs on kernels
// scheduled for channels-last data, not through a transposed copy.
//
// Arithmetic per dtype (every kernel computes the sum exactly once per output element):
//   f32          accumulates in f32.
//   f16, bf16    widen to f32, accumulate in f32, round once to the storage type on store
//                (round to nearest even).
//   f64          accumulates in f64.
//   i8, u8       accumulate in i32, saturate to the storage type on store.
//   i32          accumulates in i64, saturates to i32 on store.
//
// Errors: every function here reports bad input by throwing deconv::Error, whose what() names
// the offending value (e.g. "strides[1] is 0 but must be at least 1"). Everything is validated
// before any output memory is touched: when an exception leaves a run function, the output
// buffer has not been written. Nothing is allocated that depends on a size before that size has
// been checked for overflow.
//
// Threads: every function may be called from several threads at once. A Plan is immutable after
// creation and may be run concurrently on different buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace deconv {

// ---------------------------------------------------------------- errors

enum class ErrorKind {
    InvalidArgument,  // a shape, attribute, dtype or pointer that the spec does not allow
    Unsupported,      // legal per the spec, but not built into this library (dtype, rank, device)
    TooLarge,         // sizes whose arithmetic overflows or that no kernel call can address
    Kernel,           // a kernel reported a failure at run time (message from the kernel)
};

class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string &message)
        : std::runtime_error(message), kind_(kind) {}
    ErrorKind kind() const noexcept { return kind_; }

private:
    ErrorKind kind_;
};

// ---------------------------------------------------------------- element types

enum class DType { f32, f16, bf16, f64, i8, u8, i32 };

// "f32", "f16", "bf16", "f64", "i8", "u8", "i32".
const char *dtype_name(DType t);
// Parses the names above; throws Error(InvalidArgument) naming the text otherwise.
DType parse_dtype(const std::string &name);
// Bytes per element.
size_t dtype_size(DType t);

// ---------------------------------------------------------------- devices

// Where a plan's kernels run. CUDA needs a build with CUDA kernels (DECONV_CUDA, the default on
// x86-64), an NVIDIA driver (libcuda.so.1, loaded at run time) and a GPU.
enum class Device { CPU, CUDA };
// "cpu", "cuda".
const char *device_name(Device d);
// "cpu" (also "host"), "cuda" (any case); throws Error(InvalidArgument) naming the text otherwise.
Device parse_device(const std::string &name);

// Where a tensor view's memory lives. Host: ordinary memory. CudaDevice: `data` is a CUDA
// device pointer (a CUdeviceptr cast to a pointer) in the primary context of the GPU the
// library uses (device 0, or HL_GPU_DEVICE); only plans that run on CUDA accept such views.
enum class Memory { Host, CudaDevice };

// How a plan runs. Device::CUDA with allow_cpu_fallback: when CUDA cannot run the layer (no
// driver or GPU, or no CUDA kernel for its rank, dtype and layout), the plan runs on the CPU
// instead of throwing (Plan::device() tells which); views of device memory are then refused.
//
// CPU plans choose how to run a layer (which kernels, copies, slices and splits) by a dispatch
// policy: knobs that a schedule database entry pins for the layer on this machine (load_schedules,
// `deconv tune`), else hand rules decide. `schedule` pins knobs over both, as "knob=value ..."
// (docs/tuning.md lists them; unknown knobs or values throw InvalidArgument). A pin that does not
// apply to the layer leaves that choice to the rules. `use_schedule_database` = false ignores the
// databases (the untuned plan).
//
// `algorithm` (CPU, backprop ops): Direct computes every product of the definition, the
// default, whose results are those of every earlier version. Winograd runs the layer's stride
// phases through Winograd minimal filtering F(m, r) (fewer multiplications, a larger rounding
// error: docs/semantics.md states the bound per dtype); create() throws Unsupported, saying why,
// for a layer it cannot run. Auto lets the schedule database, `schedule` (algorithm=...) or the
// rules choose, Winograd only for float layers it serves within that bound.
enum class Algorithm { Direct, Winograd, Auto };
// "direct", "winograd", "auto" (any case); throws Error(InvalidArgument) naming the text otherwise.
Algorithm parse_algorithm(const std::string &name);
const char *algorithm_name(Algorithm a);

struct ExecOptions {
    Device device = Device::CPU;
    bool allow_cpu_fallback = false;
    std::string schedule;
    bool use_schedule_database = true;
    Algorithm algorithm = Algorithm::Direct;
};

// Whether CUDA kernels can run here: the build has them, libcuda loads, cuInit succeeds and a
// GPU is present. Checked once (thread-safe) and cached; never crashes or hangs without a driver.
bool cuda_available();
// Why not (empty when cuda_available()), e.g. "libcuda.so.1 not found: ...".
std::string cuda_unavailable_reason();

// Device memory in the context CUDA plans use, for callers without a CUDA toolkit of their own
// (the command line's `bench --target cuda` keeps its tensors on the GPU with it). Its data()
// goes into views with Memory::CudaDevice. Throws Error(Unsupported) when CUDA is unavailable,
// Error(TooLarge) when the GPU cannot allocate `bytes`, Error(InvalidArgument) for a copy larger
// than the buffer, Error(Kernel) when the driver fails a copy.
class CudaBuffer {
public:
    explicit CudaBuffer(size_t bytes);
    ~CudaBuffer();
    CudaBuffer(CudaBuffer &&other) noexcept;
    CudaBuffer &operator=(CudaBuffer &&other) noexcept;
    CudaBuffer(const CudaBuffer &) = delete;
    CudaBuffer &operator=(const CudaBuffer &) = delete;

    void *data() const { return reinterpret_cast<void *>(static_cast<uintptr_t>(address_)); }
    size_t size() const { return bytes_; }
    // Host -> device and device -> host copies of the first `bytes` of the buffer (synchronous).
    void upload(const void *host, size_t bytes);
    void download(void *host, size_t bytes) const;

private:
    uint64_t address_ = 0;
    size_t bytes_ = 0;
};

// ---------------------------------------------------------------- tensors

// A non-owning view of a tensor. `strides` are in elements, outermost first, one per axis;
// empty means dense C order. Negative strides are rejected; strides may overlap only for
// inputs (never for the output). `memory` says whether `data` is host or CUDA device memory.
struct TensorView {
    void *data = nullptr;
    DType dtype = DType::f32;
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
    Memory memory = Memory::Host;
};

struct ConstTensorView {
    const void *data = nullptr;
    DType dtype = DType::f32;
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
    Memory memory = Memory::Host;

    ConstTensorView() = default;
    ConstTensorView(const void *d, DType t, std::vector<int64_t> s, std::vector<int64_t> st = {},
                    Memory m = Memory::Host)
        : data(d), dtype(t), shape(std::move(s)), strides(std::move(st)), memory(m) {}
    ConstTensorView(const TensorView &v)  // NOLINT: a mutable view is readable
        : data(v.data), dtype(v.dtype), shape(v.shape), strides(v.strides), memory(v.memory) {}
};

// ---------------------------------------------------------------- attributes

enum class AutoPad { Explicit, SameUpper, SameLower, Valid };

// "explicit" (also accepted: "notset", "none", ""), "same_upper", "same_lower", "valid".
AutoPad parse_auto_pad(const std::string &name);
const char *auto_pad_name(AutoPad a);

// Layout of the data and output tensors. NCX: [N, C, X1..XD]; NXC (channels last):
// [N, X1..XD, C].
enum class DataFormat { NCX, NXC };
// Layout of oneDNN Graph's weights. OIX: [OC, IC/groups, K1..KD]; XIO: [K1..KD, IC/groups, OC]
// (OC: channels of diff_dst, IC: channels of diff_src).
enum class WeightsFormat { OIX, XIO };

// "ncx"/"nxc", "oix"/"xio" (any case).
DataFormat parse_data_format(const std::string &name);
const char *data_format_name(DataFormat f);
WeightsFormat parse_weights_format(const std::string &name);
const char *weights_format_name(WeightsFormat f);

// The attributes of every op. An empty vector takes the spec's default for that attribute:
// ones for strides and dilations, zeros for pads and output_padding. A non-empty vector must
// have one entry per spatial axis. output_padding belongs to the backprop ops only.
struct Attributes {
    std::vector<int64_t> strides;
    std::vector<int64_t> pads_begin;
    std::vector<int64_t> pads_end;
    std::vector<int64_t> dilations;
    std::vector<int64_t> output_padding;
    AutoPad auto_pad = AutoPad::Explicit;

    // Data layout; unset takes the op's default: NCX for the OpenVINO ops, NXC for
    // ConvolutionBackwardData (oneDNN Graph's default). Every op accepts both.
    std::optional<DataFormat> data_format;
    // ConvolutionBackwardData only (an error on the other ops, whose filters carry their own
    // layout and group axis): the groups attribute (unset = 1), the weights format (unset =
    // XIO) and the dst_shape attribute, the full diff_src shape in data_format order. A
    // dst_shape passed as the run's output_shape argument (the op's optional input) wins over
    // this attribute.
    std::optional<int64_t> groups;
    std::optional<WeightsFormat> weights_format;
    std::optional<std::vector<int64_t>> dst_shape;
};

// ---------------------------------------------------------------- shape inference

enum class Op {
    GroupConvolutionBackpropData,  // filter [G, C_IN, C_OUT, K...]
    ConvolutionBackpropData,       // filter [C_IN, C_OUT, K...]
    GroupConvolution,              // forward; filter [G, C_OUT, C_IN, K...]
    ConvolutionBackwardData,       // oneDNN Graph; weights OIX or XIO, groups attribute
};
// "GroupConvolutionBackpropData", ... (the spec names).
const char *op_name(Op op);
// The spec names and the command line's: group_convolution_backprop_data,
// convolution_backprop_data, group_convolution, convolution_backward_data (any case).
Op parse_op(const std::string &name);

// The result of shape inference: the full output shape and the pads the kernels apply
// (after auto_pad and output_shape have been resolved, and clamped at zero; see docs/semantics.md).
struct ShapeInfo {
    std::vector<int64_t> output_shape;  // [N, G*C_OUT, Y1..YD], or [N, Y1..YD, C] under NXC
    std::vector<int64_t> pads_begin;    // effective, one per spatial axis, >= 0
    std::vector<int64_t> pads_end;      // effective, one per spatial axis, >= 0
    std::vector<int64_t> strides, dilations, output_padding;  // defaults filled in
    int64_t groups = 1;
    DataFormat data_format = DataFormat::NCX;
};

// Pure function: validates the shapes and attributes and infers the output shape per the
// op's text. `output_shape`, when given, is the op's optional shape input: the spatial output
// shape for the OpenVINO backprop ops, the full diff_src shape (data_format order) for
// ConvolutionBackwardData (it wins over attrs.dst_shape); GroupConvolution takes none.
// Throws Error naming the offending value.
ShapeInfo infer_shape(Op op, const std::vector<int64_t> &input_shape,
                      const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                      const std::optional<std::vector<int64_t>> &output_shape = std::nullopt);

// ---------------------------------------------------------------- running

// Computes the op into `output`, whose shape must equal infer_shape(...).output_shape and whose
// dtype must equal the input's and the filter's. Throws Error; on error the output is untouched
// (CPU; on CUDA, an output in device memory may be partly written when a kernel fails on the
// GPU). `exec` picks the device (Plan::create).
void group_convolution_backprop_data(
    const ConstTensorView &input, const ConstTensorView &filter, const TensorView &output,
    const Attributes &attrs,
    const std::optional<std::vector<int64_t>> &output_shape = std::nullopt,
    const ExecOptions &exec = {});

void convolution_backprop_data(
    const ConstTensorView &input, const ConstTensorView &filter, const TensorView &output,
    const Attributes &attrs,
    const std::optional<std::vector<int64_t>> &output_shape = std::nullopt,
    const ExecOptions &exec = {});

void group_convolution(const ConstTensorView &input, const ConstTensorView &filter,
                       const TensorView &output, const Attributes &attrs,
                       const ExecOptions &exec = {});

// oneDNN Graph: diff_dst, weights -> diff_src. `dst_shape` is the op's optional input.
void convolution_backward_data(
    const ConstTensorView &diff_dst, const ConstTensorView &weights, const TensorView &diff_src,
    const Attributes &attrs,
    const std::optional<std::vector<int64_t>> &dst_shape = std::nullopt,
    const ExecOptions &exec = {});

// ---------------------------------------------------------------- quantization and epilogues
//
// A plan may compute more than the op: a quantized layer (u8 or i8 data, i8 weights, integer
// accumulation, output scales and zero points) and an epilogue (bias, element-wise post-ops, a
// sum with the output's earlier contents), in the order oneDNN 2.6 defines for its
// (de)convolution primitive (docs/semantics.md, "Quantization and epilogues"):
//
//   acc  = sum over the taps that read a real input element of (src - src_zero_point) * weight
//          (exact, in integers; pads and stride holes contribute nothing, zero point or not)
//   v    = scale[c] * (acc + bias[c])          in f32 (f64 for f64 layers)
//   v    = post_ops(v), in the order given    (a sum post-op: v += sum.scale * (dst - sum.zero_point))
//   dst  = saturate(round_half_even(v + dst_zero_point))   for integer dst; a float dst is
//          rounded once to its type (round to nearest even)
//
// c is the output channel g*C_OUT + c_out: per-channel scales and biases index the filter's
// [G, C_IN, C_OUT, K..] as (g, c_out), which is axis 1 of oneDNN's transposed weights
// [G, C_OUT, C_IN, K..], and the channel axis of the output.

// Element types of the three tensors. Quantized: src u8 or i8, weights i8, dst u8, i8, i32, f32
// or bf16. Float: the same float type three times (f32, f16, bf16 or f64), with an epilogue.
struct DataTypes {
    DType src = DType::f32;
    DType weights = DType::f32;
    DType dst = DType::f32;
};

// Element-wise post-ops (oneDNN's eltwise algorithms, same alpha and beta):
//   relu          v > 0 ? v : alpha * v                (alpha: negative slope, 0 = plain relu)
//   clip          min(max(v, alpha), beta)
//   linear        alpha * v + beta
//   bounded_relu  min(max(v, 0), alpha)
//   tanh, logistic (1 / (1 + e^-v)), abs, square
//   elu           v > 0 ? v : alpha * (e^v - 1)
//   swish         v / (1 + e^(-alpha * v))
//   gelu_tanh     0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3)))
//   gelu_erf      0.5 v (1 + erf(v / sqrt(2)))
//   hardswish     v * min(max(v + 3, 0), 6) / 6
enum class Eltwise { relu, clip, linear, bounded_relu, tanh, logistic, abs, square, elu, swish, gelu_tanh, gelu_erf, hardswish };
// The names above; parse_eltwise throws InvalidArgument naming the text otherwise.
const char *eltwise_name(Eltwise e);
Eltwise parse_eltwise(const std::string &name);

struct PostOp {
    enum class Kind { eltwise, sum };
    Kind kind = Kind::eltwise;
    Eltwise alg = Eltwise::relu;
    float alpha = 0, beta = 0;   // eltwise parameters
    float scale = 1;             // sum: the earlier output's scale
    int32_t zero_point = 0;      // sum: subtracted from the earlier output (integer dst only)

    static PostOp eltwise(Eltwise alg, float alpha = 0, float beta = 0) {
        PostOp p;
        p.alg = alg;
        p.alpha = alpha;
        p.beta = beta;
        return p;
    }
    static PostOp sum(float scale = 1, int32_t zero_point = 0) {
        PostOp p;
        p.kind = Kind::sum;
        p.scale = scale;
        p.zero_point = zero_point;
        return p;
    }
};

// How output scales are given: none (1), one for the tensor, or one per output channel
// (G*C_OUT, in the order of the output's channel axis).
enum class ScaleMode { none, per_tensor, per_channel };

struct Epilogue {
    // Quantized plans only: subtracted from every input element that a tap reads (u8: 0..255,
    // i8: -128..127).
    int32_t src_zero_point = 0;
    ScaleMode scale_mode = ScaleMode::none;
    // The scales when the plan is created (1 or G*C_OUT finite values by scale_mode); empty with a
    // scale mode: each run gives them (RunArgs::scales).
    std::vector<float> scales;
    // The bias's dtype, when the layer has one (each run gives it: RunArgs::bias, G*C_OUT
    // elements). Quantized plans: f32 or i32, added to the accumulator before the scales; float
    // plans: f32 or the layer's dtype.
    std::optional<DType> bias;
    std::vector<PostOp> post_ops;
    // Quantized plans with an integer dst only: added last, before the saturation (u8: 0..255,
    // i8: -128..127, i32: any).
    int32_t dst_zero_point = 0;

    // No quantization and no epilogue: a plain plan.
    bool empty() const {
        return src_zero_point == 0 && scale_mode == ScaleMode::none && !bias && post_ops.empty() && dst_zero_point == 0;
    }
};

// What a run of a plan with an epilogue takes besides its tensors.
struct RunArgs {
    // G*C_OUT elements of Epilogue::bias's dtype (dense), when the plan has a bias.
    const void *bias = nullptr;
    // Run-time output scales (ScaleMode with no scales at creation): 1 or G*C_OUT values.
    const float *scales = nullptr;
};

// "u8s8u8" style (benchdnn's --cfg: src, weights, dst; "f32" alone means f32 three times), and back.
DataTypes parse_data_types(const std::string &cfg);
std::string data_types_name(const DataTypes &t);

// A layer whose shapes, dtype and attributes are validated and resolved once, then run many
// times on dense C-order buffers of those shapes, the way inference runtimes call a layer.
//
// Device::CUDA (exec): create() throws Error(Unsupported) when this build has no CUDA kernel for
// the layer ("... not supported on CUDA ...") or CUDA is unavailable ("CUDA is unavailable:
// <reason>"), unless exec.allow_cpu_fallback, which makes a CPU plan instead. A CUDA plan runs
// host views by copying data and filter to the GPU, running, and copying the output back (two
// host-to-device copies, one device-to-host copy and three device allocations per run); views
// with Memory::CudaDevice are used in place (no copy). run() returns when the GPU is done.
class PackedFilter;

class Plan {
public:
    static Plan create(Op op, DType dtype, const std::vector<int64_t> &input_shape,
                       const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                       const std::optional<std::vector<int64_t>> &output_shape = std::nullopt,
                       const ExecOptions &exec = {});
    // A quantized layer or one with an epilogue (see "quantization and epilogues" above).
    // Unsupported dtype combinations, scales, zero points, biases and post-ops are refused here,
    // each with a message naming it. An empty epilogue with one dtype three times is the plain
    // plan. CPU only (a CUDA request without allow_cpu_fallback throws Unsupported).
    static Plan create(Op op, const DataTypes &types, const std::vector<int64_t> &input_shape,
                       const std::vector<int64_t> &filter_shape, const Attributes &attrs,
                       const std::optional<std::vector<int64_t>> &output_shape, const ExecOptions &exec,
                       const Epilogue &epilogue);

    const ShapeInfo &shape() const;
    // The tensors' dtypes (dtype() is the data's) and the epilogue the plan was made with.
    DataTypes types() const;
    const Epilogue &epilogue() const;
    DType dtype() const;
    Op op() const;
    // Where the kernels run (CPU after a fallback).
    Device device() const;
    // Why a Device::CUDA request with allow_cpu_fallback runs on the CPU (the message create()
    // would have thrown); empty when the plan runs where it was asked to.
    const std::string &fallback_reason() const;
    // Multiply-accumulates the kernels perform (nominal count less border clipping).
    int64_t macs() const;
    // One line: the layer, the device and CPU variant, the kernels and steps the plan runs, its
    // pinned policy knobs and where they came from ("heuristics", a schedule database's file and
    // entry, the environment, the options). With DECONV_VERBOSE=1 every plan prints it to stderr
    // when it is made.
    std::string describe() const;
    // Dense C-order buffers of input_shape, filter_shape and shape().output_shape.
    void run(const void *input, const void *filter, void *output) const;
    // Strided views, checked against the plan's shapes and dtype.
    void run(const ConstTensorView &input, const ConstTensorView &filter,
             const TensorView &output) const;

    // Constant weights: packs `filter` (checked like run()'s) once into the layout this plan's
    // kernels read, as inference runtimes do with a layer's weights. Runs that take the result
    // skip the per-run packing; it holds its own copy, so the caller's filter may be freed. A CUDA
    // plan's packed filter stays on the GPU (its `filter` may be host or device memory), so its
    // runs neither copy nor pack weights.
    PackedFilter pack_filter(const ConstTensorView &filter) const;
    // Runs with a filter packed by this plan (or a copy of it); any other is an error.
    void run(const ConstTensorView &input, const PackedFilter &filter, const TensorView &output) const;
    // Runs of a plan with an epilogue: `args` carries the bias and run-time scales it needs (the
    // runs above pass none, which such a plan refuses). The views' dtypes are types()'s.
    void run(const ConstTensorView &input, const ConstTensorView &filter, const TensorView &output,
             const RunArgs &args) const;
    void run(const ConstTensorView &input, const PackedFilter &filter, const TensorView &output,
             const RunArgs &args) const;

    Plan(const Plan &);
    Plan &operator=(const Plan &);
    Plan(Plan &&) noexcept;
    Plan &operator=(Plan &&) noexcept;
    ~Plan();

    struct Impl;

private:
    explicit Plan(std::shared_ptr<const Impl> impl);
    PackedFilter pack_epilogue_filter(const ConstTensorView &filter) const;
    std::shared_ptr<const Impl> impl_;
};

// A filter packed by Plan::pack_filter for that plan's kernels. Copies share the packed data
// (immutable, so runs on several threads may share one).
class PackedFilter {
public:
    PackedFilter();
    // Bytes of packed weights held.
    size_t bytes() const;
    bool empty() const;

    struct Impl;

private:
    friend class Plan;
    explicit PackedFilter(std::shared_ptr<const Impl> impl);
    std::shared_ptr<const Impl> impl_;
};

// ---------------------------------------------------------------- build and machine facts

// Threads of the CPU kernels' parallel loops, the calling thread included: `threads` >= 1, or 0
// for the default (the environment variable HL_NUM_THREADS, else every core). The loops run on
// the library's pool, whose idle workers spin for a while (DECONV_SPIN_US microseconds, default
// 1000) before they sleep, so that back-to-back runs of small layers find them awake;
// DECONV_SPIN_US=off uses Halide's own pool instead (set_cpu_threads then has no effect; use
// HL_NUM_THREADS). Negative values throw InvalidArgument. Takes effect at the next parallel loop.
void set_cpu_threads(int threads);
int cpu_threads();

// The CPU variant of the kernels that runs on this CPU: the best one this library was built
// with (cmake's DECONV_CPU_VARIANTS: native builds one, all builds every one) that the CPU
// runs. On x86-64 "avx512" (Skylake/Cannonlake feature set), "avx2" or "sse41"; on aarch64
// "dotprod_fp16" (ARMv8.2, checked with HWCAP) or "neon"; "none" where the CPU runs none of the
// built variants (plans then throw Unsupported, saying so). The environment variable
// DECONV_CPU_VARIANT set to one of those names caps the choice (for testing the lower variants
// on a bigger CPU); a name above what the CPU has changes nothing.
std::string cpu_variant();
// The CPU variants this library has kernels for, best first.
std::vector<std::string> built_cpu_variants();

// The dtypes and ranks this build of the library runs, on the CPU or on CUDA. On the CPU, f16 and
// bf16 of the matrix may run on the f32 kernels (exact conversions, one rounding on store: the
// 16-bit kernels' arithmetic) where no CPU variant of the build needs kernels of their own, e.g. a
// native build on a CPU with F16C.
std::vector<DType> built_dtypes(Device device = Device::CPU);
std::vector<int> built_ranks(Device device = Device::CPU);
// Whether this build has the kernel `op` runs on (backprop ops: the phase convolution) for that
// rank, dtype, data format and device (for 16-bit CPU layers: their own, or the f32 one they run
// on).
bool has_kernel(Op op, int rank, DType dtype, DataFormat format, Device device);

// ---------------------------------------------------------------- schedule databases

// Loads a schedule database (JSON, written by `deconv tune` or tune_layer; docs/tuning.md) that
// Plan::create consults before the one named by DECONV_SCHEDULES and the built-in one; the last
// loaded is consulted first. Throws Error(InvalidArgument) naming the file, and the entry, when
// it cannot be read, is not JSON, has an unknown version or a malformed entry. Plans made before
// keep their policy.
void load_schedules(const std::string &path);
// Forgets the databases load_schedules loaded.
void clear_schedules();

// Library version, "MAJOR.MINOR.PATCH".
const char *version();

}  // namespace deconv
