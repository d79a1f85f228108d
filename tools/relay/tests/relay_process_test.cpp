// sightline-relay end to end, the real binary between a client socket and an echo socket that the
// test owns: the counts seen on both sides match its stats, loss lands near its rate, a clean link
// delivers every datagram intact (the largest included), --max-peers holds, and bad options and an
// unusable port exit with their codes and a message naming the cause.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Bytes = std::vector<std::uint8_t>;
constexpr std::size_t kLargestDatagram = 65507;  // The most an IPv4 UDP datagram carries.

// A non-blocking UDP socket on 127.0.0.1, any free port.
class UdpSocket {
 public:
  UdpSocket() : fd_(socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) {
    const int buffer_bytes = 1 << 20;
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
    setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);
    sockaddr_in address = loopback(0);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    socklen_t length = sizeof address;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;
  ~UdpSocket() { close(fd_); }

  static sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
  }

  int fd() const { return fd_; }
  std::uint16_t port() const { return port_; }

  void send_to(const sockaddr_in& to, const Bytes& bytes) const {
    EXPECT_EQ(sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to),
              static_cast<ssize_t>(bytes.size()));
  }

  // One waiting datagram and its sender, or false when none waits.
  bool receive(Bytes& bytes, sockaddr_in& from) const {
    bytes.resize(65536);
    socklen_t length = sizeof from;
    const ssize_t n =
        recvfrom(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&from), &length);
    if (n < 0) return false;
    bytes.resize(static_cast<std::size_t>(n));
    return true;
  }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

// The relay binary with the given options, its stdout and stderr on pipes.
class RelayProcess {
 public:
  explicit RelayProcess(std::vector<std::string> args) {
    args.insert(args.begin(), SIGHTLINE_RELAY_PATH);
    int out[2];
    int err[2];
    if (pipe(out) != 0 || pipe(err) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      dup2(err[1], STDERR_FILENO);
      for (const int fd : {out[0], out[1], err[0], err[1]}) close(fd);
      std::vector<char*> argv;
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    stdout_ = out[0];
    stderr_ = err[0];
  }
  RelayProcess(const RelayProcess&) = delete;
  RelayProcess& operator=(const RelayProcess&) = delete;
  ~RelayProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(stdout_);
    close(stderr_);
  }

