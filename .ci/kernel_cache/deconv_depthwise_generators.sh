#!/usr/bin/env bash
# The sanitizer builds' stand-in for the generator executable deconv_depthwise_generators (generate.sh).
DECONV_CACHED_GENERATOR=deconv_depthwise_generators exec "$(dirname "$0")/generate.sh" "$@"
