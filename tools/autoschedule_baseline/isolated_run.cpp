#include "isolated_run.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace deconv_asb {

namespace {

std::string read_file(const std::string &path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string last_lines(const std::string &text, int n) {
    size_t at = text.size();
    while (n-- > 0 && at > 0) {
        const size_t nl = text.rfind('\n', at - 1);
        if (nl == std::string::npos) return text;
        at = nl;
        if (at == text.size() - 1) n++;  // the final newline does not end a line of its own
    }
    return text.substr(at == 0 ? 0 : at + 1);
}

}  // namespace

ChildOutcome run_isolated(const std::vector<std::string> &args, double timeout_s, double mem_gib,
                          const std::string &log_path) {
    const std::string result_path = log_path + ".result";
    std::remove(result_path.c_str());
    std::vector<std::string> argv_s = {"autoschedule_baseline"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    argv_s.insert(argv_s.end(), {"--result", result_path});
    std::vector<char *> argv;
    for (std::string &a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);

    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) return {false, std::string("fork failed: ") + std::strerror(errno), "", ""};
    if (pid == 0) {
        const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (mem_gib > 0) {
            const rlim_t bytes = (rlim_t)(mem_gib * 1024 * 1024 * 1024);
            const struct rlimit lim = {bytes, bytes};
            setrlimit(RLIMIT_AS, &lim);
        }
        execv("/proc/self/exe", argv.data());
        std::perror("execv /proc/self/exe");
        _exit(127);
    }

    ChildOutcome o;
    int status = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s > timeout_s) {
            kill(pid, SIGKILL);  // the child this call started, by its id
            waitpid(pid, &status, 0);
            o.how = "timed out after " + std::to_string((int)timeout_s) + " s";
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (o.how.empty()) {
        if (WIFEXITED(status)) {
            o.exited_zero = WEXITSTATUS(status) == 0;
            o.how = "exit " + std::to_string(WEXITSTATUS(status));
        } else if (WIFSIGNALED(status)) {
            o.how = "signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
        }
    }
    o.result = read_file(result_path);
    o.log_tail = last_lines(read_file(log_path), 12);
    return o;
}

}  // namespace deconv_asb
