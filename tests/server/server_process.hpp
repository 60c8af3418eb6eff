#pragma once

// The real ecsnet-server binary as a child process (posix_spawn), its standard output and error on a pipe
// the test reads: for the tests of what only a process shows (signals, exit codes, a kill mid-write).

#include <chrono>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ecsnet::testing_support {

// ecsnet-server started with a pipe on its standard output.
class server_process {
public:
    explicit server_process(std::vector<std::string> args) {
        const char* dir = std::getenv("ECSNET_BINARY_DIR");
        binary_ = std::string{dir != nullptr ? dir : "."} + "/server/ecsnet-server";
        int fds[2];
        if (pipe(fds) != 0) {
            throw std::runtime_error("pipe");
        }
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
        posix_spawn_file_actions_addclose(&actions, fds[0]);
        std::vector<char*> argv{binary_.data()};
        for (auto& a : args) {
            argv.push_back(a.data());
        }
        argv.push_back(nullptr);
        const int spawned = posix_spawn(&pid_, binary_.c_str(), &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        close(fds[1]);
        output_fd_ = fds[0];
        if (spawned != 0) {
            throw std::runtime_error("cannot start " + binary_);
        }
    }
    server_process(const server_process&) = delete;
    server_process& operator=(const server_process&) = delete;
    ~server_process() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        close(output_fd_);
    }

    /// Reads output until `marker` appears; returns what follows it up to the end of its line, or nothing if
    /// the timeout passes first. (No std::regex: GCC 12 warns inside <regex> under the sanitizers.)
    std::optional<std::string> wait_for(std::string_view marker, std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        fcntl(output_fd_, F_SETFL, O_NONBLOCK);
        while (std::chrono::steady_clock::now() < deadline) {
            char buffer[4096];
            const auto count = read(output_fd_, buffer, sizeof buffer);
            if (count > 0) {
                output_.append(buffer, static_cast<std::size_t>(count));
            } else {
                std::this_thread::sleep_for(std::chrono::milliseconds{5});
            }
            if (const auto at = output_.find(marker); at != std::string::npos) {
                const auto rest = at + marker.size();
                const auto end = output_.find('\n', rest);
                if (end != std::string::npos) {
                    return output_.substr(rest, end - rest);
                }
            }
        }
        return std::nullopt;
    }

    /// Waits for the process to exit; its exit status, or nothing if it is still running at the deadline.
    std::optional<int> wait_exit(std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            int status = 0;
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds{2});
        }
        return std::nullopt;
    }

    void signal(int number) const { kill(pid_, number); }
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }

    /// Reads whatever output is left (after the process exited).
    void drain() {
        fcntl(output_fd_, F_SETFL, O_NONBLOCK);
        char buffer[4096];
        for (ssize_t count = 0; (count = read(output_fd_, buffer, sizeof buffer)) > 0;) {
            output_.append(buffer, static_cast<std::size_t>(count));
        }
    }
    [[nodiscard]] const std::string& output() const noexcept { return output_; }

private:
    std::string binary_;
    pid_t pid_{-1};
    int output_fd_{-1};
    std::string output_;
};

} // namespace ecsnet::testing_support
