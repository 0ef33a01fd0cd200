# The GPU-scheduled kernels once more, for Halide's OpenCL target, so that the tests can run the
# GPU schedule (generators/schedules/gpu_schedule.h) and the GPU executor (runtime/gpu/gpu_executor.cpp)
# on a CPU through pocl (tests/opencl/, docs/cuda.md). They are test-only: libdeconv never links
# them. Included by generators/CMakeLists.txt after DeconvKernels (DECONV_CPU_TARGETS_ALL).
#
# AOT only: JIT-compiling for OpenCL in-process crashes in clBuildProgram, as pocl's LLVM 15 and
# libHalide's LLVM 14 end up in one process (../shared/HALIDE14_NOTES.md). The AOT kernels carry
# their OpenCL C source and link no libHalide; pocl compiles them at the first launch.
#
# Default ON where the CUDA kernels are built (the builds that ship the GPU path) and an OpenCL
# platform is installed (an ICD file, and the loader under the name Halide's runtime dlopens,
# libOpenCL.so); OFF is how a machine without pocl opts out. The tests need no CUDA kernels, so ON
# works without DECONV_CUDA too. With the option ON, a missing device fails the tests, it does not
# skip them.

set(_deconv_opencl_default OFF)
if(DECONV_CUDA AND DECONV_BUILD_TESTS)
  file(GLOB _deconv_opencl_icds /etc/OpenCL/vendors/*.icd)
  find_library(DECONV_OPENCL_LOADER NAMES libOpenCL.so OpenCL)
  if(_deconv_opencl_icds AND DECONV_OPENCL_LOADER)
    set(_deconv_opencl_default ON)
  endif()
endif()
option(DECONV_OPENCL_TESTS
       "Test the GPU schedules and dispatch on the CPU through OpenCL (pocl-opencl-icd, ocl-icd-opencl-dev)"
       ${_deconv_opencl_default})

# A small matrix that reaches every branch of the schedule and the dispatch: ranks 1 to 3 (grid x
# alone, fused with the next output axis; grid y fused with the outermost axis), f32, and the
# integer stores (i32, and i8 with its one-byte zero fill). About 0.5 s of build per kernel. Not
# f64 or f16: they need OpenCL extensions (cl_khr_fp64 through Halide's cl_doubles feature,
# cl_khr_fp16, which pocl 3.1 lacks).
set(DECONV_OPENCL_TEST_KERNELS "f32:1;f32:2;f32:3;i32:2;i8:1" CACHE STRING
    "dtype:rank pairs of the OpenCL test kernels (four kernels each: both ops, both layouts)")

# Outputs per launch from which the test kernels take the GPU schedule's large register tile
# (tiles::gpu_big_tile_outputs() in the CUDA kernels): low enough that the tests' problems, whose
# device tensors give every element 128 bytes, reach it.
set(DECONV_OPENCL_BIG_TILE_OUTPUTS 65536)
set_property(GLOBAL PROPERTY DECONV_OPENCL_BIG_TILE_OUTPUTS ${DECONV_OPENCL_BIG_TILE_OUTPUTS})

set_property(GLOBAL PROPERTY DECONV_OPENCL_KERNELS "")
set_property(GLOBAL PROPERTY DECONV_OPENCL_ELEMENT_BITS "")
if(NOT DECONV_OPENCL_TESTS)
  return()
endif()

list(GET DECONV_CPU_TARGETS_ALL -1 _deconv_opencl_host)
set(DECONV_OPENCL_TARGET "${_deconv_opencl_host}-opencl")
message(STATUS "deconv: OpenCL test kernels for ${DECONV_OPENCL_TARGET} (+ ${DECONV_GPU_KERNEL_FEATURES}): ${DECONV_OPENCL_TEST_KERNELS}")

# One library per kernel, all sharing the first one's runtime (the OpenCL runtime, apart from
# libdeconv's host+CUDA one).
set(_deconv_opencl_runtime "")
function(_deconv_opencl_library name generator)
  set(use_runtime "")
  if(_deconv_opencl_runtime)
    set(use_runtime USE_RUNTIME ${_deconv_opencl_runtime})
  endif()
  add_halide_library(${name}
    FROM deconv_generators
    GENERATOR ${generator}
    FUNCTION_NAME ${name}
    TARGETS ${DECONV_OPENCL_TARGET}
    FEATURES ${DECONV_GPU_KERNEL_FEATURES}
    PARAMS ${ARGN}
    ${use_runtime})
  if(NOT _deconv_opencl_runtime)
    set(_deconv_opencl_runtime ${name}.runtime PARENT_SCOPE)
    set_property(GLOBAL PROPERTY DECONV_OPENCL_RUNTIME ${name}.runtime)
  endif()
endfunction()

# The same ops, layouts and PARAMS as the CUDA matrix (generators/CMakeLists.txt); each kernel is
# recorded as generator;name;params for the tests' table (tests/opencl/CMakeLists.txt).
set(_deconv_opencl_bits "")
foreach(pair IN LISTS DECONV_OPENCL_TEST_KERNELS)
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 dtype)
  list(GET pair 1 rank)
  foreach(spec "phase_conv;deconv_phase_conv;vectorize=positions" "phase_conv_nxc;deconv_phase_conv;layout=nxc"
               "group_conv;deconv_group_conv;vectorize=positions" "group_conv_nxc;deconv_group_conv;layout=nxc")
    list(GET spec 0 op)
    list(GET spec 1 gen)
    list(GET spec 2 params)
    set(name "deconv_opencl_${op}_r${rank}_${dtype}")
    _deconv_opencl_library(${name} ${gen} rank=${rank} dtype=${dtype} ${params}
                           big_tile_outputs=${DECONV_OPENCL_BIG_TILE_OUTPUTS})
    set_property(GLOBAL APPEND PROPERTY DECONV_OPENCL_KERNELS "${gen};${name};rank=${rank} dtype=${dtype} ${params}")
  endforeach()
  if(dtype MATCHES "^(i8|u8)$")
    list(APPEND _deconv_opencl_bits 8)
  elseif(dtype MATCHES "^(f16|bf16)$")
    list(APPEND _deconv_opencl_bits 16)
  elseif(dtype MATCHES "^(f64)$")
    list(APPEND _deconv_opencl_bits 64)
  else()
    list(APPEND _deconv_opencl_bits 32)
  endif()
endforeach()
# The zero fills of phases without taps and the filter's packing copies, for the element sizes of
# that matrix.
list(REMOVE_DUPLICATES _deconv_opencl_bits)
foreach(bits IN LISTS _deconv_opencl_bits)
  _deconv_opencl_library(deconv_opencl_zero_fill_u${bits} deconv_zero_fill bits=${bits})
  _deconv_opencl_library(deconv_opencl_strided_copy_u${bits} deconv_strided_copy bits=${bits})
endforeach()
set_property(GLOBAL PROPERTY DECONV_OPENCL_ELEMENT_BITS "${_deconv_opencl_bits}")
