// deconv._deconv: the C++ API as a Python extension. The public Python interface is the
// package around it (python/deconv/), which adds PyTorch-style arguments and allocates outputs
// in the caller's framework; this module takes tensors that exist and strings for enums.
//
// Every kernel call releases the GIL. Tensors are imported (and their owners released) with the
// GIL held, around that call.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "deconv/deconv.h"
#include "deconv/tuning.h"
#include "errors.h"
#include "tensor_import.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;
using deconv_python::import_tensor;
using deconv_python::ImportedTensor;
using Shape = std::vector<int64_t>;
using OptShape = std::optional<Shape>;

namespace {

[[noreturn]] void invalid(const std::string &message) {
    throw deconv::Error(deconv::ErrorKind::InvalidArgument, message);
}

std::string shape_text(const Shape &s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
}

// A view's strides, filled in (dense C order) where the producer left them out.
Shape strides_of(const deconv::TensorView &v) {
    if (!v.strides.empty()) return v.strides;
    Shape s(v.shape.size());
    int64_t step = 1;
    for (size_t i = v.shape.size(); i-- > 0;) {
        s[i] = step;
        step *= v.shape[i];
    }
    return s;
}

// PyTorch's weight [C_in, C_out/groups, K..] as the group op's filter [G, C_in/G, C_out/G, K..]:
// axis 0 split into (G, C_in/G), the same memory.
void split_groups(deconv::TensorView &v, int64_t groups, const char *what) {
    if (groups <= 0) return;
    if (v.shape.empty()) invalid(std::string(what) + " has no axes; it needs [C_in, C_out/groups, K..]");
    if (v.shape[0] % groups != 0) {
        invalid(std::string(what) + " has " + std::to_string(v.shape[0]) + " input channels (axis 0 of " +
                shape_text(v.shape) + "), not divisible by groups=" + std::to_string(groups));
    }
    Shape strides = strides_of(v);
    const int64_t per = v.shape[0] / groups;
    v.shape.insert(v.shape.begin(), groups);
    v.shape[1] = per;
    strides.insert(strides.begin(), strides[0] * per);
    v.strides = strides;
}

struct ExecArgs {
    std::string device = "cpu";
    bool allow_cpu_fallback = false;
    std::string schedule;
    bool use_schedule_database = true;
    std::string algorithm = "direct";

    deconv::ExecOptions options() const {
        deconv::ExecOptions e;
        e.device = deconv::parse_device(device);
        e.allow_cpu_fallback = allow_cpu_fallback;
        e.schedule = schedule;
        e.use_schedule_database = use_schedule_database;
        e.algorithm = deconv::parse_algorithm(algorithm);
        return e;
    }
};

// A Plan with the shapes it was made for (the C++ plan keeps only the inferred ones).
struct PyPlan {
    deconv::Plan plan;
    Shape input_shape, filter_shape;
};

struct Views {
    ImportedTensor input, filter, out;
};

Views import_views(py::handle input, py::handle filter, py::handle out, int64_t filter_groups) {
    Views v;
    v.input = import_tensor(input, "input", false);
    v.filter = import_tensor(filter, "filter", false);
    v.out = import_tensor(out, "out", true);
    split_groups(v.filter.view, filter_groups, "filter");
    return v;
}

deconv::Attributes make_attributes(const Shape &strides, const Shape &pads_begin, const Shape &pads_end,
                                   const Shape &dilations, const Shape &output_padding, const std::string &auto_pad,
                                   const std::optional<std::string> &data_format, std::optional<int64_t> groups,
                                   const std::optional<std::string> &weights_format, const OptShape &dst_shape) {
    deconv::Attributes a;
    a.strides = strides;
    a.pads_begin = pads_begin;
    a.pads_end = pads_end;
    a.dilations = dilations;
    a.output_padding = output_padding;
    a.auto_pad = deconv::parse_auto_pad(auto_pad);
    if (data_format) a.data_format = deconv::parse_data_format(*data_format);
    a.groups = groups;
    if (weights_format) a.weights_format = deconv::parse_weights_format(*weights_format);
    a.dst_shape = dst_shape;
    return a;
}

py::list dtype_names(const std::vector<deconv::DType> &types) {
    py::list r;
    for (deconv::DType t : types) r.append(deconv::dtype_name(t));
    return r;
}

}  // namespace

