# Stamps out the AOT kernel libraries: one per (op, rank, dtype), each a multi-target library
# that picks the best CPU variant at run time, all sharing one Halide runtime per target.
#
#   deconv_add_kernel(OP <op> GENERATOR <name> RANK <r> DTYPE <t> [DEVICE CPU|CUDA] [FROM <executable>]
#                     [SPEED|QUANTIZED] [PARAMS k=v...])
#   deconv_add_kernel_matrix(OP <op> GENERATOR <name> RANKS <r...> DTYPES <t...> [DEVICE CPU|CUDA]
#                            [SPEED] [PARAMS k=v...])
#   deconv_add_aux_kernel(NAME <name> GENERATOR <name> [PARAMS k=v...])   CUDA helpers, no registry entry
#
# Adding a dtype or a rank is a change to DECONV_DTYPES / DECONV_RANKS; adding a CPU variant
# is a line in DECONV_X86_TARGETS or DECONV_ARM64_TARGETS (and its entry in the variant table
# of runtime/kernels/halide_glue.cpp). Kernel names: deconv_<op>_r<rank>_<dtype>. The list of built
# kernels, with their generator parameters, is kept in the global property DECONV_KERNELS for the
# runtime's registry.

# Best first: the first whose features the CPU has wins at run time, the last is the fallback.
# Not avx512_sapphirerapids: Halide 14 then lets LLVM emit AVX512-FP16 instructions (vmovw seen
# in the bf16 kernels) while its run-time check only asks for AVX512-BF16 and VNNI, so CPUs with
# BF16 but without FP16 (this project's machine) die with SIGILL.
set(DECONV_X86_TARGETS
    "x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_skylake-f16c-fma-sse41"
    "x86-64-linux-avx-avx2-f16c-fma-sse41"
    "x86-64-linux-sse41"
    CACHE STRING "Halide targets of the x86 multi-target kernels, best first")
# ARMv8.2 dot product + half-precision arithmetic (Cortex-A55/A75/A76+, Neoverse, Apple), then
# plain ARMv8-A NEON (Cortex-A53/A57/A72). halide_glue.cpp checks the features with HWCAP.
set(DECONV_ARM64_TARGETS
    "arm-64-linux-arm_dot_prod-arm_fp16"
    "arm-64-linux"
    CACHE STRING "Halide targets of the aarch64 multi-target kernels, best first")

# A build folder configured before that change keeps the old cached list: refuse it plainly.
if(DECONV_X86_TARGETS MATCHES "avx512_sapphirerapids")
  message(FATAL_ERROR "deconv: DECONV_X86_TARGETS names avx512_sapphirerapids, whose kernels die of "
                      "SIGILL on CPUs with AVX512-BF16 but no AVX512-FP16 (see above). Reconfigure with "
                      "'cmake -U DECONV_X86_TARGETS <build>' to take the default list.")
endif()

# The list for the architecture being built (a cross build's toolchain file sets it), trimmed by
# DECONV_CPU_VARIANTS (cmake/DeconvCpuVariants.cmake) to DECONV_CPU_TARGETS.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(DECONV_CPU_TARGETS_ALL ${DECONV_ARM64_TARGETS})
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(DECONV_CPU_TARGETS_ALL ${DECONV_X86_TARGETS})
else()
  message(FATAL_ERROR "deconv: no kernel targets for CMAKE_SYSTEM_PROCESSOR '${CMAKE_SYSTEM_PROCESSOR}' "
                      "(known: x86_64, aarch64)")
endif()
include(DeconvCpuVariants)

# large_buffers: 64-bit addressing, so one call can span more than 2 GiB (the spec's 3D example).
set(DECONV_KERNEL_FEATURES "large_buffers" CACHE STRING "Halide features added to every kernel target")
message(STATUS "deconv: kernel targets ${DECONV_CPU_TARGETS} (+ ${DECONV_KERNEL_FEATURES})")
# GPU kernels index with 32 bits: large_buffers' 64-bit addresses took the CUDA phase kernels from
# 94-112 registers to 148-168 (ptxas, sm_90), past the JIT cap of 128. The dispatcher refuses CUDA
# plans whose tensors hold 2^31 elements or more (runtime/gpu/cuda_executor.cpp).
set(DECONV_GPU_KERNEL_FEATURES "${DECONV_KERNEL_FEATURES}")
list(REMOVE_ITEM DECONV_GPU_KERNEL_FEATURES large_buffers)

