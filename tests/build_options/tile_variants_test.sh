#!/usr/bin/env bash
# DECONV_KERNEL_CANDIDATES and DECONV_SCHEDULES's tile pins: a good list configures and says
# which tiles it builds; each bad one fails, naming the item or the entry.
set -uo pipefail
src="$1"; cmake="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fails=0
configure() {  # configure <name> <cmake args...>: the log in $work/<name>.log, the status returned
  local name="$1"; shift
  "$cmake" -S "$src" -B "$work/$name" -G Ninja -DDECONV_CUDA=OFF -DDECONV_DTYPES=f32 -DDECONV_RANKS=1 \
           -DDECONV_BUILD_TESTS=OFF "$@" > "$work/$name.log" 2>&1
}
expect_ok() {  # expect_ok <name> <pattern> <args...>
  local name="$1" pattern="$2"; shift 2
  if ! configure "$name" "$@"; then echo "FAIL $name: did not configure"; cat "$work/$name.log"; fails=$((fails+1));
  elif ! grep -q -- "$pattern" "$work/$name.log"; then echo "FAIL $name: no '$pattern'"; fails=$((fails+1));
  else echo "ok   $name"; fi
}
expect_error() {  # expect_error <name> <pattern> <args...>
  local name="$1" pattern="$2"; shift 2
  if configure "$name" "$@"; then echo "FAIL $name: configured"; fails=$((fails+1));
  elif ! grep -q -- "$pattern" "$work/$name.log"; then echo "FAIL $name: no '$pattern' in:"; cat "$work/$name.log"; fails=$((fails+1));
  else echo "ok   $name"; fi
}
expect_ok candidates_list "2 candidate register tiles for deconv tune: q6v2;q3v3" -DDECONV_KERNEL_CANDIDATES="q6v2;q3v3"
expect_ok candidates_all "23 candidate register tiles" -DDECONV_KERNEL_CANDIDATES=all
expect_error candidates_q4 "DECONV_KERNEL_CANDIDATES item q4v2 pins kernel_q_tile 4" -DDECONV_KERNEL_CANDIDATES=q4v2
expect_error candidates_v1 "DECONV_KERNEL_CANDIDATES item q5v1 pins kernel_vectors 1" -DDECONV_KERNEL_CANDIDATES=q5v1
expect_error candidates_word "DECONV_KERNEL_CANDIDATES names 'wide'" -DDECONV_KERNEL_CANDIDATES=wide
expect_error candidates_none "DECONV_KERNEL_CANDIDATES names 'q0v0'" -DDECONV_KERNEL_CANDIDATES=q0v0
cat > "$work/db.json" <<'JSON'
{"format": "deconv-schedules", "version": 1, "entries": [
  {"layer": {"op": "GroupConvolutionBackpropData", "dtype": "f32", "data_format": "nxc", "input": [1, 4, 8], "filter": [1, 4, 4, 2], "output": [1, 4, 16], "strides": [2], "pads_begin": [0], "pads_end": [0], "dilations": [1], "output_padding": [0]}, "machine": {"cpu_variant": "avx2", "cpu": "x", "threads": 2}, "policy": {"kernel_q_tile": "5", "kernel_vectors": "3"}},
  {"layer": {"op": "GroupConvolutionBackpropData", "dtype": "f32", "data_format": "nxc", "input": [1, 4, 8], "filter": [1, 4, 4, 2], "output": [1, 4, 16], "strides": [2], "pads_begin": [0], "pads_end": [0], "dilations": [1], "output_padding": [0]}, "machine": {"cpu_variant": "avx512", "cpu": "x", "threads": 2}, "policy": {"kernel_vectors": "1"}}
]}
JSON
expect_error schedules_v1 "DECONV_SCHEDULES entry 1 pins kernel_vectors 1" -DDECONV_SCHEDULES="$work/db.json"
# DECONV_CPU_VARIANTS (cmake/DeconvCpuVariants.cmake): all names every variant, native one, and
# anything else is refused by name.
expect_ok variants_all "CPU kernel variants avx512;avx2;sse41 (DECONV_CPU_VARIANTS=all)" -DDECONV_CPU_VARIANTS=all
expect_ok variants_native "(DECONV_CPU_VARIANTS=native)" -DDECONV_CPU_VARIANTS=native
expect_error variants_word "DECONV_CPU_VARIANTS is 'fast'" -DDECONV_CPU_VARIANTS=fast
echo "$fails failed"
[ "$fails" = 0 ]
