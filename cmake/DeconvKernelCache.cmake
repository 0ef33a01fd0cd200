# The kernel cache (cmake/kernel_cache.py): a generator step whose generator binary, arguments,
# Halide and LLVM were seen before copies that step's files from the cache instead of compiling
# the kernel again. A fresh clone, another build folder of the same options, or CI's later jobs
# then generate only the kernels that changed.
#
#   DECONV_KERNEL_CACHE      ON (default) or OFF
#   DECONV_KERNEL_CACHE_DIR  the cache folder: $XDG_CACHE_HOME/deconv/kernels, else
#                            ~/.cache/deconv/kernels
#   DECONV_KERNEL_CACHE_MAX_MIB  pruned to this size, least recently used first (default 4096)
#
# `python3 cmake/kernel_cache.py --dir <folder> --stats` (or --prune, --clear) inspects it.
option(DECONV_KERNEL_CACHE "Reuse generated kernels from a content-addressed cache" ON)
if(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
  set(_deconv_cache_default "$ENV{XDG_CACHE_HOME}/deconv/kernels")
elseif(DEFINED ENV{HOME} AND NOT "$ENV{HOME}" STREQUAL "")
  set(_deconv_cache_default "$ENV{HOME}/.cache/deconv/kernels")
else()
  set(_deconv_cache_default "${CMAKE_BINARY_DIR}/kernel-cache")
endif()
set(DECONV_KERNEL_CACHE_DIR "${_deconv_cache_default}" CACHE PATH "Folder of the kernel cache")
set(DECONV_KERNEL_CACHE_MAX_MIB 4096 CACHE STRING "Size the kernel cache is pruned to, in MiB")

if(DECONV_KERNEL_CACHE)
  # The system's interpreter first: the launcher runs once per build step, and a version
  # manager's shim (pyenv) costs a shell start each time. It needs the standard library only.
  find_program(DECONV_CACHE_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(NOT DECONV_CACHE_PYTHON)
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(Python3_Interpreter_FOUND)
      set(DECONV_CACHE_PYTHON "${Python3_EXECUTABLE}" CACHE FILEPATH "Python running the kernel cache" FORCE)
    endif()
  endif()
  if(NOT DECONV_CACHE_PYTHON)
    message(STATUS "deconv: no Python 3 interpreter: the kernel cache is off")
    set(DECONV_KERNEL_CACHE OFF)
  endif()
endif()
if(DECONV_KERNEL_CACHE)
  # What the generators run on, part of every key: Halide's and LLVM's versions and libraries.
  set(_toolchain "halide ${Halide_VERSION} ${HalideHelpers_VERSION}")
  foreach(lib Halide14 Halide LLVM-14 LLVM)
    find_library(_deconv_lib_${lib} NAMES ${lib} NO_CMAKE_FIND_ROOT_PATH)
    if(_deconv_lib_${lib})
      get_filename_component(_real "${_deconv_lib_${lib}}" REALPATH)
      file(SIZE "${_real}" _size)
      file(TIMESTAMP "${_real}" _time "%Y%m%d%H%M%S" UTC)
      string(APPEND _toolchain ";${_real}:${_size}:${_time}")
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY RULE_LAUNCH_CUSTOM
    "${DECONV_CACHE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/kernel_cache.py --dir \"${DECONV_KERNEL_CACHE_DIR}\" --max-mib ${DECONV_KERNEL_CACHE_MAX_MIB} --toolchain \"${_toolchain}\" --")
  message(STATUS "deconv: kernel cache in ${DECONV_KERNEL_CACHE_DIR} (-DDECONV_KERNEL_CACHE=OFF to turn it off)")
endif()
