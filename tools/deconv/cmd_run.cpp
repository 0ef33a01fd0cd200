// `deconv run`: one layer from .npy files (or seeded random data), result to a .npy file.
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <utility>

#include "atomic_file.h"
#include "commands.h"
#include "errors.h"
#include "npy.h"

namespace deconv_cli {

namespace {

void write_npy(AtomicFile &f, const HostTensor &t) {
    const std::string header = npy_header_bytes(t.dtype, t.shape);
    f.write(header.data(), header.size());
    f.write(t.data(), t.bytes.size());
}

// The .npy dtype that holds values of `t` (bf16 is stored as float32).
deconv::DType file_type_for(deconv::DType t) {
    return t == deconv::DType::bf16 ? deconv::DType::f32 : t;
}

}  // namespace

deconv::Algorithm algorithm_option(const std::string &algorithm) {
    try {
        return deconv::parse_algorithm(algorithm);
    } catch (const deconv::Error &) {
        throw UsageError("--algorithm '" + algorithm + "': expected direct, winograd or auto");
    }
}

deconv::ExecOptions exec_options(const std::string &target, bool cpu_fallback, const std::string &algorithm) {
    deconv::ExecOptions e;
    e.algorithm = algorithm_option(algorithm);
    if (target == "cuda") {
        e.device = deconv::Device::CUDA;
    } else if (target != "cpu" && target != "host") {
        throw UsageError("--target '" + target + "': expected cpu (alias host) or cuda");
    }
    if (cpu_fallback && e.device != deconv::Device::CUDA)
        throw UsageError("--cpu-fallback applies to --target cuda only");
    e.allow_cpu_fallback = cpu_fallback;
    return e;
}

deconv::Plan create_plan(const LayerSpec &spec, deconv::DType dtype, const deconv::ExecOptions &exec) {
    try {
        deconv::Plan plan = deconv::Plan::create(spec.op, dtype, spec.input_shape, spec.filter_shape,
                                                 spec.attrs, spec.output_shape, exec);
        if (!plan.fallback_reason().empty())
            std::cerr << "note: --cpu-fallback: running on the CPU: " << plan.fallback_reason() << "\n";
        return plan;
    } catch (const deconv::Error &e) {
        if (exec.device == deconv::Device::CUDA && !exec.allow_cpu_fallback &&
            (e.kind() == deconv::ErrorKind::Unsupported || e.kind() == deconv::ErrorKind::TooLarge) &&
            std::string(e.what()).find("CUDA") != std::string::npos)
            rethrow_with_origin(deconv::Error(e.kind(), std::string("--target cuda: ") + e.what() +
                                                            " (--cpu-fallback runs it on the CPU instead)"),
                                spec);
        rethrow_with_origin(e, spec);
    }
}

deconv::Plan create_typed_plan(const LayerSpec &spec, const deconv::ExecOptions &exec) {
    try {
        // The scales' count follows from the output's channels: the shapes are checked first, so
        // that a bad shape is reported as such rather than as a wrong number of scales.
        const deconv::ShapeInfo si =
            deconv::infer_shape(spec.op, spec.input_shape, spec.filter_shape, spec.attrs, spec.output_shape);
        deconv::Plan plan = deconv::Plan::create(spec.op, layer_types(spec), spec.input_shape, spec.filter_shape,
                                                 spec.attrs, spec.output_shape, exec,
                                                 layer_epilogue(spec, output_channels(si)));
        if (!plan.fallback_reason().empty())
            std::cerr << "note: --cpu-fallback: running on the CPU: " << plan.fallback_reason() << "\n";
        return plan;
    } catch (const deconv::Error &e) {
        rethrow_with_origin(e, spec);
    }
}

HostTensor random_bias(deconv::DType dtype, int64_t channels, uint64_t seed) {
    HostTensor b = HostTensor::zeros(dtype, {channels});
    uint64_t state = seed;  // splitmix64, as fill_random
    for (size_t i = 0; i < b.elements(); ++i) {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        store_element(b.data(), dtype, i, static_cast<double>(static_cast<int64_t>((z >> 33) % 65) - 32));
    }
    return b;
}

int run_command(const RunOptions &o) {
    using deconv::DType;
    deconv::ExecOptions exec = exec_options(o.target, o.cpu_fallback, o.algorithm);
    exec.schedule = o.schedule;
    load_schedule_database(o.schedules);
    if (o.input.empty() && !o.random)
        throw UsageError("--input X.npy is required (or --random to fill the input with random data)");
    if (o.filter.empty() && !o.random)
        throw UsageError("--filter W.npy is required (or --random to fill the filter with random data)");
    if (o.output.empty() && !o.random)
        throw UsageError("--output Y.npy is required");
    std::optional<DType> want;
    if (o.o_dtype && o.o_dtype->count()) want = parse_dtype_arg(o.dtype, "--dtype");
    const QuantFlags qflags = parse_quant_flags(o.layer);
    if (want && type_flags_given(o.layer))
        throw UsageError("--dtype " + o.dtype + " cannot be combined with --cfg, --src-dtype, --wei-dtype or "
                         "--dst-dtype (--cfg " + o.dtype + " names a float layer with an epilogue)");
    if (!o.save_bias.empty() && !qflags.bias)
        throw UsageError("--save-bias " + o.save_bias + " needs --bias DTYPE (a generated bias)");
    if (!o.dst_init.empty() && !quant_flags_given(o.layer))
        throw UsageError("--dst-init " + o.dst_init + " belongs to a layer with a sum post-op (--post-ops ...sum...)");

    std::vector<std::string> notes;
    LayerSpec spec = resolve_layer(o.layer, notes);
    for (const std::string &n : notes) std::cerr << "note: " << n << "\n";

    // Output files first: an unwritable destination fails before any work. Nothing appears
    // under these names unless everything succeeds (temporary files are renamed at the end).
    std::unique_ptr<AtomicFile> out_file, save_x_file, save_w_file;
    if (!o.output.empty()) out_file = std::make_unique<AtomicFile>(o.output);
    if (!o.save_input.empty()) save_x_file = std::make_unique<AtomicFile>(o.save_input);
    if (!o.save_filter.empty()) save_w_file = std::make_unique<AtomicFile>(o.save_filter);
    std::unique_ptr<AtomicFile> save_b_file;
    if (!o.save_bias.empty()) save_b_file = std::make_unique<AtomicFile>(o.save_bias);

    // Headers: shapes and dtypes, checked before any data is read.
    std::optional<NpyHeader> xh, wh;
    if (!o.input.empty()) xh = read_npy_header(o.input);
    if (!o.filter.empty()) wh = read_npy_header(o.filter);
    const bool explicit_input_shape = o.layer.o_input_shape && o.layer.o_input_shape->count();
    const bool explicit_filter_shape = o.layer.o_filter_shape && o.layer.o_filter_shape->count();
    // X.npy is in the data format's order, as --input-shape and the shapes of the source.
    if (xh) {
        if (explicit_input_shape && spec.input_shape != xh->shape)
            throw UsageError("--input-shape " + join_dims(spec.input_shape) + " differs from " +
                             o.input + "'s shape " + join_dims(xh->shape));
        if (!spec.input_shape.empty() && spec.input_shape != xh->shape) {
            std::cerr << "note: using " << o.input << "'s shape " << join_dims(xh->shape)
                      << " instead of " << join_dims(spec.input_shape) << " from "
                      << spec.origin << "\n";
            spec.declared_output.clear();
        }
        spec.input_shape = xh->shape;
    }
    if (wh) {
        if (explicit_filter_shape && spec.filter_shape != wh->shape)
            throw UsageError("--filter-shape " + join_dims(spec.filter_shape) + " differs from " +
                             o.filter + "'s shape " + join_dims(wh->shape));
        if (!spec.filter_shape.empty() && spec.filter_shape != wh->shape) {
            std::cerr << "note: using " << o.filter << "'s shape " << join_dims(wh->shape)
                      << " instead of " << join_dims(spec.filter_shape) << " from "
                      << spec.origin << "\n";
            spec.declared_output.clear();
        }
        spec.filter_shape = wh->shape;
    }
    if (spec.input_shape.empty())
        throw UsageError("--random needs the input shape: --input-shape, --layer or --desc");
    if (spec.filter_shape.empty())
        throw UsageError("--random needs the filter shape: --filter-shape, --layer or --desc");

    // A quantized layer or one with an epilogue: the tensors' dtypes from --cfg (or --dtype, all
    // three), else each from its file (the weights of u8/i8 data: i8; the output: the data's);
    // --src-dtype, --wei-dtype and --dst-dtype then replace one each.
    std::optional<NpyHeader> bh;
    if (!qflags.bias_file.empty()) {
        bh = read_npy_header(qflags.bias_file);
        spec.quant.bias = bh->dtype;
    }
    const bool typed = spec.quant.typed();
    if (typed) {
        deconv::DataTypes t;
        if (qflags.cfg) {
            t = *qflags.cfg;
        } else if (want) {  // a float layer with an epilogue, in --dtype
            t = deconv::DataTypes{*want, *want, *want};
        } else {
            const DType fallback = spec.quant.types ? spec.quant.types->src : spec.dtype.value_or(DType::f32);
            t.src = xh ? xh->dtype : fallback;
            const bool int_src = t.src == DType::u8 || t.src == DType::i8;
            t.weights = wh ? wh->dtype : int_src ? DType::i8 : t.src;
            t.dst = t.src;
        }
        if (qflags.src) t.src = *qflags.src;
        if (qflags.wei) t.weights = *qflags.wei;
        if (qflags.dst) t.dst = *qflags.dst;
        spec.quant.types = t;
        spec.dtype = t.src;
    }

    // dtypes: the compute type, and the .npy type of the output (X's).
    if (!typed && xh && wh && !want && xh->dtype != wh->dtype)
        throw UsageError(o.filter + " holds " + deconv::dtype_name(wh->dtype) + " but " + o.input +
                         " holds " + deconv::dtype_name(xh->dtype) +
                         "; pass --dtype to convert both to one compute type");
    const DType compute = typed ? spec.quant.types->src
                          : want ? *want
                          : xh   ? xh->dtype
                          : wh   ? wh->dtype
                                 : spec.dtype.value_or(DType::f32);
    // Typed layers: each tensor in its own dtype, Y's file in the dst dtype's.
    const DType w_compute = typed ? spec.quant.types->weights : compute;
    const DType y_compute = typed ? spec.quant.types->dst : compute;
    const DType file_type = xh ? xh->dtype : file_type_for(compute);
    const DType filter_file_type = wh ? wh->dtype : file_type_for(w_compute);
    const DType out_file_type = typed ? file_type_for(y_compute) : file_type;

    settle_op(spec);
    std::optional<deconv::Plan> plan = typed ? create_typed_plan(spec, exec) : create_plan(spec, compute, exec);
    if (o.verbose) std::cerr << "plan: " << plan->describe() << "\n";
    const deconv::ShapeInfo &si = plan->shape();
    check_declared_output(spec, si.output_shape);
    const int64_t channels = output_channels(si);
    std::optional<NpyHeader> yh0;
    if (!o.dst_init.empty()) {
        yh0 = read_npy_header(o.dst_init);
        if (yh0->shape != si.output_shape)
            throw UsageError("--dst-init " + o.dst_init + ": shape " + join_dims(yh0->shape) +
                             " differs from the output's " + join_dims(si.output_shape));
    }
    if (bh && bh->shape != Dims{channels})
        throw UsageError("--bias " + qflags.bias_file + ": shape " + join_dims(bh->shape) + " but the layer has " +
                         std::to_string(channels) + " output channels (a bias is one value per channel)");

    // Everything this command allocates, before allocating any of it: file copies, compute-type
    // copies of X and W, Y in the compute type and in the file type.
    const uint64_t x_file = checked_bytes(spec.input_shape, deconv::dtype_size(file_type), "input");
    const uint64_t w_file = checked_bytes(spec.filter_shape, deconv::dtype_size(filter_file_type), "filter");
    const uint64_t x_c = checked_bytes(spec.input_shape, deconv::dtype_size(compute), "input");
    const uint64_t w_c = checked_bytes(spec.filter_shape, deconv::dtype_size(w_compute), "filter");
    const uint64_t y_c =
        checked_bytes(si.output_shape, deconv::dtype_size(y_compute), "output " + join_dims(si.output_shape));
    const uint64_t y_file = checked_bytes(si.output_shape, deconv::dtype_size(out_file_type), "output");
    uint64_t total = 0;
    for (uint64_t b : {x_file, w_file, x_c, w_c, y_c, y_file, yh0 ? y_file : uint64_t(0)})
        total = checked_add(total, b, "this run");
    check_memory(total, "running " + join_dims(spec.input_shape) + " * " +
                            join_dims(spec.filter_shape) + " -> " + join_dims(si.output_shape) +
                            " in " + (typed ? deconv::data_types_name(*spec.quant.types) : deconv::dtype_name(compute)));

    // Data, in the compute type. NXC data runs on the library's channels-last kernels as it is.
    HostTensor x, w;
    if (xh) {
        x = read_npy(o.input);
    } else {
        x = HostTensor::zeros(compute, spec.input_shape);
        fill_random(x, o.seed * 2 + 1);
    }
    if (wh) {
        w = read_npy(o.filter);
    } else {
        w = HostTensor::zeros(w_compute, spec.filter_shape);
        fill_random(w, o.seed * 2 + 2);
    }
    if (x.dtype != compute) x = convert(x, compute);  // bf16: rounds to nearest even here
    if (w.dtype != w_compute) w = convert(w, w_compute);
    HostTensor bias;
    if (bh) bias = read_npy(qflags.bias_file);
    else if (spec.quant.bias) bias = random_bias(*spec.quant.bias, channels, o.seed * 2 + 3);

    HostTensor y = yh0 ? convert(read_npy(o.dst_init), y_compute) : HostTensor::zeros(y_compute, si.output_shape);
    const auto t0 = std::chrono::steady_clock::now();
    try {
        if (typed) {
            deconv::RunArgs args;
            if (spec.quant.bias) args.bias = bias.data();
            plan->run(deconv::ConstTensorView(x.data(), x.dtype, x.shape),
                      deconv::ConstTensorView(w.data(), w.dtype, w.shape),
                      deconv::TensorView{y.data(), y.dtype, y.shape, {}}, args);
        } else {
            plan->run(x.data(), w.data(), y.data());
        }
    } catch (const deconv::Error &e) {
        rethrow_with_origin(e, spec);
    }
    const auto t1 = std::chrono::steady_clock::now();

    // The result itself when the file keeps the compute dtype: a copy would double the output's
    // memory after the run (the peak of a large layer, and where a tight memory limit failed).
    const HostTensor y_out = y.dtype == out_file_type ? std::move(y) : convert(y, out_file_type);
    const char *layout = layout_name(si.data_format);
    if (o.verbose) {
        std::cerr << "op " << deconv::op_name(spec.op) << ", compute "
                  << (typed ? describe_quant(spec) : std::string(deconv::dtype_name(compute)))
                  << ", input " << join_dims(spec.input_shape) << ", filter "
                  << join_dims(spec.filter_shape) << " -> output " << join_dims(si.output_shape)
                  << " (" << layout << "), groups " << si.groups << ", pads_begin " << join_dims(si.pads_begin) << ", pads_end "
                  << join_dims(si.pads_end) << ", device " << deconv::device_name(plan->device())
                  << (plan->device() == deconv::Device::CPU ? ", cpu variant " + deconv::cpu_variant() : std::string())
                  << (plan->device() == deconv::Device::CUDA ? " (time includes the host/device copies)" : "") << ", "
                  << std::chrono::duration<double, std::milli>(t1 - t0).count() << " ms\n";
    }

    if (save_x_file) write_npy(*save_x_file, convert(x, file_type));
    if (save_w_file) write_npy(*save_w_file, convert(w, filter_file_type));
    if (save_b_file) write_npy(*save_b_file, convert(bias, file_type_for(bias.dtype)));
    if (out_file) write_npy(*out_file, y_out);
    if (save_x_file) save_x_file->commit();
    if (save_w_file) save_w_file->commit();
    if (save_b_file) save_b_file->commit();
    if (out_file) {
        out_file->commit();
    } else {
        double mn = INFINITY, mx = -INFINITY, sum = 0;
        const size_t n = y_out.elements();
        for (size_t i = 0; i < n; ++i) {
            const double v = load_element(y_out.data(), y_out.dtype, i);
            mn = std::min(mn, v);
            mx = std::max(mx, v);
            sum += v;
        }
        std::cout << "output " << join_dims(y_out.shape) << " " << deconv::dtype_name(y_out.dtype)
                  << " " << layout << ": min " << (n ? mn : 0) << ", max " << (n ? mx : 0)
                  << ", sum " << sum << "\n";
    }
    return kExitOk;
}

}  // namespace deconv_cli
