// Folders and files the tests read, fixed when the build is configured (tests/CMakeLists.txt
// generates their definitions).
#pragma once

namespace deconv_test {

// tests/data: the repository's test vectors.
const char *test_data_dir();
// bench/layers.json: the repository's benchmark suite.
const char *repo_bench_suite();
// Where new reference data arrives (DECONV_SHARED_DIR, ../shared beside the checkout).
const char *shared_dir();

}  // namespace deconv_test
