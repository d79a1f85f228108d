// The sightline-server binary as a child process for end-to-end tests: started on a free port
// (--port 0), stopped with SIGTERM, its exit code and --stats-json read back.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace sightline::demo {

/// The connections the server's stats file counts as closed for `why` ("too slow", ...).
inline std::uint64_t closes(const nlohmann::json& stats, const std::string& why) {
  if (!stats.contains("closes") || !stats["closes"].contains(why)) return 0;
  return stats["closes"][why].get<std::uint64_t>();
}

class ServerProcess {
 public:
  // Starts sightline-server on a free port (--port 0) and waits for the line that names it.
  // SIGHTLINE_SERVER_PATH names the binary, unless the environment variable SIGHTLINE_SERVER
  // names another (the ThreadSanitizer build's, in make test). `descriptor_limit`, when not 0, is
  // its file descriptor limit, soft and hard (so that it cannot raise it).
  explicit ServerProcess(std::vector<std::string> args, rlim_t descriptor_limit = 0) {
    stats_path_ = std::filesystem::temp_directory_path() /
                  fmt::format("sightline-server-test-{}-{}.json", getpid(), counter_++);
    const char* other = std::getenv("SIGHTLINE_SERVER");
    args.insert(args.begin(), {other != nullptr && *other != '\0' ? other : SIGHTLINE_SERVER_PATH, "--port",
                               "0", "--stats-json", stats_path_.string()});
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      if (descriptor_limit != 0) {
        const rlimit limit{descriptor_limit, descriptor_limit};
        if (setrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(126);
      }
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      std::vector<char*> argv;
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    stdout_ = out[0];
    port_ = wait_for_url();
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess() {
    if (pid_ > 0 && std::getenv("SIGHTLINE_SERVER") != nullptr) {
      // Another build's binary (ThreadSanitizer's, exiting 66 on a race): a test that did not
      // stop it still hears of a race found on the way out.
      const int code = stop(nullptr);
      EXPECT_NE(code, 66) << "the server reported a data race (its stderr says where)";
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_ >= 0) close(stdout_);
    std::error_code ignored;
    std::filesystem::remove(stats_path_, ignored);
  }

  std::uint16_t port() const { return port_; }

  // The port of the line "sightline-server: http://127.0.0.1:PORT/ (metrics and debug console)"
  // that the ENet transport prints with --http-port; 0 if none came within 10 s.
  std::uint16_t http_port() {
    const std::string prefix = "sightline-server: http://127.0.0.1:";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      const std::size_t at = text_.find(prefix);
      if (at != std::string::npos && text_.find("(metrics and debug console)\n", at) != std::string::npos)
        return static_cast<std::uint16_t>(std::stoi(text_.substr(at + prefix.size())));
      if (!read_more()) break;
    }
    ADD_FAILURE() << "the server printed no console line; its stdout: " << text_;
    return 0;
  }

  void terminate() {
    kill(pid_, SIGTERM);
    terminated_ = true;
  }

  // SIGTERM (unless terminate() sent it: a second one could arrive after the server has let go of
  // its signal handler and is writing its stats, and kill it), then the exit code (-1 if it did
  // not exit within 10 s) and the stats file.
  int stop(nlohmann::json* stats) {
    using namespace std::chrono_literals;
    if (!terminated_) terminate();
    int code = -1;
    for (int i = 0; i < 1000; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
    if (stats != nullptr) {
      std::ifstream file(stats_path_);
      *stats = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
    }
    return code;
  }

 private:
  // Appends what the server printed within 100 ms; false once its stdout is closed.
  bool read_more() {
    pollfd fd{stdout_, POLLIN, 0};
    if (poll(&fd, 1, 100) <= 0) return true;
    char buffer[256];
    const ssize_t n = read(stdout_, buffer, sizeof buffer);
    if (n <= 0) return false;
    text_.append(buffer, static_cast<std::size_t>(n));
    return true;
  }

  std::uint16_t wait_for_url() {
    using namespace std::chrono_literals;
    std::string& text = text_;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!read_more()) break;
      // "sightline-server: http://127.0.0.1:PORT/ (Ctrl-C to stop)", or enet:// without the slash.
      for (const char* scheme : {"http", "enet"}) {
        const std::string prefix = fmt::format("sightline-server: {}://127.0.0.1:", scheme);
        const std::size_t at = text.find(prefix);
        if (at != std::string::npos && text.find("(Ctrl-C to stop)\n", at) != std::string::npos)
          return static_cast<std::uint16_t>(std::stoi(text.substr(at + prefix.size())));
      }
    }
    ADD_FAILURE() << "the server printed no URL line; its stdout: " << text;
    return 0;
  }

  static inline int counter_ = 0;
  pid_t pid_ = -1;
  int stdout_ = -1;
  std::uint16_t port_ = 0;
  std::string text_;  // its stdout so far
  bool terminated_ = false;
  std::filesystem::path stats_path_;
};

}  // namespace sightline::demo
