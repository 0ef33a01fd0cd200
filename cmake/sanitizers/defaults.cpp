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

// Suppressions for third-party code only (none of ours), one line each:
//   Halide's runtime (linked into libdeconv, not instrumented): its parking lot, which puts
//   threads of its own pool (DECONV_SPIN_US=off) to sleep, keeps a pthread mutex in each waiting
//   thread's stack frame without pthread_mutex_init, so TSan takes the waker's lock for a race
//   with that stack's setup. The tasks' own data is ordered by runtime/kernels/cpu_thread_pool.cpp's
//   annotations instead, so races in our code stay reported.
const char *__tsan_default_suppressions() {
    return "race:Halide::Runtime::Internal::Synchronization::\n";
}

}  // extern "C"
