#include "http_console.h"

#include <fmt/format.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>

namespace sightline::demo {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct HttpConsole::Impl {
  explicit Impl(Pages p) : pages(std::move(p)) {}
  // Declared before the io_context: its pending handlers hold sessions that refer to these.
  Pages pages;
  int sessions = 0;
  bool accepting = false;
  bool closing = false;  // set before the io_context's end destroys the sessions
  net::io_context io{1};
  tcp::acceptor acceptor{io};
  net::steady_timer retry{io};
  // Takes the next connection while fewer than kMaxSessions are open; at the bound the next ones
  // wait in the listen backlog until a session ends.
  void accept();
  void session_ended();
};

namespace {

// One request, its answer, then the connection is closed: a scrape or a question at a time.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(HttpConsole::Impl& console, tcp::socket socket) : console_(console), stream_(std::move(socket)) {
    ++console_.sessions;
  }
  ~Session() { console_.session_ended(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() {
    parser_.header_limit(HttpConsole::kMaxRequestBytes);
    parser_.body_limit(HttpConsole::kMaxRequestBytes);
    // The request within a few seconds (a client that trickles it holds a session no longer),
    // the answer within kRequestSeconds.
    stream_.expires_after(std::chrono::seconds(HttpConsole::kRequestReadSeconds));
    http::async_read(stream_, buffer_, parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (!ec) self->respond(self->parser_.get());
                     });
  }

 private:
  void respond(const http::request<http::string_body>& request) {
    const bool head = request.method() == http::verb::head;
    response_.version(request.version());
    response_.set(http::field::server, "sightline-server");
    response_.set(http::field::cache_control, "no-cache");
    response_.keep_alive(false);
    std::optional<ServerPage> page;
    if (!head && request.method() != http::verb::get) {
      page = ServerPage{405, "text/plain", "method not allowed\n"};
      response_.set(http::field::allow, "GET, HEAD");
    } else {
      page = console_.pages(std::string_view(request.target().data(), request.target().size()));
      if (!page) page = ServerPage{404, "text/plain", "not found: this port answers /metrics and /debug/\n"};
    }
    response_.result(static_cast<unsigned>(page->status));
    response_.set(http::field::content_type, page->content_type);
    response_.content_length(page->body.size());
    if (!head) response_.body() = std::move(page->body);
    stream_.expires_after(std::chrono::seconds(HttpConsole::kRequestSeconds));
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code, std::size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  HttpConsole::Impl& console_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request_parser<http::string_body> parser_;
  http::response<http::string_body> response_;
};

}  // namespace

void HttpConsole::Impl::accept() {
  if (accepting || sessions >= kMaxSessions || !acceptor.is_open()) return;
  accepting = true;
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    accepting = false;
    if (ec == net::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors, say: wait for some to close rather than spin inside poll().
      retry.expires_after(std::chrono::milliseconds(100));
      retry.async_wait([this](beast::error_code wait_ec) {
        if (!wait_ec) accept();
      });
      return;
    }
    std::make_shared<Session>(*this, std::move(socket))->start();
    accept();
  });
}

void HttpConsole::Impl::session_ended() {
  --sessions;
  if (!closing) accept();
}

HttpConsole::HttpConsole(Pages pages) : impl_(std::make_unique<Impl>(std::move(pages))) {}

HttpConsole::~HttpConsole() {
  beast::error_code ignored;
  impl_->closing = true;
  impl_->acceptor.close(ignored);
  // The sessions' handlers end with the io_context, before the pages they refer to.
  impl_->io.stop();
}

Status HttpConsole::listen(const std::string& host, std::uint16_t port) {
  beast::error_code ec;
  tcp::resolver resolver(impl_->io);
  const auto found = resolver.resolve(host, std::to_string(port), ec);
  if (ec || found.empty()) return {ErrorCode::invalid_def, fmt::format("--host is \"{}\": no address", host)};
  const tcp::endpoint endpoint = found.begin()->endpoint();
  auto& acceptor = impl_->acceptor;
  if (acceptor.open(endpoint.protocol(), ec); !ec)
    acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return {ErrorCode::invalid_argument,
            fmt::format("cannot listen for HTTP on tcp {}:{}: {}", host, port, ec.message())};
  }
  impl_->accept();
  return {};
}

std::uint16_t HttpConsole::port() const noexcept {
  beast::error_code ec;
  const tcp::endpoint at = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : at.port();
}

void HttpConsole::poll() {
  // A bounded amount a call: a backlog of requests already sent would otherwise be served to the
  // end inside one call, holding the game's loop.
  for (int i = 0; i < kMaxHandlersPerPoll && impl_->io.poll_one() != 0; ++i) {
  }
  impl_->io.restart();
}

}  // namespace sightline::demo
