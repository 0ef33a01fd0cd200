// Python objects as deconv tensor views, without copies.
//
// An object is read through DLPack when it has __dlpack__ (numpy >= 1.22, PyTorch, JAX, CuPy),
// else through the buffer protocol (read-only numpy arrays, whose __dlpack__ refuses, array.array,
// memoryview). Either way the view points into the object's own memory, and ImportedTensor
// keeps that memory alive until it is destroyed, which must happen with the GIL held.
#pragma once

#include <pybind11/pybind11.h>

#include "deconv/deconv.h"

#include <string>

struct DLManagedTensor;

namespace deconv_python {

class ImportedTensor {
public:
    ImportedTensor() = default;
    ImportedTensor(const ImportedTensor &) = delete;
    ImportedTensor &operator=(const ImportedTensor &) = delete;
    ImportedTensor(ImportedTensor &&other) noexcept;
    ImportedTensor &operator=(ImportedTensor &&other) noexcept;
    ~ImportedTensor();

    deconv::TensorView view;
    // "cpu", "cuda:0", ...: where the memory lives, for messages.
    std::string device;

private:
    friend ImportedTensor import_tensor(pybind11::handle, const char *, bool);
    void release();
    DLManagedTensor *managed_ = nullptr;
    Py_buffer buffer_{};
    bool has_buffer_ = false;
};

// Reads `obj` as a tensor; `what` names it in messages ("input", "out", ...). `writable`: the
// view will be written (the buffer protocol is then asked for a writable buffer). Throws
// deconv::Error(InvalidArgument) naming `what` when the object is no tensor, or has a dtype,
// lane count or device deconv does not read.
ImportedTensor import_tensor(pybind11::handle obj, const char *what, bool writable);

}  // namespace deconv_python
