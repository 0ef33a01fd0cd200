// Error classes of the deconv command line and the exit codes they map to.
//
//   exit 1  UsageError and deconv::Error: a flag, attribute, shape or dtype that is not valid
//   exit 2  IoError: a file that cannot be opened, read, written, or parsed as its format
//   exit 3  an unexpected internal failure (a kernel error, std::bad_alloc, ...)
//
// Every message names the offending value; main() prints it as one line "error: <message>".
#pragma once

#include <stdexcept>
#include <string>

namespace deconv_cli {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct IoError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum ExitCode : int {
    kExitOk = 0,
    kExitUsage = 1,
    kExitIo = 2,
    kExitInternal = 3,
};

}  // namespace deconv_cli
