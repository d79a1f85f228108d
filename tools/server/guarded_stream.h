// The layer under sightline-server's WebSocket streams: a TCP stream whose every received byte
// passes a FrameGuard before Beast reads it. A refused stream fails the read with
// guard_refused(), so Beast never acts on the refused frame (it would answer pings, echo a close
// code, or wait for an impossible payload); the connection answers with its own close frame.
// Bytes the HTTP layer read past the upgrade request (a client's first frames, sent in the same
// write) are served first, as if the socket had just received them.
#pragma once

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/teardown.hpp>
#include <boost/system/errc.hpp>
#include <chrono>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "frame_guard.h"

namespace sightline::demo {

/// The error a read completes with once the guard refused the stream.
inline boost::system::error_code guard_refused() {
  return boost::system::errc::make_error_code(boost::system::errc::protocol_error);
}

class GuardedStream {
 public:
  using next_layer_type = boost::beast::tcp_stream;
  using executor_type = next_layer_type::executor_type;

  /// `early`: bytes already read from `socket` that follow the upgrade request.
  GuardedStream(boost::asio::ip::tcp::socket socket, std::uint32_t frames_per_second,
                std::span<const std::uint8_t> early)
      : next_(std::move(socket)),
        guard_(frames_per_second, FrameGuard::Clock::now()),
        early_(early.begin(), early.end()) {}

  executor_type get_executor() noexcept { return next_.get_executor(); }
  next_layer_type& next_layer() noexcept { return next_; }
  const next_layer_type& next_layer() const noexcept { return next_; }
  FrameGuard& guard() noexcept { return guard_; }

  /// Reads as the TCP stream does (the early bytes first), then shows the bytes to the guard.
  template <class MutableBuffers, class Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    Inspect<MutableBuffers, std::decay_t<Handler>> inspect{this, buffers, std::forward<Handler>(handler)};
    if (!early_.empty()) {
      const std::size_t n = boost::asio::buffer_copy(buffers, boost::asio::buffer(early_));
      early_.erase(early_.begin(), early_.begin() + static_cast<std::ptrdiff_t>(n));
      // Completes as a socket read would: later, never inside this call.
      boost::asio::post(next_.get_executor(),
                        boost::beast::bind_front_handler(std::move(inspect), boost::beast::error_code{}, n));
      return;
    }
    next_.async_read_some(buffers, std::move(inspect));
  }

  template <class ConstBuffers, class Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    next_.async_write_some(buffers, std::forward<Handler>(handler));
  }

  friend void teardown(boost::beast::role_type role, GuardedStream& stream, boost::beast::error_code& ec) {
    using boost::beast::websocket::teardown;
    teardown(role, stream.next_, ec);
  }

  template <class Handler>
  friend void async_teardown(boost::beast::role_type role, GuardedStream& stream, Handler&& handler) {
    using boost::beast::websocket::async_teardown;
    async_teardown(role, stream.next_, std::forward<Handler>(handler));
  }

 private:
  // Keeps the wrapped handler's executor and allocator, so Beast's operation resumes where it
  // would have.
  template <class MutableBuffers, class Handler>
  struct Inspect {
    GuardedStream* stream;
    MutableBuffers buffers;
    Handler handler;

    using executor_type = boost::asio::associated_executor_t<Handler, GuardedStream::executor_type>;
    executor_type get_executor() const noexcept {
      return boost::asio::get_associated_executor(handler, stream->next_.get_executor());
    }
    using allocator_type = boost::asio::associated_allocator_t<Handler>;
    allocator_type get_allocator() const noexcept { return boost::asio::get_associated_allocator(handler); }

    void operator()(boost::beast::error_code ec, std::size_t bytes) {
      if (!ec) {
        const auto now = FrameGuard::Clock::now();
        std::size_t left = bytes;
        for (auto it = boost::asio::buffer_sequence_begin(buffers);
             left > 0 && it != boost::asio::buffer_sequence_end(buffers); ++it) {
          const boost::asio::const_buffer piece = *it;
          const std::size_t n = std::min(left, piece.size());
          (void)stream->guard_.read(std::span(static_cast<const std::uint8_t*>(piece.data()), n), now);
          left -= n;
        }
        if (stream->guard_.refusal()) ec = guard_refused();
      }
      std::move(handler)(ec, bytes);
    }
  };

  next_layer_type next_;
  FrameGuard guard_;
  std::vector<std::uint8_t> early_;
};

}  // namespace sightline::demo
