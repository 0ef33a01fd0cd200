// deconv::Error as Python exceptions. Each kind is its own class, derived from deconv.Error and
// from the built-in exception a Python caller would catch for it:
//   InvalidArgument -> InvalidArgumentError(Error, ValueError)
//   Unsupported     -> UnsupportedError(Error, NotImplementedError)
//   TooLarge        -> TooLargeError(Error, MemoryError)
//   Kernel          -> KernelError(Error, RuntimeError)
// The message is the C++ what(), which names the offending value.
#pragma once

#include <pybind11/pybind11.h>

namespace deconv_python {

void register_errors(pybind11::module_ &m);

}  // namespace deconv_python
