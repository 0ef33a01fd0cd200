// Run-time defaults of the sanitizer builds (cmake/Sanitize.cmake), compiled into every program
// that links libdeconv there. The sanitizer runtimes call these hooks at start-up; ASAN_OPTIONS,
// UBSAN_OPTIONS and TSAN_OPTIONS still override them. Each hook is inert under the other
// sanitizers, so one file serves both builds.

extern "C" {

// Stack traces on every UBSan report (the build aborts on the first: -fno-sanitize-recover).
const char *__ubsan_default_options() { return "print_stacktrace=1"; }

// Leaks count as failures too (the default on Linux, stated so it stays so); string functions
// are checked over their whole argument, not only the bytes they read.
const char *__asan_default_options() { return "detect_leaks=1:strict_string_checks=1"; }

// A race fails the test that runs into it rather than printing and passing.
const char *__tsan_default_options() { return "halt_on_error=1:second_deadlock_stack=1"; }

// Suppressions for third-party code only (none of ours): see the comment of each entry.
const char *__tsan_default_suppressions() { return ""; }

}  // extern "C"
