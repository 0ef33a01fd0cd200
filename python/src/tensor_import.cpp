#include "tensor_import.h"

#include <dlpack/dlpack.h>

#include <utility>

namespace py = pybind11;

namespace deconv_python {
namespace {

[[noreturn]] void invalid(const std::string &message) {
    throw deconv::Error(deconv::ErrorKind::InvalidArgument, message);
}

const char *kAccepted = "deconv takes f32, f16, bf16, f64, i8, u8 and i32";

deconv::DType dlpack_dtype(const DLDataType &t, const char *what) {
    if (t.lanes != 1) {
        invalid(std::string(what) + " has " + std::to_string(t.lanes) +
                "-lane vector elements; deconv takes one value per element");
    }
    switch (t.code) {
    case kDLFloat:
        if (t.bits == 32) return deconv::DType::f32;
        if (t.bits == 16) return deconv::DType::f16;
        if (t.bits == 64) return deconv::DType::f64;
        break;
    case kDLBfloat:
        if (t.bits == 16) return deconv::DType::bf16;
        break;
    case kDLInt:
        if (t.bits == 8) return deconv::DType::i8;
        if (t.bits == 32) return deconv::DType::i32;
        break;
    case kDLUInt:
        if (t.bits == 8) return deconv::DType::u8;
        break;
    default:
        break;
    }
    static const char *codes[] = {"int", "uint", "float", "opaque handle", "bfloat", "complex"};
    const std::string name = t.code < 6 ? std::string(codes[t.code]) + std::to_string(t.bits)
                                        : "DLPack type code " + std::to_string(t.code);
    invalid(std::string(what) + " has dtype " + name + "; " + kAccepted);
}

std::string dlpack_device(const DLDevice &d) {
    switch (d.device_type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda:" + std::to_string(d.device_id);
    case kDLCUDAHost: return "cuda_host";
    case kDLCUDAManaged: return "cuda_managed:" + std::to_string(d.device_id);
    case kDLOpenCL: return "opencl:" + std::to_string(d.device_id);
    case kDLVulkan: return "vulkan:" + std::to_string(d.device_id);
    case kDLMetal: return "metal:" + std::to_string(d.device_id);
    case kDLROCM: return "rocm:" + std::to_string(d.device_id);
    default: return "DLPack device type " + std::to_string(d.device_type);
    }
}

// A Python exception's message without the traceback pybind11 appends to what().
std::string message_of(const py::error_already_set &e) {
    return std::string(py::str(e.type().attr("__name__"))) + ": " + std::string(py::str(e.value()));
}

// The buffer protocol's format characters that deconv does not take, by the names users know.
std::string format_name(const std::string &f, Py_ssize_t itemsize) {
    static const struct {
        const char *format;
        const char *name;
    } names[] = {{"?", "bool"}, {"h", "int16"}, {"H", "uint16"}, {"I", "uint32"}, {"Zf", "complex64"},
                 {"Zd", "complex128"}, {"g", "float128"}};
    for (const auto &n : names)
        if (f == n.format) return n.name;
    if ((f == "l" || f == "q") && itemsize == 8) return "int64";
    if ((f == "L" || f == "Q") && itemsize == 8) return "uint64";
    return "'" + f + "'";
}

// The buffer protocol's struct format character, as a dtype (native or little-endian order only).
deconv::DType buffer_dtype(const Py_buffer &b, const char *what) {
    std::string f = b.format ? b.format : "B";
    if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) f = f.substr(1);
    if (!f.empty() && (f[0] == '>' || f[0] == '!')) {
        invalid(std::string(what) + " is big-endian (buffer format '" + std::string(b.format) + "'); " + kAccepted +
                " in the machine's byte order");
    }
    const Py_ssize_t n = b.itemsize;
    if (f == "f" && n == 4) return deconv::DType::f32;
    if (f == "e" && n == 2) return deconv::DType::f16;
    if (f == "d" && n == 8) return deconv::DType::f64;
    if (f == "b" && n == 1) return deconv::DType::i8;
    if (f == "B" && n == 1) return deconv::DType::u8;
    if ((f == "i" || f == "l" || f == "q") && n == 4) return deconv::DType::i32;
    invalid(std::string(what) + " has dtype " + format_name(f, n) + " (buffer format '" +
            std::string(b.format ? b.format : "B") + "', " + std::to_string(n) + "-byte elements); " + kAccepted);
}

}  // namespace

