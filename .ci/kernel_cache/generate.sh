#!/usr/bin/env bash
# The generator of CI's sanitizer builds (see deconv-halide_generators-config.cmake): called with
# the Halide generator's arguments, in the build's generators/ folder. DECONV_KERNEL_CACHE names a
# finished build of this checkout (CI's main build). When its build.ninja holds the very same
# generator command (same kernel, targets and parameters) and its log shows the kernel built, the
# kernel's files are copied from there; anything else runs that build's real generator.
# Called through one wrapper per generator executable (deconv_generators.sh and its siblings),
# which names it in DECONV_CACHED_GENERATOR.
set -euo pipefail
cache="${DECONV_KERNEL_CACHE:?DECONV_KERNEL_CACHE must name a built deconv build folder}"
exe="${DECONV_CACHED_GENERATOR:?run through a wrapper such as deconv_generators.sh}"
gen="$cache/generators/$exe"  # for kernels not in the cache
name=""
prev=""
for a in "$@"; do
  [ "$prev" = "-n" ] && name="$a"
  prev="$a"
done
command="  COMMAND = cd $cache/generators && $cache/generators/$exe $*"
if [ -n "$name" ] && grep -qxF -- "$command" "$cache/build.ninja" &&
   grep -qF "	generators/$name.h	" "$cache/.ninja_log"; then
  # The outputs of `-e c_header,object` for a multi-target kernel.
  shopt -s nullglob
  objects=("$cache/generators/$name"-*.o)
  if [ -f "$cache/generators/$name.h" ] && [ -f "$cache/generators/${name}_wrapper.o" ] && [ ${#objects[@]} -gt 0 ]; then
    cp "$cache/generators/$name.h" "$cache/generators/${name}_wrapper.o" "${objects[@]}" .
    exit 0
  fi
fi
exec "$gen" "$@"