  // The first stdout line, or "" if none came within 10 s.
  std::string first_line() {
    std::string text;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline && text.find('\n') == std::string::npos) {
      pollfd fd{stdout_, POLLIN, 0};
      if (poll(&fd, 1, 100) <= 0) continue;
      char buffer[256];
      const ssize_t n = read(stdout_, buffer, sizeof buffer);
      if (n <= 0) break;
      text.append(buffer, static_cast<std::size_t>(n));
    }
    const std::size_t end = text.find('\n');
    return end == std::string::npos ? "" : text.substr(0, end);
  }

  // The port named by the start line "sightline-relay: udp 127.0.0.1:P -> 127.0.0.1:T".
  std::uint16_t listen_port(std::uint16_t target_port) {
    const std::string line = first_line();
    const std::string prefix = "sightline-relay: udp 127.0.0.1:";
    const std::string suffix = fmt::format(" -> 127.0.0.1:{}", target_port);
    EXPECT_EQ(line.rfind(prefix, 0), 0u) << line;
    EXPECT_TRUE(line.ends_with(suffix)) << line;
    if (line.rfind(prefix, 0) != 0) return 0;
    return static_cast<std::uint16_t>(std::stoi(line.substr(prefix.size())));
  }

  void terminate() const { kill(pid_, SIGTERM); }

  // The exit code, or -1 if it did not exit within 10 s.
  int wait_for_exit() {
    for (int i = 0; i < 1000; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }

  // All of stderr; call after the process has exited.
  std::string error_text() const {
    std::string text;
    char buffer[1024];
    ssize_t n = 0;
    while ((n = read(stderr_, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
    return text;
  }

 private:
  pid_t pid_ = -1;
  int stdout_ = -1;
  int stderr_ = -1;
};

// A datagram that says which one it is and can be checked byte for byte.
Bytes payload_of(std::uint32_t id, std::size_t size) {
  Bytes bytes(std::max<std::size_t>(size, 4));
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(id * 31 + i * 7);
  for (std::size_t i = 0; i < 4; ++i) bytes[i] = static_cast<std::uint8_t>(id >> (8 * i));
  return bytes;
}

std::uint32_t id_of(const Bytes& bytes) {
  if (bytes.size() < 4) return UINT32_MAX;
  return std::uint32_t{bytes[0]} | std::uint32_t{bytes[1]} << 8 | std::uint32_t{bytes[2]} << 16 |
         std::uint32_t{bytes[3]} << 24;
}

// The far side of the relay echoes; the client collects what comes back. What each saw.
struct Traffic {
  UdpSocket echo;
  UdpSocket client;
  std::uint64_t echoed = 0;
  std::set<std::uint64_t> echo_sources;  // Address and port of each sender the echo saw.
  std::map<std::uint32_t, Bytes> returned;
  std::uint64_t returned_datagrams = 0;
  std::uint64_t returned_out_of_order = 0;  // Came back after a datagram sent later.
  std::uint32_t latest_returned = 0;

  // Echoes and collects until nothing has moved for `quiet` (at most 10 s in all).
  void pump(std::chrono::milliseconds quiet) {
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    auto last_seen = std::chrono::steady_clock::now();
    Bytes bytes;
    sockaddr_in from{};
    while (std::chrono::steady_clock::now() - last_seen < quiet &&
           std::chrono::steady_clock::now() < give_up) {
      pollfd fds[2] = {{echo.fd(), POLLIN, 0}, {client.fd(), POLLIN, 0}};
      if (poll(fds, 2, 5) <= 0) continue;
      while (echo.receive(bytes, from)) {
        ++echoed;
        echo_sources.insert(std::uint64_t{ntohl(from.sin_addr.s_addr)} << 16 | ntohs(from.sin_port));
        echo.send_to(from, bytes);
        last_seen = std::chrono::steady_clock::now();
      }
      while (client.receive(bytes, from)) {
        collect(bytes);
        last_seen = std::chrono::steady_clock::now();
      }
    }
  }

  void collect(const Bytes& bytes) {
    const std::uint32_t id = id_of(bytes);
    ++returned_datagrams;
    if (returned_datagrams > 1 && id < latest_returned) ++returned_out_of_order;
    latest_returned = std::max(latest_returned, id);
    returned[id] = bytes;
  }

  // Sends in small batches, pumping between them, so that no socket buffer overflows and every
  // loss is the relay's own.
  void send_all(std::uint16_t relay_port, const std::vector<Bytes>& datagrams) {
    const sockaddr_in relay = UdpSocket::loopback(relay_port);
    for (std::size_t i = 0; i < datagrams.size(); ++i) {
      client.send_to(relay, datagrams[i]);
      if (i % 20 == 19) pump(3ms);
    }
    pump(1000ms);  // long enough for a relay descheduled on a busy machine
  }
};

nlohmann::json read_stats(const std::filesystem::path& path) {
  std::ifstream file(path);
  return nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
}

std::filesystem::path stats_path(const char* name) {
  return std::filesystem::temp_directory_path() /
         fmt::format("sightline-relay-test-{}-{}.json", getpid(), name);
}

TEST(RelayProcess, LossyRoundTripMatchesItsStats) {
  Traffic traffic;
  const std::filesystem::path stats_file = stats_path("lossy");
  RelayProcess relay({"--listen-port", "0", "--target-port", std::to_string(traffic.echo.port()), "--drop",
                      "0.3", "--seed", "7", "--stats-json", stats_file.string()});
  const std::uint16_t port = relay.listen_port(traffic.echo.port());
  ASSERT_NE(port, 0);
  std::vector<Bytes> datagrams;
  for (std::uint32_t id = 0; id < 1000; ++id) datagrams.push_back(payload_of(id, 64));
  traffic.send_all(port, datagrams);
  relay.terminate();
  ASSERT_EQ(relay.wait_for_exit(), 0) << relay.error_text();

  // Each way loses 30%: about 700 reach the echo and 490 come back (five sigma: 73 and 79).
  EXPECT_NEAR(static_cast<double>(traffic.echoed), 700, 73);
  EXPECT_NEAR(static_cast<double>(traffic.returned_datagrams), 490, 79);
  EXPECT_EQ(traffic.returned.size(), traffic.returned_datagrams);  // No duplicates asked for.
  for (const auto& [id, bytes] : traffic.returned) EXPECT_EQ(bytes, payload_of(id, 64)) << id;
  EXPECT_EQ(traffic.echo_sources.size(), 1u);

  const nlohmann::json stats = read_stats(stats_file);
  ASSERT_TRUE(stats.is_object()) << stats_file;
  EXPECT_EQ(stats["client_to_server"]["received"], 1000);
  EXPECT_EQ(stats["client_to_server"]["delivered"], traffic.echoed);
  EXPECT_EQ(stats["client_to_server"]["dropped"], 1000 - traffic.echoed);
  EXPECT_EQ(stats["server_to_client"]["received"], traffic.echoed);
  EXPECT_EQ(stats["server_to_client"]["delivered"], traffic.returned_datagrams);
  EXPECT_EQ(stats["server_to_client"]["dropped"], traffic.echoed - traffic.returned_datagrams);
  EXPECT_EQ(stats["peers"]["count"], 1);
  EXPECT_EQ(stats["clients"][0]["address"], fmt::format("127.0.0.1:{}", traffic.client.port()));
  EXPECT_EQ(stats["clients"][0]["datagrams_from_client"], 1000);
  EXPECT_EQ(stats["clients"][0]["datagrams_to_client"], traffic.returned_datagrams);
  EXPECT_EQ(stats["send_failures"], 0);
  std::filesystem::remove(stats_file);
}

TEST(RelayProcess, CleanLinkDeliversEverythingIntact) {
  Traffic traffic;
  const std::filesystem::path stats_file = stats_path("clean");
  RelayProcess relay({"--listen-port", "0", "--target-port", std::to_string(traffic.echo.port()),
                      "--delay-ms", "1", "--stats-json", stats_file.string()});
  const std::uint16_t port = relay.listen_port(traffic.echo.port());
  ASSERT_NE(port, 0);
  std::vector<Bytes> datagrams;
  for (std::uint32_t id = 0; id < 1000; ++id) {
    datagrams.push_back(payload_of(id, id % 100 == 0 ? kLargestDatagram : 1 + (id * 37) % 1400));
  }
  traffic.send_all(port, datagrams);
  relay.terminate();
  ASSERT_EQ(relay.wait_for_exit(), 0) << relay.error_text();

  EXPECT_EQ(traffic.echoed, 1000u);
  ASSERT_EQ(traffic.returned_datagrams, 1000u);
  ASSERT_EQ(traffic.returned.size(), 1000u);
  for (std::uint32_t id = 0; id < 1000; ++id) EXPECT_EQ(traffic.returned[id], datagrams[id]) << id;
  const nlohmann::json stats = read_stats(stats_file);
  EXPECT_EQ(stats["client_to_server"]["delivered"], 1000);
  EXPECT_EQ(stats["server_to_client"]["delivered"], 1000);
  std::filesystem::remove(stats_file);
}

TEST(RelayProcess, EveryImpairmentTogetherStillMatchesItsStats) {
  Traffic traffic;
  const std::filesystem::path stats_file = stats_path("impaired");
  RelayProcess relay({"--target-port", std::to_string(traffic.echo.port()), "--drop", "0.1", "--duplicate",
                      "0.1", "--reorder", "0.2", "--delay-ms", "2", "--jitter-ms", "3", "--seed", "11",
                      "--stats-json", stats_file.string()});
  const std::uint16_t port = relay.listen_port(traffic.echo.port());
  ASSERT_NE(port, 0);
  std::vector<Bytes> datagrams;
  for (std::uint32_t id = 0; id < 500; ++id) datagrams.push_back(payload_of(id, 100));
  traffic.send_all(port, datagrams);
  relay.terminate();
  ASSERT_EQ(relay.wait_for_exit(), 0) << relay.error_text();

  EXPECT_GT(traffic.returned_datagrams, traffic.returned.size());  // Duplicates came back.
  EXPECT_GT(traffic.returned_out_of_order, 0u);
  for (const auto& [id, bytes] : traffic.returned) EXPECT_EQ(bytes, payload_of(id, 100)) << id;
  const nlohmann::json stats = read_stats(stats_file);
  for (const char* direction : {"client_to_server", "server_to_client"}) {
    const nlohmann::json& d = stats[direction];
    EXPECT_GT(d["dropped"], 0) << direction;
    EXPECT_GT(d["duplicated"], 0) << direction;
    EXPECT_GT(d["reordered"], 0) << direction;
    EXPECT_EQ(d["queued"], 0) << direction;
    EXPECT_EQ(d["delivered"].get<std::uint64_t>(), d["received"].get<std::uint64_t>() -
                                                       d["dropped"].get<std::uint64_t>() +
                                                       d["duplicated"].get<std::uint64_t>())
        << direction;
  }
  EXPECT_EQ(stats["client_to_server"]["received"], 500);
  EXPECT_EQ(stats["client_to_server"]["delivered"], traffic.echoed);
  EXPECT_EQ(stats["server_to_client"]["received"], traffic.echoed);
  EXPECT_EQ(stats["server_to_client"]["delivered"], traffic.returned_datagrams);
  std::filesystem::remove(stats_file);
}

TEST(RelayProcess, ClientsBeyondMaxPeersAreRefusedAndCounted) {
  Traffic traffic;
  const std::filesystem::path stats_file = stats_path("peers");
  RelayProcess relay({"--target-port", std::to_string(traffic.echo.port()), "--max-peers", "1",
                      "--stats-json", stats_file.string()});
  const std::uint16_t port = relay.listen_port(traffic.echo.port());
  ASSERT_NE(port, 0);
  std::vector<Bytes> datagrams;
  for (std::uint32_t id = 0; id < 10; ++id) datagrams.push_back(payload_of(id, 16));
  traffic.send_all(port, datagrams);
  ASSERT_EQ(traffic.returned_datagrams, 10u);

  UdpSocket second_client;
  for (const Bytes& bytes : datagrams) second_client.send_to(UdpSocket::loopback(port), bytes);
  traffic.pump(200ms);
  relay.terminate();
  ASSERT_EQ(relay.wait_for_exit(), 0) << relay.error_text();
  EXPECT_EQ(traffic.echoed, 10u);
  const nlohmann::json stats = read_stats(stats_file);
  EXPECT_EQ(stats["peers"]["count"], 1);
  EXPECT_EQ(stats["peers"]["refused_datagrams"], 10);
  std::filesystem::remove(stats_file);
}

TEST(RelayProcess, StopsByItselfAfterSeconds) {
  const std::filesystem::path stats_file = stats_path("seconds");
  RelayProcess relay({"--target-port", "9", "--seconds", "0.2", "--stats-json", stats_file.string()});
  EXPECT_NE(relay.listen_port(9), 0);
  EXPECT_EQ(relay.wait_for_exit(), 0) << relay.error_text();
  EXPECT_EQ(read_stats(stats_file)["client_to_server"]["received"], 0);
  std::filesystem::remove(stats_file);
}

TEST(RelayProcess, BadOptionsExitTwoNamingTheOption) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--target-port", "9", "--host", "10.0.0.1"}, "--host is 10.0.0.1: "},
      {{"--target-port", "9", "--host", "localhost"}, "--host is localhost: "},
      {{"--target-port", "9", "--drop", "1.5"}, "--drop is 1.5: must be in [0, 1)"},
      {{"--target-port", "9", "--jitter-ms", "-3"}, "--jitter-ms is -3: "},
      {{"--target-port", "9", "--max-peers", "5000"}, "--max-peers is 5000: "},
      {{"--target-port", "0"}, "--target-port is 0: "},
      {{"--drop", "0.1"}, "--target-port"},
      {{"--target-port", "9", "--drop", "lots"}, "--drop"},
      {{"--target-port", "9", "--stats-json", "/nonexistent/dir/stats.json"}, "--stats-json is "},
  };
  for (const auto& [args, expected] : cases) {
    RelayProcess relay(args);
    EXPECT_EQ(relay.wait_for_exit(), 2) << expected;
    const std::string error = relay.error_text();
    EXPECT_NE(error.find(expected), std::string::npos) << error;
  }
}

TEST(RelayProcess, PortInUseExitsOne) {
  const UdpSocket taken;
  RelayProcess relay({"--listen-port", std::to_string(taken.port()), "--target-port", "9"});
  EXPECT_EQ(relay.wait_for_exit(), 1);
  EXPECT_NE(relay.error_text().find(fmt::format("cannot bind udp 127.0.0.1:{}", taken.port())),
            std::string::npos);
}

}  // namespace
