#include "kernels/kernel_registry.h"

#include "kernels/halide_glue.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>

// Generated: includes every kernel header and defines kKernelTable[].
#include "kernel_table.inc"

namespace deconv {
namespace detail {

bool KernelKey::operator==(const KernelKey &o) const {
    return family == o.family && rank == o.rank && dtype == o.dtype && device == o.device && layout == o.layout &&
           channels == o.channels && bounded == o.bounded && x_stride == o.x_stride && blocked == o.blocked &&
           short_phase0 == o.short_phase0 && ci_pairs == o.ci_pairs && groups == o.groups && dots == o.dots &&
           tap_rows == o.tap_rows && group_block == o.group_block && tile == o.tile && taps == o.taps &&
           generator == o.generator && extra == o.extra;
}

KernelEntry parse_kernel_row(const KernelTableRow &row) {
    KernelEntry e{};
    e.name = row.name;
    // A single-target row's one entry point (a device kernel); a CPU row's is its variant's.
    const VariantFn device_fn = variant_entry(row, "");
    e.fn = device_fn.fn;
    e.variant = device_fn.variant;
    e.key.device = row.device;
    const std::string gen = row.generator;
    const auto fail = [&](const std::string &why) {
        throw Error(ErrorKind::Kernel, std::string("kernel table row ") + row.name + ": " + why);
    };
    e.key.dots = gen == "deconv_phase_conv_dots";
    if (gen == "deconv_phase_conv" || e.key.dots || gen == "deconv_phase_conv_group_blocks")
        e.key.family = KernelFamily::Phase;
    else if (gen == "deconv_phase_conv_interleaved" || gen == "deconv_phase_conv_interleaved_groups")
        e.key.family = KernelFamily::Interleaved;
    else if (gen == "deconv_group_conv") e.key.family = KernelFamily::GroupConv;
    else if (gen == "deconv_winograd_input") e.key.family = KernelFamily::WinogradInput;
    else if (gen == "deconv_winograd_output") e.key.family = KernelFamily::WinogradOutput;
    else if (gen.rfind("deconv_", 0) == 0) {
        e.key.family = KernelFamily::Generic;
        e.key.generator = gen;
    } else {
        fail("unknown generator " + gen);
    }
    const bool generic = e.key.family == KernelFamily::Generic;
    std::string vectorize = "auto";
    const std::string params = row.params;
    size_t at = 0;
    while (at < params.size()) {
        const size_t end = std::min(params.find(' ', at), params.size());
        const std::string item = params.substr(at, end - at);
        at = end + 1;
        if (item.empty()) continue;
        const size_t eq = item.find('=');
        if (eq == std::string::npos) fail("parameter '" + item + "' is not key=value");
        const std::string k = item.substr(0, eq), v = item.substr(eq + 1);
        const int n = std::atoi(v.c_str());
        if (k == "rank") e.key.rank = n;
        else if (k == "dtype") e.key.dtype = parse_dtype(v);
        else if (k == "layout") e.key.layout = parse_data_format(v);
        else if (k == "vectorize") vectorize = v;
        else if (k == "bounded") e.key.bounded = v == "true";
        else if (k == "x_stride") e.key.x_stride = n;
        else if (k == "blocked") e.key.blocked = v == "true";
        else if (k == "short_phase") e.key.short_phase0 = n == 0;
        else if (k == "ci_pairs") e.key.ci_pairs = v == "true";
        else if (k == "tap_rows") e.key.tap_rows = v == "true";
        else if (k == "group_block") e.key.group_block = n;
        else if (k == "vectors") e.knobs.vectors = n;
        else if (k == "co_tile") e.knobs.co_tile = n;
        else if (k == "q_tile") e.knobs.q_tile = n;
        else if (k == "unroll_taps") e.knobs.unroll_taps = v == "true";
        else if (k == "tile") e.key.tile = n;
        else if (k == "taps") e.key.taps = n;
        else if (generic) e.key.extra += (e.key.extra.empty() ? "" : " ") + item;
        else fail("unknown parameter '" + k + "'");
    }
    // The generators' rule for vectorize=auto (generators/kernel_generator.h): channels under NXC.
    // Group-vectorized kernels read the channel-major filter packing too.
    e.key.groups = vectorize == "groups";
    e.key.channels = vectorize == "channels" || e.key.groups || (vectorize == "auto" && e.key.layout == DataFormat::NXC);
    // The Winograd transforms are channels-last and vectorize channels (they have no such parameters).
    if (e.key.family == KernelFamily::WinogradInput || e.key.family == KernelFamily::WinogradOutput) {
        e.key.layout = DataFormat::NXC;
        e.key.channels = true;
    }
    return e;
}

VariantFn variant_entry(const KernelTableRow &row, const std::string &variant) {
    const int rank = cpu_variant_rank(variant);
    for (const VariantFn &f : row.fns) {
        if (!f.fn) break;
        if (!f.variant || !*f.variant) return f;  // single-target rows (CUDA, OpenCL)
        const int r = cpu_variant_rank(f.variant);
        if (rank >= 0 && r >= rank && cpu_supports_variant(f.variant)) return f;
    }
    return {nullptr, nullptr};
}

namespace {

// The table of one variant: each row at that variant's entry point, or at the best one below it
// where the row has none (a kernel only some variants need: f16 kernels below F16C).
std::vector<KernelEntry> variant_table(const std::string &variant) {
    std::vector<KernelEntry> v;
    for (const KernelTableRow &row : kKernelTable) {
        const VariantFn f = variant_entry(row, variant);
        if (!f.fn) continue;
        KernelEntry e = parse_kernel_row(row);
        e.fn = f.fn;
        e.variant = f.variant;
        v.push_back(e);
    }
    return v;
}

}  // namespace

const std::vector<KernelEntry> &kernels(const std::string &variant) {
    // One table per variant this library knows, parsed once; the default variant's is kernels().
    static const std::vector<std::pair<std::string, std::vector<KernelEntry>>> tables = [] {
        std::vector<std::pair<std::string, std::vector<KernelEntry>>> t;
        for (const std::string &name : cpu_variant_names()) t.emplace_back(name, variant_table(name));
        t.emplace_back("none", variant_table("none"));  // device kernels only
        return t;
    }();
    for (const auto &t : tables)
        if (t.first == variant) return t.second;
    return tables.back().second;
}


const std::vector<std::string> &built_cpu_variants() {
    static const std::vector<std::string> v(std::begin(kCpuVariantsBuilt), std::end(kCpuVariantsBuilt));
    return v;
}

const KernelEntry *find_kernel(const KernelKey &key, const std::string &variant) {
    for (const KernelEntry &k : kernels(variant))
        if (k.key == key) return &k;
    return nullptr;
}


DType wider_dtype(DType t) {
    switch (t) {
    case DType::f16:
    case DType::bf16: return DType::f32;
    case DType::i8:
    case DType::u8: return DType::f64;
    default: return t;
    }
}

bool configured_narrow(DType t) {
    return wider_dtype(t) != t &&
           std::find(std::begin(kDtypesConfigured), std::end(kDtypesConfigured), t) != std::end(kDtypesConfigured);
}

std::vector<DType> configured_dtypes() { return {std::begin(kDtypesConfigured), std::end(kDtypesConfigured)}; }

bool runs_on_wider_kernel(const KernelKey &key, const std::string &variant) {
    if (key.device != Device::CPU || !configured_narrow(key.dtype) || find_kernel(key, variant)) return false;
    KernelKey wide = key;
    wide.dtype = wider_dtype(key.dtype);
    return find_kernel(wide, variant) != nullptr;
}

const KernelEntry *find_kernel(const KernelKey &key, const ScheduleKnobs &knobs, const std::string &variant) {
    for (const KernelEntry &k : kernels(variant))
        if (k.key == key && k.knobs == knobs) return &k;
    return nullptr;
}

}  // namespace detail

std::vector<std::string> built_cpu_variants() { return detail::built_cpu_variants(); }

}  // namespace deconv
