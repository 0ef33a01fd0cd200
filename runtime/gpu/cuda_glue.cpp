#include "gpu/cuda_glue.h"

#include "deconv/deconv.h"

#include <cstdlib>
#include <string>
#include <type_traits>

#if defined(DECONV_HAVE_CUDA)
#include "HalideRuntimeCuda.h"

#include <dlfcn.h>
#endif

namespace deconv {
namespace detail {

namespace {

#if defined(DECONV_HAVE_CUDA)
// The few driver entry points the probe needs, declared here: no CUDA headers at build time.
using CUresult = int;
using CUdevice = int;
using CUcontext = void *;

struct Driver {
    CUresult (*cuInit)(unsigned) = nullptr;
    CUresult (*cuDeviceGetCount)(int *) = nullptr;
    CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
    CUresult (*cuDeviceGetName)(char *, int, CUdevice) = nullptr;
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
    CUresult (*cuGetErrorString)(CUresult, const char **) = nullptr;
    // Memory calls (CudaBuffer); looked up without being required by the probe.
    CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;
    CUresult (*cuCtxPopCurrent)(CUcontext *) = nullptr;
    CUresult (*cuMemAlloc)(uint64_t *, size_t) = nullptr;
    CUresult (*cuMemFree)(uint64_t) = nullptr;
    CUresult (*cuMemcpyHtoD)(uint64_t, const void *, size_t) = nullptr;
    CUresult (*cuMemcpyDtoH)(void *, uint64_t, size_t) = nullptr;
};

CUcontext g_context = nullptr;  // written once by the probe, before any kernel can run
Driver g_driver;                // likewise

// Halide's CUDA runtime asks for a context around every call: always the retained primary one.
int acquire_context(void *, void **ctx, bool) {
    *ctx = g_context;
    return g_context ? 0 : -1;
}
int release_context(void *) { return 0; }

std::string driver_error(const Driver &d, const char *call, CUresult r) {
    const char *text = nullptr;
    if (d.cuGetErrorString) d.cuGetErrorString(r, &text);
    return std::string(call) + " failed with CUDA error " + std::to_string(r) + (text ? std::string(" (") + text + ")" : "");
}

// Halide 14's CUDA runtime reads HL_CUDA_JIT_MAX_REGISTERS (atoi) each time it JIT-compiles a
// kernel module and caps registers at 64 without it. The library has no other way to pass a cap
// to that JIT, so it sets the variable here, in the probe, which runs before the first kernel and
// so before the first module load. A caller's own value wins: it is Halide's documented knob.
// setenv is not safe against a getenv running at the same moment in another thread; that window
// is the one probe per process (the first CUDA query), not every run.
int jit_register_cap() {
    if (const char *env = std::getenv("HL_CUDA_JIT_MAX_REGISTERS")) return std::atoi(env);
    setenv("HL_CUDA_JIT_MAX_REGISTERS", std::to_string(kJitMaxRegisters).c_str(), 0);
    return kJitMaxRegisters;
}

CudaState probe() {
    CudaState s;
    // RTLD_GLOBAL: Halide's runtime looks the driver's symbols up in the process first (it would
    // only try "libcuda.so" itself, which driver-only installs lack).
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        const char *e = dlerror();
        const std::string first = e ? e : "not found";
        lib = dlopen("libcuda.so", RTLD_NOW | RTLD_GLOBAL);
        if (!lib) {
            s.reason = "the NVIDIA driver library cannot be loaded (" + first + ")";
            return s;
        }
    }
    Driver d;
    bool missing = false;
    // The probe's calls are required; the memory calls (CudaBuffer) are looked up only, so a
    // driver without them still runs kernels.
    auto sym = [&](auto &fn, const char *name, bool required = true) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
        if (!fn && required && !missing) {
            missing = true;
            s.reason = std::string("libcuda has no ") + name;
        }
    };
    sym(d.cuGetErrorString, "cuGetErrorString");
    sym(d.cuInit, "cuInit");
    sym(d.cuDeviceGetCount, "cuDeviceGetCount");
    sym(d.cuDeviceGet, "cuDeviceGet");
    sym(d.cuDeviceGetName, "cuDeviceGetName");
    sym(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(d.cuCtxPushCurrent, "cuCtxPushCurrent_v2", false);
    sym(d.cuCtxPopCurrent, "cuCtxPopCurrent_v2", false);
    sym(d.cuMemAlloc, "cuMemAlloc_v2", false);
    sym(d.cuMemFree, "cuMemFree_v2", false);
    sym(d.cuMemcpyHtoD, "cuMemcpyHtoD_v2", false);
    sym(d.cuMemcpyDtoH, "cuMemcpyDtoH_v2", false);
    if (missing) return s;
    if (CUresult r = d.cuInit(0)) {
        s.reason = driver_error(d, "cuInit", r);
        return s;
    }
    int count = 0;
    if (CUresult r = d.cuDeviceGetCount(&count)) {
        s.reason = driver_error(d, "cuDeviceGetCount", r);
        return s;
    }
    if (count <= 0) {
        s.reason = "the driver reports no CUDA GPU";
        return s;
    }
    if (const char *env = std::getenv("HL_GPU_DEVICE")) s.ordinal = std::atoi(env);
    if (s.ordinal < 0 || s.ordinal >= count) {
        s.reason = "HL_GPU_DEVICE=" + std::to_string(s.ordinal) + " but the driver reports " + std::to_string(count) +
                   " GPU(s)";
        return s;
    }
    CUdevice dev = 0;
    if (CUresult r = d.cuDeviceGet(&dev, s.ordinal)) {
        s.reason = driver_error(d, "cuDeviceGet", r);
        return s;
    }
    char name[256] = {};
    if (d.cuDeviceGetName(name, sizeof(name) - 1, dev) == 0) s.name = name;
    CUcontext ctx = nullptr;
    if (CUresult r = d.cuDevicePrimaryCtxRetain(&ctx, dev)) {
        s.reason = driver_error(d, "cuDevicePrimaryCtxRetain", r);
        return s;
    }
    g_context = ctx;
    g_driver = d;
    halide_set_cuda_acquire_context(acquire_context);
    halide_set_cuda_release_context(release_context);
    s.jit_max_registers = jit_register_cap();
    s.available = true;
    return s;
}
// Runs `call` with the library's context current on this thread (the caller's is restored).
template <typename F>
std::string in_context(const char *name, F call) {
    const Driver &d = g_driver;
    if (!d.cuCtxPushCurrent || !d.cuCtxPopCurrent) return "libcuda has no cuCtxPushCurrent_v2/cuCtxPopCurrent_v2";
    if (CUresult r = d.cuCtxPushCurrent(g_context)) return driver_error(d, "cuCtxPushCurrent", r);
    const CUresult r = call();
    CUcontext popped = nullptr;
    d.cuCtxPopCurrent(&popped);
    return r ? driver_error(d, name, r) : std::string();
}
#else
CudaState probe() {
    CudaState s;
    s.reason = "this build of the library has no CUDA kernels (configured with DECONV_CUDA=OFF)";
    return s;
}
#endif

}  // namespace

const CudaState &cuda_state() {
    static const CudaState state = probe();  // thread-safe initialisation, once
    return state;
}

#if defined(DECONV_HAVE_CUDA)
std::string cuda_mem_alloc(size_t bytes, uint64_t *address) {
    if (!g_driver.cuMemAlloc) return "libcuda has no cuMemAlloc_v2";
    return in_context("cuMemAlloc", [&] { return g_driver.cuMemAlloc(address, bytes); });
}
void cuda_mem_free(uint64_t address) {
    if (g_driver.cuMemFree) in_context("cuMemFree", [&] { return g_driver.cuMemFree(address); });
}
std::string cuda_copy_to_device(uint64_t dst, const void *src, size_t bytes) {
    if (!g_driver.cuMemcpyHtoD) return "libcuda has no cuMemcpyHtoD_v2";
    return in_context("cuMemcpyHtoD", [&] { return g_driver.cuMemcpyHtoD(dst, src, bytes); });
}
std::string cuda_copy_to_host(void *dst, uint64_t src, size_t bytes) {
    if (!g_driver.cuMemcpyDtoH) return "libcuda has no cuMemcpyDtoH_v2";
    return in_context("cuMemcpyDtoH", [&] { return g_driver.cuMemcpyDtoH(dst, src, bytes); });
}
#else
std::string cuda_mem_alloc(size_t, uint64_t *) { return cuda_state().reason; }
void cuda_mem_free(uint64_t) {}
std::string cuda_copy_to_device(uint64_t, const void *, size_t) { return cuda_state().reason; }
std::string cuda_copy_to_host(void *, uint64_t, size_t) { return cuda_state().reason; }
#endif

}  // namespace detail