# CUDA kernels: the same generators with the GPU schedule (generators/schedules/gpu_schedule.h).
# Halide emits PTX itself and the runtime dlopens libcuda at run time: neither the CUDA toolkit
# nor a GPU is needed to build. Their host side uses the unchecked CPU fallback target (it only
# launches kernels), so they run on every CPU the CPU kernels run on.
if(CMAKE_CROSSCOMPILING OR NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(_deconv_cuda_default OFF)
else()
  set(_deconv_cuda_default ON)
endif()
option(DECONV_CUDA "Build CUDA kernels beside the CPU kernels (x86-64 hosts)" ${_deconv_cuda_default})
set(DECONV_CUDA_CAPABILITY "cuda_capability_61" CACHE STRING
    "Halide feature naming the oldest GPU the CUDA kernels run on (PTX is JIT-compiled for newer ones)")
# Dtypes Halide 14 compiles for CUDA. Not bf16: LLVM 14's NVPTX back end aborts on the forward
# kernel ("Copy one register into another with a different width"); bf16 layers run on the CPU.
# DECONV_CUDA_DTYPES picks among them (default: all); a CUDA kernel is built for a dtype only
# when DECONV_DTYPES has it too (the CPU kernels are the fallback).
set(DECONV_CUDA_DTYPES_SUPPORTED f32 f16 f64 i8 u8 i32)
set(DECONV_CUDA_DTYPES "${DECONV_CUDA_DTYPES_SUPPORTED}" CACHE STRING
    "dtypes of the CUDA kernels (among f32;f16;f64;i8;u8;i32)")
foreach(t IN LISTS DECONV_CUDA_DTYPES)
  if(NOT t IN_LIST DECONV_CUDA_DTYPES_SUPPORTED)
    message(FATAL_ERROR "deconv: DECONV_CUDA_DTYPES names '${t}'; Halide 14 builds CUDA kernels for "
                        "${DECONV_CUDA_DTYPES_SUPPORTED} only (bf16 layers run on the CPU)")
  endif()
endforeach()
set(DECONV_CUDA_DTYPES_BUILT "")
foreach(t IN LISTS DECONV_DTYPES)
  if(t IN_LIST DECONV_CUDA_DTYPES)
    list(APPEND DECONV_CUDA_DTYPES_BUILT ${t})
  endif()
endforeach()
if(NOT DECONV_CUDA)
  set(DECONV_CUDA_DTYPES_BUILT "")
endif()
# For the tests (another directory scope): the dtypes the CUDA matrix holds.
set_property(GLOBAL PROPERTY DECONV_CUDA_DTYPES_BUILT "${DECONV_CUDA_DTYPES_BUILT}")
# The host side of CUDA kernels only launches them: the fallback variant, whatever was kept.
list(GET DECONV_CPU_TARGETS_ALL -1 _deconv_cuda_host)
set(DECONV_CUDA_TARGET "${_deconv_cuda_host}-cuda-${DECONV_CUDA_CAPABILITY}")
if(DECONV_CUDA)
  message(STATUS "deconv: CUDA kernels for ${DECONV_CUDA_TARGET} (+ ${DECONV_GPU_KERNEL_FEATURES}), dtypes ${DECONV_CUDA_DTYPES_BUILT}")
endif()

set_property(GLOBAL PROPERTY DECONV_KERNELS "")
set_property(GLOBAL PROPERTY DECONV_AUX_KERNELS "")
set_property(GLOBAL PROPERTY DECONV_KERNEL_RUNTIME "")

# add_halide_library for one kernel, sharing the one runtime (the first kernel's). The generator
# comes from the executable deconv_generators, or from the one the caller's _deconv_from names.
function(_deconv_halide_library name generator targets)
  set_property(GLOBAL APPEND PROPERTY DECONV_GENERATOR_STEPS ${name})  # for the build estimate
  set(from deconv_generators)
  if(_deconv_from)
    set(from ${_deconv_from})
  endif()
  get_property(runtime GLOBAL PROPERTY DECONV_KERNEL_RUNTIME)
  set(features ${DECONV_KERNEL_FEATURES})
  if(targets STREQUAL DECONV_CUDA_TARGET)
    set(features ${DECONV_GPU_KERNEL_FEATURES})
  endif()
  set(use_runtime "")
  if(runtime)
    set(use_runtime USE_RUNTIME ${runtime})
  endif()
  add_halide_library(${name}
    FROM ${from}
    GENERATOR ${generator}
    FUNCTION_NAME ${name}
    TARGETS ${targets}
    FEATURES ${features}
    PARAMS ${ARGN}
    ${use_runtime})
  # libdeconv takes the kernel's objects themselves (runtime/CMakeLists.txt): its archive is built
  # only for a target that links it (the OpenCL tests).
  set_target_properties(${name} PROPERTIES EXCLUDE_FROM_ALL ON)
  if(NOT runtime)
    # The first kernel's runtime is the one every other kernel links; Halide compiles it for what
    # its users' targets have in common (CPU variants plus CUDA). The fallback variant is among
    # them even where it has no kernels (DECONV_CPU_VARIANTS=native), so that the runtime runs on
    # every CPU and the dispatcher, not SIGILL, says when a CPU lacks the kernels' variant.
    set_property(GLOBAL PROPERTY DECONV_KERNEL_RUNTIME ${name}.runtime)
    list(GET DECONV_CPU_TARGETS_ALL -1 fallback)
    string(REPLACE ";" "-" fallback_features "${DECONV_KERNEL_FEATURES}")
    set_property(TARGET ${name}.runtime APPEND PROPERTY Halide_RT_TARGETS "${fallback}-${fallback_features}")
  endif()
endfunction()

# Records a kernel for the runtime's registry: its generator, name, device, CPU variants (a
# comma list: each is a library and function <name>_<variant>; "-" for one unsuffixed function)
# and the very PARAMS the generator was given (runtime/kernels/kernel_registry.h parses them into the
# kernel's typed key).
function(_deconv_register_kernel generator name device variants)
  string(JOIN " " params ${ARGN})
  set_property(GLOBAL APPEND PROPERTY DECONV_KERNELS "${generator};${name};${device};${variants};${params}")
endfunction()

# One CPU kernel: a single-target library and function per variant, <name>_<variant>. One
# generator step per variant (the steps run in parallel, and each is a third of a multi-target
# step), and each variant's entry point stays reachable: the dispatcher picks the variant
# (runtime/kernels/kernel_registry.cpp), so a plan or a test can run any variant that was built.
function(_deconv_cpu_kernel name generator dtype tier)
  _deconv_cpu_targets_for(${dtype} ${tier} targets)
  if(_deconv_targets_matching)
    list(FILTER targets INCLUDE REGEX "${_deconv_targets_matching}")
  endif()
  set(variants "")
  foreach(t IN LISTS targets)
    deconv_cpu_variant_name(${t} v)
    _deconv_halide_library(${name}_${v} ${generator} "${t}" ${ARGN})
    list(APPEND variants ${v})
  endforeach()
  string(JOIN "," variants ${variants})
  set(_deconv_cpu_kernel_variants "${variants}" PARENT_SCOPE)
endfunction()

# Kernel tiers (deconv_add_kernel's `tier`): core families run every layer (the bounded and
# interior phase kernels of each schedule and layout, the forward kernels); SPEED families only
# make some class of layer faster; QUANTIZED kernels serve the quantized layers, whatever their
# registry dtype says. Speed families are built for the dtypes that inference runs fast
# (DECONV_SPEED_DTYPES: f64 and the plain integer layers are for exactness), and not for the
# fallback variant of a multi-variant x86-64 build, whose CPUs (SSE4.1 without AVX2: parts from
# 2008-2013) need the library to run, not to be fast; ARM64's fallback (ARMv8.0 NEON: Cortex-A53
# and A72 boards that still ship) keeps them. docs/build-matrix.md, "Kernel tiers", has what each
# rule below saves.
set(DECONV_SPEED_DTYPES f32 f16 bf16)

# The CPU variants a dtype's kernels of `tier` (core, speed or quantized) are built for. Narrow
# dtypes run on their wider dtype's kernels wherever those serve them (runtime/dispatch/
# impl_as_wider.cpp), so their own kernels are left out there:
# - On x86-64 with f32 kernels in the build, 16-bit layers run as f32 on every variant whose CPUs
#   have F16C (runtime/kernels/half_conversion.cpp, runs_as_f32): f16 always there, bf16 there
#   unless the CPU has AVX512-BF16, which only the AVX-512 variant reaches. So f16 keeps the
#   variants without F16C, bf16 those and the AVX-512 one, less a multi-variant build's fallback
#   (its 16-bit layers convert in software).
# - With f64 kernels in the build, i8 and u8 layers run as f64 (exact) and get no CPU kernels.
# A list left empty builds no kernel of that dtype: its layers run on the wider kernels on every
# CPU the build runs on (the registry's built_dtypes() still names the dtype).
function(_deconv_cpu_targets_for dtype tier out)
  set(targets ${DECONV_CPU_TARGETS})
  if(tier STREQUAL "quantized")
    set(${out} ${targets} PARENT_SCOPE)
    return()
  endif()
  set(x86 FALSE)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(x86 TRUE)
  endif()
  set(half FALSE)
  if(tier STREQUAL "speed" AND NOT dtype IN_LIST DECONV_SPEED_DTYPES)
    set(targets "")
  endif()
  if(dtype MATCHES "^(i8|u8)$" AND "f64" IN_LIST DECONV_DTYPES)
    set(targets "")
  endif()
  if(x86 AND "f32" IN_LIST DECONV_DTYPES AND dtype MATCHES "^(f16|bf16)$")
    set(half TRUE)
  endif()
  list(LENGTH targets n)
  if(x86 AND n GREATER 1 AND (tier STREQUAL "speed" OR half))
    list(GET DECONV_CPU_TARGETS_ALL -1 fallback)
    list(REMOVE_ITEM targets "${fallback}")
  endif()
  if(half)
    set(kept "")
    foreach(t IN LISTS targets)
      if(NOT t MATCHES "-f16c" OR (dtype STREQUAL "bf16" AND t MATCHES "-avx512"))
        list(APPEND kept ${t})
      endif()
    endforeach()
    set(targets ${kept})
  endif()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# TARGETS_MATCHING: only the CPU variants whose Halide target matches the regex (kernels of an
# instruction that the other variants lack).
function(deconv_add_kernel)
  cmake_parse_arguments(K "SPEED;QUANTIZED" "OP;GENERATOR;RANK;DTYPE;DEVICE;FROM;TARGETS_MATCHING" "PARAMS" ${ARGN})
  set(tier core)
  if(K_SPEED)
    set(tier speed)
  elseif(K_QUANTIZED)
    set(tier quantized)
  endif()
  set(_deconv_from ${K_FROM})
  set(_deconv_targets_matching "${K_TARGETS_MATCHING}")
  if(NOT K_DEVICE)
    set(K_DEVICE CPU)
  endif()
  set(params rank=${K_RANK} dtype=${K_DTYPE} ${K_PARAMS})
  if(K_DEVICE STREQUAL "CPU")
    set(name "deconv_${K_OP}_r${K_RANK}_${K_DTYPE}")
    _deconv_cpu_kernel(${name} ${K_GENERATOR} ${K_DTYPE} ${tier} ${params})
    set(variants "${_deconv_cpu_kernel_variants}")
    if(variants STREQUAL "")
      return()  # no variant needs it (a narrow dtype on its wider kernels, a SPEED family of f64)
    endif()
  elseif(K_DEVICE STREQUAL "CUDA")
    set(name "deconv_cuda_${K_OP}_r${K_RANK}_${K_DTYPE}")
    _deconv_halide_library(${name} ${K_GENERATOR} "${DECONV_CUDA_TARGET}" ${params})
    set(variants "-")
  else()
    message(FATAL_ERROR "deconv_add_kernel: DEVICE must be CPU or CUDA, not '${K_DEVICE}'")
  endif()
  _deconv_register_kernel(${K_GENERATOR} ${name} ${K_DEVICE} "${variants}" ${params})
endfunction()

function(deconv_add_kernel_matrix)
  cmake_parse_arguments(M "SPEED" "OP;GENERATOR;DEVICE" "RANKS;DTYPES;PARAMS" ${ARGN})
  if(NOT M_DEVICE)
    set(M_DEVICE CPU)
  endif()
  set(speed "")
  if(M_SPEED)
    set(speed SPEED)
  endif()
  foreach(rank IN LISTS M_RANKS)
    foreach(dtype IN LISTS M_DTYPES)
      deconv_add_kernel(OP ${M_OP} GENERATOR ${M_GENERATOR} RANK ${rank} DTYPE ${dtype} DEVICE ${M_DEVICE}
                        ${speed} PARAMS ${M_PARAMS})
    endforeach()
  endforeach()
endfunction()

# A CUDA helper kernel that the dispatcher calls by name (no registry entry).
function(deconv_add_aux_kernel)
  cmake_parse_arguments(A "" "NAME;GENERATOR" "PARAMS" ${ARGN})
  _deconv_halide_library(${A_NAME} ${A_GENERATOR} "${DECONV_CUDA_TARGET}" ${A_PARAMS})
  set_property(GLOBAL APPEND PROPERTY DECONV_AUX_KERNELS ${A_NAME})
endfunction()

# bf16 dot-product kernels (x86-64 with AVX512-BF16: vdpbf16ps, two multiply-adds per f32 lane
# and instruction). Halide 14 emits vdpbf16ps only for its avx512_sapphirerapids feature, whose
# LLVM CPU (sapphirerapids) also enables AVX512-FP16, and LLVM then picks FP16 instructions
# (vmovw) that CPUs with AVX512-BF16 alone (Zen 4/5, Cooper Lake) lack. So the generator emits
# LLVM IR for that target and llc compiles it for the same CPU without AVX512-FP16. One target,
# no run-time dispatch inside: the dispatcher calls these kernels only where the CPU has
# AVX512-BF16 and VNNI (runtime/kernels/halide_glue.cpp, cpu_has_bf16_dot) and the variant cap allows
# avx512.
set(DECONV_BF16_DOT_TARGET
    "x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_sapphirerapids-avx512_skylake-f16c-fma-sse41")
# llc, for the dot-product kernels of native x86-64 builds (bf16 here, quantized below).
set(_deconv_llc_native OFF)
if(NOT CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  find_program(DECONV_LLC NAMES llc-14 llc HINTS /usr/lib/llvm-14/bin)
  if(DECONV_LLC)
    set(_deconv_llc_native ON)
  endif()
endif()
set(_deconv_bf16_dot_default OFF)
if(_deconv_llc_native AND "bf16" IN_LIST DECONV_DTYPES)
  set(_deconv_bf16_dot_default ON)
endif()
option(DECONV_BF16_DOT "Build the bf16 dot-product kernels (x86-64, needs LLVM 14's llc)" ${_deconv_bf16_dot_default})
if(DECONV_BF16_DOT)
  if(NOT DECONV_LLC)
    message(FATAL_ERROR "deconv: DECONV_BF16_DOT needs LLVM 14's llc (Debian package llvm-14); none found")
  endif()
  message(STATUS "deconv: bf16 dot-product kernels for ${DECONV_BF16_DOT_TARGET} through ${DECONV_LLC}")
endif()
# The quantized dot-product kernels (deconv_add_vnni_kernel below): every native x86-64 build
# where llc is found. Without them quantized layers run on the i16-pair kernels.
# DECONV_QUANTIZED=OFF leaves out every quantized kernel (a build that runs float layers only,
# such as the main job's demo: 8 generator steps and a generator of their own at rank 2, a fifth
# of its kernel time); quantized layers then accumulate on the i32 or f64 kernels where the build
# has them, and are Unsupported elsewhere.
option(DECONV_QUANTIZED "Build the quantized layers' kernels (u8/i8 data x i8 weights)" ON)
if(NOT DECONV_QUANTIZED)
  set(_deconv_llc_native OFF)
endif()
option(DECONV_VNNI "Build the quantized dot-product kernels (x86-64 AVX512-VNNI, needs LLVM 14's llc)" ${_deconv_llc_native})
if(DECONV_VNNI AND NOT DECONV_LLC)
  message(FATAL_ERROR "deconv: DECONV_VNNI needs LLVM 14's llc (Debian package llvm-14); none found")
endif()

# One kernel through LLVM IR and llc (the dot-product kernels below): Halide emits IR for
# `target`, llc compiles it for `mcpu` with `mattr`. One target, registered as the avx512 variant,
# which a variant cap below it takes away; the dispatcher checks the CPU features it needs.
function(_deconv_llc_kernel name base from generator target mcpu mattr)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}")
  string(REPLACE ";" "-" features "${DECONV_KERNEL_FEATURES}")
  # The generator of this build, or the one a host build exports (sanitizer and cross builds).
  set(depends ${from})
  if(NOT TARGET ${from} AND TARGET deconv::halide_generators::${from})
    set(from deconv::halide_generators::${from})
    set(depends "")
  endif()
  add_custom_command(
    OUTPUT "${dir}/${name}.ll" "${dir}/${name}.h"
    COMMAND ${from} -g ${generator} -f ${name} -e llvm_assembly,c_header -o "${dir}"
            "target=${target}-${features}-no_runtime" ${ARGN}
    DEPENDS ${depends}
    VERBATIM)
  add_custom_command(
    OUTPUT "${dir}/${name}.o"
    COMMAND "${DECONV_LLC}" -O3 -mcpu=${mcpu} ${mattr} -relocation-model=pic -filetype=obj
            "${dir}/${name}.ll" -o "${dir}/${name}.o"
    DEPENDS "${dir}/${name}.ll"
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY DECONV_GENERATOR_STEPS ${name})
  add_library(${name} STATIC "${dir}/${name}.o" "${dir}/${name}.h")
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE CXX)
  _deconv_register_kernel(${generator} ${base} CPU avx512 ${ARGN})
