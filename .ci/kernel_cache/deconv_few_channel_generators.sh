#!/usr/bin/env bash
# The sanitizer builds' stand-in for the generator executable deconv_few_channel_generators (generate.sh).
DECONV_CACHED_GENERATOR=deconv_few_channel_generators exec "$(dirname "$0")/generate.sh" "$@"
