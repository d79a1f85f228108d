#include "relay.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sightline::relay {
namespace {

constexpr std::size_t kMaxDatagramBytes = 65535;
// Per socket and wake, so that one busy socket cannot starve the others or the due datagrams.
constexpr int kMaxReadsPerWake = 64;
// Asked of the kernel so that a burst is queued rather than lost before the relay reads it;
// capped by net.core.rmem_max.
constexpr int kSocketBufferBytes = 1 << 20;
constexpr std::uint64_t kClientToServer = 0;
constexpr std::uint64_t kServerToClient = 1;

volatile std::sig_atomic_t g_stop_requested = 0;
extern "C" void request_stop(int) { g_stop_requested = 1; }

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  [[nodiscard]] int get() const noexcept { return fd_; }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

Status socket_error(const std::string& what) {
  return Status(ErrorCode::invalid_argument, fmt::format("{}: {}", what, std::strerror(errno)));
}

sockaddr_in address_of(const std::string& host, std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  inet_pton(AF_INET, host.c_str(), &address.sin_addr);
  return address;
}

std::uint64_t key_of(const sockaddr_in& address) {
  return (std::uint64_t{ntohl(address.sin_addr.s_addr)} << 16) | ntohs(address.sin_port);
}

std::string text_of(const sockaddr_in& address) {
  char host[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &address.sin_addr, host, sizeof host);
  return fmt::format("{}:{}", host, ntohs(address.sin_port));
}

// A non-blocking IPv4 UDP socket with large buffers, or an invalid Fd (errno says why).
Fd open_udp_socket() {
  Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return fd;
  for (const int option : {SO_RCVBUF, SO_SNDBUF}) {
    setsockopt(fd.get(), SOL_SOCKET, option, &kSocketBufferBytes, sizeof kSocketBufferBytes);
  }
  return fd;
}

// One upstream socket per client keeps the clients apart at the server; the peers themselves
// plus the listening socket and stdio must fit under the open-file limit.
void raise_open_file_limit(std::size_t max_peers) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t wanted = std::min<rlim_t>(limit.rlim_max, static_cast<rlim_t>(max_peers) + 64);
  if (limit.rlim_cur < wanted) {
    limit.rlim_cur = wanted;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

nlohmann::json counters_json(const Link& link) {
  const LinkCounters& c = link.counters();
  return {{"received", c.received},     {"delivered", c.delivered}, {"dropped", c.dropped},
          {"duplicated", c.duplicated}, {"reordered", c.reordered}, {"overflow", c.overflow},
          {"queued", link.queued()}};
}

}  // namespace

Status validate(const RelayDef& def) {
  in_addr address{};
  if (inet_pton(AF_INET, def.host.c_str(), &address) != 1 || (ntohl(address.s_addr) >> 24) != 127) {
    return Status(ErrorCode::invalid_def,
                  fmt::format("--host is {}: must be an IPv4 loopback address 127.x.x.x (the relay impairs "
                              "test traffic on this machine and forwards nowhere else)",
                              def.host));
  }
  if (def.target_port == 0)
    return Status(ErrorCode::invalid_def, "--target-port is 0: must be in [1, 65535]");
  if (!(def.seconds >= 0 && def.seconds <= 1e6)) {
    return Status(ErrorCode::invalid_def,
                  fmt::format("--seconds is {}: must be in [0, 1000000] (0: until a signal)", def.seconds));
  }
  if (def.max_peers < 1 || def.max_peers > 4096) {
    return Status(ErrorCode::invalid_def,
                  fmt::format("--max-peers is {}: must be in [1, 4096]", def.max_peers));
  }
  return validate(def.link);
}

struct Relay::State {
  struct Peer {
    sockaddr_in client{};
    Fd upstream;
    std::uint64_t datagrams_from_client = 0;
    std::uint64_t datagrams_to_client = 0;
  };

  State(const RelayDef& relay_def, Link to_server, Link to_client)
      : def(relay_def), client_to_server(std::move(to_server)), server_to_client(std::move(to_client)) {}

