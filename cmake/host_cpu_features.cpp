// Prints the Halide target features of the CPU that runs it, one line, space-separated: what
// DECONV_CPU_VARIANTS=native (cmake/DeconvCpuVariants.cmake) reads at configure time to keep the
// one kernel variant of DECONV_X86_TARGETS this machine runs best. The groups follow Halide 14's
// own run-time check (each AVX-512 level needs the one below it).
#include <cstdio>

int main() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    const bool sse41 = __builtin_cpu_supports("sse4.1");
    const bool avx = sse41 && __builtin_cpu_supports("avx");
    const bool avx2 = avx && __builtin_cpu_supports("avx2");
    const bool fma = avx && __builtin_cpu_supports("fma");
    const bool f16c = avx && __builtin_cpu_supports("f16c");
    const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd");
    const bool skylake = avx512 && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512dq");
    const bool cannonlake = skylake && __builtin_cpu_supports("avx512ifma") && __builtin_cpu_supports("avx512vbmi");
    const bool sapphirerapids =
        cannonlake && __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bf16");
    const struct {
        bool has;
        const char *name;
    } features[] = {{sse41, "sse41"},
                    {avx, "avx"},
                    {avx2, "avx2"},
                    {fma, "fma"},
                    {f16c, "f16c"},
                    {avx512, "avx512"},
                    {skylake, "avx512_skylake"},
                    {cannonlake, "avx512_cannonlake"},
                    {sapphirerapids, "avx512_sapphirerapids"}};
    const char *sep = "";
    for (const auto &f : features) {
        if (!f.has) continue;
        std::printf("%s%s", sep, f.name);
        sep = " ";
    }
    std::printf("\n");
#endif
    return 0;
}