PYBIND11_MODULE(_deconv, m) {
    m.doc() = "deconv's C++ API (use the deconv package, which wraps it)";
    deconv_python::register_errors(m);

    py::class_<deconv::Attributes>(m, "Attributes",
                                   "The attributes of every op; empty lists take the spec's defaults.")
        .def(py::init(&make_attributes), py::kw_only(), py::arg("strides") = Shape{}, py::arg("pads_begin") = Shape{},
             py::arg("pads_end") = Shape{}, py::arg("dilations") = Shape{}, py::arg("output_padding") = Shape{},
             py::arg("auto_pad") = "explicit", py::arg("data_format") = py::none(), py::arg("groups") = py::none(),
             py::arg("weights_format") = py::none(), py::arg("dst_shape") = py::none())
        .def_readonly("strides", &deconv::Attributes::strides)
        .def_readonly("pads_begin", &deconv::Attributes::pads_begin)
        .def_readonly("pads_end", &deconv::Attributes::pads_end)
        .def_readonly("dilations", &deconv::Attributes::dilations)
        .def_readonly("output_padding", &deconv::Attributes::output_padding)
        .def_property_readonly("auto_pad", [](const deconv::Attributes &a) { return deconv::auto_pad_name(a.auto_pad); })
        .def_property_readonly("data_format", [](const deconv::Attributes &a) -> std::optional<std::string> {
            if (!a.data_format) return std::nullopt;
            return std::string(deconv::data_format_name(*a.data_format));
        })
        .def_readonly("groups", &deconv::Attributes::groups)
        .def_readonly("dst_shape", &deconv::Attributes::dst_shape);

    py::class_<deconv::ShapeInfo>(m, "ShapeInfo", "Shape inference's result: the output shape and resolved pads.")
        .def_readonly("output_shape", &deconv::ShapeInfo::output_shape)
        .def_readonly("pads_begin", &deconv::ShapeInfo::pads_begin)
        .def_readonly("pads_end", &deconv::ShapeInfo::pads_end)
        .def_readonly("strides", &deconv::ShapeInfo::strides)
        .def_readonly("dilations", &deconv::ShapeInfo::dilations)
        .def_readonly("output_padding", &deconv::ShapeInfo::output_padding)
        .def_readonly("groups", &deconv::ShapeInfo::groups)
        .def_property_readonly("data_format",
                               [](const deconv::ShapeInfo &s) { return deconv::data_format_name(s.data_format); })
        .def("__repr__", [](const deconv::ShapeInfo &s) {
            return "ShapeInfo(output_shape=" + shape_text(s.output_shape) + ", pads_begin=" + shape_text(s.pads_begin) +
                   ", pads_end=" + shape_text(s.pads_end) + ", groups=" + std::to_string(s.groups) + ", data_format='" +
                   deconv::data_format_name(s.data_format) + "')";
        });

    m.def(
        "infer_shape",
        [](const std::string &op, const Shape &input_shape, const Shape &filter_shape, const deconv::Attributes &attrs,
           const OptShape &output_shape) {
            return deconv::infer_shape(deconv::parse_op(op), input_shape, filter_shape, attrs, output_shape);
        },
        py::arg("op"), py::arg("input_shape"), py::arg("filter_shape"), py::arg("attrs"),
        py::arg("output_shape") = py::none());

    py::class_<deconv::PackedFilter>(m, "PackedFilter", "A filter packed once by Plan.pack_filter for that plan.")
        .def_property_readonly("bytes", &deconv::PackedFilter::bytes)
        .def_property_readonly("empty", &deconv::PackedFilter::empty);

    py::class_<PyPlan>(m, "_Plan")
        .def(py::init([](const std::string &op, const std::string &dtype, const Shape &input_shape,
                         const Shape &filter_shape, const deconv::Attributes &attrs, const OptShape &output_shape,
                         const ExecArgs &exec) {
                 const deconv::Op o = deconv::parse_op(op);
                 const deconv::DType t = deconv::parse_dtype(dtype);
                 const deconv::ExecOptions e = exec.options();
                 py::gil_scoped_release nogil;  // plan creation may read databases, probe CUDA
                 return PyPlan{deconv::Plan::create(o, t, input_shape, filter_shape, attrs, output_shape, e), input_shape,
                               filter_shape};
             }),
             py::arg("op"), py::arg("dtype"), py::arg("input_shape"), py::arg("filter_shape"), py::arg("attrs"),
             py::arg("output_shape"), py::arg("exec"))
        .def_property_readonly("shape", [](const PyPlan &p) { return p.plan.shape(); })
        .def_property_readonly("output_shape", [](const PyPlan &p) { return p.plan.shape().output_shape; })
        .def_readonly("input_shape", &PyPlan::input_shape)
        .def_readonly("filter_shape", &PyPlan::filter_shape)
        .def_property_readonly("dtype", [](const PyPlan &p) { return deconv::dtype_name(p.plan.dtype()); })
        .def_property_readonly("op", [](const PyPlan &p) { return deconv::op_name(p.plan.op()); })
        .def_property_readonly("device", [](const PyPlan &p) { return deconv::device_name(p.plan.device()); })
        .def_property_readonly("fallback_reason", [](const PyPlan &p) { return p.plan.fallback_reason(); })
        .def_property_readonly("macs", [](const PyPlan &p) { return p.plan.macs(); })
        .def("describe", [](const PyPlan &p) { return p.plan.describe(); })
        .def(
            "_run",
            [](const PyPlan &p, py::handle input, py::handle filter, py::handle out, int64_t filter_groups) {
                Views v = import_views(input, filter, out, filter_groups);
                py::gil_scoped_release nogil;
                p.plan.run(v.input.view, v.filter.view, v.out.view);
            },
            py::arg("input"), py::arg("filter"), py::arg("out"), py::arg("filter_groups") = 0)
        .def(
            "_run_packed",
            [](const PyPlan &p, py::handle input, const deconv::PackedFilter &filter, py::handle out) {
                ImportedTensor in = import_tensor(input, "input", false);
                ImportedTensor o = import_tensor(out, "out", true);
                py::gil_scoped_release nogil;
                p.plan.run(in.view, filter, o.view);
            },
            py::arg("input"), py::arg("filter"), py::arg("out"))
        .def(
            "_pack_filter",
            [](const PyPlan &p, py::handle filter, int64_t filter_groups) {
                ImportedTensor f = import_tensor(filter, "filter", false);
                split_groups(f.view, filter_groups, "filter");
                py::gil_scoped_release nogil;
                return p.plan.pack_filter(f.view);
            },
            py::arg("filter"), py::arg("filter_groups") = 0)
        // Seconds per Plan::run over `iterations` back-to-back C++ calls on the same tensors: the
        // baseline that the Python call's overhead is measured against.
        .def(
            "_time_cpp_runs",
            [](const PyPlan &p, py::handle input, py::handle filter, py::handle out, int iterations,
               int64_t filter_groups) {
                if (iterations < 1) invalid("iterations is " + std::to_string(iterations) + " but must be at least 1");
                Views v = import_views(input, filter, out, filter_groups);
                py::gil_scoped_release nogil;
                const auto start = std::chrono::steady_clock::now();
                for (int i = 0; i < iterations; i++) p.plan.run(v.input.view, v.filter.view, v.out.view);
                return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;
            },
            py::arg("input"), py::arg("filter"), py::arg("out"), py::arg("iterations"), py::arg("filter_groups") = 0);

    py::class_<ExecArgs>(m, "_Exec")
        .def(py::init([](std::string device, bool allow_cpu_fallback, std::string schedule, bool use_schedule_database,
                         std::string algorithm) {
                 ExecArgs e{std::move(device), allow_cpu_fallback, std::move(schedule), use_schedule_database,
                            std::move(algorithm)};
                 e.options();  // parsed here, so that a bad name fails where it was given
                 return e;
             }),
             py::kw_only(), py::arg("device") = "cpu", py::arg("allow_cpu_fallback") = false, py::arg("schedule") = "",
             py::arg("use_schedule_database") = true, py::arg("algorithm") = "direct");

    m.def(
        "_run",
        [](const std::string &op, py::handle input, py::handle filter, py::handle out, const deconv::Attributes &attrs,
           const OptShape &output_shape, const ExecArgs &exec, int64_t filter_groups) {
            const deconv::Op o = deconv::parse_op(op);
            const deconv::ExecOptions e = exec.options();
            Views v = import_views(input, filter, out, filter_groups);
            py::gil_scoped_release nogil;
            switch (o) {
            case deconv::Op::GroupConvolutionBackpropData:
                deconv::group_convolution_backprop_data(v.input.view, v.filter.view, v.out.view, attrs, output_shape, e);
                break;
            case deconv::Op::ConvolutionBackpropData:
                deconv::convolution_backprop_data(v.input.view, v.filter.view, v.out.view, attrs, output_shape, e);
                break;
            case deconv::Op::GroupConvolution:
                if (output_shape) invalid("GroupConvolution takes no output_shape");
                deconv::group_convolution(v.input.view, v.filter.view, v.out.view, attrs, e);
                break;
            case deconv::Op::ConvolutionBackwardData:
                deconv::convolution_backward_data(v.input.view, v.filter.view, v.out.view, attrs, output_shape, e);
                break;
            }
        },
        py::arg("op"), py::arg("input"), py::arg("filter"), py::arg("out"), py::arg("attrs"), py::arg("output_shape"),
        py::arg("exec"), py::arg("filter_groups") = 0);

    m.def(
        "_view_info",
        [](py::handle obj, bool writable, const std::string &what) {
            ImportedTensor t = import_tensor(obj, what.c_str(), writable);
            py::dict d;
            d["data"] = reinterpret_cast<uintptr_t>(t.view.data);
            d["dtype"] = deconv::dtype_name(t.view.dtype);
            d["shape"] = t.view.shape;
            d["strides"] = strides_of(t.view);
            d["device"] = t.device;
            return d;
        },
        "How deconv sees a tensor: its data address, dtype, shape, strides (elements) and device.",
        py::arg("tensor"), py::arg("writable") = false, py::arg("what") = "tensor");

    // ------------------------------------------------------------ build and machine facts
    m.def("set_cpu_threads", &deconv::set_cpu_threads, py::arg("threads"));
    m.def("cpu_threads", &deconv::cpu_threads);
    m.def("cpu_variant", &deconv::cpu_variant);
    m.def("built_cpu_variants", &deconv::built_cpu_variants);
    m.def(
        "built_dtypes", [](const std::string &device) { return dtype_names(deconv::built_dtypes(deconv::parse_device(device))); },
        py::arg("device") = "cpu");
    m.def(
        "built_ranks", [](const std::string &device) { return deconv::built_ranks(deconv::parse_device(device)); },
        py::arg("device") = "cpu");
    m.def(
        "has_kernel",
        [](const std::string &op, int rank, const std::string &dtype, const std::string &data_format,
           const std::string &device) {
            return deconv::has_kernel(deconv::parse_op(op), rank, deconv::parse_dtype(dtype),
                                      deconv::parse_data_format(data_format), deconv::parse_device(device));
        },
        py::arg("op"), py::arg("rank"), py::arg("dtype"), py::arg("data_format") = "ncx", py::arg("device") = "cpu");
    m.def("cuda_available", &deconv::cuda_available);
    m.def("cuda_unavailable_reason", &deconv::cuda_unavailable_reason);
    m.def("version", &deconv::version);

    // ------------------------------------------------------------ schedules and tuning
    m.def("load_schedules", &deconv::load_schedules, py::arg("path"));
    m.def("clear_schedules", &deconv::clear_schedules);
    m.def("schedule_knobs", &deconv::schedule_knobs);
    m.def("schedule_knob_values", &deconv::schedule_knob_values, py::arg("knob"));

    py::class_<deconv::TuneResult>(m, "TuneResult", "What tune_layer found for one layer.")
        .def_readonly("schedule", &deconv::TuneResult::schedule)
        .def_readonly("default_description", &deconv::TuneResult::default_description)
        .def_readonly("tuned_description", &deconv::TuneResult::tuned_description)
        .def_readonly("default_ms", &deconv::TuneResult::default_ms)
        .def_readonly("tuned_ms", &deconv::TuneResult::tuned_ms)
        .def_readonly("noise", &deconv::TuneResult::noise)
        .def_readonly("candidates", &deconv::TuneResult::candidates)
        .def_readonly("rejected", &deconv::TuneResult::rejected)
        .def_readonly("seconds", &deconv::TuneResult::seconds)
        .def("__repr__", [](const deconv::TuneResult &r) {
            return "TuneResult(schedule='" + r.schedule + "', default_ms=" + std::to_string(r.default_ms) +
                   ", tuned_ms=" + std::to_string(r.tuned_ms) + ", candidates=" + std::to_string(r.candidates) + ")";
        });

    m.def(
        "tune_layer",
        [](const std::string &op, const std::string &dtype, const Shape &input_shape, const Shape &filter_shape,
           const deconv::Attributes &attrs, const OptShape &output_shape, double max_seconds, int repeats,
           const std::string &algorithm) {
            deconv::TuneOptions o;
            o.max_seconds = max_seconds;
            o.repeats = repeats;
            o.algorithm = deconv::parse_algorithm(algorithm);
            const deconv::Op op_v = deconv::parse_op(op);
            const deconv::DType t = deconv::parse_dtype(dtype);
            py::gil_scoped_release nogil;
            return deconv::tune_layer(op_v, t, input_shape, filter_shape, attrs, output_shape, o);
        },
        py::arg("op"), py::arg("dtype"), py::arg("input_shape"), py::arg("filter_shape"), py::arg("attrs"),
        py::arg("output_shape") = py::none(), py::arg("max_seconds") = 20.0, py::arg("repeats") = 0,
        py::arg("algorithm") = "direct");
    m.def(
        "save_schedule",
        [](const std::string &path, const std::string &op, const std::string &dtype, const Shape &input_shape,
           const Shape &filter_shape, const deconv::Attributes &attrs, const OptShape &output_shape,
           const deconv::TuneResult &result, const std::string &name) {
            deconv::save_schedule(path, deconv::parse_op(op), deconv::parse_dtype(dtype), input_shape, filter_shape,
                                  attrs, output_shape, result, name);
        },
        py::arg("path"), py::arg("op"), py::arg("dtype"), py::arg("input_shape"), py::arg("filter_shape"),
        py::arg("attrs"), py::arg("output_shape"), py::arg("result"), py::arg("name") = "");
}