  void relay_until_stopped();
  void read_clients(double now);
  void read_server(std::size_t peer, double now);
  void deliver_due(double now);
  [[nodiscard]] Peer* peer_for(const sockaddr_in& client);

  RelayDef def;
  Link client_to_server;
  Link server_to_client;
  Fd listener;
  std::uint16_t bound_port = 0;
  std::vector<Peer> peers;
  std::unordered_map<std::uint64_t, std::uint32_t> peer_by_address;
  std::vector<pollfd> poll_fds;  // [0]: the listener; [1 + i]: peers[i].upstream.
  std::uint64_t refused_datagrams = 0;
  std::uint64_t send_failures = 0;
  std::vector<std::uint8_t> buffer = std::vector<std::uint8_t>(kMaxDatagramBytes);
  std::vector<DueDatagram> due_now;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

Result<std::unique_ptr<Relay>> Relay::open(const RelayDef& def) {
  if (Status status = validate(def); !status) return status;
  Result<Link> to_server = Link::create(def.link, kClientToServer, 0);
  Result<Link> to_client = Link::create(def.link, kServerToClient, 0);
  if (!to_server) return to_server.status();
  if (!to_client) return to_client.status();
  auto state = std::make_unique<State>(def, std::move(*to_server), std::move(*to_client));

  raise_open_file_limit(def.max_peers);
  state->listener = open_udp_socket();
  if (state->listener.get() < 0) return socket_error("cannot open a UDP socket");
  const sockaddr_in address = address_of(def.host, def.listen_port);
  if (::bind(state->listener.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return socket_error(fmt::format("cannot bind udp {}:{}", def.host, def.listen_port));
  }
  sockaddr_in bound{};
  socklen_t length = sizeof bound;
  if (::getsockname(state->listener.get(), reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    return socket_error("cannot read the listening port");
  }
  state->bound_port = ntohs(bound.sin_port);
  state->poll_fds.push_back(pollfd{state->listener.get(), POLLIN, 0});
  return std::unique_ptr<Relay>(new Relay(std::move(state)));
}

Relay::Relay(std::unique_ptr<State> state) : state_(std::move(state)) {}
Relay::~Relay() = default;

std::uint16_t Relay::listen_port() const noexcept { return state_->bound_port; }

void Relay::run() { state_->relay_until_stopped(); }

void Relay::State::relay_until_stopped() {
  // The signals stay blocked except inside ppoll, so one that arrives between the check of the
  // flag and the wait still wakes the wait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigset_t original_mask;
  sigprocmask(SIG_BLOCK, &stop_signals, &original_mask);
  sigset_t waiting_mask = original_mask;
  sigdelset(&waiting_mask, SIGINT);
  sigdelset(&waiting_mask, SIGTERM);
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);

  const auto elapsed = [this] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (g_stop_requested == 0) {
    double now = elapsed();
    if (def.seconds > 0 && now >= def.seconds) break;
    deliver_due(now);

    double wake = def.seconds > 0 ? def.seconds : -1;
    for (const double due : {client_to_server.next_due_seconds(), server_to_client.next_due_seconds()}) {
      if (due >= 0 && (wake < 0 || due < wake)) wake = due;
    }
    timespec timeout{};
    if (wake >= 0) {
      const double wait = std::max(0.0, wake - now);
      timeout.tv_sec = static_cast<time_t>(wait);
      timeout.tv_nsec = static_cast<long>((wait - static_cast<double>(timeout.tv_sec)) * 1e9);
    }
    if (::ppoll(poll_fds.data(), poll_fds.size(), wake >= 0 ? &timeout : nullptr, &waiting_mask) <= 0)
      continue;

    now = elapsed();
    // Peers added while reading the clients have no revents yet: look at the ones polled.
    const std::size_t polled_peers = poll_fds.size() - 1;
    if ((poll_fds[0].revents & (POLLIN | POLLERR)) != 0) read_clients(now);
    for (std::size_t i = 0; i < polled_peers; ++i) {
      if ((poll_fds[1 + i].revents & (POLLIN | POLLERR)) != 0) read_server(i, now);
    }
  }
  sigprocmask(SIG_SETMASK, &original_mask, nullptr);
}

Relay::State::Peer* Relay::State::peer_for(const sockaddr_in& client) {
  const std::uint64_t key = key_of(client);
  if (const auto found = peer_by_address.find(key); found != peer_by_address.end()) {
    return &peers[found->second];
  }
  if (peers.size() >= def.max_peers) return nullptr;
  Fd upstream = open_udp_socket();
  if (upstream.get() < 0) return nullptr;
  const sockaddr_in target = address_of(def.host, def.target_port);
  if (::connect(upstream.get(), reinterpret_cast<const sockaddr*>(&target), sizeof target) != 0)
    return nullptr;
  poll_fds.push_back(pollfd{upstream.get(), POLLIN, 0});
  peer_by_address.emplace(key, static_cast<std::uint32_t>(peers.size()));
  peers.push_back(Peer{client, std::move(upstream), 0, 0});
  return &peers.back();
}

void Relay::State::read_clients(double now) {
  for (int read = 0; read < kMaxReadsPerWake; ++read) {
    sockaddr_in client{};
    socklen_t length = sizeof client;
    const ssize_t bytes = ::recvfrom(listener.get(), buffer.data(), buffer.size(), 0,
                                     reinterpret_cast<sockaddr*>(&client), &length);
    if (bytes < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (length != sizeof client || client.sin_family != AF_INET) continue;
    Peer* peer = peer_for(client);
    if (peer == nullptr) {
      ++refused_datagrams;
      continue;
    }
    ++peer->datagrams_from_client;
    const auto index = static_cast<std::uint32_t>(peer - peers.data());
    client_to_server.submit(now, index, {buffer.data(), static_cast<std::size_t>(bytes)});
  }
}

void Relay::State::read_server(std::size_t peer, double now) {
  for (int read = 0; read < kMaxReadsPerWake; ++read) {
    const ssize_t bytes = ::recv(peers[peer].upstream.get(), buffer.data(), buffer.size(), 0);
    if (bytes < 0) {
      // ECONNREFUSED (the target is not listening yet) is reported once and cleared by this read.
      if (errno == EINTR || errno == ECONNREFUSED) continue;
      return;
    }
    server_to_client.submit(now, static_cast<std::uint32_t>(peer),
                            {buffer.data(), static_cast<std::size_t>(bytes)});
  }
}

void Relay::State::deliver_due(double now) {
  due_now.clear();
  client_to_server.pop_due(now, due_now);
  for (const DueDatagram& datagram : due_now) {
    if (::send(peers[datagram.peer].upstream.get(), datagram.bytes.data(), datagram.bytes.size(), 0) < 0) {
      ++send_failures;
    }
  }
  due_now.clear();
  server_to_client.pop_due(now, due_now);
  for (const DueDatagram& datagram : due_now) {
    Peer& peer = peers[datagram.peer];
    if (::sendto(listener.get(), datagram.bytes.data(), datagram.bytes.size(), 0,
                 reinterpret_cast<const sockaddr*>(&peer.client), sizeof peer.client) < 0) {
      ++send_failures;
    } else {
      ++peer.datagrams_to_client;
    }
  }
}

std::string Relay::stats_json() const {
  const State& s = *state_;
  nlohmann::json clients = nlohmann::json::array();
  for (const State::Peer& peer : s.peers) {
    clients.push_back({{"address", text_of(peer.client)},
                       {"datagrams_from_client", peer.datagrams_from_client},
                       {"datagrams_to_client", peer.datagrams_to_client}});
  }
  const nlohmann::json stats = {
      {"listen_port", s.bound_port},
      {"target_port", s.def.target_port},
      {"client_to_server", counters_json(s.client_to_server)},
      {"server_to_client", counters_json(s.server_to_client)},
      {"peers",
       {{"count", s.peers.size()}, {"max", s.def.max_peers}, {"refused_datagrams", s.refused_datagrams}}},
      {"send_failures", s.send_failures},
      {"clients", clients}};
  return stats.dump(2) + "\n";
}

}  // namespace sightline::relay
