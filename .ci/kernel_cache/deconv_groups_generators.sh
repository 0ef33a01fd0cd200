#!/usr/bin/env bash
# The sanitizer builds' stand-in for the generator executable deconv_groups_generators (generate.sh).
DECONV_CACHED_GENERATOR=deconv_groups_generators exec "$(dirname "$0")/generate.sh" "$@"