ImportedTensor::ImportedTensor(ImportedTensor &&other) noexcept
    : view(std::move(other.view)), device(std::move(other.device)), managed_(other.managed_),
      buffer_(other.buffer_), has_buffer_(other.has_buffer_) {
    other.managed_ = nullptr;
    other.has_buffer_ = false;
}

ImportedTensor &ImportedTensor::operator=(ImportedTensor &&other) noexcept {
    if (this != &other) {
        release();
        view = std::move(other.view);
        device = std::move(other.device);
        managed_ = other.managed_;
        buffer_ = other.buffer_;
        has_buffer_ = other.has_buffer_;
        other.managed_ = nullptr;
        other.has_buffer_ = false;
    }
    return *this;
}

ImportedTensor::~ImportedTensor() { release(); }

void ImportedTensor::release() {
    if (managed_ && managed_->deleter) managed_->deleter(managed_);
    managed_ = nullptr;
    if (has_buffer_) PyBuffer_Release(&buffer_);
    has_buffer_ = false;
}

ImportedTensor import_tensor(py::handle obj, const char *what, bool writable) {
    ImportedTensor t;
    std::string dlpack_error;
    if (py::hasattr(obj, "__dlpack__")) {
        try {
            py::object capsule = obj.attr("__dlpack__")();
            void *p = PyCapsule_GetPointer(capsule.ptr(), "dltensor");
            if (!p) throw py::error_already_set();
            // The capsule is consumed: renamed so that its destructor leaves the tensor to us.
            if (PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0) throw py::error_already_set();
            t.managed_ = static_cast<DLManagedTensor *>(p);
        } catch (py::error_already_set &e) {
            // numpy refuses __dlpack__ on read-only arrays (BufferError): the buffer protocol
            // still reads them.
            dlpack_error = message_of(e);
        }
    }
    if (t.managed_) {
        const DLTensor &d = t.managed_->dl_tensor;
        t.device = dlpack_device(d.device);
        switch (d.device.device_type) {
        case kDLCPU:
        case kDLCUDAHost:
            t.view.memory = deconv::Memory::Host;
            break;
        case kDLCUDA:
            t.view.memory = deconv::Memory::CudaDevice;
            break;
        default:
            invalid(std::string(what) + " is on " + t.device +
                    "; deconv reads CPU tensors, and CUDA tensors in plans that run on CUDA");
        }
        t.view.dtype = dlpack_dtype(d.dtype, what);
        t.view.data = static_cast<char *>(d.data) + d.byte_offset;
        t.view.shape.assign(d.shape, d.shape + d.ndim);
        if (d.strides) {
            t.view.strides.assign(d.strides, d.strides + d.ndim);
        } else {
            t.view.strides.clear();  // compact row-major
        }
        return t;
    }
    const int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj.ptr(), &t.buffer_, flags) != 0) {
        py::error_already_set e;
        std::string message = std::string(what) + " is not a tensor deconv can read (a " +
                              std::string(py::str(py::type::handle_of(obj).attr("__name__"))) + ")";
        if (!dlpack_error.empty()) message += ": __dlpack__ failed: " + dlpack_error;
        message += std::string("; the buffer protocol") + (writable ? " (writable)" : "") + " failed: " + message_of(e);
        invalid(message);
    }
    t.has_buffer_ = true;
    t.device = "cpu";
    t.view.memory = deconv::Memory::Host;
    t.view.dtype = buffer_dtype(t.buffer_, what);
    t.view.data = t.buffer_.buf;
    const Py_ssize_t item = t.buffer_.itemsize;
    for (int i = 0; i < t.buffer_.ndim; i++) {
        t.view.shape.push_back(t.buffer_.shape[i]);
        const Py_ssize_t s = t.buffer_.strides[i];
        if (s % item != 0) {
            invalid(std::string(what) + " has a stride of " + std::to_string(s) + " bytes on axis " + std::to_string(i) +
                    ", not a multiple of its " + std::to_string(item) + "-byte elements");
        }
        t.view.strides.push_back(s / item);
    }
    return t;
}

}  // namespace deconv_python
