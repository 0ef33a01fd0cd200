// The roofline's compute peak measured on this machine: `deconv bench` divides each layer's
// FLOP/s by it (unless --peak-gflops names one). Machines of one name differ by a factor of two
// (a 2-vCPU AMD EPYC VM: 229-233 GFLOP/s of FP32 FMA on 2 threads on Zen 4, one 512-bit FMA
// per cycle per core; 465-480 on Zen 5), so a fixed default misstates every layer's share.
#pragma once

#include <string>

namespace deconv_cli {

// FP32 multiply-add GFLOP/s of `threads` threads running independent FMA chains on the widest
// vectors this CPU has (AVX-512, AVX2+FMA, SSE, NEON) within the x86 CPU variant `cpu_variant`
// ("avx512", "avx2", "sse41"; empty: the widest), best of a few rounds of >= 10 ms each.
double measure_fp32_peak_gflops(int threads, const std::string &cpu_variant);

}  // namespace deconv_cli
