// Runs this program again as a child process, so that an autoscheduler that crashes, aborts in
// Halide's error handler, runs out of memory or searches past a deadline loses only its own
// measurement. The child writes its result to a file; its stdout and stderr go to a log whose
// tail is reported when it fails.
#pragma once

#include <string>
#include <vector>

namespace deconv_asb {

struct ChildOutcome {
    bool exited_zero = false;
    std::string how;       // "exit 0", "exit 3", "signal 6 (Aborted)", "timed out after 600 s"
    std::string result;    // the result file's text (empty if the child wrote none)
    std::string log_tail;  // the last lines of the child's stdout and stderr
};

// Runs `/proc/self/exe args... --result <file>` with an address-space limit of `mem_gib` GiB
// (0: none), killed after `timeout_s` seconds. `log_path` keeps the child's full log.
ChildOutcome run_isolated(const std::vector<std::string> &args, double timeout_s, double mem_gib,
                          const std::string &log_path);

}  // namespace deconv_asb
