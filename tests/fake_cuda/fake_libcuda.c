/* A stand-in for the NVIDIA driver (libcuda.so.1) on machines without one, so CI exercises the
 * library's "driver present, no usable GPU" path, not only "no driver". It exports the entry
 * points the library's probe (runtime/gpu/cuda_glue.cpp) resolves and fails the way a driver on a
 * machine without a GPU does:
 *   FAKE_CUDA_MODE unset or "nodevice": cuInit returns CUDA_ERROR_NO_DEVICE (100);
 *   FAKE_CUDA_MODE=zero: cuInit succeeds and cuDeviceGetCount reports 0 GPUs.
 * Every other call fails with CUDA_ERROR_NOT_INITIALIZED (3): a library that went on to launch a
 * kernel would get an error, never a crash. */
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static int zero_mode(void) {
    const char *m = getenv("FAKE_CUDA_MODE");
    return m && strcmp(m, "zero") == 0;
}

EXPORT int cuInit(unsigned flags) {
    (void)flags;
    return zero_mode() ? 0 : 100;
}
EXPORT int cuDeviceGetCount(int *count) {
    if (!zero_mode()) return 3;
    *count = 0;
    return 0;
}
EXPORT int cuDeviceGet(int *dev, int ordinal) {
    (void)dev;
    (void)ordinal;
    return 3;
}
EXPORT int cuDeviceGetName(char *name, int len, int dev) {
    (void)name;
    (void)len;
    (void)dev;
    return 3;
}
EXPORT int cuDevicePrimaryCtxRetain(void **ctx, int dev) {
    (void)ctx;
    (void)dev;
    return 3;
}
EXPORT int cuGetErrorString(int error, const char **text) {
    switch (error) {
    case 100: *text = "no CUDA-capable device is detected"; return 0;
    case 3: *text = "initialization error"; return 0;
    default: *text = 0; return 1;
    }
}
