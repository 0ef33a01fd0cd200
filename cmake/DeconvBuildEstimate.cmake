# The configure step's summary: what the build will compile, and about how long that takes on
# 2 cores, from the measured seconds of each kind of step (cmake/build_step_seconds.cmake,
# written by `tools/build_times.py BUILD --cmake-table cmake/build_step_seconds.cmake` from a
# full build's .ninja_log, --cxx-from a newer build's for the C++ parts). Kernels already in the kernel cache cost a copy, not a compile.
include(build_step_seconds)

function(deconv_report_build_estimate)
  get_property(steps GLOBAL PROPERTY DECONV_GENERATOR_STEPS)
  list(LENGTH steps n)
  set(ms 0)
  foreach(step IN LISTS steps)
    # deconv_[cuda_|opencl_]<op>_r<rank>_<dtype>[_<variant>]
    if(step MATCHES "^deconv_(cuda_|opencl_)?(.+)_r([0-9])_([a-z0-9]+)(_(avx512|avx2|sse41|dotprod_fp16|neon))?$")
      set(op "${CMAKE_MATCH_2}")
      set(rank "${CMAKE_MATCH_3}")
      set(variant "${CMAKE_MATCH_6}")
      if(CMAKE_MATCH_1)
        set(variant "gpu")
      endif()
      set(key "${op}.${rank}.${variant}")
      if(DEFINED DECONV_STEP_MS_${key})
        math(EXPR ms "${ms} + ${DECONV_STEP_MS_${key}}")
      elseif(DEFINED DECONV_STEP_MS_${op}.${rank})
        math(EXPR ms "${ms} + ${DECONV_STEP_MS_${op}.${rank}}")
      else()
        math(EXPR ms "${ms} + ${DECONV_STEP_MS_kernel}")
      endif()
    else()
      math(EXPR ms "${ms} + ${DECONV_STEP_MS_kernel}")
    endif()
  endforeach()
  set(rest_ms ${DECONV_STEP_MS_programs})
  if(DECONV_BUILD_CLI)
    math(EXPR rest_ms "${rest_ms} + ${DECONV_STEP_MS_cli}")
  endif()
  if(DECONV_BUILD_TESTS)
    math(EXPR rest_ms "${rest_ms} + ${DECONV_STEP_MS_tests}")
  endif()
  # Two cores run two steps at a time (the full build kept both busy: 2768 step-seconds in 1389 s).
  math(EXPR wall_min "(${ms} + ${rest_ms}) / 2 / 60000 + 1")
  math(EXPR kernel_min "${ms} / 60000")
  math(EXPR rest_min "${rest_ms} / 60000")
  message(STATUS "deconv: ${n} kernel generator steps (about ${kernel_min} CPU-minutes) plus about "
                 "${rest_min} CPU-minutes of C++: about ${wall_min} min on 2 cores of a machine like "
                 "${DECONV_STEP_MACHINE}, less what the kernel cache holds")
endfunction()
