// The kernel registry reads the parameters every kernel was generated with (the PARAMS of
// cmake/DeconvKernels.cmake) into typed keys.
#include "kernels/kernel_registry.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

using deconv::DataFormat;
using deconv::DType;
using deconv::detail::KernelEntry;
using deconv::detail::KernelFamily;
using deconv::detail::KernelKey;
using deconv::detail::KernelTableRow;

TEST(KernelRegistry, EveryKernelHasADistinctKey) {
    const auto &all = deconv::detail::kernels(deconv::cpu_variant());
    ASSERT_FALSE(all.empty());
    for (const KernelEntry &k : all) {
        // The matrix's kernel of a key is the one find_kernel returns, and its name says its
        // parameters: two kernels of one key and the same knobs would be a CMake mistake.
        const KernelEntry *found = deconv::detail::find_kernel(k.key, k.knobs, deconv::cpu_variant());
        ASSERT_NE(found, nullptr) << k.name;
        EXPECT_STREQ(found->name, k.name) << "two kernels share a key";
        const std::string name = k.name;
        EXPECT_NE(name.find("_r" + std::to_string(k.key.rank) + "_"), std::string::npos) << name;
        EXPECT_NE(name.find(std::string("_") + deconv::dtype_name(k.key.dtype)), std::string::npos) << name;
        EXPECT_EQ(k.key.layout == DataFormat::NXC, name.find("_nxc") != std::string::npos) << name;
        EXPECT_EQ(!k.key.bounded, name.find("interior") != std::string::npos) << name;
        EXPECT_EQ(k.key.family == KernelFamily::Interleaved, name.find("interleaved") != std::string::npos) << name;
        if (k.key.family == KernelFamily::Interleaved) {
            EXPECT_NE(name.find("_s" + std::to_string(k.key.x_stride)), std::string::npos) << name;
            EXPECT_EQ(k.key.blocked, name.find("blocked") != std::string::npos) << name;
        }
        EXPECT_EQ(k.key.ci_pairs, name.find("pairs") != std::string::npos) << name;
        EXPECT_EQ(k.key.groups, name.find("groups") != std::string::npos) << name;
        EXPECT_EQ(k.key.tap_rows, name.find("tap_rows") != std::string::npos) << name;
        if (k.key.tap_rows) EXPECT_TRUE(k.key.channels && !k.key.bounded && k.key.rank >= 2) << name;
        if (k.key.ci_pairs) EXPECT_EQ(k.knobs.q_tile, 5) << name << ": the pair kernels' q_tile PARAM";
    }
}

TEST(KernelRegistry, ParsesTheBuildParameters) {
    const KernelTableRow row{"deconv_phase_conv", "rank=3 dtype=bf16 layout=nxc ci_pairs=true q_tile=5 bounded=false",
                             deconv::Device::CPU, "k", nullptr};
    const KernelEntry e = deconv::detail::parse_kernel_row(row);
    EXPECT_EQ(e.key.family, KernelFamily::Phase);
    EXPECT_EQ(e.key.rank, 3);
    EXPECT_EQ(e.key.dtype, DType::bf16);
    EXPECT_EQ(e.key.layout, DataFormat::NXC);
    EXPECT_TRUE(e.key.channels);  // vectorize=auto under NXC
    EXPECT_TRUE(e.key.ci_pairs);
    EXPECT_FALSE(e.key.bounded);
    EXPECT_EQ(e.knobs.q_tile, 5);
    EXPECT_FALSE(e.key.tap_rows);
    const KernelEntry t = deconv::detail::parse_kernel_row(
        {"deconv_phase_conv", "rank=2 dtype=f32 layout=nxc bounded=false tap_rows=true", deconv::Device::CPU, "t", nullptr});
    const KernelEntry t0 = deconv::detail::parse_kernel_row(
        {"deconv_phase_conv", "rank=2 dtype=f32 layout=nxc bounded=false", deconv::Device::CPU, "t0", nullptr});
    EXPECT_TRUE(t.key.tap_rows);
    EXPECT_FALSE(t.key == t0.key);  // the default lookup never returns the tap-row kernel
    const KernelEntry i = deconv::detail::parse_kernel_row(
        {"deconv_phase_conv_interleaved", "rank=2 dtype=f32 x_stride=2 short_phase=0", deconv::Device::CPU, "i", nullptr});
    EXPECT_EQ(i.key.family, KernelFamily::Interleaved);
    EXPECT_EQ(i.key.x_stride, 2);
    EXPECT_TRUE(i.key.short_phase0);
    EXPECT_FALSE(i.key.channels);
}