endfunction()

#   deconv_add_bf16_dot_kernel(OP <op> GENERATOR <name> RANK <r> [PARAMS k=v...])
function(deconv_add_bf16_dot_kernel)
  cmake_parse_arguments(K "" "OP;GENERATOR;RANK" "PARAMS" ${ARGN})
  set(base "deconv_${K_OP}_r${K_RANK}_bf16")
  _deconv_llc_kernel(${base}_avx512 ${base} deconv_generators ${K_GENERATOR} "${DECONV_BF16_DOT_TARGET}"
                     sapphirerapids -mattr=-avx512fp16 rank=${K_RANK} dtype=bf16 ${K_PARAMS})
endfunction()

# Quantized dot-product kernels (x86-64 with AVX512-VNNI: vpdpbusd, four u8 x i8 products per i32
# lane and instruction). Halide 14 emits vpdpbusd only for its Sapphire Rapids target; its IR
# holds the instruction as an intrinsic and no CPU attributes, so llc compiles it for Cascade Lake,
# the first CPU with VNNI (no AVX512-FP16 or BF16 instructions can appear). The dispatcher calls
# them only where the CPU has VNNI (runtime/kernels/halide_glue.cpp, cpu_has_vnni).
#   deconv_add_vnni_kernel(OP <op> GENERATOR <name> RANK <r> FROM <executable> [PARAMS k=v...])
function(deconv_add_vnni_kernel)
  cmake_parse_arguments(K "" "OP;GENERATOR;RANK;FROM" "PARAMS" ${ARGN})
  set(base "deconv_${K_OP}_r${K_RANK}_u8")
  _deconv_llc_kernel(${base}_avx512 ${base} ${K_FROM} ${K_GENERATOR} "${DECONV_BF16_DOT_TARGET}"
                     cascadelake "" rank=${K_RANK} dtype=u8 ${K_PARAMS})
endfunction()
