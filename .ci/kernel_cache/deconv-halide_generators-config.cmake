# Stands in for a host build's generator package (cmake -Ddeconv-halide_generators_DIR=<this
# folder>) in CI's sanitizer builds: its "generator" is generate.sh, which copies each kernel from
# the build named by DECONV_KERNEL_CACHE when that build ran the same generator command, instead
# of generating it once more (a kernel costs 30-60 s; the sanitizer builds need ~100 of them).
if(NOT TARGET deconv::halide_generators::deconv_generators)
  add_executable(deconv::halide_generators::deconv_generators IMPORTED)
  set_target_properties(deconv::halide_generators::deconv_generators PROPERTIES
    IMPORTED_LOCATION "${CMAKE_CURRENT_LIST_DIR}/generate.sh")
endif()
set(deconv-halide_generators_FOUND TRUE)
