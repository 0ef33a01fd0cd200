# C and C++ compiles through ccache where it is installed (Debian: ccache), the counterpart of
# the kernel cache for the project's own sources: the generators, the dispatcher, the command
# line and the tests are 90% of a rebuild's time once the kernels come from the kernel cache.
#
#   DECONV_COMPILER_CACHE   AUTO (default: ccache when found), ON (required) or OFF
#
# CCACHE_BASEDIR is the source folder, so that a fresh clone elsewhere (with its build folder
# inside it, as the README's commands make it) hits the entries of another; CCACHE_NOHASHDIR
# leaves the working folder out of the key (Release builds carry no debug paths). ccache keeps
# its own cache (~/.cache/ccache, 5 GiB; `ccache -s` shows it). A launcher the caller set
# (CMAKE_CXX_COMPILER_LAUNCHER) is left alone.
set(DECONV_COMPILER_CACHE AUTO CACHE STRING "Compile C and C++ through ccache: AUTO, ON or OFF")
set_property(CACHE DECONV_COMPILER_CACHE PROPERTY STRINGS AUTO ON OFF)
if(NOT DECONV_COMPILER_CACHE STREQUAL "OFF" AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(DECONV_CCACHE ccache)
  if(DECONV_CCACHE)
    set(_deconv_launcher env "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" CCACHE_NOHASHDIR=1 "${DECONV_CCACHE}")
    set(CMAKE_C_COMPILER_LAUNCHER ${_deconv_launcher})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${_deconv_launcher})
    message(STATUS "deconv: compiling through ${DECONV_CCACHE} (-DDECONV_COMPILER_CACHE=OFF to turn it off)")
  elseif(DECONV_COMPILER_CACHE STREQUAL "ON")
    message(FATAL_ERROR "deconv: DECONV_COMPILER_CACHE=ON but ccache is not installed (Debian: ccache)")
  endif()
endif()