// A generator the registry has no typed family for is a generic kernel: found by its name, the
// parameters the key has fields for, and the rest as they stand, so that a new kernel family needs
// only its generator, its CMake line and the implementation that runs it.
TEST(KernelRegistry, NewGeneratorsAreGenericKernels) {
    const KernelEntry g = deconv::detail::parse_kernel_row({"deconv_phase_conv_int8",
                                                            "rank=2 dtype=u8 layout=nxc bounded=false epilogue=relu zp=on",
                                                            deconv::Device::CPU, "g", nullptr});
    EXPECT_EQ(g.key.family, KernelFamily::Generic);
    EXPECT_EQ(g.key.generator, "deconv_phase_conv_int8");
    EXPECT_EQ(g.key.rank, 2);
    EXPECT_EQ(g.key.dtype, DType::u8);
    EXPECT_FALSE(g.key.bounded);
    EXPECT_EQ(g.key.extra, "epilogue=relu zp=on");
    KernelKey want;
    want.family = KernelFamily::Generic;
    want.generator = "deconv_phase_conv_int8";
    want.rank = 2;
    want.dtype = DType::u8;
    want.layout = DataFormat::NXC;
    want.channels = true;
    want.bounded = false;
    want.extra = "epilogue=relu zp=on";
    EXPECT_TRUE(g.key == want);
    want.extra = "epilogue=none zp=on";
    EXPECT_FALSE(g.key == want);
}

TEST(KernelRegistry, RejectsWhatItDoesNotKnow) {
    const auto message = [](const KernelTableRow &row) {
        try {
            deconv::detail::parse_kernel_row(row);
        } catch (const deconv::Error &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message({"deconv_phase_conv", "rank=2 dtype=f32 tiles=9", deconv::Device::CPU, "k1", nullptr}),
              "kernel table row k1: unknown parameter 'tiles'");
    EXPECT_EQ(message({"other_conv", "rank=2", deconv::Device::CPU, "k2", nullptr}),
              "kernel table row k2: unknown generator other_conv");
    EXPECT_EQ(message({"deconv_phase_conv", "rank", deconv::Device::CPU, "k3", nullptr}),
              "kernel table row k3: parameter 'rank' is not key=value");
}

TEST(KernelRegistry, HasKernelMatchesTheMatrix) {
    for (DType t : deconv::built_dtypes()) {
        for (int rank : deconv::built_ranks()) {
            KernelKey k;
            k.rank = rank;
            k.dtype = t;
            // The channels-first backprop kernel is in every matrix: the dtype's own, or for f16,
            // bf16, i8 and u8 without kernels of their own the wider one they run on.
            const bool own = deconv::detail::find_kernel(k, deconv::cpu_variant()) != nullptr;
            const bool on_wider = deconv::detail::runs_on_wider_kernel(k, deconv::cpu_variant());
            EXPECT_FALSE(own && on_wider) << deconv::dtype_name(t);
            EXPECT_TRUE(own || on_wider) << deconv::dtype_name(t) << " is built but has no kernel to run on";
            EXPECT_EQ(deconv::has_kernel(deconv::Op::GroupConvolutionBackpropData, rank, t, DataFormat::NCX,
                                         deconv::Device::CPU),
                      own || on_wider)
                << deconv::dtype_name(t) << " rank " << rank;
        }
    }
}

}  // namespace
