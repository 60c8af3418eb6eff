// SIGTERM to a running ecsnet-server with connected clients: every client receives Disconnect(SHUTDOWN)
// and the process exits 0 within 2 seconds. Runs the real binary.

#include <csignal>
#include <cstdlib>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "server_support.hpp"

extern char** environ;

namespace {

using namespace ecsnet;
using namespace ecsnet::testing_support;

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
        const auto deadline = steady::now() + timeout;
        fcntl(output_fd_, F_SETFL, O_NONBLOCK);
        while (steady::now() < deadline) {
            char buffer[4096];
            const auto count = read(output_fd_, buffer, sizeof buffer);
            if (count > 0) {
                output_.append(buffer, static_cast<std::size_t>(count));
            } else {
                std::this_thread::sleep_for(5ms);
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
        const auto deadline = steady::now() + timeout;
        while (steady::now() < deadline) {
            int status = 0;
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            std::this_thread::sleep_for(2ms);
        }
        return std::nullopt;
    }

    void signal(int number) const { kill(pid_, number); }

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

TEST(Shutdown, SigtermTellsEveryClientAndExitsWithinTwoSeconds) {
    server_process server{
        {"--bind", "127.0.0.1", "--port", "0", "--admin-port", "0", "--npcs", "500", "--insecure-dev"}};
    const auto port = server.wait_for("listening for clients on 127.0.0.1:", 10'000ms);
    ASSERT_TRUE(port) << server.output();

    std::vector<std::unique_ptr<raw_client>> clients;
    for (int i = 0; i < 5; ++i) {
        clients.push_back(std::make_unique<raw_client>(static_cast<std::uint16_t>(std::stoi(*port))));
        clients.back()->send_hello(arena::replicated_schema(), "client" + std::to_string(i));
        const auto welcome = clients.back()->read();
        ASSERT_TRUE(welcome && welcome->has_server_welcome());
    }

    const auto signalled = steady::now();
    server.signal(SIGTERM);
    for (auto& client : clients) {
        const auto reason = client->read_disconnect(2000ms);
        ASSERT_TRUE(reason);
        EXPECT_EQ(reason->reason(), v1::SHUTDOWN);
    }
    const auto status = server.wait_exit(2000ms);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - signalled);
    ASSERT_TRUE(status) << "still running 2 s after SIGTERM\n" << server.output();
    EXPECT_EQ(*status, 0) << server.output();
    EXPECT_LT(took, 2000ms);
    server.drain();
    EXPECT_NE(server.output().find("shutting down"), std::string::npos);
    EXPECT_NE(server.output().find("SHUTDOWN"),
              std::string::npos); // each disconnect is logged with its reason
}

TEST(Shutdown, SigintWithNoClientExitsAtOnce) {
    server_process server{{"--bind", "127.0.0.1", "--port", "0", "--admin-port", "0", "--npcs", "10",
                           "--log-format", "json", "--insecure-dev"}};
    ASSERT_TRUE(server.wait_for(R"("msg":"listening for clients)", 10'000ms)) << server.output();
    server.signal(SIGINT);
    const auto status = server.wait_exit(2000ms);
    ASSERT_TRUE(status);
    EXPECT_EQ(*status, 0);
}

TEST(Shutdown, ABadFlagExitsNonZeroWithAMessage) {
    server_process server{{"--tick-rate", "0"}};
    const auto status = server.wait_exit(5000ms);
    ASSERT_TRUE(status);
    EXPECT_NE(*status, 0);
    server.drain();
    EXPECT_NE(server.output().find("tick-rate"), std::string::npos) << server.output();
}

} // namespace
