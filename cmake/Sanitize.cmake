# Sanitizer builds: -DDECONV_SANITIZE="address;undefined" (ASan + UBSan, either alone too) or
# -DDECONV_SANITIZE=thread (TSan). Included from the top CMakeLists.txt after generators/ and
# runtime/: it instruments libdeconv and every target added after it (the command line, the
# tests, the fuzz targets), never the Halide generator nor the AOT kernels, which are Halide's
# generated code and hold no code of ours to check (a sanitizer build may therefore use a small
# kernel matrix, e.g. -DDECONV_DTYPES="f32;f64").
#
# Undefined behaviour aborts the test that hits it (-fno-sanitize-recover): a report that only
# prints would leave the test green. cmake/sanitizers/defaults.cpp, compiled into every program
# that links libdeconv, holds the run-time defaults and the (documented) suppressions, so a plain
# `ctest` needs no environment.
set(DECONV_SANITIZE "" CACHE STRING
    "Sanitizers to build with: empty, 'address;undefined' (or one of them) or 'thread'")
# libFuzzer targets (tests/fuzz/): Clang only, in an ASan + UBSan build. Everything the
# sanitizers instrument also gets libFuzzer's coverage instrumentation (-fsanitize=fuzzer-no-link),
# so the fuzzers steer by the library's branches, not only by the targets' own.
option(DECONV_FUZZ "Build the libFuzzer targets of tests/fuzz (Clang, DECONV_SANITIZE=address;undefined)" OFF)

if(DECONV_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "deconv: DECONV_FUZZ needs Clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}; "
                        "configure with CC=clang-14 CXX=clang++-14 (Debian: clang-14 libclang-rt-14-dev)")
  endif()
  if(NOT "address" IN_LIST DECONV_SANITIZE)
    message(FATAL_ERROR "deconv: DECONV_FUZZ needs DECONV_SANITIZE=\"address;undefined\" (a fuzzer "
                        "without ASan misses the memory errors it is run for); got '${DECONV_SANITIZE}'")
  endif()
endif()

if(NOT DECONV_SANITIZE)
  return()
endif()

foreach(s IN LISTS DECONV_SANITIZE)
  if(NOT s MATCHES "^(address|undefined|thread)$")
    message(FATAL_ERROR "deconv: DECONV_SANITIZE names '${s}' (in '${DECONV_SANITIZE}'); the known "
                        "values are 'address;undefined' (or address, undefined alone) and 'thread'")
  endif()
endforeach()
if("thread" IN_LIST DECONV_SANITIZE AND NOT DECONV_SANITIZE STREQUAL "thread")
  message(FATAL_ERROR "deconv: DECONV_SANITIZE='${DECONV_SANITIZE}': thread cannot be combined with "
                      "address or undefined (TSan and ASan instrument memory differently); build "
                      "them in two build folders")
endif()
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "^(GNU|Clang)$")
  message(FATAL_ERROR "deconv: DECONV_SANITIZE needs GCC or Clang, not ${CMAKE_CXX_COMPILER_ID}")
endif()

string(REPLACE ";" "," _deconv_sanitizers "${DECONV_SANITIZE}")
set(DECONV_SANITIZE_FLAGS -fsanitize=${_deconv_sanitizers} -fno-omit-frame-pointer -g)
if("undefined" IN_LIST DECONV_SANITIZE)
  list(APPEND DECONV_SANITIZE_FLAGS -fno-sanitize-recover=all)
endif()
if(DECONV_FUZZ)
  list(APPEND DECONV_SANITIZE_FLAGS -fsanitize=fuzzer-no-link)
endif()
message(STATUS "deconv: sanitizers ${_deconv_sanitizers} on libdeconv, the command line and the tests")

# libdeconv was created before this file ran: instrument it here, and hand the sanitizer runtime
# and the defaults to every program that links it (only in this build tree, not the installed
# package).
target_compile_options(deconv PRIVATE ${DECONV_SANITIZE_FLAGS})
target_link_options(deconv INTERFACE $<BUILD_INTERFACE:${DECONV_SANITIZE_FLAGS}>)
target_sources(deconv INTERFACE
  $<BUILD_INTERFACE:${CMAKE_CURRENT_LIST_DIR}/sanitizers/defaults.cpp>)

# Everything added after this point (tools/, tests/).
add_compile_options(${DECONV_SANITIZE_FLAGS})
add_link_options(${DECONV_SANITIZE_FLAGS})
