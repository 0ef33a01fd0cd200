# Which CPU variants of DECONV_X86_TARGETS / DECONV_ARM64_TARGETS (DECONV_CPU_TARGETS_ALL) get
# kernels. Every CPU kernel is compiled once per variant, so the variant list multiplies the
# build's kernel time:
#
#   DECONV_CPU_VARIANTS=native  the one variant this machine runs best, like -march=native: a
#                               library for the machine that builds it (the default on x86-64
#                               hosts). It refuses, with an Unsupported error, to run on a CPU
#                               that lacks that variant's features.
#   DECONV_CPU_VARIANTS=all     every variant of the list, picked at run time: the redistributable
#                               library (the default of cross builds, and what CI tests).
#
# Sets DECONV_CPU_TARGETS (the kept targets, best first) and the global property
# DECONV_CPU_VARIANTS_BUILT (their variant names, runtime/kernels/halide_glue.cpp's names).
set(_deconv_variants_default all)
if(NOT CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(_deconv_variants_default native)
endif()
set(DECONV_CPU_VARIANTS "${_deconv_variants_default}" CACHE STRING
    "CPU kernel variants to build: native (this machine's best) or all (run-time dispatch)")
set_property(CACHE DECONV_CPU_VARIANTS PROPERTY STRINGS native all)
if(NOT DECONV_CPU_VARIANTS MATCHES "^(native|all)$")
  message(FATAL_ERROR "deconv: DECONV_CPU_VARIANTS is '${DECONV_CPU_VARIANTS}': use native or all")
endif()

# The variant name of a Halide target (runtime/kernels/halide_glue.cpp, variants(): the names that
# DECONV_CPU_VARIANT and deconv::cpu_variant() use).
function(deconv_cpu_variant_name target out)
  if(target MATCHES "^arm-")
    if(target MATCHES "arm_dot_prod")
      set(name dotprod_fp16)
    else()
      set(name neon)
    endif()
  elseif(target MATCHES "-avx512")
    set(name avx512)
  elseif(target MATCHES "-avx2")
    set(name avx2)
  else()
    set(name sse41)
  endif()
  set(${out} ${name} PARENT_SCOPE)
endfunction()

set(DECONV_CPU_TARGETS ${DECONV_CPU_TARGETS_ALL})
if(DECONV_CPU_VARIANTS STREQUAL "native")
  if(CMAKE_CROSSCOMPILING OR NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    message(STATUS "deconv: DECONV_CPU_VARIANTS=native applies to x86-64 host builds; building every variant")
  else()
    # The host's Halide features (cmake/host_cpu_features.cpp), read once per build folder.
    if(NOT DEFINED DECONV_HOST_CPU_FEATURES)
      try_run(_run _compiled "${CMAKE_BINARY_DIR}/host_cpu_features" "${CMAKE_CURRENT_LIST_DIR}/host_cpu_features.cpp"
              COMPILE_OUTPUT_VARIABLE _compile_out RUN_OUTPUT_VARIABLE _features)
      if(NOT _compiled OR NOT _run EQUAL 0)
        message(FATAL_ERROR "deconv: could not probe this CPU's features (cmake/host_cpu_features.cpp): "
                            "${_compile_out}\nUse -DDECONV_CPU_VARIANTS=all.")
      endif()
      string(STRIP "${_features}" _features)
      set(DECONV_HOST_CPU_FEATURES "${_features}" CACHE INTERNAL "Halide features of the build machine's CPU")
    endif()
    string(REPLACE " " ";" _host "${DECONV_HOST_CPU_FEATURES}")
    set(_kept "")
    foreach(t IN LISTS DECONV_CPU_TARGETS_ALL)
      string(REPLACE "-" ";" _parts "${t}")
      list(REMOVE_AT _parts 0 1 2)  # arch, bits, os
      set(_runs TRUE)
      foreach(f IN LISTS _parts)
        if(NOT f IN_LIST _host)
          set(_runs FALSE)
        endif()
      endforeach()
      if(_runs)
        set(_kept ${t})
        break()
      endif()
    endforeach()
    if(NOT _kept)
      message(FATAL_ERROR "deconv: this CPU (features: ${DECONV_HOST_CPU_FEATURES}) runs none of "
                          "DECONV_X86_TARGETS (${DECONV_CPU_TARGETS_ALL})")
    endif()
    set(DECONV_CPU_TARGETS ${_kept})
  endif()
endif()

set(_names "")
foreach(t IN LISTS DECONV_CPU_TARGETS)
  deconv_cpu_variant_name(${t} _n)
  if(_n IN_LIST _names)
    message(FATAL_ERROR "deconv: two kernel targets of the list are variant '${_n}' (${DECONV_CPU_TARGETS}); "
                        "each variant may appear once")
  endif()
  list(APPEND _names ${_n})
endforeach()
set_property(GLOBAL PROPERTY DECONV_CPU_VARIANTS_BUILT "${_names}")
message(STATUS "deconv: CPU kernel variants ${_names} (DECONV_CPU_VARIANTS=${DECONV_CPU_VARIANTS})")
