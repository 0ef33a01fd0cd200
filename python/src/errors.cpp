#include "errors.h"

#include "deconv/deconv.h"

namespace py = pybind11;

namespace deconv_python {
namespace {

// Owned by the module (added as attributes), so they live as long as it does.
PyObject *g_kind_types[4] = {nullptr, nullptr, nullptr, nullptr};

PyObject *new_type(py::module_ &m, const char *name, PyObject *bases, const char *doc) {
    const std::string qualified = std::string("deconv.") + name;
    PyObject *t = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
    if (!t) throw py::error_already_set();
    m.add_object(name, py::handle(t));  // the module takes a reference
    Py_DECREF(t);
    return t;
}

}  // namespace

void register_errors(py::module_ &m) {
    PyObject *base = new_type(m, "Error", PyExc_Exception, "Base class of every error deconv raises.");
    const struct {
        deconv::ErrorKind kind;
        const char *name;
        PyObject *builtin;
        const char *doc;
    } kinds[] = {
        {deconv::ErrorKind::InvalidArgument, "InvalidArgumentError", PyExc_ValueError,
         "A shape, attribute, dtype or tensor that the op does not allow."},
        {deconv::ErrorKind::Unsupported, "UnsupportedError", PyExc_NotImplementedError,
         "Legal, but not built into this library (dtype, rank, device)."},
        {deconv::ErrorKind::TooLarge, "TooLargeError", PyExc_MemoryError,
         "Sizes whose arithmetic overflows, or memory that cannot be had."},
        {deconv::ErrorKind::Kernel, "KernelError", PyExc_RuntimeError, "A kernel failed at run time."},
    };
    for (const auto &k : kinds) {
        py::tuple bases = py::make_tuple(py::handle(base), py::handle(k.builtin));
        g_kind_types[static_cast<int>(k.kind)] = new_type(m, k.name, bases.ptr(), k.doc);
    }
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const deconv::Error &e) {
            PyErr_SetString(g_kind_types[static_cast<int>(e.kind())], e.what());
        }
    });
}

}  // namespace deconv_python
