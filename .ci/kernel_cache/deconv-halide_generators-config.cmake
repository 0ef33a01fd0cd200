# Stands in for a host build's generator package (cmake -Ddeconv-halide_generators_DIR=<this
# folder>) in CI's sanitizer builds: its "generator" is generate.sh, which copies each kernel from
# the build named by DECONV_KERNEL_CACHE when that build ran the same generator command, instead
# of generating it once more (a kernel costs 30-60 s; the sanitizer builds need ~100 of them).
# One per generator executable of generators/CMakeLists.txt, each through its own script.
foreach(_gen IN ITEMS deconv_generators deconv_winograd_generators deconv_few_channel_generators)
  if(NOT TARGET deconv::halide_generators::${_gen})
    add_executable(deconv::halide_generators::${_gen} IMPORTED)
    set_target_properties(deconv::halide_generators::${_gen} PROPERTIES
      IMPORTED_LOCATION "${CMAKE_CURRENT_LIST_DIR}/${_gen}.sh")
  endif()
endforeach()
set(deconv-halide_generators_FOUND TRUE)
