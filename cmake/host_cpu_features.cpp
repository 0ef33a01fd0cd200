// Prints the Halide target features of the CPU that runs it, one line, space-separated: what
// DECONV_CPU_VARIANTS=native (cmake/DeconvCpuVariants.cmake) reads at configure time to keep the
// one kernel variant of DECONV_X86_TARGETS this machine runs best. The groups follow Halide 14's
// own run-time check (each AVX-512 level needs the one below it), read with CPUID and XGETBV (the
// OS must save the vector state) rather than __builtin_cpu_supports, whose feature names differ
// between GCC and Clang.
#include <cstdio>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>

namespace {

bool bit(unsigned v, int b) { return (v >> b) & 1u; }

unsigned long long xgetbv0() {
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

}  // namespace
#endif

int main() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const unsigned c1 = c;
    const bool osxsave = bit(c1, 27);
    const unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
    const bool avx_state = (xcr0 & 0x6) == 0x6, avx512_state = (xcr0 & 0xe6) == 0xe6;
    unsigned b7 = 0, c7 = 0, a71 = 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) b7 = b, c7 = c;
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) a71 = a;

    const bool sse41 = bit(c1, 19);
    const bool avx = sse41 && bit(c1, 28) && avx_state;
    const bool avx2 = avx && bit(b7, 5);
    const bool fma = avx && bit(c1, 12);
    const bool f16c = avx && bit(c1, 29);
    const bool avx512 = avx2 && avx512_state && bit(b7, 16) && bit(b7, 28);          // F, CD
    const bool skylake = avx512 && bit(b7, 31) && bit(b7, 30) && bit(b7, 17);        // VL, BW, DQ
    const bool cannonlake = skylake && bit(b7, 21) && bit(c7, 1);                     // IFMA, VBMI
    const bool sapphirerapids = cannonlake && bit(c7, 11) && bit(a71, 5);             // VNNI, BF16
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
