#include "cuda_glue.h"

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
};

CUcontext g_context = nullptr;  // written once by the probe, before any kernel can run

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
    auto sym = [&](auto &fn, const char *name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
        if (!fn && !missing) {
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
    halide_set_cuda_acquire_context(acquire_context);
    halide_set_cuda_release_context(release_context);
    s.available = true;
    return s;
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

}  // namespace detail

bool cuda_available() { return detail::cuda_state().available; }

std::string cuda_unavailable_reason() { return detail::cuda_state().reason; }

}  // namespace deconv