bool cuda_available() { return detail::cuda_state().available; }

std::string cuda_unavailable_reason() { return detail::cuda_state().reason; }

CudaBuffer::CudaBuffer(size_t bytes) : bytes_(bytes) {
    if (!cuda_available()) throw Error(ErrorKind::Unsupported, "CudaBuffer: CUDA is unavailable: " + cuda_unavailable_reason());
    // cuMemAlloc refuses 0 bytes; an empty buffer still gets a distinct address.
    const std::string err = detail::cuda_mem_alloc(bytes ? bytes : 1, &address_);
    if (!err.empty()) {
        address_ = 0;
        throw Error(ErrorKind::TooLarge, "CudaBuffer: allocating " + std::to_string(bytes) + " bytes on the GPU: " + err);
    }
}

CudaBuffer::~CudaBuffer() {
    if (address_) detail::cuda_mem_free(address_);
}

CudaBuffer::CudaBuffer(CudaBuffer &&other) noexcept : address_(other.address_), bytes_(other.bytes_) {
    other.address_ = 0;
    other.bytes_ = 0;
}

CudaBuffer &CudaBuffer::operator=(CudaBuffer &&other) noexcept {
    if (this != &other) {
        if (address_) detail::cuda_mem_free(address_);
        address_ = other.address_;
        bytes_ = other.bytes_;
        other.address_ = 0;
        other.bytes_ = 0;
    }
    return *this;
}

namespace {
void check_copy(const char *what, size_t bytes, size_t size) {
    if (bytes > size) {
        throw Error(ErrorKind::InvalidArgument, std::string("CudaBuffer::") + what + ": " + std::to_string(bytes) +
                                                    " bytes do not fit a buffer of " + std::to_string(size));
    }
}
}  // namespace

void CudaBuffer::upload(const void *host, size_t bytes) {
    check_copy("upload", bytes, bytes_);
    if (bytes == 0) return;
    const std::string err = detail::cuda_copy_to_device(address_, host, bytes);
    if (!err.empty()) throw Error(ErrorKind::Kernel, "CudaBuffer::upload: " + err);
}

void CudaBuffer::download(void *host, size_t bytes) const {
    check_copy("download", bytes, bytes_);
    if (bytes == 0) return;
    const std::string err = detail::cuda_copy_to_host(host, address_, bytes);
    if (!err.empty()) throw Error(ErrorKind::Kernel, "CudaBuffer::download: " + err);
}

}  // namespace deconv
